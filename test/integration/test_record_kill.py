"""Issue 24 item 10: `kill -9` during a live recording loses at most 0.5 s of its rows.

A real recorder in a child process (helpers/killed_recorder.py) is killed with SIGKILL at
random moments; `egorec recover --salvage` keeps the rows whose frames are in every video
file and that are in the crash journal. The rows built before the kill minus the rows kept
is what the kill cost. It was 0.8-1.6 s with the journal written a row group (2 s) at a time
and MP4 fragments cut only at keyframes (every 15 frames) behind a 13-frame encoder
look-ahead. The bound is on what the crash-safe layout loses: rows a machine too busy to keep
up still held queued in memory (the encoders' backlog, reported by the child) are lost by any
layout, and are counted apart (on a quiet machine they are 0-2).
"""
from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import pyarrow.parquet as pq

from helpers import killed_recorder
from helpers.cli import egorec
from helpers.store import Tiny, tiny_declaration
from egorec_ros.dataset import open_task
from egorec_ros.store import TaskWriter, episode_writer

KILLS = 4
MAX_LOST_S = 0.5
FPS = 30.0   # uvc_pair's


def _report(report: Path) -> tuple[int, int]:
    """(rows built, rows of them still queued in memory) as the child last reported."""
    text = report.read_text().split() if report.exists() else []
    return (int(text[0]), int(text[1])) if len(text) == 2 else (0, 0)


def _rows(report: Path) -> int:
    return _report(report)[0]


def _killed_recording(root: Path, after_rows: int) -> tuple[Path, int, int]:
    """(task dir, rows built by the kill, rows queued) of a child killed once it built ``after_rows`` rows."""
    task, report = root / "task", root / "rows"
    with open(root / "child.log", "wb") as log:
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])}     # test/: the helpers
        child = subprocess.Popen([sys.executable, killed_recorder.__file__, str(task), str(report)],
                                 stdout=log, stderr=log, env=env)
        try:
            deadline = time.monotonic() + 60
            while _rows(report) < after_rows and child.poll() is None and time.monotonic() < deadline:
                time.sleep(0.01)
            if _rows(report) < after_rows:
                pytest.fail(f"the recorder never built {after_rows} rows: {(root / 'child.log').read_text()[-3000:]}")
            os.kill(child.pid, signal.SIGKILL)
            assert child.wait(timeout=30) == -signal.SIGKILL
        finally:
            if child.poll() is None:
                child.kill()
                child.wait(timeout=30)
    # the child reports every 10 ms: up to one more row may have been built after its last report
    built, queued = _report(report)
    return task, built + 1, queued


def test_a_killed_recording_loses_at_most_half_a_second(tmp_path):
    rng = random.Random(24)
    lost, queued_s = [], []
    for k in range(KILLS):
        root = tmp_path / f"kill{k}"
        root.mkdir()
        task, built, queued = _killed_recording(root, after_rows=rng.randrange(20, 90))
        out = egorec("recover", "--salvage", task, timeout=120)
        assert out.returncode == 0, out.stdout + out.stderr
        committed = (task / "meta" / "info.json").exists()     # nothing kept: no episode at all
        episodes = list(open_task(task)) if committed else []
        assert len(episodes) <= 1, out.stdout
        kept = episodes[0].row["length"] if episodes else 0
        lost.append((built - kept) / FPS)
        queued_s.append(queued / FPS)
    print(f"rows lost per kill (s): {', '.join(f'{s:.2f}' for s in lost)}; of them still queued in memory "
          f"(a busy machine): {', '.join(f'{s:.2f}' for s in queued_s)}; load {os.getloadavg()[0]:.1f}")
    beyond = [lost_s - queue_s for lost_s, queue_s in zip(lost, queued_s)]
    assert max(beyond) <= MAX_LOST_S, f"lost per kill {lost} s, of which queued in memory {queued_s} s"
    assert min(lost) >= 0


def test_the_journal_keeps_up_while_parquet_row_groups_stay_full_size(tmp_path):
    """Rows reach the crash journal every JOURNAL_SECONDS, but the data parquet still gets
    FLUSH_ROWS-row groups (small groups would cost every reader)."""
    tiny = Tiny(tiny_declaration())
    every = int(tiny.decl.fps * episode_writer.JOURNAL_SECONDS)
    assert 1 <= every <= tiny.decl.fps * 0.2
    with TaskWriter(tmp_path / "task") as writer:
        episode = writer.begin(tiny.decl)
        for i in range(130):
            episode.append(tiny.row(i), tiny.frames(i))
        deadline = time.monotonic() + 30
        while episode.flushed_rows < 130 // every * every and time.monotonic() < deadline:
            time.sleep(0.01)
        journaled = episode.flushed_rows
        result = episode.end()
    assert journaled == 130 // every * every
    meta = pq.ParquetFile(result.data_path).metadata
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [60, 60, 10]
