"""Crash safety: a writer process killed with SIGKILL mid-episode, and commits cut short
after (or just before) the commit point; `egorec recover` run as the real CLI.

The killed writer is this file run as a script (``crash_child``): it records episode 1
of the Appendix B rig, then streams episode 2 until several row groups are flushed,
reports what it flushed, and keeps encoding slowly until the test kills it.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from pytest import MonkeyPatch

from helpers.cli import egorec, run_python
from helpers.store import Tiny, read_info
from egorec_ros.codecs.probe import count_frames
from egorec_ros.dataset import open_task
from egorec_ros.store import TaskWriter
from egorec_ros.validate.validate import validate_task

FLUSHED_AT = 120          # 2 row groups of FLUSH_ROWS (60)
SLOW_UNTIL = 179          # rows appended after the report stay below the next flush (180)


# ---- the killed writer ---------------------------------------------------------------------

def crash_child(task: Path, report: Path) -> None:
    from helpers.store import START_NS, record_episode, small_appendix_b
    from egorec_ros.assembly.assembler import Assembler
    from egorec_ros.recorder.episode_output import EpisodeOutput
    from egorec_ros.sim.replay import simulate
    from egorec_ros.store import episode_writer

    episode_writer.FLUSH_BYTES = 1 << 62   # row groups by row count only, so the test knows where they end
    episode_writer.JOURNAL_SECONDS = episode_writer.FLUSH_ROWS / 30.0   # ... and the journal with them
    rig = small_appendix_b()
    writer = TaskWriter(task, depth_container="mkv")
    record_episode(writer, rig, 0.5, seed=3)

    class ReportingOutput(EpisodeOutput):
        """Appends rows fast up to FLUSHED_AT, then slowly; reports once the flushed rows
        are in the journal and every stream has their frames in complete fragments."""
        stamps: list[int] = []

        def row(self, values: dict, frames: dict) -> None:
            super().row(values, frames)
            self.stamps.append(int(values["hardware_ns"]))
            episode = self.episode
            if episode.rows < FLUSHED_AT:
                return
            time.sleep(0.03)     # encoders stay busy while the test pulls the plug
            if not report.exists() and ready(episode):
                partial = report.with_suffix(".tmp")
                partial.write_text(json.dumps({"index": episode.index, "flushed": episode.flushed_rows,
                                               "hardware_ns": self.stamps[:episode.flushed_rows]}))
                partial.replace(report)
            if episode.rows == SLOW_UNTIL:
                time.sleep(3600)

    def ready(episode) -> bool:
        videos = [p for p in episode.folder.iterdir() if p.suffix in (".mp4", ".mkv")]
        return episode.flushed_rows == FLUSHED_AT and all(count_frames(p) >= FLUSHED_AT for p in videos)

    output = ReportingOutput(writer, rig)
    assembler = Assembler(rig, output, start_ns=START_NS)
    output.account_from(assembler.counts)
    for sample in simulate(rig, None, seed=4, start_ns=START_NS):
        assembler.push(sample)


@pytest.fixture(scope="module")
def killed_task(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """(task dir after the kill, the child's report)."""
    root = tmp_path_factory.mktemp("crash")
    task, report = root / "task", root / "report.json"
    with open(root / "child.log", "wb") as log:
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])}     # test/: the helpers
        child = subprocess.Popen([sys.executable, __file__, str(task), str(report)], stdout=log, stderr=log, env=env)
        deadline = time.monotonic() + 120
        while not report.exists() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if not report.exists():
            child.kill()
            pytest.fail(f"the writer process never reported: {(root / 'child.log').read_text()[-3000:]}")
        time.sleep(0.3)
        os.kill(child.pid, signal.SIGKILL)
        assert child.wait(timeout=30) == -signal.SIGKILL
    return task, json.loads(report.read_text())


@pytest.fixture
def crashed(killed_task: tuple[Path, dict], tmp_path: Path) -> tuple[Path, dict]:
    task, report = killed_task
    return Path(shutil.copytree(task, tmp_path / "task")), report


def test_killed_writer_leaves_earlier_episodes_valid(crashed: tuple[Path, dict]) -> None:
    task, report = crashed
    assert report["index"] == 2 and report["flushed"] == FLUSHED_AT
    findings = validate_task(task)
    assert [(f.file, f.rule) for f in findings] == [(".staging-episode-000002", "DESIGN:commit")], findings
    assert "egorec recover" in findings[0].message
    assert [e.index for e in open_task(task)] == [1]
    listed = egorec("recover", "--list", str(task))
    assert listed.returncode == 0 and f"{FLUSHED_AT} rows journaled" in listed.stdout, listed.stdout
    assert list(task.glob(".staging-*"))   # --list changes nothing


def test_salvage_keeps_the_flushed_rows(crashed: tuple[Path, dict]) -> None:
    task, report = crashed
    staged = task / ".staging-episode-000002"
    videos = sorted(p for p in staged.iterdir() if p.suffix in (".mp4", ".mkv"))
    assert len(videos) == 5
    for video in videos:   # the premise: every stream holds at least the flushed rows' frames
        assert count_frames(video) >= FLUSHED_AT, video.name

    proc = egorec("recover", "--salvage", str(task))
    assert proc.returncode == 0, proc.stderr
    assert f"episode 2: salvaged: kept {FLUSHED_AT} rows" in proc.stdout
    assert validate_task(task) == []
    assert not list(task.glob(".staging-*"))
    episode = open_task(task).episode(2)
    table = episode.read(["episode_index", "frame_index", "hardware_ns"])
    assert table.num_rows == FLUSHED_AT
    assert table.column("frame_index").to_pylist() == list(range(FLUSHED_AT))
    assert set(table.column("episode_index").to_pylist()) == {2}
    assert table.column("hardware_ns").to_pylist() == report["hardware_ns"]   # the same rows, in order
    assert sorted(episode.video_keys) == sorted(v.stem for v in videos)
    for key in episode.video_keys:
        assert count_frames(episode.video_path(key)) == FLUSHED_AT, key
    assert episode.row["length"] == FLUSHED_AT
    assert episode.row["drop_stats"]["salvaged"]["kept_rows"] == FLUSHED_AT
    # the per-stream accounting checkpointed with the journal survives the crash
    assert episode.row["drop_stats"]["salvaged"]["accounting_as_of_row"] in (FLUSHED_AT - 60, FLUSHED_AT)
    assert episode.row["drop_stats"]["streams"]["gripper_a.left_force"]["used"] > 0
    rows, matrices = episode.force_matrices("observation.gripper_left_force_matrix")
    assert len(rows) > 0 and np.isfinite(matrices).all()
    info = read_info(task)
    assert info["total_episodes"] == 2
    with TaskWriter(task) as writer:
        assert writer.next_number().index == 3


def test_salvage_drops_a_torn_last_row_group(crashed: tuple[Path, dict]) -> None:
    """Killed while the journal was being written: the complete row groups before it count."""
    task, report = crashed
    journal = task / ".staging-episode-000002" / "journal-000.arrows"
    with open(journal, "r+b") as f:
        f.truncate(journal.stat().st_size - 100)
    proc = egorec("recover", "--salvage", str(task))
    kept = FLUSHED_AT - 60
    assert proc.returncode == 0 and f"kept {kept} rows" in proc.stdout, proc.stdout + proc.stderr
    assert validate_task(task) == []
    episode = open_task(task).episode(2)
    assert episode.column("hardware_ns").to_pylist() == report["hardware_ns"][:kept]
    assert "torn after 1 complete batches" in " ".join(episode.row["drop_stats"]["salvaged"]["notes"])


def test_recover_without_salvage_sets_aside_and_recycles(crashed: tuple[Path, dict]) -> None:
    task, _ = crashed
    proc = egorec("recover", str(task))
    assert proc.returncode == 0, proc.stderr
    assert "episode 2: set_aside" in proc.stdout
    aside = list((task / ".set_aside").iterdir())
    assert len(aside) == 1 and aside[0].name.startswith(".staging-episode-000002-")
    assert (aside[0] / "manifest.json").exists() and list(aside[0].glob("journal-*.arrows"))
    assert json.loads((task / "meta" / "recycled_episode.json").read_text())["episode_index"] == 2
    assert validate_task(task) == []
    assert [e.index for e in open_task(task)] == [1]
    with TaskWriter(task) as writer:
        assert writer.next_number().index == 2


# ---- commits cut short -------------------------------------------------------------------------

def fail(step: str):
    def raiser(*args: object, **kwargs: object) -> None:
        raise OSError(f"simulated crash in {step}")
    return raiser


@pytest.mark.parametrize("step", ["update_info", "merge_stats"])
def test_crash_after_the_commit_point_is_rolled_forward(tmp_path: Path, tiny: Tiny, monkeypatch: MonkeyPatch,
                                                        step: str) -> None:
    from egorec_ros.store import commit
    task = tmp_path / "task"
    with TaskWriter(task) as writer:
        tiny.write(writer, 4)
        monkeypatch.setattr(commit.metadata, step, fail(step))
        with pytest.raises(RuntimeError, match=f"could not be committed .*egorec recover {task}"):
            tiny.write(writer, 5)
        monkeypatch.undo()
    assert (task / "data/chunk-000/episode-001.parquet").exists()   # past the commit point
    assert any(f.rule == "DESIGN:commit" for f in validate_task(task, decode=False))
    proc = egorec("recover", str(task))
    assert proc.returncode == 0 and "episode 2: completed" in proc.stdout, proc.stdout + proc.stderr
    assert validate_task(task) == []
    info = read_info(task)
    stats = json.loads((task / "meta" / "stats.json").read_text())
    assert info["total_episodes"] == 2
    assert stats["observation.gripper_state"]["count"] == 9   # 4 + 5 rows, counted once each
    assert [len(e) for e in open_task(task)] == [4, 5]


def crash_before_data_file(monkeypatch: MonkeyPatch) -> None:
    """Let the videos and the episode row move into place, die before the data parquet."""
    from egorec_ros.store import commit
    real = commit.atomic.replace

    def replace(src: Path, dst: Path) -> None:
        if Path(src).name == commit.DATA_FILE:
            raise OSError("simulated power loss before the commit point")
        real(src, dst)
    monkeypatch.setattr(commit.atomic, "replace", replace)


def commit_cut_before_data_file(tmp_path: Path, tiny: Tiny, monkeypatch: MonkeyPatch) -> Path:
    """A task with episode 1 committed and episode 2 finished but cut before its commit point."""
    task = tmp_path / "task"
    with TaskWriter(task) as writer:
        tiny.write(writer, 4)
        crash_before_data_file(monkeypatch)
        with pytest.raises(RuntimeError, match="could not be committed"):
            tiny.write(writer, 5)
        monkeypatch.undo()
    return task


def test_crash_before_the_commit_point_of_a_finished_episode_is_completed(tmp_path: Path, tiny: Tiny,
                                                                        monkeypatch: MonkeyPatch) -> None:
    """end() had verified everything and moved videos and the episode row; the data file
    never moved. The recording was complete, so plain recover commits it whole."""
    task = commit_cut_before_data_file(tmp_path, tiny, monkeypatch)
    assert (task / "videos/chunk-000/gripper_rgb/episode-001.mp4").exists()   # moved before the crash
    proc = egorec("recover", str(task))
    assert proc.returncode == 0 and "episode 2: completed" in proc.stdout, proc.stdout + proc.stderr
    assert validate_task(task) == []
    assert [len(e) for e in open_task(task)] == [4, 5]
    assert not (task / ".set_aside").exists()


def test_salvage_commits_a_finished_but_uncommitted_episode(tmp_path: Path, tiny: Tiny, monkeypatch: MonkeyPatch) -> None:
    task = commit_cut_before_data_file(tmp_path, tiny, monkeypatch)
    proc = egorec("recover", "--salvage", str(task))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert validate_task(task) == []
    episode = open_task(task).episode(2)
    assert len(episode) == 5 and sorted(episode.video_keys) == ["gripper_depth", "gripper_rgb"]
    assert count_frames(episode.video_path("gripper_rgb")) == 5


def test_crash_removing_the_staging_folder_is_completed(tmp_path: Path, tiny: Tiny, monkeypatch: MonkeyPatch) -> None:
    from egorec_ros.store import commit

    def cut_short(folder: Path) -> None:
        (Path(folder) / "manifest.json").unlink()
        raise OSError("simulated crash while removing the staging folder")
    task = tmp_path / "task"
    with TaskWriter(task) as writer:
        monkeypatch.setattr(commit.shutil, "rmtree", cut_short)
        with pytest.raises(RuntimeError, match="could not be committed"):
            tiny.write(writer, 3)
        monkeypatch.undo()
    proc = egorec("recover", str(task))
    assert proc.returncode == 0 and "episode 1: completed" in proc.stdout, proc.stdout + proc.stderr
    assert validate_task(task) == [] and [len(e) for e in open_task(task)] == [3]


def test_recover_leaves_a_live_writer_alone(tmp_path: Path, tiny: Tiny) -> None:
    task = tmp_path / "task"
    with TaskWriter(task) as writer:
        episode = writer.begin(tiny.decl)
        for i in range(3):
            episode.append(tiny.row(i), tiny.frames(i))
        for args in (["recover"], ["recover", "--salvage"], ["recover", "--list"]):
            proc = egorec(*args, str(task))
            assert proc.returncode == 1 and "already being written by pid" in proc.stderr, proc.stderr
            assert "Traceback" not in proc.stderr
        assert (task / ".staging-episode-000001").is_dir()
        assert episode.end().rows == 3
    assert validate_task(task) == []


SALVAGE_LATE_COLUMN = """
import os, sys, time
import numpy as np
sys.path.insert(0, sys.argv[2])
from helpers.store import Tiny, tiny_declaration
from egorec_ros.store import TaskWriter
tiny = Tiny(tiny_declaration(videos=False))
episode = TaskWriter(sys.argv[1]).begin(tiny.decl)
for i in range(130):
    row = tiny.row(i)
    if i < 60:   # the gripper state appears only with the second row group: a new journal segment
        row["observation.gripper_state"] = None
    episode.append(row)
while episode.flushed_rows < 120:
    time.sleep(0.01)
os._exit(0)
"""


def test_salvage_joins_journal_segments_of_a_growing_schema(tmp_path: Path) -> None:
    task = tmp_path / "task"
    proc = run_python(["-c", SALVAGE_LATE_COLUMN, str(task), str(Path(__file__).parents[1])])
    assert proc.returncode == 0, proc.stderr
    assert len(list((task / ".staging-episode-000001").glob("journal-*.arrows"))) == 2
    proc = egorec("recover", "--salvage", str(task))
    assert proc.returncode == 0 and "kept 120 rows" in proc.stdout, proc.stdout + proc.stderr
    assert validate_task(task) == []
    states = np.array(open_task(task).episode(1).column("observation.gripper_state").to_pylist())
    assert states.shape == (120, 3)
    assert not states[:60].any()     # §5.5 default before the column appeared
    np.testing.assert_array_equal(states[60:], [[i, 1.0, -i] for i in range(60, 120)])
    stats = json.loads((task / "meta" / "stats.json").read_text())
    assert stats["observation.gripper_state"]["count"] == 60   # default rows are not samples


if __name__ == "__main__":
    crash_child(Path(sys.argv[1]), Path(sys.argv[2]))
