"""Force-matrix column codecs (§4.6, DESIGN "Force matrix").

``row_diff_quantized``: (250, 250, 3) float32 mN -> (250, 750) -> quantise
(scale 1: truncate; scale N: rint(x*N)), clip to +-32767 -> difference between
consecutive rows with int16 wrap-around -> flat int16 (187500,). Decoding is a
cumulative sum along rows in an int32 accumulator cast back to int16, then / scale.
``row_flat_raw``: the float32 values, flat.

Every function works on a batch (n, 250, 250, 3) at once: no Python loop per row.
"""
from __future__ import annotations

import numpy as np

SHAPE = (250, 250, 3)
ROWS, ROW_WIDTH = 250, 750
FLAT = ROWS * ROW_WIDTH

ROW_DIFF_QUANTIZED = "row_diff_quantized"
ROW_FLAT_RAW = "row_flat_raw"
ENCODINGS = (ROW_DIFF_QUANTIZED, ROW_FLAT_RAW)


def _as_batch(matrices: np.ndarray) -> np.ndarray:
    m = np.asarray(matrices)
    if m.shape[-3:] != SHAPE:
        raise ValueError(f"force matrix must have shape (..., 250, 250, 3), got {m.shape}")
    return m.reshape(-1, ROWS, ROW_WIDTH)


def encode_row_diff(matrices: np.ndarray, scale: int = 1, out: np.ndarray | None = None) -> np.ndarray:
    """(n, 250, 250, 3) or (250, 250, 3) float mN -> (n, 187500) int16 row differences,
    written into ``out`` (n * 187500 int16) when given: a row group's column is filled in
    place, without a temporary per matrix."""
    m = _as_batch(matrices)
    n = len(m)
    scaled = np.multiply(m, np.float32(scale), dtype=np.float32)  # a fresh buffer the steps below reuse
    (np.trunc if scale == 1 else np.rint)(scaled, out=scaled)
    np.copyto(scaled, 0.0, where=np.isnan(scaled))
    np.clip(scaled, -32767, 32767, out=scaled)
    q = scaled.astype(np.int16)
    diff = np.empty((n, ROWS, ROW_WIDTH), np.int16) if out is None else out.reshape(n, ROWS, ROW_WIDTH)
    diff[:, 0] = q[:, 0]
    np.subtract(q[:, 1:], q[:, :-1], out=diff[:, 1:])  # int16 arithmetic wraps, as the format wants
    return diff.reshape(n, FLAT)


def decode_row_diff(flat: np.ndarray, scale: float = 1) -> np.ndarray:
    """(n, 187500) or (187500,) int16 -> (n, 250, 250, 3) float32 mN."""
    d = np.asarray(flat, dtype=np.int16).reshape(-1, ROWS, ROW_WIDTH)
    q = np.cumsum(d, axis=1, dtype=np.int32).astype(np.int16)
    out = q.astype(np.float32)
    if scale != 1:
        out /= np.float32(scale)
    return out.reshape(-1, *SHAPE)


def encode_flat_raw(matrices: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    m = _as_batch(matrices).reshape(-1, FLAT)
    if out is None:
        return m.astype(np.float32)
    flat = out.reshape(-1, FLAT)
    np.copyto(flat, m)
    return flat


def decode_flat_raw(flat: np.ndarray, scale: float = 1) -> np.ndarray:
    out = np.asarray(flat, dtype=np.float32).reshape(-1, *SHAPE)
    return out / np.float32(scale) if scale != 1 else out


def encode(matrices: np.ndarray, encoding: str, scale: int, out: np.ndarray | None = None) -> np.ndarray:
    if encoding == ROW_DIFF_QUANTIZED:
        return encode_row_diff(matrices, scale, out)
    if encoding == ROW_FLAT_RAW:
        return encode_flat_raw(matrices, out)
    raise ValueError(f"unknown force matrix encoding {encoding!r}; known: {', '.join(ENCODINGS)}")


def decode(flat: np.ndarray, encoding: str, scale: float) -> np.ndarray:
    if encoding == ROW_DIFF_QUANTIZED:
        return decode_row_diff(flat, scale)
    if encoding == ROW_FLAT_RAW:
        return decode_flat_raw(flat, scale)
    raise ValueError(f"unknown force matrix encoding {encoding!r}; known: {', '.join(ENCODINGS)}")
