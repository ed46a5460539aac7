"""Every file the store writes is atomic (issue 10 item 17): a process killed while the
episode row is written leaves the old row or none, never a torn one, and `recover`
commits an episode that was recorded to the end instead of setting it aside."""
from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
from pytest import MonkeyPatch

from helpers.store import Tiny
from helpers.cli import egorec
from egorec_ros.dataset import open_task
from egorec_ros.schema.episode_row import read_episode_row, write_episode_row
from egorec_ros.store import TaskWriter
from egorec_ros.validate.validate import validate_task


def killed_after_4_bytes(monkeypatch: MonkeyPatch) -> None:
    """pq.write_table dies after writing the parquet magic (what `kill -9` left in the field)."""
    real = pq.write_table

    def torn(table, where, *args, **kwargs):
        real(table, where, *args, **kwargs)
        with open(where, "r+b") as f:
            f.truncate(4)
        raise OSError("simulated kill while writing a parquet file")
    monkeypatch.setattr(pq, "write_table", torn)


def test_a_killed_row_write_leaves_the_previous_row(tmp_path: Path, monkeypatch: MonkeyPatch) -> None:
    path = tmp_path / "episode.parquet"
    write_episode_row(path, {"episode_index": 1, "length": 5})
    killed_after_4_bytes(monkeypatch)
    with pytest.raises(OSError, match="simulated kill"):
        write_episode_row(path, {"episode_index": 1, "length": 6})
    monkeypatch.undo()
    assert read_episode_row(path)["length"] == 5
    assert [p.name for p in tmp_path.iterdir()] == ["episode.parquet"]   # no temporary left beside it


def test_recover_commits_an_episode_killed_while_its_row_was_written(tmp_path: Path, tiny: Tiny,
                                                                     monkeypatch: MonkeyPatch) -> None:
    task = tmp_path / "task"
    with TaskWriter(task) as writer:
        tiny.write(writer, 4)
        killed_after_4_bytes(monkeypatch)
        with pytest.raises(RuntimeError, match="could not be committed"):
            tiny.write(writer, 5)
        monkeypatch.undo()
    staged = task / ".staging-episode-000002"
    assert not (staged / "episode.parquet").exists()   # no torn row
    listed = egorec("recover", "--list", str(task))
    assert "recorded to the end, 5 rows and every video complete" in listed.stdout, listed.stdout + listed.stderr
    proc = egorec("recover", str(task))
    assert proc.returncode == 0 and "episode 2: completed" in proc.stdout, proc.stdout + proc.stderr
    assert not (task / ".set_aside").exists() and not staged.exists()
    assert validate_task(task) == []
    episode = open_task(task).episode(2)
    assert len(episode) == 5 and sorted(episode.video_keys) == ["gripper_depth", "gripper_rgb"]
    assert episode.row["length"] == 5 and episode.row["stats"]["observation.gripper_state"]["count"] == 5
