"""Per-episode rules: the data parquet (§3, §4, §5.5, App. C), its episode row (§7)
and its videos (frames == rows, sizes, depth formats)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import av
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from egorec_ros.codecs import force_matrix as fm
from egorec_ros.codecs.probe import count_frames
from egorec_ros.layout.numbering import EpisodeNumber
from egorec_ros.layout.paths import TaskPaths
from egorec_ros.qa.frame_marks import shape_problems
from egorec_ros.schema.episode_row import EPISODE_COLUMNS, JSON_COLUMNS, OPTIONAL_JSON_COLUMNS
from egorec_ros.schema.names import KEY_COLUMNS
from egorec_ros.validate.findings import Findings

KEY_TYPES = {
    "episode_index": pa.int64(), "frame_index": pa.int64(), "task_index": pa.int64(),
    "timestamp": pa.float32(), "wall_time": pa.float64(), "hardware_ns": pa.int64(), "raw_hw_ns": pa.int64(),
    "action": pa.list_(pa.float32()), "imu_ts_ns": pa.list_(pa.int64()),
}
ALWAYS = ("episode_index", "frame_index", "timestamp", "task_index", "wall_time", "hardware_ns", "action")
DEPTH_PIX_FMTS = ("gray12le", "gray16le")
D435_TYPES = {"depth_ns": pa.int64(), "host_ns": pa.int64(), "rgb_dup": pa.int8(), "depth_dup": pa.int8(),
              "ts_src": pa.int8(), "rgb_gap": pa.int32(), "depth_gap": pa.int32()}


def check_episode(paths: TaskPaths, n: EpisodeNumber, info: dict, tasks: dict[str, int], decode: bool,
                  out: Findings) -> set[Path]:
    """Checks one committed episode; returns the files it owns."""
    data = paths.data(n)
    rel = str(data.relative_to(paths.root))
    owned = {data}
    row_path = paths.episode_row(n)
    videos = {paths.video(n, key, ext) for key, ext in (info.get("video_extensions") or {}).items()}
    try:
        table = pq.read_table(data)
    except Exception as exc:
        out.add(rel, "", "§1.2.1", f"data parquet cannot be read: {str(exc).strip()}; its episode row and videos "
                f"are left as they are: run `egorec recover {paths.root}` to see what can be done")
        return owned | {row_path} | {v for v in videos if v.exists()}   # the episode's files, not orphans
    rows = table.num_rows
    action_width = int(np.prod((info.get("features") or {}).get("action", {}).get("shape") or [1]))
    _check_keys(table, n, rel, set(tasks.values()), action_width, out)
    _check_columns(table, info.get("features") or {}, rel, out)
    owned.add(row_path)
    specs = _check_episode_row(row_path, paths, n, rows, table, out)
    _check_matrices(table, None if specs is None else specs.get("force_matrix_specs", {}), info, rel, out)
    owned |= _check_videos(paths, n, info, rows, decode, out)
    return owned


def _check_keys(table: pa.Table, n: EpisodeNumber, rel: str, task_indices: set[int], action_width: int,
                out: Findings) -> None:
    names = table.column_names
    for name in ALWAYS:
        if name not in names:
            out.add(rel, name, "§3", "column every episode has is missing")
    for name, type_ in {**KEY_TYPES, **D435_TYPES}.items():
        if name in names and table.schema.field(name).type != type_:
            out.add(rel, name, "App. C", f"type {table.schema.field(name).type}, expected {type_}")
    if table.num_rows == 0:
        out.add(rel, "", "§3", "episode has no rows")
        return
    if "frame_index" in names:
        fi = table.column("frame_index").to_numpy()
        if not np.array_equal(fi, np.arange(len(fi))):
            bad = int(np.flatnonzero(fi != np.arange(len(fi)))[0])
            out.add(rel, "frame_index", "§3", f"not 0..n-1 without holes (row {bad} has {fi[bad]})")
    if "episode_index" in names:
        ei = table.column("episode_index").to_numpy()
        if np.any(ei != n.index):
            out.add(rel, "episode_index", "§1.3", f"holds {sorted(set(ei.tolist()))[:3]}, expected {n.index} "
                    f"(= k + 1 for chunk-{n.chunk:03d}/episode-{n.file:03d})")
    if "wall_time" in names:
        wt = table.column("wall_time").to_numpy()
        if len(wt) > 1 and np.any(np.diff(wt) <= 0):
            out.add(rel, "wall_time", "§3", f"not strictly increasing (row {int(np.flatnonzero(np.diff(wt) <= 0)[0]) + 1})")
    if "task_index" in names and task_indices:
        unknown = set(table.column("task_index").to_numpy().tolist()) - task_indices
        if unknown:
            out.add(rel, "task_index", "§3", f"values {sorted(unknown)} are not in meta/tasks.jsonl")
    if "action" in names and not _fixed_width(table.column("action"), action_width):
        out.add(rel, "action", "§3", f"every row needs exactly {action_width} value(s) (features.action.shape)")
    if "imu_ts_ns" in names or "observation.imu" in names:
        if "imu_ts_ns" not in names or "observation.imu" not in names:
            out.add(rel, "imu_ts_ns", "§4.4", "imu_ts_ns and observation.imu come together")
        elif not _lockstep(table.column("imu_ts_ns"), table.column("observation.imu"), 1):
            out.add(rel, "observation.imu", "§4.4", "IMU samples not in lockstep with imu_ts_ns")
        elif pa.types.is_list(table.schema.field("observation.imu").type) and \
                not _fixed_width(pc.list_flatten(table.column("observation.imu")), 6):
            out.add(rel, "observation.imu", "§4.4", "every IMU sample holds 6 values [ax, ay, az, gx, gy, gz]")


def _check_columns(table: pa.Table, features: dict, rel: str, out: Findings) -> None:
    names = set(table.column_names)
    for name in table.column_names:
        type_ = table.schema.field(name).type
        if name.startswith("status."):
            if type_ != pa.string():
                out.add(rel, name, "§3", f"status columns are strings, found {type_}")
            elif table.num_rows:
                bad = set(table.column(name).unique().to_pylist()) - {"connected", "disconnected"}
                if bad:
                    out.add(rel, name, "§3", f"values {sorted(map(str, bad))} are not connected/disconnected")
            continue
        if not name.startswith("observation."):
            if name not in KEY_COLUMNS and name not in KEY_TYPES and name not in D435_TYPES:
                out.add(rel, name, "§2.2", "unknown top-level column")
            continue
        feature = features.get(name)
        if feature is None:
            out.add(rel, name, "§6.8.2", "observation column not declared in info.json features")
            continue
        _check_column_type(table, name, type_, feature, rel, out)
        if name.endswith("slam_trajectory"):
            col = table.column(name)
            points = _lengths(col)
            if points is not None and np.any(points % 8):
                out.add(rel, name, "§4.6", "a row holds a number of values not divisible by 8")
            if name + "_ns" in names and not _lockstep(table.column(name + "_ns"), col, 8):
                out.add(rel, name + "_ns", "§8.1.3", "not in lockstep with the trajectory points")
        if name.endswith("slam_trajectory_ns") and name[:-3] not in names:
            out.add(rel, name, "§8.1.3", "time column without its trajectory column")


def _check_column_type(table: pa.Table, name: str, type_: pa.DataType, feature: dict, rel: str,
                       out: Findings) -> None:
    dtype, shape = feature.get("dtype"), feature.get("shape") or []
    if feature.get("encoding") == "host_monotonic_ns":
        expected = pa.int64()
    elif name == "observation.imu":
        expected = pa.list_(pa.list_(pa.float32()))
    elif dtype:
        expected = _list_of(dtype)
        if expected is None:
            out.add(rel, name, "§6.2", f"its feature's dtype {dtype!r} is not a numeric dtype")
            return
    else:
        expected = type_
    if type_ != expected:
        out.add(rel, name, "App. C", f"type {type_}, but its feature (dtype {dtype}) needs {expected}")
        return
    fixed = not name.endswith(("slam_trajectory", "slam_trajectory_ns", "_force_matrix")) and \
        name != "observation.imu" and pa.types.is_list(type_)
    if fixed and not _fixed_width(table.column(name), int(np.prod(shape))):
        out.add(rel, name, "§5.5", f"rows must hold exactly {int(np.prod(shape))} values (shape {shape}); "
                "rows without a sample hold zeros")


def _check_matrices(table: pa.Table, specs: dict | None, info: dict, rel: str, out: Findings) -> None:
    """``specs`` None: the episode row could not be read (reported already), nothing to compare."""
    for name in table.column_names:
        if not name.endswith("_force_matrix"):
            continue
        lengths = _lengths(table.column(name))
        if lengths is None or np.any((lengths != 0) & (lengths != fm.FLAT)):
            out.add(rel, name, "§4.6", f"rows must hold {fm.FLAT} values or none")
        if specs is None:
            continue
        spec = specs.get(name)
        if not spec or "encoding" not in spec or "scale" not in spec:
            out.add(rel, name, "§8.1.4", "force_matrix_specs of the episode row lacks this column's encoding/scale")
        elif spec.get("dtype") and _list_of(spec["dtype"]) != table.schema.field(name).type:
            out.add(rel, name, "§8.1.4", f"force_matrix_specs dtype {spec['dtype']} differs from the column type")


def _check_episode_row(path: Path, paths: TaskPaths, n: EpisodeNumber, rows: int, table: pa.Table,
                       out: Findings) -> dict | None:
    """The parsed JSON columns of the row; None when it cannot be read."""
    rel = str(path.relative_to(paths.root))
    if not path.exists():
        out.add(rel, "", "§1.2.1", "episode row file is missing")
        return {}
    try:
        row_table = pq.read_table(path)
    except Exception as exc:
        out.add(rel, "", "§7", f"cannot be read: {exc}")
        return None
    if row_table.num_rows != 1:
        out.add(rel, "", "§7", f"holds {row_table.num_rows} rows, expected 1")
        return {}
    row = row_table.to_pylist()[0]
    for name in EPISODE_COLUMNS:
        if name not in row and name not in ("slam_specs", "stats", "qa", "frame_marks"):
            out.add(rel, name, "§7.1", "column missing")
    parsed = {}
    for name in (*JSON_COLUMNS, *OPTIONAL_JSON_COLUMNS):
        if name in row:
            try:
                parsed[name] = json.loads(row[name])
            except (TypeError, ValueError):
                out.add(rel, name, "§7.1", "is not a JSON string")
    qa = parsed.get("qa")
    if qa and not (isinstance(qa, dict) and (qa.get("verdict") in ("ok", "warn", "redo") or "error" in qa)):
        out.add(rel, "qa", "DESIGN:qa", "is neither a verdict {verdict: ok|warn|redo, reasons, figures} nor "
                "{error}")
    for problem in shape_problems(parsed.get("frame_marks", {}), rows):
        out.add(rel, "frame_marks", "DESIGN:frame_marks", problem)
    if row.get("episode_index") != n.index:
        out.add(rel, "episode_index", "§1.3", f"is {row.get('episode_index')}, expected {n.index}")
    if row.get("length") != rows:
        out.add(rel, "length", "§7.1", f"is {row.get('length')} but the data parquet has {rows} rows")
    if "start_frame_index" in row and "end_frame_index" in row and rows and \
            row["end_frame_index"] - row["start_frame_index"] + 1 != rows:
        out.add(rel, "end_frame_index", "§7.1", "start/end frame indices do not span the episode's rows")
    trajectories = {c for c in table.column_names if c.endswith("slam_trajectory")}
    missing = trajectories - set(parsed.get("slam_specs", {}))
    if "slam_specs" in row and missing:
        out.add(rel, "slam_specs", "§7.2", f"no declaration for {sorted(missing)}")
    return parsed


def _check_videos(paths: TaskPaths, n: EpisodeNumber, info: dict, rows: int, decode: bool,
                  out: Findings) -> set[Path]:
    owned = set()
    cameras = info.get("cameras") or {}
    for key, ext in (info.get("video_extensions") or {}).items():
        path = paths.video(n, key, ext)
        if not path.exists():
            continue
        owned.add(path)
        rel = str(path.relative_to(paths.root))
        try:
            frames = count_frames(path, decode=decode)
            with av.open(str(path)) as c:
                ctx = c.streams.video[0].codec_context
                width, height, pix_fmt = ctx.width, ctx.height, ctx.pix_fmt
        except Exception as exc:
            out.add(rel, key, "DESIGN:video-integrity", f"cannot be decoded: {exc}")
            continue
        if frames != rows:
            out.add(rel, key, "DESIGN:video-integrity", f"{frames} frames but the episode has {rows} rows")
        if key in cameras and pix_fmt in DEPTH_PIX_FMTS:
            out.add(rel, key, "§4.8", f"depth stream ({pix_fmt}) is listed in cameras; depth slots appear only "
                    "in video_extensions")
        elif key in cameras:
            cam = cameras[key]
            if (cam.get("width"), cam.get("height")) != (width, height):
                out.add(rel, key, "§6.3", f"frames are {width}x{height}, cameras says "
                        f"{cam.get('width')}x{cam.get('height')} (a task keeps one size per camera: move "
                        "episodes of another size to a task of their own)")
        elif pix_fmt not in DEPTH_PIX_FMTS:
            out.add(rel, key, "§4.8", f"depth stream has pixel format {pix_fmt}, expected gray12le (mp4) or gray16le (mkv)")
    return owned


def _list_of(dtype: Any) -> pa.DataType | None:
    """list<dtype> for a numpy dtype name, None if it names no numeric dtype."""
    try:
        return pa.list_(pa.from_numpy_dtype(np.dtype(dtype)))
    except (TypeError, pa.ArrowNotImplementedError):
        return None


def _lengths(col: pa.ChunkedArray) -> np.ndarray | None:
    """Values per row of a list column; None if the column is not a list (its type is
    reported by the type checks, the length rules cannot apply)."""
    if not pa.types.is_list(col.type):
        return None
    return pc.list_value_length(col).to_numpy(zero_copy_only=False)


def _fixed_width(col: pa.ChunkedArray, width: int) -> bool:
    lengths = _lengths(col)
    return lengths is not None and bool(np.all(lengths == width))


def _lockstep(times: pa.ChunkedArray, values: pa.ChunkedArray, per_item: int) -> bool:
    a, b = _lengths(times), _lengths(values)
    return a is not None and b is not None and bool(np.array_equal(a * per_item, b))
