"""SLAM coordinate frames (§6.6): frame id -> axis directions, and per-role defaults.

One table feeds both ``features[col].frame/frame_axes`` and the top-level
``slam_frames`` so they cannot disagree (§6.6: "由同一张表生成").
"""
from __future__ import annotations

FRAMES: dict[str, dict[str, str]] = {
    "down_left_forward": {"+X": "down", "+Y": "left", "+Z": "forward"},
    "ego_cam_optical": {"+X": "right", "+Y": "down", "+Z": "forward"},
    "right_forward_up": {"+X": "right", "+Y": "forward", "+Z": "up"},
    "enu": {"+X": "east", "+Y": "north", "+Z": "up"},
    "flu": {"+X": "forward", "+Y": "left", "+Z": "up"},
}

# role -> (frame, epoch) used when the rig file does not say
ROLE_DEFAULTS = {
    "gripper": ("down_left_forward", "enter_press"),
    "ego": ("ego_cam_optical", "first_frame"),
}

CLOCKS = ("camera_sensor", "host_monotonic")
EPOCHS = ("enter_press", "first_frame", "device_boot")
