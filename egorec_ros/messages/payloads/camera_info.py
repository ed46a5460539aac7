"""sensor_msgs/CameraInfo -> a calibration entry of info.json (§6.5).

Not a stream: the converter calls this once per camera to fill the rig's
calibration. Field names differ between ROS 1 (K, D, P) and ROS 2 (k, d, p).
"""
from __future__ import annotations

from pathlib import PurePosixPath
from egorec_ros.messages.msg import Msg

CAMERA_INFO = "sensor_msgs/msg/CameraInfo"
TRANSPORTS = ("compressed", "compressedDepth", "theora", "zstd", "ffmpeg")


def _field(msg: Msg, name: str) -> list[float]:
    value = getattr(msg, name, None)
    if value is None:
        value = getattr(msg, name.upper())
    return [float(v) for v in value]


def camera_intrinsics(info: Msg) -> dict:
    """{intrinsic: [fx, fy, cx, cy], distortion: [...]} of one camera."""
    k = _field(info, "k")
    return {"intrinsic": [k[0], k[4], k[2], k[5]], "distortion": _field(info, "d")}


def camera_calibration(info: Msg, *, name: str, right: Msg | None = None, fps: float | None = None,
                       depth_scale: float | None = None) -> dict:
    """The §6.5 dict (type/name/resolution/fps/baseline/left_camera/right_camera/depth_scale/
    cam_imu_timeshift, which a CameraInfo cannot know: 0) from a CameraInfo, or a stereo pair (baseline from the right P: Tx = -fx * B).
    A single camera repeats itself as right_camera with baseline 0, as the reference collector does
    for mono RGB-D devices."""
    left = camera_intrinsics(info)
    baseline = 0.0
    right_cam = camera_intrinsics(info)
    if right is not None:
        right_cam = camera_intrinsics(right)
        p = _field(right, "p")
        baseline = -p[3] / p[0] if p[0] else 0.0
    kind = ("stereo_" if right is not None else "") + ("rgbd_camera" if depth_scale else "camera")
    return {"type": kind, "name": name, "resolution": [int(info.width), int(info.height)],
            "fps": float(fps) if fps else 0.0, "baseline": baseline,
            "left_camera": left, "right_camera": right_cam,
            "depth_scale": float(depth_scale) if depth_scale else 0.0, "cam_imu_timeshift": 0.0}


def camera_info_topic(image_topic: str, explicit: str | None = None) -> str:
    """The CameraInfo topic of an image topic: the rig's, else the image_transport convention."""
    if explicit:
        return explicit
    base = PurePosixPath(image_topic)
    if base.name in TRANSPORTS:
        base = base.parent
    return str(base.parent / "camera_info")
