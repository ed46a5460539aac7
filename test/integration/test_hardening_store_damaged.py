"""Damaged files (issue 10 item 21): `inspect` (text, --json, --html) names each damaged
file and summarises the rest; `validate` does not call a damaged episode's videos and row
"orphans"; `recover` says what it can do about an unreadable data parquet and, asked to,
sets the episode aside."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.store import Tiny, read_info
from helpers.cli import egorec
from egorec_ros.store import TaskWriter
from egorec_ros.validate.validate import validate_task

DATA_1 = "data/chunk-000/episode-000.parquet"
ROW_2 = "meta/episodes/chunk-000/episode-001.parquet"
RGB_3 = "videos/chunk-000/gripper_rgb/episode-002.mp4"


def corrupt_footer(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-40:-8] = b"\xff" * 32          # the footer's thrift no longer parses
    path.write_bytes(bytes(data))


def truncate(path: Path, size: int) -> None:
    path.write_bytes(path.read_bytes()[:size])


@pytest.fixture
def three_episodes(tmp_path: Path, tiny: Tiny) -> Path:
    task = tmp_path / "task"
    with TaskWriter(task) as writer:
        for rows in (4, 5, 6):
            tiny.write(writer, rows)
    return task


@pytest.fixture
def damaged(three_episodes: Path) -> Path:
    corrupt_footer(three_episodes / DATA_1)
    truncate(three_episodes / ROW_2, 4)
    truncate(three_episodes / RGB_3, 300)
    return three_episodes


def test_inspect_names_damaged_files_and_summarises_the_rest(damaged: Path) -> None:
    proc = egorec("inspect", str(damaged))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert any(line.strip().startswith(f"episode     1: DAMAGED {DATA_1}: OSError") for line in lines), lines
    assert any(f"DAMAGED {ROW_2}: ArrowInvalid" in line for line in lines), lines
    assert any("episode     2:      5 rows" in line for line in lines), lines
    assert any("episode     3:      6 rows" in line for line in lines), lines
    assert "2 damaged file(s)" in proc.stdout and f"egorec recover {damaged}" in proc.stdout

    proc = egorec("inspect", "--json", str(damaged))
    report = json.loads(proc.stdout)
    assert proc.returncode == 1 and report["damaged"] == 2
    first, second, third = report["episodes"]
    assert first["damaged"][0].startswith(DATA_1) and "rows" not in first
    assert second["rows"] == 5 and second["damaged"][0].startswith(ROW_2)
    assert third["rows"] == 6 and "damaged" not in third


def test_inspect_html_reports_a_truncated_video(damaged: Path, tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    proc = egorec("inspect", "--html", str(page), str(damaged))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    html = page.read_text()
    for name, error in ((DATA_1, "OSError"), (ROW_2, "ArrowInvalid"), (RGB_3, "InvalidDataError")):
        assert f"damaged: {name}: {error}" in html, name
    assert html.count("<img src='data:image/png") == 3   # episode 2: rgb + depth; episode 3: depth


def test_validate_keeps_a_damaged_episodes_files_out_of_the_orphans(damaged: Path) -> None:
    findings = validate_task(damaged)
    assert not [f for f in findings if "orphan" in f.message], findings
    [data] = [f for f in findings if f.file == DATA_1]
    assert "data parquet cannot be read" in data.message and f"egorec recover {damaged}" in data.message
    assert {f.file for f in findings} == {DATA_1, ROW_2, RGB_3}, findings


def test_recover_says_what_it_can_do_and_sets_the_episode_aside(three_episodes: Path, tiny: Tiny) -> None:
    task = three_episodes
    corrupt_footer(task / DATA_1)
    proc = egorec("recover", str(task))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"episode 1: committed, but its data file {DATA_1} cannot be read (OSError" in proc.stdout
    assert "recover cannot rebuild it" in proc.stdout and f"egorec recover --set-aside-damaged {task}" in proc.stdout
    assert (task / DATA_1).exists()              # nothing moved without asking

    proc = egorec("recover", "--set-aside-damaged", str(task))
    assert proc.returncode == 0 and "episode 1: set aside (data file damaged)" in proc.stdout, proc.stdout + proc.stderr
    [aside] = (task / ".set_aside").iterdir()
    assert sorted(p.name for p in aside.iterdir()) == [
        "data__chunk-000__episode-000.parquet", "meta__episodes__chunk-000__episode-000.parquet",
        "videos__chunk-000__gripper_depth__episode-000.mp4", "videos__chunk-000__gripper_rgb__episode-000.mp4"]
    assert validate_task(task) == []
    stats = json.loads((task / "meta" / "stats.json").read_text())
    assert stats["observation.gripper_state"]["count"] == 5 + 6
    assert read_info(task)["total_episodes"] == 3
    with TaskWriter(task) as writer:
        assert tiny.write(writer, 2).number.index == 4   # the damaged episode's number is not reused
    assert egorec("recover", str(task)).stdout.strip() == f"{task}: nothing to recover"
