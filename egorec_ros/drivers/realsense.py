"""RealSense D435/D405: the upstream ``realsense2_camera`` node publishes (our launch
includes it); this module holds what the rest of egorec needs to know about it.

* Topic names of the ROS 2 wrapper (4.x): ``/<namespace>/<camera_name>/color/image_raw``,
  ``.../depth/image_rect_raw``, ``.../aligned_depth_to_color/image_raw`` (with
  ``align_depth.enable``), ``<image ns>/camera_info`` beside each; namespace and name both
  default to ``camera`` (hence ``/camera/camera/...`` in config/rigs/d435_single.yaml).
* Launch arguments of its rs_launch.py for a rig's camera (launch/record.launch.py): the
  namespace and name are read back from the rig's color topic, so the driver publishes exactly
  where the rig subscribes. Profiles are ``WxHxFPS`` from the rig; both the Humble (4.51:
  ``rgb_camera.profile``) and the newer (4.55+: ``rgb_camera.color_profile``) parameter names
  are given, a driver ignores the other one.
* Depth units. The D405's depth unit is 0.1 mm (the D435's 1 mm). The wrapper rescales
  every Z16 frame to millimetres before publishing (``BaseRealSenseNode::fix_depth_scale``:
  ``p_to = p_from * depth_scale / 0.001``), so depth *topics* are in mm for both models and
  the recorder must not scale them again. Frames taken from the SDK directly (pyrealsense2,
  librealsense .bag files) are in device units: ``sdk_depth_to_mm`` converts them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from egorec_ros.rig.model import Device, Rig

REALSENSE_KINDS = ("d435", "d405")
COLOR = ("color", "image_raw")
ALIGNED = "aligned_depth_to_color"
DEPTH_UNIT_MM = {"D435": 1.0, "D435I": 1.0, "D405": 0.1}
_ENUMERATED = re.compile(r"Intel RealSense (D4\d\d\w*)\s+(\w+)\s+(\S+)")


def topics(camera_name: str = "camera", namespace: str = "camera", aligned: bool = False) -> dict[str, str]:
    """The wrapper's default topics for one camera (rig stream role -> topic)."""
    base = f"/{namespace}/{camera_name}"
    depth = f"{base}/{ALIGNED}/image_raw" if aligned else f"{base}/depth/image_rect_raw"
    return {"rgb": f"{base}/{'/'.join(COLOR)}", "depth": depth}


def rig_devices(rig: Rig) -> list[Device]:
    """The rig's RealSense cameras (each gets a realsense2_camera node)."""
    return [d for d in rig.devices if d.kind in REALSENSE_KINDS]


def launch_arguments(rig: Rig, device: Device) -> dict[str, str]:
    """Arguments of ``realsense2_camera``'s rs_launch.py for one camera of a rig; ValueError
    when the rig's color topic is not one the wrapper can publish."""
    streams = {s.role: s for s in device.streams}
    rgb, depth = streams.get("rgb"), streams.get("depth")
    if rgb is None or not rgb.topic:
        raise ValueError(f"rig {rig.name}: RealSense device {device.id!r} needs an rgb stream with a topic")
    parts = rgb.topic.strip("/").split("/")
    if len(parts) < 3 or tuple(parts[-2:]) != COLOR:
        raise ValueError(f"rig {rig.name}: {device.id}.rgb topic {rgb.topic} is not realsense2_camera's "
                         "/<namespace>/<name>/color/image_raw")
    fps = int(round(rig.fps))
    args = {"camera_namespace": "/".join(parts[:-3]), "camera_name": parts[-3],
            "enable_color": "true", "enable_depth": "true" if depth else "false",
            "enable_sync": "true", "enable_gyro": "true", "enable_accel": "true", "unite_imu_method": "2",
            "align_depth.enable": "true" if depth is not None and ALIGNED in (depth.topic or "") else "false"}
    size = _size(rig, rgb.slot)
    if size:
        args["rgb_camera.profile"] = args["rgb_camera.color_profile"] = f"{size[0]}x{size[1]}x{fps}"
    if depth is not None:
        dsize = _size(rig, depth.slot)
        if dsize:
            args["depth_module.profile"] = args["depth_module.depth_profile"] = f"{dsize[0]}x{dsize[1]}x{fps}"
    serial = device.key.split(":", 1)[1] if ":" in device.key else ""
    if serial.isdigit():
        args["serial_no"] = f"'{serial}'"      # quoted: a number would lose leading zeros
    return args


def _size(rig: Rig, slot: str | None) -> tuple[int, int] | None:
    for video in rig.videos:
        if video.key == slot:
            return int(video.width), int(video.height)
    return None


def sdk_depth_to_mm(z16: np.ndarray, model: str) -> np.ndarray:
    """SDK Z16 frame of ``model`` (D435/D405) -> uint16 mm, rounded; 0 stays invalid."""
    unit = DEPTH_UNIT_MM[model.upper()]
    if unit == 1.0:
        return np.asarray(z16, dtype=np.uint16)
    mm = np.rint(np.asarray(z16, dtype=np.float32) * np.float32(unit))
    return np.clip(mm, 0, 65535).astype(np.uint16)


@dataclass(frozen=True)
class RealSenseDevice:
    model: str            # D435, D405, ...
    serial: str
    firmware: str

    @property
    def key(self) -> str:
        return f"d435:{self.serial}"      # one rig kind (d435) for the D4xx cameras


def parse_enumerate(text: str) -> list[RealSenseDevice]:
    """``rs-enumerate-devices -s`` output -> devices."""
    return [RealSenseDevice(m.group(1).upper(), m.group(2), m.group(3)) for m in _ENUMERATED.finditer(text)]


def main(argv: list[str] | None = None) -> None:
    """``python3 -m egorec_ros.drivers.realsense RIG``: JSON ``{device id: rs_launch.py arguments}``.

    record.launch.py runs this with the ``python3`` the nodes run on (the venv with pyarrow):
    ``ros2 launch`` itself runs on the ROS Python, which need not see the PyPI dependencies."""
    import json
    import sys

    from egorec_ros.rig.load import load_rig

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        raise SystemExit("usage: python3 -m egorec_ros.drivers.realsense RIG")
    rig = load_rig(args[0])
    print(json.dumps({d.id: launch_arguments(rig, d) for d in rig_devices(rig)}))


if __name__ == "__main__":
    main()
