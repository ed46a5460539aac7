"""Driver configurations come from the rig: topics, keys, the SLAM frame and epoch."""
from __future__ import annotations

import pytest

from egorec_ros.drivers import rig_configs
from egorec_ros.rig.compile import RigError
from egorec_ros.rig.load import load_rig


def test_appendix_b_devices():
    rig = load_rig("appendix_b")
    glove = rig_configs.usb_glove(rig, "left_glove", "/dev/ttyACM0")
    assert (glove.key, glove.topic) == ("usbglove:364933593535", "/left_glove/frame")
    board, tactile = rig_configs.gripper(rig, "gripper_b", "/dev/ttyACM2")
    assert (board.key, board.state_topic) == ("gripper:68:EE:8F:C6:0D:BC", "/gripper_2/state")
    assert tactile.right_force_matrix == "/gripper_2/right_force_matrix"
    ego = rig_configs.slam(rig, "ego", ["orb_slam3"])
    assert (ego.topic, ego.frame, ego.epoch) == ("/ego/slam", "ego_cam_optical", "first_frame")
    grip = rig_configs.slam(rig, "gripper_a", ["orb_slam3"])
    assert (grip.frame, grip.epoch) == ("down_left_forward", "enter_press")
    s80 = rig_configs.s80(rig, "ego", ["s80_sdk"])
    assert s80.with_depth and s80.fps == 30 and s80.topics.imu == "/ego/imu"


def test_uvc_options_and_wrong_kinds():
    rig = load_rig("uvc_pair")
    cfg = rig_configs.uvc(rig, "cam1", "/dev/v4l/by-id/usb-DECXIN_Camera_02-video-index0")
    assert cfg.options == {"input_format": "mjpeg", "framerate": "30", "video_size": "1280x960"}
    assert rig_configs.camera_ipc(rig, "cam0", "/run/cam0.sock").topic == "/uvc0/image_raw"
    with pytest.raises(RigError, match="is a uvc, not a usb_glove"):
        rig_configs.usb_glove(rig, "cam0", "/dev/ttyACM0")
    with pytest.raises(RigError, match="no device"):
        rig_configs.uvc(rig, "cam9", "/dev/video9")
    with pytest.raises(RigError, match="no slam stream"):
        rig_configs.slam(rig, "cam0", ["x"])
