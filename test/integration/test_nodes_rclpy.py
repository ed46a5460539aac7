"""rclpy transport and nodes (skipped without a sourced ROS 2): the rclpy recorder records the
DDS sim publisher, and the DDS recorder records an rclpy publisher. Loopback only."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

rclpy = pytest.importorskip("rclpy", reason="rclpy is not installed: source a ROS 2 (Humble/Jazzy) setup.bash "
                                            "with this package built (colcon build) to run the rclpy tests")

from egorec_ros.transport.dds.loopback import loopback_env  # noqa: E402
from helpers.cli import assert_clean, egorec_ok  # noqa: E402

pytestmark = pytest.mark.skipif(os.environ.get("RMW_IMPLEMENTATION", "rmw_cyclonedds_cpp") != "rmw_cyclonedds_cpp",
                                reason="the DDS transport talks to rmw_cyclonedds_cpp (set RMW_IMPLEMENTATION)")
RIG, SIZE = "gripper_single", "320x240"


@pytest.fixture
def env():
    return dict(os.environ, **loopback_env(220 + os.getpid() % 10), RMW_IMPLEMENTATION="rmw_cyclonedds_cpp",
                PYTHONUNBUFFERED="1")


def _ctl(env, *args):
    return egorec_ok("ctl", *args, env=env, timeout=60)


def _validate(task):
    assert_clean(task)


def test_rclpy_recorder_records_the_dds_publisher(tmp_path, env):
    pub = subprocess.Popen([sys.executable, "-m", "egorec_ros.cli", "sim-devices", "--rig", RIG, "--size", SIZE,
                            "--clean"], env=env)
    rec = subprocess.Popen([sys.executable, "-m", "egorec_ros.nodes.recorder", "--ros-args", "-p", f"rig:={RIG}",
                            "-p", f"size:={SIZE}", "-p", f"out:={tmp_path}", "-p", "task:=t"], env=env)
    try:
        time.sleep(8)
        assert "episode_index 1" in _ctl(env, "start")
        time.sleep(3)
        assert "rows committed" in _ctl(env, "stop")
    finally:
        rec.send_signal(signal.SIGINT)
        rec.wait(timeout=60)
        pub.send_signal(signal.SIGINT)
        pub.wait(timeout=60)
    _validate(tmp_path / "t")


def test_dds_recorder_records_the_rclpy_publisher(tmp_path, env):
    pub = subprocess.Popen([sys.executable, "-m", "egorec_ros.nodes.sim_devices", "--ros-args", "-p", f"rig:={RIG}",
                            "-p", f"size:={SIZE}", "-p", "clean:=true"], env=env)
    try:
        out = subprocess.run([sys.executable, "-m", "egorec_ros.cli", "record", "--rig", RIG, "--size", SIZE,
                              "--episodes", "1", "--seconds", "3", "--out", str(tmp_path), "--task", "t"],
                             env=env, capture_output=True, text=True, timeout=180)
        assert out.returncode == 0, out.stdout + out.stderr
    finally:
        pub.send_signal(signal.SIGINT)
        pub.wait(timeout=60)
    _validate(tmp_path / "t")
