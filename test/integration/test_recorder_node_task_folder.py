"""The recorder node opens a task folder when an episode starts in it: a node whose episodes all
go to other tasks leaves no `out/<rig name>/meta/.writer.lock` behind (issue 24 item 6). In-process,
over DDS on loopback."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from egorec_ros.live.node import NodeConfig, RecorderNode
from egorec_ros.rig.load import load_rig
from egorec_ros.transport.dds import DdsTransport
from egorec_ros.transport.dds.loopback import loopback_env


@pytest.fixture
def transport(monkeypatch):
    for key, value in loopback_env(170 + os.getpid() % 30).items():
        monkeypatch.setenv(key, value)
    with DdsTransport() as t:
        yield t


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_only_the_tasks_recorded_into_get_a_folder(tmp_path, transport):
    rig, out = load_rig("uvc_pair"), tmp_path / "out"
    node = RecorderNode(rig, transport, NodeConfig(out=out, task=rig.name, name="rec_folders"), log=lambda _m: None)
    try:
        assert not out.exists(), _files(tmp_path)           # nothing yet: no episode started
        assert node.start(task="pick") == 1                  # no publisher: nothing to keep, discarded
        node.abort()
        assert node.start(task="place") == 1
        node.abort()
    finally:
        node.close()
    assert sorted(p.name for p in out.iterdir()) == ["pick", "place"]   # no folder for the default task


def test_the_default_task_folder_is_made_by_a_start_without_a_task(tmp_path, transport):
    rig, out = load_rig("uvc_pair"), tmp_path / "out"
    node = RecorderNode(rig, transport, NodeConfig(out=out, task="default_t", name="rec_folders"), log=lambda _m: None)
    try:
        assert node.start() == 1 and node.task == "default_t"
        assert (out / "default_t" / "meta" / ".writer.lock").exists()
        node.abort()
    finally:
        node.close()
