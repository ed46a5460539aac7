"""Faults over DDS: 10 000 malformed messages on recorded topics are counted invalid and the
recording goes on; a recorder killed with SIGKILL mid-episode leaves an episode that
`egorec recover --salvage` turns into a valid one. Loopback only."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from egorec_ros.assembly.assembler import AssemblyConfig
from egorec_ros.messages.payloads.stamps import header_message
from egorec_ros.dataset.task import Task
from egorec_ros.messages.typestores import ros2_typestore
from egorec_ros.live.input import LiveInput
from egorec_ros.recorder.session import Recorder
from egorec_ros.rig.load import load_rig
from egorec_ros.rig.resize import with_video_sizes
from egorec_ros.store import TaskWriter
from egorec_ros.transport.base import DEFAULT, QoS
from egorec_ros.transport.dds import DdsTransport
from egorec_ros.transport.dds.loopback import loopback_env
from helpers.cli import assert_clean, egorec_ok
from helpers.dds_domains import domain_for

STORE = ros2_typestore()
WRENCH, MATRIX = "geometry_msgs/msg/WrenchStamped", "egorec_ros/msg/ForceMatrix"


@pytest.fixture
def dds_env(monkeypatch):
    for k, v in loopback_env(domain_for(__name__)).items():
        monkeypatch.setenv(k, v)
    return dict(os.environ, PYTHONUNBUFFERED="1")


def malformed(n: int) -> list[tuple[str, str, bytes]]:
    """(topic, type, bytes): wrong encapsulations, arrays of the wrong size, zero stamps."""
    h = header_message(STORE, time.time_ns())
    wrench = bytes(STORE.serialize_cdr(STORE.types[WRENCH](header=h, wrench=STORE.types["geometry_msgs/msg/Wrench"](
        force=STORE.types["geometry_msgs/msg/Vector3"](x=1, y=2, z=3),
        torque=STORE.types["geometry_msgs/msg/Vector3"](x=0, y=0, z=0))), WRENCH))
    zero = bytes(STORE.serialize_cdr(STORE.types[WRENCH](header=header_message(STORE, 0), wrench=STORE.types[WRENCH](
        header=h, wrench=STORE.types["geometry_msgs/msg/Wrench"](
            force=STORE.types["geometry_msgs/msg/Vector3"](x=1, y=2, z=3),
            torque=STORE.types["geometry_msgs/msg/Vector3"](x=0, y=0, z=0))).wrench), WRENCH))
    matrix = bytes(STORE.serialize_cdr(STORE.types[MATRIX](header=h, rows=250, cols=250, channels=3,
                                                           data=np.ones(100, np.float32)), MATRIX))
    # (Cyclone itself refuses truncated CDR, at the writer and at the reader: that case is
    # checked without DDS in test_truncated_cdr_is_counted)
    kinds = [("/gripper_1/left_force", WRENCH, b"\x00\x07\x00\x00" + wrench[4:]),  # XCDR2 header: not ROS's
             ("/gripper_1/left_force", WRENCH, b"\x00\x0b\x00\x00" + wrench[4:]),  # PL_CDR2: not ROS's
             ("/gripper_1/right_force", WRENCH, zero),                          # zero header stamp
             ("/gripper_1/left_force_matrix", MATRIX, matrix)]                 # 250x250x3 with 100 values
    return [kinds[i % len(kinds)] for i in range(n)]


def test_ten_thousand_malformed_messages_are_counted(tmp_path, dds_env):
    rig = with_video_sizes(load_rig("gripper_single"), (160, 120))
    bad = malformed(10_000)
    with DdsTransport() as pub_side, DdsTransport() as rec_side, TaskWriter(tmp_path / "task") as writer:
        recorder = Recorder(rig, writer, config=AssemblyConfig())
        # reliable with a deep history, so every one of the 10 000 arrives and the count is exact
        live = LiveInput(rig, rec_side, recorder, qos=QoS("reliable", 20_000))
        pubs = {topic: pub_side.publisher(topic, msgtype, DEFAULT) for topic, msgtype, _ in bad[:4]}
        # the devices in their own process, as drivers are: this one floods and records
        devices = subprocess.Popen([sys.executable, "-m", "egorec_ros.cli", "sim-devices", "--rig", "gripper_single",
                                    "--size", "160x120", "--clean", "--qos", "default"], env=dds_env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 90
            while len(live.received) < len(rig.streams) and time.monotonic() < deadline:
                time.sleep(0.05)
            recorder.start_episode()
            while recorder.status().rows < 10 and time.monotonic() < deadline:
                time.sleep(0.05)
            for i, (topic, _, data) in enumerate(bad):
                pubs[topic].publish(data)
                if i % 100 == 99:
                    time.sleep(0.02)     # paced: the recorder's own work shares this process
            deadline = time.monotonic() + 60
            while sum(live.invalid.values()) < len(bad) and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(0.5)
            status = recorder.status()
            result, report = recorder.stop_episode()
        finally:
            devices.send_signal(signal.SIGINT)
            devices.wait(timeout=60)
        live.close()
        recorder.close()
    expected = {"gripper.left_force": 5000, "gripper.right_force": 2500, "gripper.left_force_matrix": 2500}
    assert dict(live.invalid) == expected
    assert result is not None, (status, report)
    assert result.drop_stats["invalid_messages"] == expected
    assert result.rows > 30, "the recording stopped"
    egorec_ok("validate", tmp_path / "task", timeout=120)


def test_recorder_killed_mid_episode_is_salvaged(tmp_path, dds_env):
    size = "160x120"
    publisher = subprocess.Popen([sys.executable, "-m", "egorec_ros.cli", "sim-devices", "--rig", "gripper_single",
                                  "--size", size, "--clean"], env=dds_env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        recorder = subprocess.Popen([sys.executable, "-m", "egorec_ros.cli", "record", "--rig", "gripper_single",
                                     "--size", size, "--episodes", "1", "--seconds", "60",
                                     "--out", str(tmp_path / "out"), "--task", "t"], env=dds_env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        staged = tmp_path / "out" / "t"
        deadline = time.monotonic() + 90
        # wait until rows have been flushed to the staged episode (a row group is written every ~1 s)
        while time.monotonic() < deadline and not any(p.suffix == ".parquet" or p.name.endswith(".parquet.part")
                                                      for p in staged.rglob(".*/**/*") if p.is_file()):
            time.sleep(0.2)
        time.sleep(3)
        recorder.send_signal(signal.SIGKILL)
        recorder.wait()
    finally:
        publisher.send_signal(signal.SIGINT)
        publisher.wait(timeout=60)
    assert not Task(staged).episodes if (staged / "meta" / "info.json").exists() else True
    egorec_ok("recover", staged, "--salvage", timeout=120)
    assert_clean(staged)
    (episode,) = Task(staged).episodes
    assert len(episode) > 30


def test_truncated_cdr_is_counted(tmp_path):
    """Truncated or garbage CDR (what a raw rclpy subscription can deliver) is counted, not fatal."""
    rig = with_video_sizes(load_rig("gripper_single"), (160, 120))

    class NoTransport:
        def subscribe(self, *args):
            return self

        def close(self):
            pass

    with TaskWriter(tmp_path / "task") as writer:
        recorder = Recorder(rig, writer)
        live = LiveInput(rig, NoTransport(), recorder)
        wrench = malformed(3)[2][2]
        decoders = {d.topic: d for d in live.decoders}
        assert decoders["/gripper_1/right_force"].typename == WRENCH
        for cut in (0, 3, 4, 10, 30, len(wrench) - 4):
            live.on_message(decoders["/gripper_1/right_force"], wrench[:cut], 1)
        live.on_message(decoders["/gripper_1/state"], b"\x00\x01\x00\x00" + bytes(range(7)), 1)
        recorder.close()
    assert dict(live.invalid) == {"gripper.right_force": 6, "gripper.state": 1}

