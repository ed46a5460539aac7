"""The realsense2_camera arguments record.launch.py passes for a rig (no ROS needed)."""
from __future__ import annotations

import dataclasses

import pytest

from egorec_ros.rig.load import load_rig
from egorec_ros.drivers.realsense import launch_arguments, rig_devices


def test_d435_rig_gives_the_driver_its_topics_and_profiles():
    rig = load_rig("d435_single")
    (device,) = rig_devices(rig)
    args = launch_arguments(rig, device)
    # /camera/camera/color/image_raw: realsense2_camera's default names
    assert (args["camera_namespace"], args["camera_name"]) == ("camera", "camera")
    assert args["rgb_camera.profile"] == args["rgb_camera.color_profile"] == "1280x720x30"
    assert args["depth_module.profile"] == "848x480x30"
    assert args["unite_imu_method"] == "2" and args["enable_gyro"] == args["enable_accel"] == "true"
    assert args["align_depth.enable"] == "false"          # the rig records depth/image_rect_raw
    assert args["serial_no"] == "'213622075531'"


def test_aligned_depth_topic_turns_alignment_on():
    rig = load_rig("d435_single")
    device = rig_devices(rig)[0]
    streams = tuple(dataclasses.replace(s, topic="/camera/camera/aligned_depth_to_color/image_raw")
                    if s.role == "depth" else s for s in device.streams)
    assert launch_arguments(rig, dataclasses.replace(device, streams=streams))["align_depth.enable"] == "true"


def test_a_topic_the_driver_cannot_publish_is_refused():
    rig = load_rig("d435_single")
    device = rig_devices(rig)[0]
    streams = tuple(dataclasses.replace(s, topic="/my_cam/rgb") if s.role == "rgb" else s for s in device.streams)
    with pytest.raises(ValueError, match="color/image_raw"):
        launch_arguments(rig, dataclasses.replace(device, streams=streams))


def test_rigs_without_realsense_include_nothing():
    assert rig_devices(load_rig("appendix_b")) == []
