"""What the writer makes of rows: sparse columns (§5.5), a column appearing late, the
task-level union of declarations (§6.7, §6.8), statistics, refused rows, tasks."""
from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from helpers.store import MATRIX, TRAJ, Tiny, read_info
from egorec_ros.codecs import force_matrix as fm
from egorec_ros.dataset import open_task
from egorec_ros.schema import columns as col
from egorec_ros.store import TaskWriter, row_sink
from egorec_ros.store.row_buffer import RowBuffer, RowError
from egorec_ros.validate.validate import validate_task

STATE = "observation.gripper_state"


def test_rows_without_a_sample_hold_the_defaults(tmp_path: Path, tiny_no_video: Tiny) -> None:
    with TaskWriter(tmp_path / "task") as writer:
        result = tiny_no_video.write(writer, 6)
    table = pq.read_table(result.data_path)
    assert [len(v) for v in table.column(MATRIX).to_pylist()] == [fm.FLAT, 0] * 3   # [] = no new sample
    assert table.column(MATRIX + "_ns").to_pylist()[1::2] == [0, 0, 0]
    assert [len(v) for v in table.column(TRAJ).to_pylist()] == [8 * (i % 3) for i in range(6)]
    assert table.column("action").to_pylist() == [[0.0]] * 6
    assert "raw_hw_ns" not in table.column_names   # conditional: no row carried a raw stamp


def test_declarations_are_the_union_of_what_episodes_recorded(tmp_path: Path, tiny: Tiny) -> None:
    task = tmp_path / "task"
    rgb_only = dataclasses.replace(tiny.decl, videos=tiny.decl.videos[:1])
    with TaskWriter(task) as writer:
        episode = writer.begin(rgb_only)
        for i in range(4):
            row = tiny.row(i)
            row[TRAJ] = row[TRAJ + "_ns"] = None   # no SLAM in this episode
            episode.append(row, {"gripper_rgb": tiny.frames(i)["gripper_rgb"]})
        episode.end()
        first = read_info(task)
        tiny.write(writer, 4)
    assert TRAJ not in first["features"] and MATRIX in first["features"]
    assert "gripper_slam_frame" not in first and "slam_frames" not in first   # §8.1.6: only with a trajectory
    assert first["video_extensions"] == {"gripper_rgb": "mp4"}
    second = read_info(task)
    assert second["features"][TRAJ]["frame"] == "down_left_forward"
    assert second["gripper_slam_frame"] == "down_left_forward" and second["slam_frames"] == {TRAJ: "down_left_forward"}
    assert second["video_extensions"] == {"gripper_rgb": "mp4", "gripper_depth": "mp4"}
    assert second["cameras"] == {"gripper_rgb": {"height": 48, "width": 64}}   # depth is no camera (§4.8)
    reader = open_task(task)
    assert [sorted(e.video_keys) for e in reader] == [["gripper_rgb"], ["gripper_depth", "gripper_rgb"]]
    assert [e.has(TRAJ) for e in reader] == [False, True]
    assert validate_task(task) == []


def test_a_column_appearing_late_is_defaulted_before(tmp_path: Path, tiny_no_video: Tiny) -> None:
    with TaskWriter(tmp_path / "task") as writer:
        episode = writer.begin(tiny_no_video.decl)
        for i in range(150):
            row = tiny_no_video.row(i)
            if i < 100:
                row[STATE] = None
            episode.append(row)
        result = episode.end()
    assert result.schema_rewrites == 1   # the first row groups were rewritten once with the new column
    states = np.array(pq.read_table(result.data_path, columns=[STATE]).column(0).to_pylist())
    assert not states[:100].any()
    np.testing.assert_array_equal(states[100:], [[i, 1, -i] for i in range(100, 150)])
    assert validate_task(tmp_path / "task") == []


def test_stats_count_real_samples_and_merge_across_episodes(tmp_path: Path, tiny_no_video: Tiny) -> None:
    task = tmp_path / "task"
    samples = []
    with TaskWriter(task) as writer:
        for rows in (7, 4):
            episode = writer.begin(tiny_no_video.decl)
            for i in range(rows):
                row = tiny_no_video.row(i)
                if i % 3 == 1:
                    row[STATE] = None   # no sample: the [0, 0, 0] default must not count
                else:
                    samples.append(row[STATE])
                episode.append(row)
            episode.end()
    stats = json.loads((task / "meta" / "stats.json").read_text())[STATE]
    values = np.array(samples, np.float64)
    assert stats["count"] == len(values)
    np.testing.assert_allclose(stats["mean"], values.mean(axis=0))
    np.testing.assert_allclose(stats["std"], values.std(axis=0), atol=1e-9)
    np.testing.assert_allclose(stats["min"], values.min(axis=0))
    np.testing.assert_allclose(stats["max"], values.max(axis=0))
    assert json.loads((task / "meta" / "stats.json").read_text())["action"]["count"] == 0   # placeholder


BAD_ROWS = {   # case: (what replaces a good row's values, the error that names it)
    "undeclared column": ({"observation.left_glove": np.zeros(256)}, "not declared"),
    "vector of wrong width": ({STATE: np.zeros(4)}, "takes 3 values"),
    "matrix of wrong shape": ({MATRIX: np.zeros((250, 750))}, r"takes a \(250, 250, 3\) matrix"),
    "points not a multiple of 8": ({TRAJ: np.zeros(12), TRAJ + "_ns": None}, "points of 8 values"),
    "stamps out of lockstep": ({TRAJ: np.zeros(16), TRAJ + "_ns": np.zeros(3, np.int64)}, "3 stamps for 2 points"),
    "points without stamps after stamped ones": ({TRAJ: np.zeros(8), TRAJ + "_ns": None},
                                                 "give 0 for a point whose host stamp is unknown"),
}


@pytest.mark.parametrize("case", list(BAD_ROWS))
def test_bad_rows_are_refused_and_the_episode_goes_on(tmp_path: Path, tiny: Tiny, case: str) -> None:
    change, message = BAD_ROWS[case]
    task = tmp_path / "task"
    with TaskWriter(task) as writer:
        episode = writer.begin(tiny.decl)
        for i in range(3):
            episode.append(tiny.row(i), tiny.frames(i))
        with pytest.raises(RowError, match=message):
            episode.append({**tiny.row(3), **change}, tiny.frames(3))
        with pytest.raises(ValueError, match="every recorded stream needs its frame"):
            episode.append(tiny.row(3), {"gripper_rgb": tiny.frames(3)["gripper_rgb"]})
        episode.append(tiny.row(3), tiny.frames(3))
        assert episode.end().rows == 4
    assert validate_task(task) == []


def test_an_exception_mid_episode_keeps_what_was_recorded(tmp_path: Path, tiny: Tiny) -> None:
    task = tmp_path / "task"
    with pytest.raises(KeyboardInterrupt):
        with TaskWriter(task) as writer:
            episode = writer.begin(tiny.decl)
            for i in range(5):
                episode.append(tiny.row(i), tiny.frames(i))
            raise KeyboardInterrupt
    assert [len(e) for e in open_task(task)] == [5]
    assert validate_task(task) == []
    with pytest.raises(KeyboardInterrupt):   # ... and before the first row: nothing to keep, the number is free
        with TaskWriter(task) as writer:
            writer.begin(tiny.decl)
            raise KeyboardInterrupt
    with TaskWriter(task) as writer:   # the lock went with the writer
        assert writer.next_number().index == 2


def test_tasks_get_indices_in_order(tmp_path: Path, tiny_no_video: Tiny) -> None:
    task = tmp_path / "task"
    with TaskWriter(task, task_name="pick") as writer:
        for text in ("pick the cup", "place the cup", "pick the cup"):
            episode = writer.begin(tiny_no_video.decl, task=text)
            episode.append(tiny_no_video.row(0))
            episode.end()
    lines = (task / "meta" / "tasks.jsonl").read_text(encoding="utf-8").splitlines()
    assert lines == ['{"task_index":0,"task":"pick the cup"}', '{"task_index":1,"task":"place the cup"}']
    assert [e.column("task_index").to_pylist() for e in open_task(task)] == [[0], [1], [0]]
    assert [e.row["task_index"] for e in open_task(task)] == [0, 1, 0]
    assert read_info(task)["task_name"] == "pick"
    assert validate_task(task) == []


def test_the_row_sink_applies_back_pressure_instead_of_queueing_without_bound(tmp_path: Path, monkeypatch) -> None:
    """A row sink slower than its producer makes put() wait: at most MAX_PENDING_BUFFERS
    flushed buffers (tens of MB each with force matrices) are ever queued."""
    specs = col.key_columns()
    real_write = row_sink.RowSink._write

    def slow_write(self, buffer):
        time.sleep(0.05)
        real_write(self, buffer)
    monkeypatch.setattr(row_sink.RowSink, "_write", slow_write)
    sink = row_sink.RowSink(tmp_path, specs)
    peak = 0
    started = time.perf_counter()
    for i in range(8):
        buffer = RowBuffer(specs)
        buffer.append({"episode_index": 1, "frame_index": i, "task_index": 0, "timestamp": 0.0,
                       "wall_time": float(i + 1), "hardware_ns": 0})
        sink.put(buffer)
        peak = max(peak, sink.backlog)
    assert peak <= row_sink.MAX_PENDING_BUFFERS
    assert time.perf_counter() - started > 0.2   # put() waited for the slow writer
    assert sink.finish().rows == 8
