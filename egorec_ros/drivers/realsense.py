"""RealSense D435/D405: the upstream ``realsense2_camera`` node publishes (our launch
includes it); this module holds what the rest of egorec needs to know about it.

* Topic names of the ROS 2 wrapper (4.x): ``/<namespace>/<camera_name>/color/image_raw``,
  ``.../depth/image_rect_raw``, ``.../aligned_depth_to_color/image_raw`` (with
  ``align_depth.enable``), ``<image ns>/camera_info`` beside each; namespace and name both
  default to ``camera`` (hence ``/camera/camera/...`` in config/rigs/d435_single.yaml).
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

DEPTH_UNIT_MM = {"D435": 1.0, "D435I": 1.0, "D405": 0.1}
_ENUMERATED = re.compile(r"Intel RealSense (D4\d\d\w*)\s+(\w+)\s+(\S+)")


def topics(camera_name: str = "camera", namespace: str = "camera", aligned: bool = False) -> dict[str, str]:
    """The wrapper's default topics for one camera (rig stream role -> topic)."""
    base = f"/{namespace}/{camera_name}"
    depth = f"{base}/aligned_depth_to_color/image_raw" if aligned else f"{base}/depth/image_rect_raw"
    return {"rgb": f"{base}/color/image_raw", "depth": depth}


def launch_arguments(serial: str, camera_name: str = "camera", namespace: str = "camera") -> dict[str, str]:
    """Arguments of ``realsense2_camera``'s rs_launch.py for one camera of a rig."""
    return {"serial_no": f"'{serial}'", "camera_name": camera_name, "camera_namespace": namespace,
            "enable_color": "true", "enable_depth": "true"}


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
