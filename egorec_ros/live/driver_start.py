"""A planned driver (``driver_plan.Start``) -> the running driver core, configured from the rig
(``drivers.rig_configs``: topics, keys, SLAM frame and epoch, fps)."""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from egorec_ros.drivers import rig_configs
from egorec_ros.drivers.ble_glove import BleGlove
from egorec_ros.drivers.camera_ipc import CameraIpc
from egorec_ros.drivers.glove_seats import GloveSeats
from egorec_ros.drivers.gripper import Gripper
from egorec_ros.drivers.health import Health
from egorec_ros.drivers.publish import Publish
from egorec_ros.drivers.s80 import S80
from egorec_ros.drivers.slam_bridge import SlamBridge
from egorec_ros.drivers.tactile import TactileForces
from egorec_ros.drivers.usb_glove import UsbGlove
from egorec_ros.drivers.uvc import Uvc
from egorec_ros.live.driver_plan import Start
from egorec_ros.live.input import stream_msgtype
from egorec_ros.messages.payloads.images import COMPRESSED_IMAGE
from egorec_ros.rig.compile import RigError
from egorec_ros.rig.model import Rig

OnStatus = Callable[[str, str], object]
CAMERA_ROLES = {"camera_ipc": ("rgb",), "uvc": ("rgb",), "s80": ("left", "right")}   # they publish JPEG as is


def build(rig: Rig, start: Start, publish: Publish, seats: GloveSeats, on_status: OnStatus):
    """The driver (not started yet; ``.health``, ``.start()``, ``.stop()``). RigError when the rig
    would make the recorder subscribe these JPEG frames with another type; GloveRefused for a
    glove without a seat."""
    _check_types(rig, start)
    what, where = start.what, start.where
    if what == "usb_glove":
        return UsbGlove(rig_configs.usb_glove(rig, start.device, str(where)), publish, seats, on_status)
    if what == "ble_glove":
        return BleGlove(rig_configs.ble_glove(rig, start.device, str(where)), publish, seats, on_status)
    if what == "gripper":
        config, topics = rig_configs.gripper(rig, start.device, str(where))
        tactile = TactileForces(topics, publish, Health(f"{start.device}.tactile"), frame_id=config.frame_id)
        return Gripper(config, publish, tactile, on_status)
    if what == "camera_ipc":
        return CameraIpc(rig_configs.camera_ipc(rig, start.device, str(where)), publish, on_status)
    if what == "uvc":
        uvc = rig_configs.uvc(rig, start.device, str(where))
        if Path(str(where)).is_file():      # a recording standing in for the camera: played at its frame rate
            uvc = dataclasses.replace(uvc, input_format=None, options={}, pace=True)
        return Uvc(uvc, publish, on_status)
    if what == "s80":
        return S80(rig_configs.s80(rig, start.device, tuple(where)), publish, on_status)
    if what == "slam":
        return SlamBridge(rig_configs.slam(rig, start.device, tuple(where)), publish, on_status)
    raise ValueError(f"no driver for {what!r}")


def _check_types(rig: Rig, start: Start) -> None:
    """Camera drivers publish the device's JPEG as CompressedImage: the rig stream must say so,
    or the recorder subscribes sensor_msgs/Image and never sees a frame."""
    for spec in rig.streams.values():
        if (spec.device == start.device and spec.role in CAMERA_ROLES.get(start.what, ())
                and stream_msgtype(spec) != COMPRESSED_IMAGE):
            raise RigError(f"rig {rig.name}: stream {spec.id} is fed by {start.what} with {COMPRESSED_IMAGE}, but the "
                           f"recorder would subscribe {stream_msgtype(spec)}; add `msg_type: {COMPRESSED_IMAGE}` to "
                           "the stream in the rig")
