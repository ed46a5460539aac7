"""An episode of the spec's Appendix B rig (2 grippers with force matrices and SLAM, ego
S80C stereo + depth + IMU with ego SLAM, 2 USB gloves) against Appendix B (info.json)
and Appendix C (parquet column types), recorded with real simulated devices and codecs.

Differences allowed on purpose: times, counts and the program version (created_at,
total_episodes, app_version), camera sizes (the videos are recorded at a quarter
size), and the additive 【提案】 fields of §6.4 (devices[].sensor_column for gloves,
sensor_columns + rig for grippers), §7.2 (episode row slam_specs) and the hand keypoint
frame (features[...hand_pose].frame, egorec_ros/rig/frames.py HAND_FRAMES).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from helpers.bags import DATA
from helpers.store import read_info
from egorec_ros.codecs import force_matrix as fm
from egorec_ros.codecs.probe import count_frames
from egorec_ros.schema.episode_row import read_episode_row
from egorec_ros.version import __version__

SPEC = json.loads((DATA / "appendix_b_info.json").read_text(encoding="utf-8"))
VARYING = ("created_at", "total_episodes", "app_version", "cameras", "devices")
ADDITIVE_DEVICE_KEYS = {"sensor_column", "sensor_columns", "rig"}
ADDITIVE_FEATURE_KEYS = {f"observation.{hand}_hand_pose": {"frame": "ego_slam_world"} for hand in ("left", "right")}

F32, F64, I64 = pa.float32(), pa.float64(), pa.int64()
# Appendix C: column -> (pyarrow type, values per row; None = variable)
APPENDIX_C: dict[str, tuple[pa.DataType, int | None]] = {
    "episode_index": (I64, None), "frame_index": (I64, None), "task_index": (I64, None),
    "timestamp": (F32, None), "wall_time": (F64, None), "hardware_ns": (I64, None),
    "action": (pa.list_(F32), 1),
    "imu_ts_ns": (pa.list_(I64), None), "observation.imu": (pa.list_(pa.list_(F32)), None),
    "observation.ego_slam_trajectory": (pa.list_(F64), None),
    "observation.ego_slam_trajectory_ns": (pa.list_(I64), None),
}
for glove in ("left_glove", "right_glove"):
    APPENDIX_C |= {f"observation.{glove}": (pa.list_(F32), 256), f"observation.{glove}_imu_quat": (pa.list_(F32), 64),
                   f"observation.{glove}_imu_valid": (pa.list_(F32), 16), f"status.{glove}": (pa.string(), None)}
for hand in ("left", "right"):
    APPENDIX_C[f"observation.{hand}_hand_pose"] = (pa.list_(F32), 63)
for col_prefix, slot_prefix in (("", "gripper_"), ("gripper_2_", "gripper_2_")):  # §4.6, rig2 spelled out
    for side in ("left", "right"):
        base = f"observation.{col_prefix}gripper_{side}_force"
        APPENDIX_C |= {base: (pa.list_(F32), 3), base + "_ns": (I64, None),
                       base + "_matrix": (pa.list_(pa.int16()), None), base + "_matrix_ns": (I64, None),
                       f"status.{slot_prefix}force_{side}": (pa.string(), None)}
    APPENDIX_C |= {f"observation.{col_prefix}gripper_state": (pa.list_(F32), 3),
                   f"observation.{col_prefix}slam_trajectory": (pa.list_(F64), None),
                   f"observation.{col_prefix}slam_trajectory_ns": (pa.list_(I64), None),
                   f"status.{slot_prefix}pose": (pa.string(), None)}
RAW_HW_NS = "raw_hw_ns"   # conditional: only when a frame carried a raw device stamp


def test_info_json_equals_appendix_b(appendix_b_task: Path) -> None:
    info = read_info(appendix_b_task)
    assert list(info) == list(SPEC)   # same top-level keys, in the same order
    for key in SPEC:
        if key not in VARYING:
            expected = SPEC[key] if key != "features" else {
                column: {**feature, **ADDITIVE_FEATURE_KEYS.get(column, {})} for column, feature in SPEC[key].items()}
            assert info[key] == expected, f"info.json {key!r} differs from Appendix B"
    assert info["total_episodes"] == 2 and info["app_version"] == __version__
    assert isinstance(info["created_at"], float)
    assert info["cameras"] == {k: {"height": v["height"] // 4, "width": v["width"] // 4}
                               for k, v in SPEC["cameras"].items()}


def test_devices_are_appendix_b_plus_the_additive_proposal(appendix_b_task: Path) -> None:
    devices = read_info(appendix_b_task)["devices"]
    assert [{k: v for k, v in d.items() if k not in ADDITIVE_DEVICE_KEYS} for d in devices] == SPEC["devices"]
    features = SPEC["features"]
    extras = {d["name"]: {k: d[k] for k in ADDITIVE_DEVICE_KEYS & set(d)} for d in devices}
    assert extras["S80C_head"] == {}
    assert extras["USB 手套_left"] == {"sensor_column": "left_glove"}
    assert extras["USB 手套_right"] == {"sensor_column": "right_glove"}
    grippers = (("UMI 夹爪001", 1, "observation.gripper_"), ("UMI 夹爪002", 2, "observation.gripper_2_"))
    for name, rig, prefix in grippers:
        assert extras[name]["rig"] == rig
        columns = extras[name]["sensor_columns"]
        assert set(columns) <= set(features), "sensor_columns must name declared columns"
        trajectory = "observation.slam_trajectory" if rig == 1 else "observation.gripper_2_slam_trajectory"
        own = {c for c in features if c.startswith(prefix) and not c.endswith("_ns")} | {trajectory}
        if rig == 1:
            own -= {c for c in own if c.startswith("observation.gripper_2_")}
        assert own <= set(columns), f"{name}: sensor_columns lack {sorted(own - set(columns))}"


def test_parquet_types_equal_appendix_c(appendix_b_task: Path) -> None:
    table = pq.read_table(appendix_b_task / "data" / "chunk-000" / "episode-000.parquet")
    names = set(table.column_names)
    assert names - {RAW_HW_NS} == set(APPENDIX_C), (
        f"extra {sorted(names - set(APPENDIX_C) - {RAW_HW_NS})}, missing {sorted(set(APPENDIX_C) - names)}")
    # §5.6: no D435 forensics, no status for external frame sources
    assert not names & {"depth_ns", "rgb_dup", "ts_src", "status.stereo_left", "status.gripper_rgb"}
    if RAW_HW_NS in names:
        assert table.schema.field(RAW_HW_NS).type == I64
    for name, (type_, width) in APPENDIX_C.items():
        assert table.schema.field(name).type == type_, name
        if width is not None:
            lengths = pc.list_value_length(table.column(name)).to_numpy()
            assert np.all(lengths == width), f"{name}: rows must hold {width} values"
    for name in [n for n in names if n.endswith("_force_matrix")]:
        lengths = pc.list_value_length(table.column(name)).to_numpy()
        assert set(lengths.tolist()) <= {0, fm.FLAT} and lengths.any(), name
    imu = table.column("observation.imu").combine_chunks().flatten()
    assert np.all(pc.list_value_length(imu).to_numpy() == 6)   # list<list<float32,6>>
    for name in [n for n in names if n.endswith("slam_trajectory")]:
        points = pc.list_value_length(table.column(name)).to_numpy()
        stamps = pc.list_value_length(table.column(name + "_ns")).to_numpy()
        assert np.array_equal(points, 8 * stamps) and stamps.sum() > 0, name


def test_episode_rows_carry_per_episode_specs(appendix_b_task: Path) -> None:
    info = read_info(appendix_b_task)
    row = read_episode_row(appendix_b_task / "meta" / "episodes" / "chunk-000" / "episode-000.parquet")
    table = pq.read_table(appendix_b_task / "data" / "chunk-000" / "episode-000.parquet", columns=["frame_index"])
    assert (row["episode_index"], row["start_frame_index"], row["end_frame_index"], row["length"]) == \
        (1, 0, table.num_rows - 1, table.num_rows)
    assert row["calibration"] == SPEC["calibration"]
    matrices = [c for c in SPEC["features"] if c.endswith("_force_matrix")]
    assert row["force_matrix_specs"] == {c: {"encoding": "row_diff_quantized", "scale": 10, "dtype": "int16"}
                                         for c in matrices}
    # §7.2 slam_specs: the same declaration as the feature, per trajectory column
    trajectories = [c for c in SPEC["features"] if c.endswith("slam_trajectory")]
    assert sorted(row["slam_specs"]) == sorted(trajectories)
    for c in trajectories:
        feature = info["features"][c]
        assert row["slam_specs"][c] == {k: feature[k] for k in ("frame", "frame_axes", "time", "owner", "source_slot")}
    assert set(row["video_codec"]) == set(SPEC["video_extensions"])


def test_every_stream_has_one_frame_per_row(appendix_b_task: Path) -> None:
    table = pq.read_table(appendix_b_task / "data" / "chunk-000" / "episode-000.parquet", columns=["frame_index"])
    for key, ext in SPEC["video_extensions"].items():
        path = appendix_b_task / "videos" / "chunk-000" / key / f"episode-000.{ext}"
        assert count_frames(path) == table.num_rows, key
