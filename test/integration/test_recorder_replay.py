"""Replay recording end to end: simulated devices -> assembler -> episode writer -> real
codecs -> task directory, then read back and validated (`egorec validate`)."""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from egorec_ros.dataset.task import open_task
from egorec_ros.recorder.replay import record_samples
from egorec_ros.rig.load import load_rig
from egorec_ros.rig.resize import with_video_sizes
from egorec_ros.sim.flaws import DEFAULT, incidents
from egorec_ros.sim.replay import simulate
from egorec_ros.store import TaskWriter
from egorec_ros.validate.validate import validate_task
from helpers.assembly import SECOND, START, replay

SIZE = (64, 48)


def assert_parquet_holds(episode, rows) -> None:
    """The data parquet holds exactly the assembled rows; a column a row has no sample
    for holds the §5.5 default (zeros, 0 or [])."""
    names = [c for c in episode.columns if not c.endswith("_force_matrix")]   # (encoded: codec's tests)
    table = episode.read(names).to_pydict()
    assert table["frame_index"] == list(range(len(rows.values)))
    for name, column in table.items():
        if name in ("episode_index", "frame_index", "task_index", "action"):
            continue
        for k, got in enumerate(column):
            want = rows.values[k].get(name)
            where = f"{name} row {k}"
            if want is None:
                assert got == [] or np.all(np.asarray(got) == 0), f"{where}: {got!r} is not the no-sample default"
            elif isinstance(want, str):
                assert got == want, where
            elif name == "timestamp":
                assert got == pytest.approx(want, abs=1e-6), where
            else:
                assert np.array_equal(np.ravel(np.asarray(got, dtype=np.float64)),
                                      np.ravel(np.asarray(want, dtype=np.float64))), where


def test_an_episode_on_disk_holds_exactly_the_assembled_rows(tmp_path):
    rig = with_video_sizes(load_rig("appendix_b"), SIZE)
    seconds = 4
    samples = list(simulate(rig, seconds + 0.5, seed=4, start_ns=START, flaws=incidents(rig, seconds)))
    stop = START + seconds * SECOND
    with TaskWriter(tmp_path / "task") as writer:
        result, report = record_samples(writer, rig, samples, start_ns=START, stop_ns=stop)
    rows, expected = replay(rig, samples, stop)
    assert result.rows == report.rows == expected.rows == len(rows.values)
    assert validate_task(tmp_path / "task") == []
    episode = open_task(tmp_path / "task").episode(result.number.index)
    assert_parquet_holds(episode, rows)
    assert episode.row["drop_stats"] == json.loads(json.dumps(report.drop_stats()))
    assert episode.row["drop_stats"]["streams"]["gripper_a.rgb"]["repeated"] >= 20, "the stalled gripper"
    assert sorted(episode.video_keys) == sorted(rows.keys)


def test_episodes_back_to_back_from_one_stream(tmp_path):
    rig = with_video_sizes(load_rig("gripper_single"), SIZE)
    samples = list(simulate(rig, 3.5, seed=5, start_ns=START))
    bounds = [(START, START + int(1.4 * SECOND)), (START + int(1.4 * SECOND) + 1, START + 3 * SECOND)]
    with TaskWriter(tmp_path / "task") as writer:
        results = [record_samples(writer, rig, samples, start_ns=a, stop_ns=b)[0] for a, b in bounds]
    assert [r.number.index for r in results] == [1, 2]
    assert validate_task(tmp_path / "task") == []
    task = open_task(tmp_path / "task")
    first, second = (np.asarray(task.episode(i).column("hardware_ns")) for i in (1, 2))
    tolerance = 0.75 * SECOND / 30
    assert first.max() <= bounds[0][1] + tolerance and second.min() >= bounds[1][0]
    assert np.all(np.diff(first) > 0) and np.all(np.diff(second) > 0)


def test_a_camera_silent_for_the_whole_episode_is_left_out_and_reported(tmp_path):
    rig = with_video_sizes(load_rig("gripper_single"), SIZE)
    dead = {"gripper.rgb": dataclasses.replace(DEFAULT, outages=((0.0, 60.0),)), "*": DEFAULT}
    samples = simulate(rig, 2.5, seed=6, start_ns=START, flaws=dead)
    with TaskWriter(tmp_path / "task") as writer:
        result, report = record_samples(writer, rig, samples, start_ns=START, stop_ns=START + 2 * SECOND)
    assert report.missing_streams == ["gripper.rgb"] and report.video_keys == []
    assert result.drop_stats["missing_streams"] == ["gripper.rgb"]
    assert result.rows == 61, "the sensors are recorded from the start, a row per tick"
    assert validate_task(tmp_path / "task") == []
    assert open_task(tmp_path / "task").episode(1).video_keys == []
