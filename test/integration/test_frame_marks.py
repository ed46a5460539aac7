"""Where a camera's rows were repeated, late or invalid (issue 21 §3, the Review timeline): kept at
assembly time as row ranges in the episode row's ``frame_marks``. An Appendix B episode made bad on
purpose through the real pipeline (simulated devices -> assembler -> writer -> codecs): one camera
silent twice, one camera's frames arriving late, one camera sending frames of the wrong size. The
marks sit at those rows, mark exactly as many rows as drop_stats counts, reach the checkpoint a
salvage reads, the console's review timeline and `egorec inspect --html`; `egorec validate` is clean."""
from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import numpy as np

from egorec_ros.assembly.sample import Sample
from egorec_ros.codecs.lazy_frame import frame_array
from egorec_ros.console.review import timeline
from egorec_ros.dataset.task import Task
from egorec_ros.qa.frame_marks import RowRuns, capped, cut, shape_problems
from egorec_ros.recorder.replay import record_samples
from egorec_ros.rig.load import load_rig
from egorec_ros.rig.resize import with_video_sizes
from egorec_ros.schema.episode_row import read_episode_row
from egorec_ros.sim.flaws import CLEAN
from egorec_ros.sim.replay import simulate
from egorec_ros.store import TaskWriter
from egorec_ros.store.staging import ACCOUNTING, EPISODE_ROW
from helpers.cli import assert_clean, egorec_ok
from helpers.store import START_NS

S = 1_000_000_000
SECONDS = 4.0
FPS = 30


def rig():
    """Appendix B with every camera at 160x120 (the marks do not depend on the picture)."""
    return with_video_sizes(load_rig("appendix_b"), (160, 120))


def in_window(sample: Sample, start_s: float, end_s: float) -> bool:
    return START_NS + start_s * S <= sample.stamp_ns < START_NS + end_s * S


def spoiled() -> list[Sample]:
    """gripper_a's camera silent 0.5..0.6 s and 1.0..1.5 s; gripper_b's frames of 2.0..2.4 s arrive
    400 ms late (after their rows' 150 ms budget); ego.right sends 80x60 frames 3.0..3.2 s."""
    out = []
    for s in simulate(rig(), SECONDS + 0.5, seed=3, start_ns=START_NS, flaws=CLEAN):
        if s.stream == "gripper_a.rgb" and (in_window(s, 0.5, 0.6) or in_window(s, 1.0, 1.5)):
            continue
        if s.stream == "gripper_b.rgb" and in_window(s, 2.0, 2.4):
            s = dataclasses.replace(s, arrival_ns=s.arrival_ns + 400_000_000)
        elif s.stream == "ego.right" and in_window(s, 3.0, 3.2):
            s = dataclasses.replace(s, payload=np.ascontiguousarray(frame_array(s.payload)[::2, ::2]))
        out.append(s)
    out.sort(key=lambda s: s.arrival_ns)          # the recorder sees samples in arrival order
    return out


def expected_rows(t0: int, start_s: float, end_s: float) -> set[int]:
    """Rows whose tick falls in the window: the frames there were 33.3 ms apart, like the ticks."""
    return {i for i in range(int(SECONDS * FPS) + 2)
            if START_NS + start_s * S <= t0 + i * S / FPS < START_NS + end_s * S}


def rows_of(entry: dict) -> set[int]:
    return {r for a, b in entry["ranges"] for r in range(a, b + 1)}


def near(got: set[int], want: set[int]) -> bool:
    """The same stretch, give or take the row at either end (frame stamp vs tick rounding)."""
    return got <= {r + d for r in want for d in (-1, 0, 1)} and len(got ^ want) <= 2


def test_marks_sit_where_rows_were_repeated_late_or_invalid(tmp_path: Path) -> None:
    with TaskWriter(tmp_path / "w") as worker:     # a conversion worker's way: staged, then adopted
        result, report = record_samples(worker, rig(), iter(spoiled()), start_ns=START_NS,
                                        stop_ns=START_NS + int(SECONDS * S), commit=False)
    assert result is not None and result.staged is not None and report.t0 is not None
    staged = read_episode_row(result.staged / EPISODE_ROW)
    marks = staged["frame_marks"]
    # the checkpoint a salvage would read holds the same marks, and drop_stats none of them
    checkpoint = json.loads((result.staged / ACCOUNTING).read_text())
    assert checkpoint["frame_marks"] == marks
    assert "frame_marks" not in staged["drop_stats"]
    with TaskWriter(tmp_path / "t") as writer:
        writer.adopt(result.staged)

    task = Task(tmp_path / "t")
    row = task.episodes[0].row
    assert row["frame_marks"] == marks
    rows, streams, counts = row["length"], marks["streams"], row["drop_stats"]["streams"]
    assert marks["max_ranges"] == 100 and shape_problems(marks, rows) == []
    # every recorded camera has an entry with its image key; the clean ones mark nothing
    assert {sid: e["video"] for sid, e in streams.items()} == {
        "ego.left": "stereo_left", "ego.right": "stereo_right", "ego.depth": "stereo_depth",
        "gripper_a.rgb": "gripper_rgb", "gripper_b.rgb": "gripper_2_rgb"}
    assert streams["ego.left"] == {"video": "stereo_left"} and streams["ego.depth"] == {"video": "stereo_depth"}

    # the marked rows are exactly drop_stats' counts, and at the spoiled rows
    a, b, right = streams["gripper_a.rgb"], streams["gripper_b.rgb"], streams["ego.right"]
    assert set(a) == {"video", "repeated"} and len(a["repeated"]["ranges"]) == 2
    assert a["repeated"]["rows"] == counts["gripper_a.rgb"]["repeated"] == len(rows_of(a["repeated"]))
    assert near(rows_of(a["repeated"]), expected_rows(report.t0, 0.5, 0.6) | expected_rows(report.t0, 1.0, 1.5))
    assert b["late"]["rows"] == counts["gripper_b.rgb"]["late"] == len(rows_of(b["late"])) >= 11
    assert near(rows_of(b["late"]), expected_rows(report.t0, 2.0, 2.4))
    # no frame in time for those rows: repeated (but for the end row, when the next frame, 0.75 tick
    # away at most, took it)
    assert len(rows_of(b["late"]) - rows_of(b["repeated"])) <= 1
    assert b["repeated"]["rows"] == counts["gripper_b.rgb"]["repeated"]
    assert right["invalid"]["rows"] == counts["ego.right"]["invalid"] == len(rows_of(right["invalid"])) >= 5
    assert near(rows_of(right["invalid"]), expected_rows(report.t0, 3.0, 3.2))
    assert rows_of(right["repeated"]) == rows_of(right["invalid"])
    assert_clean(tmp_path / "t")

    # the console's review timeline hands them to the page as they are
    assert timeline(task, 1)["frame_marks"] == marks
    # the HTML report draws one rect per range, in the same rows
    page = tmp_path / "report.html"
    egorec_ok("inspect", tmp_path / "t", "--html", page)
    drawn = re.findall(r"<rect data-stream='([^']+)' data-kind='(\w+)' data-rows='(\d+)-(\d+)'", page.read_text())
    want = [(sid, kind, a_, b_) for sid, e in streams.items() for kind in ("repeated", "late", "invalid")
            if kind in e for a_, b_ in e[kind]["ranges"]]
    assert sorted((s, k, int(x), int(y)) for s, k, x, y in drawn) == sorted(want)


def test_runs_cap_and_cut() -> None:
    runs = RowRuns()
    for r in [1, 2, 3, 7, 5, 6, 4, 10, 9, 9, 20]:   # late frames come a few rows after their own
        runs.add(r)
    assert runs.runs == [[1, 7], [9, 10], [20, 20]] and runs.rows == 10
    assert runs.to_json() == {"rows": 10, "ranges": [[1, 7], [9, 10], [20, 20]], "samples": 11}
    # over the cap the closest ranges merge; every marked row stays inside a range
    many = RowRuns()
    for r in range(0, 1000, 3):
        many.add(r)
    many.add(500)
    doc = many.to_json(max_ranges=10)
    assert doc is not None and len(doc["ranges"]) == 10 and doc["merged_from"] == 334 and doc["rows"] == 335
    covered = {r for a, b in doc["ranges"] for r in range(a, b + 1)}
    assert set(range(0, 1000, 3)) | {500} <= covered
    assert capped([[0, 0], [2, 2], [10, 10], [12, 13], [30, 31]], 3) == [[0, 2], [10, 13], [30, 31]]
    # a salvage keeps the first rows: ranges are cut there and say so
    marks = {"max_ranges": 100, "streams": {"cam": {"video": "v", "repeated": {"rows": 8, "ranges": [[2, 3], [8, 13]]},
                                                    "late": {"rows": 1, "ranges": [[1, 1]]}}}}
    kept = cut(marks, 10)
    assert kept["streams"]["cam"]["repeated"] == {"rows": 4, "ranges": [[2, 3], [8, 9]], "cut_at": 10}
    assert kept["streams"]["cam"]["late"] == {"rows": 1, "ranges": [[1, 1]]}
    assert shape_problems(kept, 10) == [] and shape_problems({}, 10) == []
    assert shape_problems(marks, 10) == ["cam.repeated: ranges reach row 13 outside the episode's 10 rows"]
    bad = {"max_ranges": 100, "streams": {"cam": {"late": {"rows": 2, "ranges": [[5, 6], [6, 7]]}}}}
    assert shape_problems(bad, 10) == ["cam.late: ranges are not sorted and disjoint"]


CONVERT_RIG = ("name: g\ndevices:\n  ego: {kind: s80m, role: ego, streams: {left: {topic: /cam/image_raw, width: 64, "
               "height: 48}}}\n")


def test_a_converted_bag_keeps_the_marks(tmp_path: Path) -> None:
    """A generated bag: frames 10..14 missing, frames 30..33 logged 400 ms after their stamps (the bag's
    receive time is the arrival): `egorec convert` marks those rows like a live recording."""
    from helpers.message_bags import camera_messages, write_messages
    messages = []
    for topic, msgtype, log_ns, msg in camera_messages("/cam/image_raw", None, frames=60):
        i = round((log_ns - 1_000_000 - START_NS) / 33_333_333)
        if 10 <= i <= 14:
            continue
        messages.append((topic, msgtype, log_ns + (400_000_000 if 30 <= i <= 33 else 0), msg))
    folder = write_messages(tmp_path / "bag", messages)
    (tmp_path / "rig.yaml").write_text(CONVERT_RIG)
    egorec_ok("convert", folder, "--rig", tmp_path / "rig.yaml", "--task", "conv", "--out", tmp_path / "out",
              timeout=120)
    row = Task(tmp_path / "out" / "conv").episodes[0].row
    counts, marks = row["drop_stats"]["streams"]["ego.left"], row["frame_marks"]["streams"]["ego.left"]
    assert marks == {"video": "stereo_left", "repeated": {"rows": 9, "ranges": [[10, 14], [30, 33]]},
                     "late": {"rows": 4, "ranges": [[30, 33]]}}, marks
    assert counts["repeated"] == 9 and counts["late"] == 4
    assert_clean(tmp_path / "out" / "conv")
