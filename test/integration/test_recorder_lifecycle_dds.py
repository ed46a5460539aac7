"""The recorder's lifecycle services over DDS with real processes: stop answers with the QA
verdict, ~/list_episodes, ~/delete (also while another episode is being recorded), `egorec ctl
delete-last|delete|list`, numbers never reused after a delete, ~/status carrying the last verdict, and the live
QA alarm (/diagnostics WARN, ~/status alarms) when the devices die mid-episode."""
from __future__ import annotations

import json
import time

import pytest

from egorec_ros.dataset.task import Task
from egorec_ros.live.diagnostics import WARN
from helpers.cli import assert_clean
from helpers.dds_recorder import dds_env_for, running_recorder


@pytest.fixture
def dds_env():
    return dds_env_for(__name__)


def test_delete_list_and_verdict_over_dds(tmp_path, dds_env):
    with running_recorder(tmp_path, dds_env) as rec:
        def record(instruction: str) -> None:
            index = rec.start(instruction).episode_index
            assert rec.watch.wait(lambda s: s.state == "recording" and s.episode_index == index and s.rows > 20), \
                rec.log_text()

        record("pick")
        reply = rec.stop()
        assert reply.success and reply.episode_index == 1 and reply.rows > 20, reply.message
        assert reply.verdict in ("ok", "warn", "redo"), reply
        assert rec.watch.wait(lambda s: s.last_episode_index == 1 and s.last_verdict == reply.verdict)
        status = rec.ctl("status")
        assert "idle (idle)  task t" in status and "last episode 1: QA " in status, status
        record("place")
        assert rec.watch.status.stage == "recording"
        assert rec.stop().episode_index == 2

        listed = rec.list_episodes()
        assert [e["episode_index"] for e in listed] == [1, 2]
        assert [e["instruction"] for e in listed] == ["pick", "place"]
        assert all(e["rows"] > 20 and e["duration_s"] > 0.5 and e["verdict"] for e in listed), listed
        # no --upload-server: each episode's upload says so, and so does ~/status
        assert all(e["upload"] == {"state": "off"} for e in listed), listed
        assert rec.watch.status.upload_server == "" and rec.watch.status.upload_done == 0

        # a delete while episode 3 is being recorded: safe, and the recording goes on
        record("third")
        deleted = rec.delete(1)
        assert deleted.success and deleted.episode_index == 1, deleted.message
        refused = rec.delete(3)                       # the one being recorded
        assert not refused.success and "being recorded" in refused.message
        assert not rec.delete(99).success
        assert rec.stop().episode_index == 3
        assert [e["episode_index"] for e in rec.list_episodes()] == [2, 3]

        # the operator's redo: delete the last one; its number is not given again
        assert "episode_index 3" in rec.ctl("delete-last")
        listing = json.loads(rec.ctl("list", "--json"))
        assert listing["task"] == "t" and [e["episode_index"] for e in listing["episodes"]] == [2]
        assert rec.start().episode_index == 4
        assert rec.watch.wait(lambda s: s.episode_index == 4 and s.rows > 20)
        stopped = rec.ctl("stop")
        assert "episode_index 4" in stopped and "QA: " in stopped
        assert "episode_index 2" in rec.ctl("delete", "2")

        # live QA: the devices die mid-episode; a /diagnostics WARN names it within about a second
        record("cut")
        rec.kill_devices()
        killed = time.monotonic()
        hit = rec.watch.first_diagnostic(lambda d: d.name == f"{rec.name}: qa" and d.level == WARN, after=killed)
        assert hit is not None, rec.log_text()
        arrived, diag = hit
        assert "stream silent" in diag.message and arrived - killed <= 2.0, (arrived - killed, diag.message)
        assert rec.watch.wait(lambda s: any("stream silent" in a for a in s.alarms), timeout=5)
        cut = rec.stop()
        assert cut.verdict == "redo" and any("no new frame" in r for r in cut.reasons), cut
    assert [e.index for e in Task(rec.task_dir).episodes] == [4, 5]
    assert json.loads((rec.task_dir / "meta" / "info.json").read_text())["total_episodes"] == 5
    assert not (rec.task_dir / "meta" / "recycled_episode.json").exists()
    assert not list((rec.task_dir / "videos").rglob("episode-00[0-2].*"))
    assert_clean(rec.task_dir, env=dds_env)
