"""Checking a sample against its stream before it can reach a row: a bad sample is a
counted, reported drop (with its reason), never an exception in the tick loop and
never a value that breaks the writer."""
from __future__ import annotations

import math

import numpy as np

from egorec_ros.assembly.sample import Sample
from egorec_ros.codecs.lazy_frame import is_lazy_frame
from egorec_ros.rig.kinds import DEVICE_KINDS, StreamKind
from egorec_ros.rig.model import StreamSpec


def field_shapes(spec: StreamSpec, device_kind: str) -> dict[str, tuple[int, ...]]:
    role = DEVICE_KINDS[device_kind][spec.role]
    return {f.name: _rig_sized(spec, f.name) if f.shape == (0,) else f.shape for f in role.fields}


def _rig_sized(spec: StreamSpec, name: str) -> tuple[int]:
    """The shape of a field whose size the rig sets (joint states: ``dim``)."""
    dim = spec.source.get("dim")
    if dim is None:
        raise ValueError(f"stream {spec.id}: field {name!r} takes its size from the stream's `dim:`, which is "
                         "not set; compile the rig with egorec_ros.rig.compile.compile_rig, which requires it")
    return (int(dim),)


def problem(sample: Sample, spec: StreamSpec, shapes: dict[str, tuple[int, ...]]) -> str | None:
    """Why ``sample`` cannot be used, or None if it can."""
    if sample.stamp_ns <= 0:
        return "zero or negative stamp"
    p = sample.payload
    if spec.kind in (StreamKind.VIDEO, StreamKind.DEPTH):
        if not isinstance(p, np.ndarray):
            if is_lazy_frame(p):
                return None  # decoded (and checked) by the encoder, which substitutes bad frames
            return f"frame payload is {type(p).__name__}, not an ndarray or LazyFrame"
        want = (int(spec.source.get("height", 0)), int(spec.source.get("width", 0)))
        if p.shape[:2] != want:
            return f"frame is {p.shape[1]}x{p.shape[0]}, stream is {want[1]}x{want[0]}"
        if spec.kind is StreamKind.DEPTH and (p.dtype != np.uint16 or p.ndim != 2):
            return f"depth must be HxW uint16 mm, got {p.dtype} {p.shape}"
        if spec.kind is StreamKind.VIDEO and (p.dtype != np.uint8 or p.ndim not in (2, 3)
                                               or (p.ndim == 3 and p.shape[2] != 3)):
            return f"video must be HxWx3 or HxW uint8, got {p.dtype} {p.shape}"
        return None
    if spec.kind is StreamKind.IMU:
        return _array_problem(p, (6,), "imu")
    if spec.kind is StreamKind.TRAJECTORY:
        return _array_problem(p, (8,), "trajectory point")
    if not isinstance(p, dict):
        return f"payload is {type(p).__name__}, not a dict of fields"
    missing = [f for f in spec.columns if f not in p]
    if missing:
        return f"missing fields {missing}"
    for name in spec.columns:
        reason = _array_problem(p[name], shapes[name], name)
        if reason:
            return reason
    return None


def _array_problem(value: object, shape: tuple[int, ...], what: str) -> str | None:
    # runs for every sample (~40 per row on Appendix B): plain math.prod and ndarray
    # methods, not the np.prod / np.all wrappers, keep it at a few microseconds
    a = np.asarray(value)
    size = math.prod(shape)
    if a.size != size:
        return f"{what} has {a.size} values, expected {size} {shape}"
    kind = a.dtype.kind
    if kind not in "fiu":
        return f"{what} has dtype {a.dtype}"
    if kind == "f" and not np.isfinite(a).all():
        return f"{what} contains NaN or inf"
    return None
