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

# 【提案】 the frame of a hand keypoint column (features["observation.<hand>_hand_pose"].frame):
# what an exporter needs to put the hands in the SLAM world (no frame key = not known)
HAND_FRAMES: dict[str, str] = {
    "wrist": "hand-local: joint 0 at the origin, x toward the thumb, y along the fingers, z out of "
             "the back of the hand (a glove's own pose solver)",
    "ego_slam_world": "the world frame of observation.ego_slam_trajectory (metres)",
    "ego_cam_optical": "the ego camera's optical frame (+X right, +Y down, +Z forward) at the row's frame",
}
EPOCHS = ("enter_press", "first_frame", "device_boot")
