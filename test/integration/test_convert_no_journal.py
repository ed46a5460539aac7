"""A conversion writes no crash journal (issue 13): the bag is the rows' source, so an
interrupted conversion is run again rather than salvaged, and the journal's second copy of
every row (lz4, fsync) is work the converter need not do. A recording still journals."""
from __future__ import annotations

from pathlib import Path

import pytest

from egorec_ros.converter.convert_run import convert_bags
from egorec_ros.converter.episode_job import ConvertSettings
from egorec_ros.store.journal import SEGMENT_GLOB, Journal
from helpers.cli import egorec, run_python
from helpers.convert import sim_bag, small_rig


def test_a_conversion_never_writes_the_journal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: Journal, table: object) -> None:
        raise AssertionError("the converter wrote the crash journal")

    monkeypatch.setattr(Journal, "write", refuse)
    bag = sim_bag(tmp_path / "bag", 3.0, seed=5)
    result = convert_bags([bag], ConvertSettings(small_rig(), "pick"), out=tmp_path / "out", progress=False)
    assert not result.failures, result.failures
    assert sum(o.rows for b in result.bags for _, o in b.episodes) > 60   # more than one row group written


KILLED = """
import os, sys, time
sys.path.insert(0, sys.argv[3])
from helpers.store import Tiny, tiny_declaration
from egorec_ros.store import TaskWriter
tiny = Tiny(tiny_declaration())
episode = TaskWriter(sys.argv[1], crash_journal=sys.argv[2] == "journal").begin(tiny.decl)
for i in range(130):
    episode.append(tiny.row(i), tiny.frames(i))
deadline = time.monotonic() + 30
while episode.flushed_rows < 120 and time.monotonic() < deadline:   # two row groups on disk
    time.sleep(0.05)
os._exit(0)   # as abrupt as kill -9
"""


def _killed(task: Path, journal: bool) -> Path:
    proc = run_python(["-c", KILLED, str(task), "journal" if journal else "none", str(Path(__file__).parents[1])])
    assert proc.returncode == 0, proc.stderr
    return task / ".staging-episode-000001"


def test_a_recording_journals_and_an_unjournaled_episode_is_set_aside(tmp_path: Path) -> None:
    assert list(_killed(tmp_path / "recorded", journal=True).glob(SEGMENT_GLOB))
    staged = _killed(tmp_path / "converted", journal=False)
    assert (staged / "data.parquet").exists() and not list(staged.glob(SEGMENT_GLOB))

    proc = egorec("recover", "--salvage", str(tmp_path / "converted"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "nothing to salvage" in proc.stdout + proc.stderr
    assert not staged.exists()
