"""`recover --salvage` when a stream has no readable frame (issue 10 item 18): the rows are
kept with the streams that have frames, the empty stream is left out and reported, the
per-stream accounting checkpointed while recording survives, and columns without a sample
in the kept rows are not kept."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from helpers.cli import egorec, run_python
from helpers.store import read_info
from egorec_ros.codecs.probe import count_frames, trim_video
from egorec_ros.dataset import open_task
from egorec_ros.validate.validate import validate_task

STATE = "observation.gripper_state"
KILLED_WITH_VIDEOS = """
import json, os, sys, time
sys.path.insert(0, sys.argv[2])
from helpers.store import Tiny, tiny_declaration
from egorec_ros.store import TaskWriter
from egorec_ros.store import episode_writer
tiny = Tiny(tiny_declaration())
episode_writer.JOURNAL_SECONDS = episode_writer.FLUSH_ROWS / tiny.decl.fps   # journaled a row group at a time
episode = TaskWriter(sys.argv[1]).begin(tiny.decl)
# what the assembler's counts would say: every row so far used one frame of the camera
episode.accounting = lambda: {"streams": {"gripper_cam": {"received": episode.rows, "used": episode.rows}},
                              "frame_marks": {"max_ranges": 100, "streams": {
                                  "gripper_cam": {"video": "gripper_rgb",
                                                  "repeated": {"rows": 18, "ranges": [[10, 11], [45, 60]]}},
                                  "gripper_depth_cam": {"video": "gripper_depth",
                                                        "late": {"rows": 1, "ranges": [[3, 3]]}}}}}
for i in range(130):
    row = tiny.row(i)
    if i < 60:
        row["observation.gripper_state"] = None   # the state arrives with the second row group
    episode.append(row, tiny.frames(i))
from egorec_ros.codecs.probe import count_frames
videos = [episode.folder / "gripper_rgb.mp4", episode.folder / "gripper_depth.mp4"]
def checkpointed():
    try:
        return json.loads((episode.folder / "drop_stats.json").read_text())["rows"]
    except (OSError, ValueError):
        return 0
deadline = time.monotonic() + 30
while episode.flushed_rows < 120 or any(count_frames(v) < 100 for v in videos) or \
        (checkpointed() < 120 and time.monotonic() < deadline):
    time.sleep(0.05)
os._exit(0)   # as abrupt as kill -9
"""


def test_salvage_leaves_out_a_stream_without_frames(tmp_path: Path) -> None:
    task = tmp_path / "task"
    proc = run_python(["-c", KILLED_WITH_VIDEOS, str(task), str(Path(__file__).parents[1])])
    assert proc.returncode == 0, proc.stderr
    staged = task / ".staging-episode-000001"
    rgb, depth = staged / "gripper_rgb.mp4", staged / "gripper_depth.mp4"
    trim_video(rgb, rgb, 50)                  # the camera's encoder lagged behind ...
    with open(depth, "r+b") as f:             # ... and the depth encoder had not finished one fragment
        f.truncate(64)
    assert count_frames(rgb) == 50

    proc = egorec("recover", "--salvage", str(task))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "episode 1: salvaged: kept 50 rows" in proc.stdout
    assert "left out gripper_depth (no readable frame" in proc.stdout
    assert validate_task(task) == []

    episode = open_task(task).episode(1)
    assert len(episode) == 50 and episode.video_keys == ["gripper_rgb"]
    assert "gripper_depth" not in read_info(task)["video_extensions"]
    assert "gripper_depth" not in episode.row["video_codec"]
    assert STATE not in episode.columns              # its samples were all in rows that were cut
    assert STATE not in read_info(task)["features"]
    assert "observation.gripper_left_force_matrix" in episode.columns
    drops = episode.row["drop_stats"]
    assert drops["streams"] == {"gripper_cam": {"received": 120, "used": 120}}   # checkpoint of the last row group
    assert drops["salvaged"]["accounting_as_of_row"] == 120
    assert drops["salvaged"]["kept_rows"] == 50
    assert drops["salvaged"]["video_frames"] == {"gripper_rgb": 50, "gripper_depth": 0}
    assert "gripper_depth" in drops["salvaged"]["left_out_videos"]
    # the checkpointed frame marks: the kept video's, cut at the kept rows; none in drop_stats
    assert "frame_marks" not in drops
    assert episode.row["frame_marks"] == {"max_ranges": 100, "streams": {"gripper_cam": {
        "video": "gripper_rgb", "repeated": {"rows": 7, "ranges": [[10, 11], [45, 49]], "cut_at": 50}}}}
    qa = episode.row["qa"]                          # judged at the salvage's commit too
    assert qa["verdict"] == "warn", qa
    assert any("recovered after an interrupted recording (kept 50 of" in r and "videos left out: gripper_depth" in r
               for r in qa["reasons"]), qa["reasons"]
    assert qa["figures"]["videos"].startswith("not checked")
    left_out = list((task / ".set_aside").glob("*-left-out/gripper_depth.mp4"))
    assert len(left_out) == 1                       # nothing is deleted
    stats = json.loads((task / "meta" / "stats.json").read_text())
    assert STATE not in stats


def test_salvage_names_the_streams_when_nothing_can_be_kept(tmp_path: Path) -> None:
    task = tmp_path / "task"
    proc = run_python(["-c", KILLED_WITH_VIDEOS, str(task), str(Path(__file__).parents[1])])
    assert proc.returncode == 0, proc.stderr
    for video in (task / ".staging-episode-000001").glob("*.mp4"):
        with open(video, "r+b") as f:
            f.truncate(64)
    proc = egorec("recover", "--salvage", str(task))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "nothing to salvage (120 rows journaled; readable frames: gripper_rgb 0, gripper_depth 0)" in proc.stdout


def test_salvage_keeps_a_column_whose_samples_are_in_the_kept_rows(tmp_path: Path) -> None:
    task = tmp_path / "task"
    proc = run_python(["-c", KILLED_WITH_VIDEOS, str(task), str(Path(__file__).parents[1])])
    assert proc.returncode == 0, proc.stderr
    for video in (task / ".staging-episode-000001").glob("*.mp4"):
        trim_video(video, video, 100)
    proc = egorec("recover", "--salvage", str(task))
    assert proc.returncode == 0 and "kept 100 rows" in proc.stdout, proc.stdout + proc.stderr
    assert validate_task(task) == []
    states = np.array(open_task(task).episode(1).column(STATE).to_pylist())
    assert not states[:60].any() and states[60:, 1].all()
