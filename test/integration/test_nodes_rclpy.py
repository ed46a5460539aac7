"""The rclpy side as a ROS 2 user runs it (skipped without a sourced ROS 2 and colcon): this
checkout built with colcon, ``ros2 launch`` / ``ros2 run`` / ``ros2 service call`` / ``ros2 topic
echo``, and both transports talking to each other (the rclpy nodes and the ROS-free DDS commands).
Loopback only: a private ROS_DOMAIN_ID and the Cyclone loopback config."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import ros2
from helpers.dds_domains import domain_for

RIG, SIZE = "uvc_pair", "160x120"


@pytest.fixture(scope="module")
def install(ros2_install) -> Path:
    return ros2_install


@pytest.fixture(scope="module")
def env(install) -> Iterator[dict[str, str]]:
    env = ros2.sourced_env(install, domain_for(__name__))
    yield env
    # `ros2 service call` / `topic echo` leave a ros2 daemon for the domain running
    subprocess.run(["ros2", "daemon", "stop"], env=env, capture_output=True, timeout=60)


def _run(env, *args, timeout=60, cwd=None) -> str:
    out = subprocess.run(list(args), env=env, capture_output=True, text=True, timeout=timeout, cwd=cwd)
    assert out.returncode == 0, f"{args}: {out.stdout}\n{out.stderr}"
    return out.stdout


def _start(*args, env) -> subprocess.Popen:
    """A process in its own group (Ctrl-C goes to the group, as in a terminal)."""
    return subprocess.Popen(list(args), env=env, start_new_session=True, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def _interrupt(proc: subprocess.Popen, timeout: float = 150) -> str:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
    out, _ = proc.communicate(timeout=timeout)
    return out


def _service(env, name, srv, request="{}") -> str:
    """``ros2 service call``, retried until the service is discovered."""
    deadline = time.monotonic() + 60
    while True:
        out = subprocess.run(["ros2", "service", "call", name, srv, request], env=env, capture_output=True,
                             text=True, timeout=120)
        if "response:" in out.stdout or time.monotonic() > deadline:
            assert "response:" in out.stdout, out.stdout + out.stderr
            return out.stdout
        time.sleep(1)


def _echo_once(env, topic, timeout=30) -> str:
    out = subprocess.run(["ros2", "topic", "echo", "--once", topic], env=env, capture_output=True, text=True,
                         timeout=timeout)
    return out.stdout


def _validate(env, task: Path) -> None:
    out = subprocess.run(["ros2", "run", "egorec_ros", "egorec", "validate", str(task)], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "clean" in out.stdout, out.stdout + out.stderr


def _episodes(task: Path) -> int:
    return len(list((task / "data").glob("chunk-*/episode-*.parquet")))


def test_built_package_runs_and_shows_interfaces(tmp_path, env):
    assert "float32[256] pressure" in _run(env, "ros2", "interface", "show", "egorec_ros/msg/GloveFrame")
    assert "int64 episode_index" in _run(env, "ros2", "interface", "show", "egorec_ros/srv/Start")
    assert "usage: egorec" in _run(env, "ros2", "run", "egorec_ros", "egorec", "--help")
    # built-in rigs come from the colcon prefix (share/egorec_ros/config/rigs)
    code = "from egorec_ros.resources import builtin_rig; print(builtin_rig('appendix_b'))"
    found = _run(env, "python3", "-c", code, cwd=tmp_path).strip()      # not the checkout's egorec_ros
    assert found.endswith("share/egorec_ros/config/rigs/appendix_b.yaml"), found
    assert "/install/" in found


def test_launch_records_with_services_status_diagnostics_and_ctrl_c(tmp_path, env):
    launch = _start("ros2", "launch", "egorec_ros", "record.launch.py", f"rig:={RIG}", "sim:=true",
                    f"size:={SIZE}", f"out:={tmp_path}", env=env)
    try:
        started = _service(env, "/egorec_recorder/start", "egorec_ros/srv/Start", "{task: t, instruction: pick}")
        assert "success=True" in started and "episode_index=1" in started, started
        time.sleep(3)
        status = _echo_once(env, "/egorec_recorder/status")
        assert "state: recording" in status and "stream: cam0.rgb" in status, status
        diagnostics = _echo_once(env, "/diagnostics")
        assert "/egorec_recorder: cam1.rgb" in diagnostics, diagnostics
        stopped = _service(env, "/egorec_recorder/stop", "egorec_ros/srv/Stop")
        assert "success=True" in stopped and "rows committed" in stopped and "stamp_ns=" in stopped, stopped
        # no upload_server: each episode's upload says so, as over DDS
        listed = _service(env, "/egorec_recorder/list_episodes", "egorec_ros/srv/ListEpisodes", "{task: t}")
        assert '"episode_index": 1' in listed and '"upload": {"state": "off"}' in listed, listed
        assert "upload_server: ''" in _echo_once(env, "/egorec_recorder/status")
        # a second episode, left running: Ctrl-C on the launch commits it
        assert "episode_index=2" in _service(env, "/egorec_recorder/start", "egorec_ros/srv/Start",
                                             "{task: t, instruction: place}")
        time.sleep(3)
    finally:
        log = _interrupt(launch)
    assert "episode 2 of t" in log and "rows committed" in log.split("episode 2 of t")[-1], log
    assert "process has died" not in log, log
    assert "deprecated" not in log, log          # Jazzy: "ROS_LOCALHOST_ONLY is deprecated" from every node
    assert _episodes(tmp_path / "t") == 2
    _validate(env, tmp_path / "t")


def test_rclpy_recorder_records_dds_publisher_driven_by_egorec_ctl(tmp_path, env):
    egorec = [sys.executable, "-m", "egorec_ros.cli"]
    pub = _start(*egorec, "sim-devices", "--rig", RIG, "--size", SIZE, "--clean", env=env)
    rec = _start("ros2", "run", "egorec_ros", "recorder", "--ros-args", "-p", f"rig:={RIG}", "-p", f"size:={SIZE}",
                 "-p", f"out:={tmp_path}", "-p", "task:=t", env=env)
    try:
        assert "episode_index 1" in _run(env, *egorec, "ctl", "start", "--timeout", "60")
        time.sleep(3)
        assert _run(env, *egorec, "ctl", "status").startswith("recording"), "ctl status"
        assert "rows committed" in _run(env, *egorec, "ctl", "stop", "--timeout", "120", timeout=180)
    finally:
        rec_log = _interrupt(rec)
        _interrupt(pub)
    assert "Traceback" not in rec_log, rec_log
    _validate(env, tmp_path / "t")


def test_dds_recorder_records_rclpy_publisher_driven_by_ros2_service_call(tmp_path, env):
    pub = _start("ros2", "run", "egorec_ros", "sim_devices", "--ros-args", "-p", f"rig:={RIG}", "-p",
                 f"size:={SIZE}", "-p", "clean:=true", env=env)
    rec = _start(sys.executable, "-m", "egorec_ros.cli", "recorder", "--rig", RIG, "--size", SIZE,
                 "--out", str(tmp_path), "--task", "t", env=env)
    try:
        started = _service(env, "/egorec_recorder/start", "egorec_ros/srv/Start", "{task: '', instruction: pick}")
        assert "success=True" in started and "episode_index=1" in started, started
        time.sleep(3)
        assert "state: recording" in _echo_once(env, "/egorec_recorder/status")
        stopped = _service(env, "/egorec_recorder/stop", "egorec_ros/srv/Stop")
        assert "success=True" in stopped and "rows committed" in stopped, stopped
    finally:
        _interrupt(rec)
        pub_log = _interrupt(pub)
    assert "Traceback" not in pub_log, pub_log
    _validate(env, tmp_path / "t")


def test_dds_record_command_records_rclpy_publisher(tmp_path, env):
    pub = _start("ros2", "run", "egorec_ros", "sim_devices", "--ros-args", "-p", f"rig:={RIG}", "-p",
                 f"size:={SIZE}", "-p", "clean:=true", env=env)
    try:
        _run(env, sys.executable, "-m", "egorec_ros.cli", "record", "--rig", RIG, "--size", SIZE, "--episodes", "1",
             "--seconds", "3", "--out", str(tmp_path), "--task", "t", timeout=180)
    finally:
        _interrupt(pub)
    _validate(env, tmp_path / "t")
