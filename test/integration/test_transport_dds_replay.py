"""Live vs replay: `egorec record --bag` records the DDS topics of `egorec sim-devices` and writes
every received message into a rosbag2 mcap at the same time; `egorec convert` of that bag over the
live episode's window gives the same rows as the live recording. Loopback only."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from egorec_ros.transport.dds.loopback import loopback_env
from helpers.cli import egorec_ok
from helpers.dds_domains import domain_for

RIG, SIZE = "uvc_pair", "320x240"   # light: the simulated devices must keep up on a shared machine


@pytest.fixture
def dds_env():
    return dict(os.environ, **loopback_env(domain_for(__name__)), PYTHONUNBUFFERED="1")


def test_live_recording_equals_conversion_of_its_bag(tmp_path, dds_env):
    publisher = subprocess.Popen([sys.executable, "-m", "egorec_ros.cli", "sim-devices", "--rig", RIG, "--size", SIZE,
                                  "--clean"], env=dds_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        live = egorec_ok("record", "--rig", RIG, "--size", SIZE, "--episodes", "1", "--seconds", "3",
                         "--out", tmp_path / "live", "--task", "t", "--bag", tmp_path / "session", env=dds_env, timeout=240)
    finally:
        publisher.send_signal(signal.SIGINT)
        publisher.wait(timeout=60)
    window = re.search(r"--range (\S+) (\S+)", live)
    assert window, live
    start, stop = window.groups()
    egorec_ok("convert", tmp_path / "session", "--rig", RIG, "--size", SIZE, "--task", "t",
              "--out", tmp_path / "replay", "--range-origin", "epoch", "--range", start, stop,
              # a busy machine delays the simulated devices' delivery by seconds, more for some
              # streams than for others; the live recorder pairs by header stamps regardless
              "--clock-tolerance", "60", env=dds_env, timeout=240)
    episode = "data/chunk-000/episode-000.parquet"
    live_rows = pq.read_table(tmp_path / "live" / "t" / episode)
    replay_rows = pq.read_table(tmp_path / "replay" / "t" / episode)
    assert live_rows.num_rows > 60
    assert replay_rows.column_names == live_rows.column_names
    for name in live_rows.column_names:
        assert replay_rows.column(name).equals(live_rows.column(name)), name
