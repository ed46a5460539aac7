"""Column declarations: name, Arrow type, row default, feature entry, and how a
buffer of row values becomes one Arrow array (vectorised).

Every parquet column the writer can produce is declared here through a builder
(``vector``, ``sample_ns``, ``force_matrix``, ``trajectory``, ...), so the types of
Appendix C and the feature declarations of §6.2 come from one place.

Row values: ``None`` means "no sample in this row" and becomes the §5.5 default
([0.0]*d, [] or 0). A column is written to an episode only if some row carried a
value, or if it is declared ``always`` (§5.5 column-level sparsity).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Sequence

import numpy as np
import pyarrow as pa

from egorec_ros.codecs import force_matrix as fm
from egorec_ros.schema.names import check_observation_name


class Layout(str, Enum):
    SCALAR = "scalar"   # int/float scalar per row
    STRING = "string"   # status.<id>
    VECTOR = "vector"   # list<float32> of fixed length
    LIST = "list"       # list<T> of variable length (trajectories, _ns lists, imu_ts_ns)
    NESTED = "nested"   # list<list<float32>> with fixed inner width (observation.imu)
    MATRIX = "matrix"   # force matrix: raw (250,250,3) in, encoded flat list out


@dataclass(frozen=True)
class ColumnSpec:
    name: str
    layout: Layout
    numpy_dtype: str = "float32"         # scalar / list item dtype
    feature: dict | None = None          # info.json features entry; None: not declared (§6.8)
    always: bool = False                 # written in every episode of the rig
    width: int = 0                       # VECTOR length / NESTED inner width / LIST values per point
    encoding: str = ""                   # MATRIX: row_diff_quantized | row_flat_raw
    scale: int = 1                       # MATRIX scale
    extra: dict = field(default_factory=dict, compare=False)

    @property
    def type(self) -> pa.DataType:
        if self.layout is Layout.STRING:
            return pa.string()
        item = pa.from_numpy_dtype(np.dtype(self.numpy_dtype))
        if self.layout is Layout.SCALAR:
            return item
        if self.layout is Layout.NESTED:
            return pa.list_(pa.list_(item))
        return pa.list_(item)

    def to_json(self) -> dict:
        return {"name": self.name, "layout": self.layout.value, "numpy_dtype": self.numpy_dtype,
                "feature": self.feature, "always": self.always, "width": self.width,
                "encoding": self.encoding, "scale": self.scale, "extra": self.extra}

    @classmethod
    def from_json(cls, doc: dict) -> "ColumnSpec":
        return cls(**{**doc, "layout": Layout(doc["layout"])})

    @property
    def declared(self) -> bool:
        return self.feature is not None

    def to_arrow(self, values: Sequence[Any]) -> pa.Array:
        """Row values (``None`` = no sample) -> one Arrow array of ``self.type``."""
        return _CONVERTERS[self.layout](self, values)


# ---- builders -------------------------------------------------------------------------

def scalar(name: str, dtype: str, *, always: bool = False) -> ColumnSpec:
    return ColumnSpec(name, Layout.SCALAR, dtype, always=always)


def status(slot: str) -> ColumnSpec:
    return ColumnSpec(f"status.{slot}", Layout.STRING, "str", always=True)


def vector(name: str, shape: Sequence[int], *, semantic_suffix: str | None = None,
           always: bool = False) -> ColumnSpec:
    """Fixed-length float32 list; ``shape`` is the feature shape (e.g. [16, 16])."""
    check_observation_name(name, semantic_suffix)
    width = int(np.prod(shape))
    return ColumnSpec(name, Layout.VECTOR, feature={"dtype": "float32", "shape": list(shape)},
                      always=always, width=width)


def sample_ns(name: str, semantic_suffix: str) -> ColumnSpec:
    """Scalar capture time of a latest-wins sample (0 = no sample in this row)."""
    check_observation_name(name, semantic_suffix)
    return ColumnSpec(name, Layout.SCALAR, "int64",
                      feature={"dtype": "int64", "shape": [1], "encoding": "host_monotonic_ns"})


def force_matrix(name: str, encoding: str = fm.ROW_DIFF_QUANTIZED, scale: int = 10) -> ColumnSpec:
    check_observation_name(name, "_force_matrix")
    if encoding == fm.ROW_DIFF_QUANTIZED:
        if not (isinstance(scale, int) and 1 <= scale <= 1000):
            raise ValueError(f"{name}: row_diff_quantized scale must be an integer 1..1000, got {scale!r}")
        dtype = "int16"
    elif encoding == fm.ROW_FLAT_RAW:
        dtype, scale = "float32", 1
    else:
        raise ValueError(f"{name}: unknown force matrix encoding {encoding!r} (known: {fm.ENCODINGS})")
    return ColumnSpec(name, Layout.MATRIX, dtype,
                      feature={"dtype": dtype, "shape": list(fm.SHAPE), "encoding": encoding, "scale": scale},
                      encoding=encoding, scale=scale)


def trajectory(name: str, slam_spec: dict) -> tuple[ColumnSpec, ColumnSpec]:
    """``X`` (flat [t,x,y,z,qx,qy,qz,qw]*N float64) and ``X_ns`` (N int64, lockstep).

    ``slam_spec`` is the §6.6 per-column declaration (frame, frame_axes, time, owner,
    source_slot); it goes into the feature and the episode row's slam_specs."""
    check_observation_name(name, "slam_trajectory")
    points = ColumnSpec(name, Layout.LIST, "float64",
                        feature={"dtype": "float64", "shape": [8],
                                 "encoding": "flat_points_8_txyz_qxyzw", **slam_spec},
                        width=8, extra={"slam_spec": slam_spec})
    ns = ColumnSpec(name + "_ns", Layout.LIST, "int64",
                    feature={"dtype": "int64", "shape": [1],
                             "encoding": "flat_parallel_to_slam_trajectory", "clock": "host_monotonic_ns"})
    return points, ns


def imu() -> tuple[ColumnSpec, ColumnSpec]:
    """Stereo IMU window columns (§4.4): ``imu_ts_ns`` and ``observation.imu``."""
    ts = ColumnSpec("imu_ts_ns", Layout.LIST, "int64")
    samples = ColumnSpec("observation.imu", Layout.NESTED, feature={"dtype": "float32", "shape": [6]}, width=6)
    return ts, samples


def key_columns() -> list[ColumnSpec]:
    """The columns every episode has (§3), in writing order; raw_hw_ns is conditional."""
    return [
        scalar("episode_index", "int64", always=True),
        scalar("frame_index", "int64", always=True),
        scalar("timestamp", "float32", always=True),
        scalar("task_index", "int64", always=True),
        scalar("wall_time", "float64", always=True),
        scalar("hardware_ns", "int64", always=True),
        scalar("raw_hw_ns", "int64"),
        action(1),
    ]


def action(dim: int) -> ColumnSpec:
    """``action``: the [0.0] placeholder (dim 1) unless the rig records commands (§3)."""
    return ColumnSpec("action", Layout.VECTOR, feature={"dtype": "float32", "shape": [dim]}, always=True,
                      width=dim, extra={"placeholder": dim == 1})


def d435_forensics() -> list[ColumnSpec]:
    """D435 chain evidence columns (§4.3); top-level, not declared in features."""
    return [
        scalar("depth_ns", "int64"), scalar("host_ns", "int64"),
        scalar("rgb_dup", "int8"), scalar("rgb_gap", "int32"),
        scalar("depth_dup", "int8"), scalar("depth_gap", "int32"),
        scalar("ts_src", "int8"),
    ]


# ---- row values -> Arrow -----------------------------------------------------------------

def _offsets(lengths: np.ndarray) -> pa.Array:
    offsets = np.zeros(len(lengths) + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    return pa.array(offsets, pa.int32())


def _scalar(spec: ColumnSpec, values: Sequence[Any]) -> pa.Array:
    arr = np.fromiter((0 if v is None else v for v in values), dtype=spec.numpy_dtype, count=len(values))
    return pa.array(arr, spec.type)


def _string(spec: ColumnSpec, values: Sequence[Any]) -> pa.Array:
    return pa.array(["" if v is None else v for v in values], pa.string())


def _vector(spec: ColumnSpec, values: Sequence[Any]) -> pa.Array:
    flat = np.zeros((len(values), spec.width), dtype=np.float32)
    for i, v in enumerate(values):
        if v is not None:
            flat[i] = np.asarray(v, dtype=np.float32).reshape(-1)
    return pa.ListArray.from_arrays(pa.array(np.arange(len(values) + 1, dtype=np.int32) * spec.width),
                                    pa.array(flat.reshape(-1)), type=spec.type)


def _list(spec: ColumnSpec, values: Sequence[Any]) -> pa.Array:
    parts = [np.asarray(v, dtype=spec.numpy_dtype).reshape(-1) for v in values if v is not None]
    lengths = np.fromiter((0 if v is None else np.size(v) for v in values), dtype=np.int64, count=len(values))
    flat = np.concatenate(parts) if parts else np.zeros(0, dtype=spec.numpy_dtype)
    return pa.ListArray.from_arrays(_offsets(lengths), pa.array(flat), type=spec.type)


def _nested(spec: ColumnSpec, values: Sequence[Any]) -> pa.Array:
    parts = [np.asarray(v, dtype=np.float32).reshape(-1, spec.width) for v in values if v is not None]
    counts = np.fromiter((0 if v is None else np.size(v) // spec.width for v in values),
                         dtype=np.int64, count=len(values))
    flat = np.concatenate(parts) if parts else np.zeros((0, spec.width), dtype=np.float32)
    inner = pa.ListArray.from_arrays(
        pa.array(np.arange(len(flat) + 1, dtype=np.int32) * spec.width), pa.array(flat.reshape(-1)))
    return pa.ListArray.from_arrays(_offsets(counts), inner, type=spec.type)


def _matrix(spec: ColumnSpec, values: Sequence[Any]) -> pa.Array:
    """Encoded one matrix at a time, straight into the column's buffer: a whole row group
    at once needs temporaries of tens of MB, which glibc maps fresh on every flush, and
    the page faults cost three times the encoding (bench_store.py)."""
    present = [v for v in values if v is not None]
    lengths = np.fromiter((0 if v is None else fm.FLAT for v in values), dtype=np.int64, count=len(values))
    flat = np.empty(len(present) * fm.FLAT, dtype=spec.numpy_dtype)
    for i, matrix in enumerate(present):
        fm.encode(matrix, spec.encoding, spec.scale, out=flat[i * fm.FLAT:(i + 1) * fm.FLAT])
    return pa.ListArray.from_arrays(_offsets(lengths), pa.array(flat), type=spec.type)


_CONVERTERS = {
    Layout.SCALAR: _scalar, Layout.STRING: _string, Layout.VECTOR: _vector,
    Layout.LIST: _list, Layout.NESTED: _nested, Layout.MATRIX: _matrix,
}
