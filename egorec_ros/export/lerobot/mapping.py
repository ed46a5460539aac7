"""Which of our columns become which LeRobot features (decided once per export).

* RGB cameras -> ``observation.images.<key>`` (video features); depth streams ->
  ``observation.images.<key>`` too, as LeRobot 0.6's depth feature (``is_depth_map``, one
  channel, millimetres on read; lerobot 0.4.4 has no depth feature and decodes it as RGB).
* Fixed-length float32 observation columns (gripper state, forces, glove pressure and
  IMU, hand poses, joint states...) -> ``observation.state``: the chosen columns
  concatenated in the task's feature order, each flattened row-major; ``names`` says
  ``<column without "observation.">.<flat index>`` for every value. With
  ``layout="separate"`` each column stays its own 1-D feature under its own name.
* ``action`` when the task records one (its stats count > 0; the §3 placeholder is left out).
* Per-row extras have no fixed length: force matrices (187,500 values, a sample every few
  rows), trajectory and IMU lists, ``*_ns`` stamps, status strings. Left out, or with
  ``extras="flatten"`` the trajectories and IMU become ``<column>_last``: the row's newest
  point/sample, held from earlier rows when a row has none, zeros before the first.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pyarrow as pa

from egorec_ros.dataset import Episode, Task
from egorec_ros.errors import UserError
from egorec_ros.layout import atomic

IMAGE_PREFIX = "observation.images."
LEROBOT_KEYS = ("episode_index", "frame_index", "timestamp", "task_index")  # rewritten, not copied
POSE_NAMES = ("x", "y", "z", "qx", "qy", "qz", "qw")


class MappingError(UserError, ValueError):
    """A requested column/camera cannot be exported (the message says which and what to do)."""


@dataclass(frozen=True)
class Part:
    """One source column inside a LeRobot feature."""

    column: str
    width: int
    how: str = "vector"          # vector | last_point (trajectory) | last_sample (imu)


@dataclass(frozen=True)
class Feature:
    name: str
    parts: tuple[Part, ...]
    names: tuple[str, ...]

    @property
    def width(self) -> int:
        return sum(p.width for p in self.parts)


@dataclass(frozen=True)
class Plan:
    fps: int
    cameras: tuple[str, ...]                 # our video keys (RGB and depth), in order
    features: tuple[Feature, ...]            # numeric per-frame features besides the default ones
    left_out: dict[str, str] = field(default_factory=dict)   # column or stream -> why
    depth: tuple[str, ...] = ()              # which of ``cameras`` are depth streams

    def describe(self) -> dict:
        return {"cameras": {k: IMAGE_PREFIX + k for k in self.cameras}, "depth": list(self.depth),
                "features": {f.name: [p.column if p.how == "vector" else f"{p.column} ({p.how})" for p in f.parts]
                             for f in self.features},
                "left_out": dict(self.left_out)}


def _short(column: str) -> str:
    return column.removeprefix("observation.")


def _vector_names(column: str, width: int) -> list[str]:
    return [f"{_short(column)}.{i}" for i in range(width)]


def column_types(task: Task) -> dict[str, pa.DataType]:
    """Every column of every episode with its Arrow type (episodes may differ, §5.5)."""
    types: dict[str, pa.DataType] = {}
    for ep in task:
        for f in ep.schema:
            types.setdefault(f.name, f.type)
    return types


def _is_vector(name: str, typ: pa.DataType) -> bool:
    return (pa.types.is_list(typ) and typ.value_type == pa.float32()
            and not name.endswith("_force_matrix"))


def _width(task: Task, column: str) -> int:
    shape = task.features.get(column, {}).get("shape")
    if not shape:
        raise MappingError(f"{task.root}/meta/info.json: column {column!r} has no feature shape; cannot export it "
                           "as a fixed-length feature")
    return int(np.prod(shape))


def _real_action(task: Task) -> bool:
    try:
        stats = atomic.read_json(task.root / "meta" / "stats.json")
    except FileNotFoundError:
        return False
    return int(np.sum(stats.get("action", {}).get("count", 0))) > 0   # [n] or n


def _resolve(requested: Sequence[str], known: Sequence[str], what: str, flag: str) -> list[str]:
    out = []
    for r in requested:
        name = r if r in known else f"observation.{r}"
        if name not in known:
            raise MappingError(f"{flag} {r!r}: no such {what} in the task (have: {', '.join(known) or 'none'})")
        out.append(name)
    return out


def plan_export(task: Task, *, cameras: Sequence[str] | None = None, state: Sequence[str] | None = None,
                action: Sequence[str] | None = None, layout: str = "concat", extras: str = "drop") -> Plan:
    """The feature mapping for ``task``; ``None`` means the defaults described above."""
    if extras not in ("drop", "flatten"):
        raise MappingError(f"--extras {extras!r}: use drop or flatten")
    fps = float(task.fps)
    if abs(fps - round(fps)) > 1e-9:
        raise MappingError(f"{task.root}: fps {fps} is not an integer; LeRobot declares fps as an integer")
    types = column_types(task)
    order = [c for c in task.features if c in types] + [c for c in types if c not in task.features]
    left_out: dict[str, str] = {}

    streams = list(task.video_extensions)
    chosen_cams = streams if cameras is None else _resolve_cameras(cameras, streams)
    for key in streams:
        if key not in chosen_cams:
            left_out[key] = "camera not chosen (--cameras)"
    depth = tuple(k for k in chosen_cams if k not in task.info.get("cameras", {}))

    vectors = [c for c in order if c.startswith("observation.") and _is_vector(c, types[c])]
    if action is None:
        action_cols = ["action"] if "action" in types and _real_action(task) else []
        if "action" in types and not action_cols:
            left_out["action"] = "the [0.0] placeholder (no action recorded)"
    else:
        action_cols = _resolve(action, [c for c in order if _is_vector(c, types[c])], "fixed-length column", "--action")
    state_cols = ([c for c in vectors if c not in action_cols] if state is None
                  else _resolve(state, vectors, "fixed-length observation column", "--state"))
    for c in vectors:
        if c not in state_cols and c not in action_cols:
            left_out[c] = "not chosen (--state)"

    features: list[Feature] = []
    if state_cols:
        if layout == "concat":
            parts = tuple(Part(c, _width(task, c)) for c in state_cols)
            features.append(Feature("observation.state", parts,
                                    tuple(n for p in parts for n in _vector_names(p.column, p.width))))
        elif layout == "separate":
            features += [Feature(c, (Part(c, _width(task, c)),), tuple(_vector_names(c, _width(task, c))))
                         for c in state_cols]
        else:
            raise MappingError(f"--state-layout {layout!r}: use concat or separate")
    if action_cols:
        parts = tuple(Part(c, _width(task, c)) for c in action_cols)
        names = tuple(n for p in parts for n in _vector_names(p.column, p.width))
        features.append(Feature("action", parts, names))

    for c in order:
        if c in state_cols or c in action_cols or c in left_out:
            continue
        if extras == "flatten" and c.endswith("slam_trajectory"):
            features.append(Feature(c + "_last", (Part(c, 7, "last_point"),), POSE_NAMES))
        elif extras == "flatten" and c == "observation.imu":
            features.append(Feature(c + "_last", (Part(c, 6, "last_sample"),), tuple(_vector_names(c, 6))))
        elif c.endswith("_force_matrix"):
            left_out[c] = "force matrix: 187,500 values a row, sampled on some rows only"
        elif c.endswith("slam_trajectory") or c == "observation.imu":
            left_out[c] = "variable-length list per row (--extras flatten keeps the newest point/sample)"
        elif c not in LEROBOT_KEYS:
            left_out[c] = "per-row time stamp / status, not a model input"
    if not chosen_cams and not features:
        raise MappingError(f"{task.root}: nothing to export (no camera and no fixed-length column chosen)")
    return Plan(int(round(fps)), tuple(chosen_cams), tuple(features), left_out, depth)


def _resolve_cameras(requested: Sequence[str], streams: Sequence[str]) -> list[str]:
    out = []
    for r in requested:
        key = r.removeprefix(IMAGE_PREFIX)
        if key not in streams:
            raise MappingError(f"--cameras {r!r}: no such video stream in the task "
                               f"(have: {', '.join(streams) or 'none'})")
        out.append(key)
    return out


# ---- values --------------------------------------------------------------------------------

def _fixed(col: pa.Array, width: int, where: str) -> np.ndarray:
    lengths = col.value_lengths().to_numpy(zero_copy_only=False)
    if len(lengths) and not np.all(lengths == width):
        bad = int(np.flatnonzero(lengths != width)[0])
        raise MappingError(f"{where}: row {bad} holds {lengths[bad]} values, expected {width}")
    return col.flatten().to_numpy(zero_copy_only=False).astype(np.float32, copy=False).reshape(len(col), width)


def _held(last: np.ndarray, has: np.ndarray, values: np.ndarray, rows: int, width: int) -> np.ndarray:
    """Row i gets values[last[j]] of the newest row j <= i that had one; zeros before."""
    src = np.where(has, np.arange(rows), -1)
    np.maximum.accumulate(src, out=src)
    out = np.zeros((rows, width), np.float32)
    ok = src >= 0
    out[ok] = values[last[src[ok]]]
    return out


def _last_point(col: pa.Array, rows: int) -> np.ndarray:
    counts = col.value_lengths().to_numpy(zero_copy_only=False) // 8
    points = col.flatten().to_numpy(zero_copy_only=False).reshape(-1, 8)[:, 1:].astype(np.float32)
    return _held(np.cumsum(counts) - 1, counts > 0, points, rows, 7)


def _last_sample(col: pa.Array, rows: int) -> np.ndarray:
    counts = col.value_lengths().to_numpy(zero_copy_only=False)
    samples = col.flatten().flatten().to_numpy(zero_copy_only=False).astype(np.float32).reshape(-1, 6)
    return _held(np.cumsum(counts) - 1, counts > 0, samples, rows, 6)


def episode_values(ep: Episode, plan: Plan) -> tuple[dict[str, np.ndarray], list[str]]:
    """{feature name: (rows, width) float32} for one episode, and the columns it lacks
    (filled with the §5.5 row default, zeros)."""
    wanted = sorted({p.column for f in plan.features for p in f.parts if ep.has(p.column)})
    table = ep.read(wanted)
    rows = len(ep)
    missing: list[str] = []
    out = {}
    for f in plan.features:
        blocks = []
        for p in f.parts:
            if not ep.has(p.column):
                missing.append(p.column)
                blocks.append(np.zeros((rows, p.width), np.float32))
                continue
            col = table.column(p.column).combine_chunks()
            if p.how == "vector":
                blocks.append(_fixed(col, p.width, f"{ep.data_path} {p.column}"))
            elif p.how == "last_point":
                blocks.append(_last_point(col, rows))
            else:
                blocks.append(_last_sample(col, rows))
        out[f.name] = np.concatenate(blocks, axis=1) if len(blocks) > 1 else blocks[0]
    return out, missing
