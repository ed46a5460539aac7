"""Driver configurations from a compiled rig: topics, keys, SLAM frame and epoch, fps
all come from the rig device, so a driver node needs only the rig, the device id and
where the device is (port, address, socket, command)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from egorec_ros.drivers.ble_glove import BleGloveConfig
from egorec_ros.drivers.camera_ipc import CameraIpcConfig
from egorec_ros.drivers.gripper import GripperConfig
from egorec_ros.drivers.s80 import S80Config, S80Topics
from egorec_ros.drivers.slam_bridge import SlamConfig
from egorec_ros.drivers.tactile import TactileTopics
from egorec_ros.drivers.usb_glove import UsbGloveConfig
from egorec_ros.drivers.uvc import UvcConfig
from egorec_ros.rig.compile import RigError
from egorec_ros.rig.model import Device, Rig


def _device(rig: Rig, device_id: str, *kinds: str) -> Device:
    dev = next((d for d in rig.devices if d.id == device_id), None)
    if dev is None:
        raise RigError(f"rig {rig.name} has no device {device_id!r}; it has {', '.join(d.id for d in rig.devices)}")
    if dev.kind not in kinds:
        raise RigError(f"rig {rig.name}: device {device_id!r} is a {dev.kind}, not a {' or '.join(kinds)}")
    return dev


def _topic(dev: Device, role: str) -> str | None:
    return next((s.topic for s in dev.streams if s.role == role), None)


def _required_topic(rig: Rig, dev: Device, role: str) -> str:
    topic = _topic(dev, role)
    if topic is None:
        raise RigError(f"rig {rig.name}: device {dev.id!r} ({dev.kind}) has no {role} stream; its driver "
                       f"publishes nothing without one (add a stream with role {role!r})")
    return topic


def usb_glove(rig: Rig, device_id: str, port: str) -> UsbGloveConfig:
    dev = _device(rig, device_id, "usb_glove")
    return UsbGloveConfig(port, dev.key, _required_topic(rig, dev, "pressure"), frame_id=dev.sensor or "")


def ble_glove(rig: Rig, device_id: str, address: str) -> BleGloveConfig:
    dev = _device(rig, device_id, "ble_glove")
    return BleGloveConfig(address, _required_topic(rig, dev, "pressure"), key=dev.key, frame_id=dev.sensor or "")


def gripper(rig: Rig, device_id: str, port: str) -> tuple[GripperConfig, TactileTopics]:
    dev = _device(rig, device_id, "gripper")
    tactile = TactileTopics(*(_topic(dev, r) for r in ("left_force", "right_force", "left_force_matrix",
                                                      "right_force_matrix")))
    return GripperConfig(port, dev.key, _required_topic(rig, dev, "state"), frame_id=dev.id), tactile


def slam(rig: Rig, device_id: str, command: Sequence[str]) -> SlamConfig:
    """The frame and epoch of the trajectory are the rig's (§4.7, §6.6)."""
    dev = _device(rig, device_id, "uvc", "d435", "s80m", "gripper")
    stream = next((s for s in dev.streams if s.role == "slam"), None)
    if stream is None:
        raise RigError(f"rig {rig.name}: device {device_id!r} has no slam stream")
    spec: Any = stream.source["slam_spec"]
    return SlamConfig(list(command), _required_topic(rig, dev, "slam"), spec["frame"], spec["time"]["epoch"], name=f"{device_id}.slam")


def s80(rig: Rig, device_id: str, command: Sequence[str]) -> S80Config:
    dev = _device(rig, device_id, "s80m")
    topics = S80Topics(_required_topic(rig, dev, "left"), _topic(dev, "right"), _topic(dev, "imu"), _topic(dev, "depth"))
    return S80Config(list(command), topics, fps=rig.fps, with_depth=topics.depth is not None, frame_id=dev.id,
                     name=dev.key)


def camera_ipc(rig: Rig, device_id: str, socket_path: str) -> CameraIpcConfig:
    dev = _device(rig, device_id, "uvc", "gripper")
    return CameraIpcConfig(socket_path, _required_topic(rig, dev, "rgb"), key=dev.key, frame_id=dev.id)


def uvc(rig: Rig, device_id: str, source: str) -> UvcConfig:
    """V4L2 options from the rig stream: MJPEG at its size and the rig's fps."""
    dev = _device(rig, device_id, "uvc", "gripper")
    stream = next(s for s in dev.streams if s.role == "rgb")
    size = f"{stream.source['width']}x{stream.source['height']}" if "width" in stream.source else None
    options = {"input_format": "mjpeg", "framerate": f"{rig.fps:g}", **({"video_size": size} if size else {})}
    return UvcConfig(source, _required_topic(rig, dev, "rgb"), options=options, key=dev.key, frame_id=dev.id)
