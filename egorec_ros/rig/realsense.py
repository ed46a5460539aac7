"""The realsense2_camera launch arguments a rig needs (ROS-free, used by launch/record.launch.py).

realsense2_camera names its topics ``/<camera_namespace>/<camera_name>/color/image_raw`` and
``.../aligned_depth_to_color/image_raw`` (with ``align_depth.enable``) or
``.../depth/image_rect_raw``; the namespace and name are read back from the rig's color topic,
so the driver publishes exactly where the rig subscribes. Profiles are ``WxHxFPS`` from the rig;
both the Humble (4.51: ``rgb_camera.profile``) and the newer (4.55+:
``rgb_camera.color_profile``) parameter names are given, a driver ignores the other one.
"""
from __future__ import annotations

from egorec_ros.rig.model import Device, Rig

REALSENSE_KINDS = ("d435", "d405")
ALIGNED = "aligned_depth_to_color"


def realsense_devices(rig: Rig) -> list[Device]:
    return [d for d in rig.devices if d.kind in REALSENSE_KINDS]


def realsense_launch_args(rig: Rig, device: Device) -> dict[str, str]:
    streams = {s.role: s for s in device.streams}
    rgb, depth = streams.get("rgb"), streams.get("depth")
    if rgb is None or not rgb.topic:
        raise ValueError(f"rig {rig.name}: RealSense device {device.id!r} needs an rgb stream with a topic")
    parts = rgb.topic.strip("/").split("/")
    if len(parts) < 3 or parts[-2:] != ["color", "image_raw"]:
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


def main(argv: list[str] | None = None) -> None:
    """``python3 -m egorec_ros.rig.realsense RIG``: JSON ``{device id: launch arguments}``.

    record.launch.py runs this with the ``python3`` the nodes run on (the venv with pyarrow):
    ``ros2 launch`` itself runs on the ROS Python, which need not see the PyPI dependencies."""
    import json
    import sys

    from egorec_ros.rig.load import load_rig

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        raise SystemExit("usage: python3 -m egorec_ros.rig.realsense RIG")
    rig = load_rig(args[0])
    print(json.dumps({d.id: realsense_launch_args(rig, d) for d in realsense_devices(rig)}))


if __name__ == "__main__":
    main()
