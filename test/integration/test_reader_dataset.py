"""The reader (egorec_ros.dataset) on task dirs written by the store: §8.2 reader rules."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from helpers.store import MATRIX, TRAJ, Tiny
from egorec_ros.codecs.depth import MAX_DEPTH_MM
from egorec_ros.dataset import DatasetError, nearest, open_task
from egorec_ros.schema.episode_row import episode_row_table, read_episode_row
from egorec_ros.store import TaskWriter

ROWS = 12


@pytest.fixture(scope="module")
def tiny_task(tmp_path_factory: pytest.TempPathFactory, tiny: Tiny) -> Path:
    """One episode of known content; lossless FFV1 depth so depth can be compared exactly."""
    task = tmp_path_factory.mktemp("reader") / "task"
    with TaskWriter(task, depth_container="mkv") as writer:
        tiny.write(writer, ROWS)
    return task


def edit_json(path: Path, change) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    change(doc)
    path.write_text(json.dumps(doc), encoding="utf-8")


# ---- task level ----------------------------------------------------------------------------

def test_episodes_are_listed_by_their_files(tmp_path: Path, tiny_no_video: Tiny) -> None:
    task = tmp_path / "task"
    with TaskWriter(task) as writer:
        for _ in range(4):
            tiny_no_video.write(writer, 2)
        writer.delete(2)
    chunk = task / "data" / "chunk-000"
    shutil.copy(chunk / "episode-000.parquet", chunk / ".episode-004.parquet.tmp")   # a writer's temporary
    shutil.copy(chunk / "episode-000.parquet", chunk / "episode-009.parquet.bak")
    (chunk / ".hidden").mkdir()
    shutil.copy(chunk / "episode-000.parquet", task / "data" / "episode-005.parquet")   # not in a chunk dir
    (task / "meta" / "recycled_episode.json").write_text('{"episode_index": 9, "freed_at": "2026-01-01T00:00:00"}')
    reader = open_task(task)
    assert [e.index for e in reader] == [1, 3, 4] and len(reader) == 3
    assert reader.info["total_episodes"] == 4          # a count is not a listing
    assert reader.episode(3).data_path == chunk / "episode-002.parquet"
    with pytest.raises(KeyError, match="no episode 2"):
        reader.episode(2)


@pytest.mark.parametrize("content, message", [
    ({"format": "lerobot_v2"}, "format is 'lerobot_v2'"),
    ({"chunks_size": 1000}, "format is None"),
    ("[1, 2", "not valid JSON"),
])
def test_unknown_format_is_refused(tmp_path: Path, content, message: str) -> None:
    (tmp_path / "meta").mkdir()
    text = content if isinstance(content, str) else json.dumps(content)
    (tmp_path / "meta" / "info.json").write_text(text)
    with pytest.raises(DatasetError, match=message):
        open_task(tmp_path)
    with pytest.raises(DatasetError, match="no meta/info.json"):
        open_task(tmp_path / "missing")


def test_columns_by_name(tiny_task: Path, tiny: Tiny) -> None:
    episode = open_task(tiny_task).episode(1)
    assert len(episode) == ROWS
    table = episode.read(["frame_index", "observation.gripper_state"])
    assert table.column_names == ["frame_index", "observation.gripper_state"]
    assert table.column("frame_index").to_pylist() == list(range(ROWS))
    states = np.array(episode.column("observation.gripper_state").to_pylist())
    np.testing.assert_array_equal(states, [tiny.row(i)["observation.gripper_state"] for i in range(ROWS)])
    assert episode.column("status.gripper_pose").to_pylist() == ["connected"] * ROWS
    with pytest.raises(KeyError, match="no column.*observation.left_glove"):
        episode.read(["frame_index", "observation.left_glove"])


# ---- videos ------------------------------------------------------------------------------------

def test_rows_with_frames_pairs_frame_i_with_row_i(tiny_task: Path) -> None:
    episode = open_task(tiny_task).episode(1)
    assert sorted(episode.video_keys) == ["gripper_depth", "gripper_rgb"]
    assert episode.is_depth("gripper_depth") and not episode.is_depth("gripper_rgb")
    seen = 0
    for row, frames in episode.rows_with_frames(columns=["frame_index", "hardware_ns"]):
        i = row["frame_index"]
        assert i == seen and row["hardware_ns"] == Tiny.stamp(i)
        rgb, depth = frames["gripper_rgb"], frames["gripper_depth"]
        assert rgb.shape == (48, 64, 3) and abs(float(rgb.mean()) - 8 * i % 256) < 3
        assert depth.dtype == np.uint16 and np.all(depth == 500 + 10 * i)   # FFV1: exact millimetres
        seen += 1
    assert seen == ROWS


def test_depth_decodes_to_mm_from_hevc(tmp_path: Path, tiny: Tiny) -> None:
    task = tmp_path / "task"
    with TaskWriter(task) as writer:   # depth as 12-bit log code in HEVC .mp4
        tiny.write(writer, 6)
    episode = open_task(task).episode(1)
    assert episode.video_path("gripper_depth").suffix == ".mp4"
    frames = list(episode.frames("gripper_depth"))
    assert len(frames) == 6
    for i, mm in enumerate(frames):
        assert mm.dtype == np.uint16
        np.testing.assert_allclose(mm, 500 + 10 * i, rtol=0.01)   # the code steps 0.1 % of the depth
        assert mm.max() <= MAX_DEPTH_MM


# ---- force matrices ---------------------------------------------------------------------------

def test_force_matrix_scale_comes_from_the_episode_row_then_info_then_1(tiny_task: Path, tmp_path: Path) -> None:
    task = Path(shutil.copytree(tiny_task, tmp_path / "task"))
    row_path = task / "meta" / "episodes" / "chunk-000" / "episode-000.parquet"
    info_path = task / "meta" / "info.json"
    originals = np.stack([Tiny.matrix(i) for i in range(0, ROWS, 2)])
    quantised = np.rint(originals * 10)   # what scale 10 stored

    def decoded() -> np.ndarray:
        rows, matrices = open_task(task).episode(1).force_matrices(MATRIX)
        assert rows.tolist() == list(range(0, ROWS, 2))   # odd rows had no sample (§5.5 [] rows)
        return matrices

    np.testing.assert_allclose(decoded(), originals, atol=0.05 + 1e-4)
    edit_json(info_path, lambda d: d["features"][MATRIX].update(scale=5))
    np.testing.assert_allclose(decoded(), quantised / 10, atol=1e-4)   # the episode row wins over info
    row = read_episode_row(row_path)
    row["force_matrix_specs"] = {}
    pq.write_table(episode_row_table(row), row_path)
    np.testing.assert_allclose(decoded(), quantised / 5, atol=1e-4)    # then info features
    edit_json(info_path, lambda d: d["features"][MATRIX].pop("scale"))
    np.testing.assert_allclose(decoded(), quantised, atol=1e-4)        # then 1
    edit_json(info_path, lambda d: d["features"][MATRIX].update(scale=5))
    row_path.unlink()   # no episode row file at all: info features, not a crash
    np.testing.assert_allclose(decoded(), quantised / 5, atol=1e-4)
    episode = open_task(task).episode(1)
    assert episode.slam_spec(TRAJ)["frame"] == open_task(task).features[TRAJ]["frame"]


def test_matrix_stamps_pair_with_rows_by_time(appendix_b_task: Path) -> None:
    episode = open_task(appendix_b_task).episode(1)
    table = episode.read(["hardware_ns", "observation.gripper_left_force_matrix_ns"])
    frames_ns = table.column("hardware_ns").to_numpy()
    stamps = table.column(1).to_numpy()
    pick = nearest(frames_ns, stamps)
    assert np.all((pick == -1) == (stamps == 0))
    period = 1e9 / open_task(appendix_b_task).fps
    assert np.all(np.abs(frames_ns[pick[stamps > 0]] - stamps[stamps > 0]) <= period)
    rows, matrices = episode.force_matrices("observation.gripper_left_force_matrix")
    assert np.all(stamps[rows] > 0) and matrices.shape == (len(rows), 250, 250, 3)
    assert float(np.abs(matrices).max()) > 0   # the simulated grip squeezed at some point


# ---- trajectories ------------------------------------------------------------------------------

def test_trajectory_points_come_with_their_host_stamps(tiny_task: Path) -> None:
    episode = open_task(tiny_task).episode(1)
    assert episode.trajectory_columns() == [TRAJ]
    traj = episode.trajectory(TRAJ)
    expected = [(i, j) for i in range(ROWS) for j in range(i % 3)]
    assert traj.points.shape == (len(expected), 8) and traj.ns.shape == (len(expected),)
    assert traj.row.tolist() == [i for i, _ in expected]
    for (i, j), point, ns in zip(expected, traj.points, traj.ns):
        assert point[0] == pytest.approx(100.0 + i + j / 10) and ns == Tiny.stamp(i) - 1000 * j
    assert episode.slam_spec(TRAJ)["frame"] == "down_left_forward"


def test_trajectory_without_stamps_has_no_ns_column(tmp_path: Path, tiny_no_video: Tiny) -> None:
    task = tmp_path / "task"
    with TaskWriter(task) as writer:
        episode = writer.begin(tiny_no_video.decl)
        for i in range(6):
            episode.append({**tiny_no_video.row(i), TRAJ + "_ns": None})
        episode.end()
    episode = open_task(task).episode(1)
    assert not episode.has(TRAJ + "_ns")   # §5.5: a whole episode without stamps creates no _ns column
    traj = episode.trajectory(TRAJ)
    assert traj.ns is None and len(traj.points) == sum(i % 3 for i in range(6))


def test_three_trajectories_keep_their_own_frames(appendix_b_task: Path) -> None:
    episode = open_task(appendix_b_task).episode(1)
    frames = {c: episode.slam_spec(c)["frame"] for c in episode.trajectory_columns()}
    assert frames == {"observation.ego_slam_trajectory": "ego_cam_optical",
                      "observation.gripper_2_slam_trajectory": "down_left_forward",
                      "observation.slam_trajectory": "down_left_forward"}
    for column in frames:
        traj = episode.trajectory(column)
        assert len(traj.points) > 0 and np.all(traj.ns > 0)
        assert np.all(np.diff(traj.ns) > 0) and np.all(np.diff(traj.points[:, 0]) > 0)   # in capture order


def test_nearest_pairs_by_time() -> None:
    ref = np.array([10, 20, 30])
    assert nearest(ref, np.array([0, 9, 14, 15, 16, 29, 31, 100])).tolist() == [-1, 0, 0, 0, 1, 2, 2, 2]
    assert nearest(np.array([5]), np.array([0, 1, 99])).tolist() == [-1, 0, 0]
    assert nearest(np.array([], np.int64), np.array([3, 4])).tolist() == [-1, -1]


# ---- sparse columns -----------------------------------------------------------------------------

GLOVE_COLUMNS = ["observation.right_glove", "observation.right_glove_imu_quat", "observation.right_glove_imu_valid"]


def test_a_silent_device_has_no_columns_but_stays_declared(appendix_b_task: Path) -> None:
    task = open_task(appendix_b_task)
    first, second = task.episode(1), task.episode(2)
    for column in GLOVE_COLUMNS:
        assert first.has(column) and not second.has(column)
        assert column in task.features          # the task-level union still declares it (§6.7)
    assert "right_glove" in task.info["sensors"]
    with pytest.raises(KeyError, match="observation.right_glove"):
        second.read(["frame_index", "observation.right_glove"])
    pose = np.array(second.column("observation.right_hand_pose").to_pylist())
    assert pose.shape == (len(second), 63) and not pose.any()   # always written, zeros when unsolved
    assert set(second.column("status.right_glove").to_pylist()) == {"disconnected"}
    assert second.has("observation.left_glove")


def test_inspect_summarises_and_refuses_what_is_no_task(appendix_b_task: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture) -> None:
    from egorec_ros.cli import main
    assert main(["inspect", "--json", str(appendix_b_task)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert [e["episode_index"] for e in summary["episodes"]] == [1, 2]
    assert [e["rows"] for e in summary["episodes"]] == [len(e) for e in open_task(appendix_b_task)]
    assert main(["inspect", str(tmp_path)]) == 1
    assert "no meta/info.json" in capsys.readouterr().err
