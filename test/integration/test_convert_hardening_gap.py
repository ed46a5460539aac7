"""Issue 10 item 5: a bag with days of silence between its camera frames and its next
sample converts in seconds into an episode that ends at the silence (a choice, README:
``--max-gap``, 10 s by default), with a note saying where and what to do."""
from __future__ import annotations

import json

import pyarrow.parquet as pq

from egorec_ros.messages.payloads.imu import IMU
from egorec_ros.validate.validate import validate_task
from helpers.cli import egorec
from helpers.convert import START_NS, data_table
from helpers.message_bags import camera_messages, imu_message, write_messages

DAY_NS = 86400 * 10**9
RIG = ("name: g\ndevices:\n  ego: {kind: s80m, role: ego, streams: {left: {topic: /cam/image_raw, width: 64, "
       "height: 48}, imu: {topic: /imu}}}\n")


def imu_at(t: int) -> tuple:
    return "/imu", IMU, t, imu_message(t)


def test_days_without_a_master_frame_end_the_episode_with_a_note(tmp_path):
    later = START_NS + 3 * DAY_NS
    folder = write_messages(tmp_path / "gap", [
        *camera_messages("/cam/image_raw", None, frames=30),
        *[imu_at(START_NS + i * 10_000_000) for i in range(100)],
        *[imu_at(later + i * 10_000_000) for i in range(10)]])
    rig = tmp_path / "rig.yaml"
    rig.write_text(RIG)
    done = egorec("convert", folder, "--rig", rig, "--task", "conv", "--out", tmp_path / "out", timeout=120)
    assert done.returncode == 0, done.stderr
    task = tmp_path / "out" / "conv"
    assert validate_task(task) == []
    table = data_table(task)
    assert table.num_rows == 30
    row = pq.read_table(next((task / "meta" / "episodes").rglob("*.parquet")))
    drops = json.loads(row["drop_stats"][0].as_py())
    assert drops["streams"]["ego.left"].get("repeated", 0) == 0
    qa = json.loads(row["qa"][0].as_py())             # the verdict, computed at the conversion's commit
    assert qa["verdict"] in ("ok", "warn", "redo") and f"  episode 1 QA: {qa['verdict']}" in done.stdout.splitlines()
    last_frame = START_NS + 29 * 33_333_333 + 1_000_000
    assert (f"  episode ended at bag time {last_frame / 1e9:.6f} s (+0.968 s): the master stream ego.left has no "
            f"frame for 3.0 days after it (next sample: ego.imu at bag time {later / 1e9:.6f} s (+259200.000 s)), "
            "more than --max-gap 10 s; the rest of this window is not converted: cut the bag at its gaps with --gap "
            "SECONDS to convert it as further episodes") in done.stdout.splitlines()
    cut = egorec("convert", folder, "--rig", rig, "--task", "cut", "--out", tmp_path / "out", "--gap", "60",
                 timeout=120)
    assert "episode 1: 30 rows from gap (gap > 60 s)" in cut.stdout and "episode ended at" not in cut.stdout


def test_progress_line_without_a_terminal_gives_messages_bag_time_rows_and_eta():
    import io
    import re

    from egorec_ros.converter.episode_job import EpisodeJob, EpisodeOutcome
    from egorec_ros.converter.run_progress import RunProgress
    from egorec_ros.converter.split import EpisodeWindow

    window = EpisodeWindow(START_NS, START_NS + 60 * 10**9, "whole bag")
    jobs = [EpisodeJob(0, "/bags/a", window, 1, "/w/0"), EpisodeJob(1, "/bags/b", window, 2, "/w/1")]
    out = io.StringIO()                                     # not a terminal: plain lines
    progress = RunProgress(jobs, {"/bags/a": 1000, "/bags/b": None}, fps=30, plain_every_s=0, stream=out)
    progress.advance(0, 250, START_NS + 15 * 10**9)
    progress.done(EpisodeOutcome(0, "/bags/a", window, rows=1790, messages=1000))
    progress.advance(1, 64, START_NS + 10**9)
    lines = out.getvalue().splitlines()
    assert re.fullmatch(r"converting a: 250/1000 messages \(25 %\), bag time \+15\.0 s, ~450 rows, "
                        r"ETA \d\d:\d\d:\d\d", lines[0]), lines[0]
    assert lines[-1] == "converting b: 64 messages, bag time +1.0 s, ~30 rows, ETA ?"
    assert progress.line("/bags/a").startswith("a: 1000/1000 messages (100 %), ~1790 rows, ETA ")
