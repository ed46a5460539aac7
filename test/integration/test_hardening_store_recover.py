"""`validate` and `recover` on folders that are not (yet) tasks (issue 10 items 19, 20): a
task killed during its first episode (staged data, no info.json) points at `egorec recover`;
`recover` on a missing path or a non-task folder is an error, not "nothing to recover"."""
from __future__ import annotations

from pathlib import Path

from helpers.cli import egorec, run_python
from egorec_ros.validate.validate import validate_task

KILLED_IN_FIRST_EPISODE = """
import os, sys, time
sys.path.insert(0, sys.argv[2])
from helpers.store import Tiny, tiny_declaration
from egorec_ros.store import TaskWriter
tiny = Tiny(tiny_declaration(videos=False))
episode = TaskWriter(sys.argv[1]).begin(tiny.decl)
for i in range(int(sys.argv[3])):
    episode.append(tiny.row(i))
while episode.flushed_rows < int(sys.argv[3]) // 60 * 60:
    time.sleep(0.01)
os._exit(0)   # as abrupt as kill -9: no end(), no lock release, no cleanup
"""


def killed_in_first_episode(task: Path, rows: int = 70) -> None:
    proc = run_python(["-c", KILLED_IN_FIRST_EPISODE, str(task), str(Path(__file__).parents[1]), str(rows)])
    assert proc.returncode == 0, proc.stderr
    assert (task / ".staging-episode-000001").is_dir() and not (task / "meta" / "info.json").exists()


def test_validate_points_at_recover_when_the_first_episode_was_killed(tmp_path: Path) -> None:
    task = tmp_path / "task"
    killed_in_first_episode(task)
    [finding] = validate_task(task)
    assert finding.file == "meta/info.json"
    assert ".staging-episode-000001" in finding.message and "no episode was committed yet" in finding.message
    assert f"egorec recover {task}" in finding.message and f"egorec recover --salvage {task}" in finding.message
    proc = egorec("validate", str(task))
    assert proc.returncode == 1 and f"egorec recover {task}" in proc.stdout, proc.stdout + proc.stderr
    # and the advice works: salvage commits the journaled rows as episode 1 of a new, valid task
    proc = egorec("recover", "--salvage", str(task))
    assert proc.returncode == 0 and "episode 1: salvaged: kept 60 rows" in proc.stdout, proc.stdout + proc.stderr
    assert validate_task(task) == []


def test_validate_of_a_missing_folder_says_so(tmp_path: Path) -> None:
    [finding] = validate_task(tmp_path / "nope")
    assert "does not exist" in finding.message
    [finding] = validate_task(tmp_path)
    assert finding.message == "missing: not a task directory"


def test_recover_of_a_missing_path_is_an_error(tmp_path: Path) -> None:
    missing = tmp_path / "no_such_task"
    for args in (["recover"], ["recover", "--list"], ["recover", "--salvage"]):
        proc = egorec(*args, str(missing))
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert f"egorec: {missing}: no such directory" in proc.stderr
        assert "nothing to recover" not in proc.stdout and "Traceback" not in proc.stderr
    assert not missing.exists()   # nothing created on the way (no meta/.writer.lock)


def test_recover_of_a_folder_holding_tasks_names_them(tmp_path: Path) -> None:
    killed_in_first_episode(tmp_path / "pick_cup")
    proc = egorec("recover", str(tmp_path))
    assert proc.returncode == 1
    assert f"{tmp_path}: not a task directory" in proc.stderr and "task directories inside it: pick_cup" in proc.stderr


def test_a_task_whose_only_episode_was_set_aside_is_still_a_task(tmp_path: Path) -> None:
    task = tmp_path / "task"
    killed_in_first_episode(task)
    assert egorec("recover", str(task)).returncode == 0
    proc = egorec("recover", str(task))
    assert proc.returncode == 0 and proc.stdout.strip() == f"{task}: nothing to recover", proc.stdout + proc.stderr
    [finding] = validate_task(task)
    assert "no episode was committed yet; .set_aside/ holds" in finding.message


def test_recover_sets_aside_a_first_episode_with_nothing_journaled(tmp_path: Path) -> None:
    """Killed before the first row group: no info.json will ever exist for it; the folder is
    still a task (its staging is there) and recover sets it aside."""
    task = tmp_path / "task"
    killed_in_first_episode(task, 30)
    proc = egorec("recover", str(task))
    assert proc.returncode == 0 and "episode 1: set_aside" in proc.stdout, proc.stdout + proc.stderr
    assert list((task / ".set_aside").iterdir())
