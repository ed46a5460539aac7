"""`egorec delete` and TaskWriter.delete: the episode's files go, total_episodes stays, numbers are
never reused after delete + record, stats.json is rebuilt from the episodes left, the task
validates; a deletion interrupted by a crash is finished by the next writer; a task a recorder
holds is refused with the way to ask the recorder instead."""
from __future__ import annotations

import json
from pathlib import Path

from egorec_ros.dataset.task import Task
from egorec_ros.layout.paths import TaskPaths
from egorec_ros.store import TaskWriter
from egorec_ros.store.delete import INTENT_PREFIX, episode_files
from egorec_ros.validate.validate import validate_task
from helpers.cli import assert_clean, egorec
from helpers.store import Tiny


def three_episodes(task: Path, tiny: Tiny) -> None:
    with TaskWriter(task) as writer:
        for rows in (3, 4, 5):
            tiny.write(writer, rows)


def files_of(task: Path, n: int) -> list[Path]:
    paths = TaskPaths.from_info(task, json.loads((task / "meta/info.json").read_text()))
    return episode_files(paths, paths.number(n))


def test_delete_command_removes_files_and_never_reuses_numbers(tmp_path: Path, tiny: Tiny) -> None:
    task = tmp_path / "task"
    three_episodes(task, tiny)
    gone = files_of(task, 1) + files_of(task, 3)
    assert len(gone) == 2 * 4 and all(p.exists() for p in gone)    # data, 2 videos, row
    out = egorec("delete", task, "1,3", "--yes")
    assert out.returncode == 0, out.stderr
    assert "episode 1: deleted (4 files); its number is not reused" in out.stdout
    assert not any(p.exists() for p in gone)
    assert [e.index for e in Task(task).episodes] == [2]
    info = json.loads((task / "meta/info.json").read_text())
    assert info["total_episodes"] == 3                              # never rolled back
    stats = json.loads((task / "meta/stats.json").read_text())
    assert stats["observation.gripper_state"]["count"] == 4          # episode 2 alone (4 rows)
    assert not (task / "meta/recycled_episode.json").exists()       # a delete frees no number
    assert_clean(task)
    with TaskWriter(task) as writer:                                # record again: 4, not 1 or 3
        assert tiny.write(writer, 2).number.index == 4
    assert [e.index for e in Task(task).episodes] == [2, 4]
    assert_clean(task)


def test_delete_refusals_leave_everything(tmp_path: Path, tiny: Tiny) -> None:
    task = tmp_path / "task"
    three_episodes(task, tiny)
    before = sorted(p for p in task.rglob("*") if p.is_file())
    unconfirmed = egorec("delete", task, "2")                         # stdin is no terminal, no --yes
    assert unconfirmed.returncode == 1 and "pass --yes" in unconfirmed.stderr
    missing = egorec("delete", task, "2,9", "--yes")
    assert missing.returncode == 1 and "has no episode 9 (it has 1-3); nothing deleted" in missing.stderr
    bad = egorec("delete", task, "two", "--yes")
    assert bad.returncode == 1 and "'two' is not an episode number" in bad.stderr
    with TaskWriter(task):                                            # a recorder holds the task
        locked = egorec("delete", task, "2", "--yes")
    assert locked.returncode == 1 and "egorec ctl delete N" in locked.stderr, locked.stderr
    assert sorted(p for p in task.rglob("*") if p.is_file()) == before
    ranged = egorec("delete", task, "1-2", "--yes")
    assert ranged.returncode == 0 and [e.index for e in Task(task).episodes] == [3]


def test_interrupted_deletion_is_finished_by_the_next_writer(tmp_path: Path, tiny: Tiny) -> None:
    task = tmp_path / "task"
    three_episodes(task, tiny)
    files = files_of(task, 2)
    # a crash right after the commit point: intent written, data gone, videos and row still there
    intent = task / "meta" / f"{INTENT_PREFIX}000002.json"
    intent.write_text(json.dumps({"episode_index": 2, "files": [str(p.relative_to(task)) for p in files]}))
    files[0].unlink()
    assert validate_task(task, decode=False)          # strays: the videos and row of a gone episode
    with TaskWriter(task) as writer:
        assert writer.next_number().index == 4
    assert not intent.exists() and not any(p.exists() for p in files)
    assert [e.index for e in Task(task).episodes] == [1, 3]
    assert json.loads((task / "meta/stats.json").read_text())["observation.gripper_state"]["count"] == 3 + 5
    assert_clean(task)
