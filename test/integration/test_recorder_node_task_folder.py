"""The recorder node opens a task folder when an episode starts in it: a node whose episodes all
go to other tasks leaves no `out/<rig name>/meta/.writer.lock` behind (issue 24 item 6). In-process,
over DDS on loopback."""
from __future__ import annotations

from pathlib import Path

import pytest

from egorec_ros.dataset.task import Task
from egorec_ros.live.node import NodeConfig, RecorderNode
from egorec_ros.rig.load import load_rig
from egorec_ros.rig.resize import with_video_sizes
from egorec_ros.store import TaskWriter
from egorec_ros.transport.dds import DdsTransport
from egorec_ros.transport.dds.loopback import loopback_env
from helpers.store import record_episode
from helpers.dds_domains import domain_for


@pytest.fixture
def transport(monkeypatch):
    for key, value in loopback_env(domain_for(__name__)).items():
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


def test_a_fresh_node_deletes_from_its_task_folder_before_any_start(tmp_path, transport):
    """The operator's redo after a restart: the task folder is opened for the delete (there is one)."""
    rig, out = with_video_sizes(load_rig("uvc_pair"), (64, 48)), tmp_path / "out"
    with TaskWriter(out / "t") as writer:
        record_episode(writer, rig, 0.5)
        record_episode(writer, rig, 0.5, seed=1)
    node = RecorderNode(rig, transport, NodeConfig(out=out, task="t", name="rec_folders"), log=lambda _m: None)
    try:
        assert node.delete() == 2                             # the last one
        assert [e.index for e in Task(out / "t").episodes] == [1]
    finally:
        node.close()
    node = RecorderNode(rig, transport, NodeConfig(out=out, task="nothing_yet", name="rec_folders"),
                        log=lambda _m: None)
    try:
        with pytest.raises(ValueError, match="has no committed episode to delete"):
            node.delete()
        with pytest.raises(ValueError, match="has no episode 3 to delete"):
            node.delete(3)
    finally:
        node.close()
    assert sorted(p.name for p in out.iterdir()) == ["t"]
