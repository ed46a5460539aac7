"""Episode numbering (§1.3), recycling, deletion, the one-writer lock and staged leftovers."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from helpers.cli import egorec, run_python
from helpers.store import Tiny, read_info
from egorec_ros.dataset import open_task
from egorec_ros.store import EmptyEpisodeError, TaskWriter, UnfinishedEpisodesError
from egorec_ros.validate.validate import validate_task


def episode_index_column(path: Path) -> set[int]:
    return set(pq.read_table(path, columns=["episode_index"]).column(0).to_pylist())


def test_first_1000th_and_1001st_episode(tmp_path: Path, tiny: Tiny) -> None:
    task = tmp_path / "task"
    with TaskWriter(task) as writer:
        first = tiny.write(writer, 3)
    assert first.data_path == task / "data/chunk-000/episode-000.parquet"
    assert episode_index_column(first.data_path) == {1}
    # numbers 2..998 were used and deleted long ago: only the high-water mark remains
    doc = read_info(task)
    doc["total_episodes"] = 998
    (task / "meta" / "info.json").write_text(json.dumps(doc), encoding="utf-8")

    with TaskWriter(task) as writer:
        results = [tiny.write(writer, 3) for _ in range(3)]
    for result, index, chunk, file in zip(results, (999, 1000, 1001), (0, 0, 1), (998, 999, 0)):
        assert result.number.index == index
        assert result.data_path == task / f"data/chunk-{chunk:03d}/episode-{file:03d}.parquet"
        assert episode_index_column(result.data_path) == {index}   # k + 1
        assert (task / f"meta/episodes/chunk-{chunk:03d}/episode-{file:03d}.parquet").exists()
        for key, ext in (("gripper_rgb", "mp4"), ("gripper_depth", "mp4")):
            assert result.video_paths[key] == task / f"videos/chunk-{chunk:03d}/{key}/episode-{file:03d}.{ext}"
            assert result.video_paths[key].exists()
    assert read_info(task)["total_episodes"] == 1001
    assert [e.index for e in open_task(task)] == [1, 999, 1000, 1001]
    assert validate_task(task, decode=False) == []


def test_chunks_size_comes_from_info_json(tmp_path: Path, tiny: Tiny) -> None:
    task = tmp_path / "task"
    with TaskWriter(task, chunks_size=2) as writer:
        paths = [tiny.write(writer, 2).data_path for _ in range(3)]
    assert read_info(task)["chunks_size"] == 2
    assert [p.relative_to(task).as_posix() for p in paths] == [
        "data/chunk-000/episode-000.parquet", "data/chunk-000/episode-001.parquet",
        "data/chunk-001/episode-000.parquet"]
    with TaskWriter(task, chunks_size=1000) as writer:   # the task's own chunks_size wins
        assert tiny.write(writer, 2).data_path == task / "data/chunk-001/episode-001.parquet"
    assert [e.index for e in open_task(task)] == [1, 2, 3, 4]
    assert validate_task(task, decode=False) == []


def test_abort_frees_the_number(tmp_path: Path, tiny: Tiny) -> None:
    task = tmp_path / "task"
    with TaskWriter(task) as writer:
        tiny.write(writer, 3)
        episode = writer.begin(tiny.decl)
        episode.append(tiny.row(0), tiny.frames(0))
        episode.abort()
        marker = json.loads((task / "meta" / "recycled_episode.json").read_text())
        assert marker["episode_index"] == 2 and "freed_at" in marker
        assert not list(task.glob(".staging-*"))
        assert read_info(task)["total_episodes"] == 1
        assert validate_task(task, decode=False) == []
        reused = tiny.write(writer, 3)
    assert reused.number.index == 2
    assert not (task / "meta" / "recycled_episode.json").exists()   # the number is used now
    assert validate_task(task, decode=False) == []


def test_empty_episode_frees_the_number(tmp_path: Path, tiny: Tiny) -> None:
    with TaskWriter(tmp_path / "task") as writer:
        with pytest.raises(EmptyEpisodeError, match="no rows"):
            writer.begin(tiny.decl).end()
        assert writer.next_number().index == 1
        assert tiny.write(writer, 2).number.index == 1


def test_deleted_numbers_are_never_reused(tmp_path: Path, tiny: Tiny) -> None:
    task = tmp_path / "task"
    with TaskWriter(task) as writer:
        for _ in range(3):
            tiny.write(writer, 3)
        writer.delete(3)
        writer.delete(1)
        with pytest.raises(FileNotFoundError, match="episode 3 does not exist"):
            writer.delete(3)
    assert not list((task / "videos").rglob("episode-002.*"))
    assert not (task / "meta/episodes/chunk-000/episode-002.parquet").exists()
    assert read_info(task)["total_episodes"] == 3
    assert [e.index for e in open_task(task)] == [2]
    stats = json.loads((task / "meta" / "stats.json").read_text())
    assert stats["observation.gripper_state"]["count"] == 3   # rebuilt from episode 2 alone
    assert validate_task(task, decode=False) == []
    with TaskWriter(task) as writer:
        assert tiny.write(writer, 2).number.index == 4


LOCK_CODE = "import sys; from egorec_ros.store import TaskWriter; TaskWriter(sys.argv[1]).close(); print('wrote')"


def test_second_writer_in_another_process_gets_a_clear_error(tmp_path: Path) -> None:
    task = tmp_path / "task"
    with TaskWriter(task):
        proc = run_python(["-c", LOCK_CODE, str(task)])
        assert proc.returncode != 0
        assert "TaskLockedError" in proc.stderr
        assert f"already being written by pid {os.getpid()}" in proc.stderr
        assert "only one writer per task directory" in proc.stderr
        recover = egorec("recover", str(task))
        assert recover.returncode == 0 and "nothing to recover" in recover.stdout
    proc = run_python(["-c", LOCK_CODE, str(task)])
    assert proc.returncode == 0 and "wrote" in proc.stdout, proc.stderr


STAGE_AND_DIE = """
import os, sys
sys.path.insert(0, sys.argv[2])
from helpers.store import Tiny, tiny_declaration
from egorec_ros.store import TaskWriter
tiny = Tiny(tiny_declaration())
episode = TaskWriter(sys.argv[1]).begin(tiny.decl)
for i in range(5):
    episode.append(tiny.row(i), tiny.frames(i))
os._exit(0)   # dies without ending the episode, as a crash would
"""


def test_staged_leftover_refuses_a_new_writer(tmp_path: Path, tiny: Tiny) -> None:
    task = tmp_path / "task"
    with TaskWriter(task) as writer:
        tiny.write(writer, 3)
    proc = run_python(["-c", STAGE_AND_DIE, str(task), str(Path(__file__).parents[1])])
    assert proc.returncode == 0, proc.stderr
    assert [p.name for p in task.glob(".staging-*")] == [".staging-episode-000002"]
    with pytest.raises(UnfinishedEpisodesError) as err:
        TaskWriter(task)
    message = str(err.value)
    assert ".staging-episode-000002" in message
    assert f"egorec recover {task}" in message and f"egorec recover --salvage {task}" in message
    with pytest.raises(UnfinishedEpisodesError):
        TaskWriter(task)   # the refused writer released its lock: the same error, not a lock error
    recover = egorec("recover", str(task))
    assert recover.returncode == 0, recover.stderr
    with TaskWriter(task) as writer:
        assert tiny.write(writer, 2).number.index == 2   # set aside, so recycled
    assert validate_task(task, decode=False) == []
