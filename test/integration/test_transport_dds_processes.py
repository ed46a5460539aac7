"""Separate processes over DDS on loopback: `egorec sim-devices` publishes a rig, `egorec record`
(no --sim) records it. Episodes validate and every stamp in a row is one the publisher sent."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from egorec_ros.dataset.task import Task
from egorec_ros.rig.kinds import StreamKind
from egorec_ros.rig.load import load_rig
from egorec_ros.transport.dds.loopback import loopback_env
from helpers.cli import assert_clean
from helpers.dds_domains import domain_for

RIG = "appendix_b"
SIZE = "320x240"


@pytest.fixture
def dds_env(tmp_path):
    env = dict(os.environ, **loopback_env(domain_for(__name__)))
    env["PYTHONUNBUFFERED"] = "1"
    return env


def egorec(args: list[str], env: dict, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "egorec_ros.cli", *args], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **kw)


def stop(proc: subprocess.Popen, timeout: float = 30) -> str:
    """Ctrl-C the process (as a terminal would) and return its output."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=timeout)
    return out


def sent_stamps(log: Path) -> dict[str, set[int]]:
    sent: dict[str, set[int]] = defaultdict(set)
    for line in log.read_text().splitlines():
        stream, stamp, _sent = line.split()
        sent[stream].add(int(stamp))
    return sent


def stamp_columns(rig) -> dict[str, str]:
    """column holding capture stamps -> the stream whose stamps they are."""
    out = {}
    for s in rig.streams.values():
        if s.kind is StreamKind.LATEST and s.ns_column:
            out[s.ns_column] = s.id
        elif s.kind is StreamKind.TRAJECTORY:
            out[s.columns["ns"]] = s.id
        elif s.kind is StreamKind.IMU:
            out[s.columns["ts"]] = s.id
        elif s.kind is StreamKind.VIDEO and s.slot == rig.master_slot:
            out["hardware_ns"] = s.id
    return out


def test_sim_devices_to_recorder_over_dds(tmp_path, dds_env):
    log = tmp_path / "sent.log"
    publisher = egorec(["sim-devices", "--rig", RIG, "--size", SIZE, "--clean", "--log", str(log)], dds_env)
    try:
        recorder = subprocess.run(
            [sys.executable, "-m", "egorec_ros.cli", "record", "--rig", RIG, "--size", SIZE, "--episodes", "3",
             "--seconds", "2", "--gap", "0.5", "--out", str(tmp_path / "out")],
            env=dds_env, capture_output=True, text=True, timeout=240)
    finally:
        pub_out = stop(publisher)
    assert recorder.returncode == 0, recorder.stdout + recorder.stderr
    assert recorder.stdout.count("\n    QA: ") == 3, recorder.stdout     # each episode's verdict in its summary
    assert "sent:" in pub_out, pub_out
    task_dir = tmp_path / "out" / RIG
    assert_clean(task_dir, env=dds_env)

    sent = sent_stamps(log)
    columns = stamp_columns(load_rig(RIG))
    episodes = Task(task_dir).episodes
    assert [e.index for e in episodes] == [1, 2, 3], recorder.stdout + recorder.stderr
    checked = defaultdict(int)
    for episode in episodes:
        assert len(episode) > 20
        table = episode.read([c for c in columns if episode.has(c)]).to_pydict()
        for column, values in table.items():
            stream = columns[column]
            flat = np.asarray([v for row in values for v in (row if isinstance(row, list) else [row])], np.int64)
            flat = flat[flat != 0]
            unknown = set(flat.tolist()) - sent[stream]
            assert not unknown, f"episode {episode.index} {column}: stamps never sent by {stream}: {sorted(unknown)[:3]}"
            checked[column] += flat.size
    assert set(checked) == set(columns) and all(checked.values()), checked
