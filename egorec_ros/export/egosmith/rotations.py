"""Quaternion (XYZW) <-> rotation matrix, slerp and rot6d, vectorised over leading axes."""
from __future__ import annotations

import numpy as np


def quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """(..., 4) XYZW, normalised here -> (..., 3, 3) rotation matrices."""
    q = np.asarray(q, dtype=np.float64)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    x, y, z, w = np.moveaxis(q, -1, 0)
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], axis=-1),
        np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], axis=-1),
        np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], axis=-1),
    ], axis=-2)


def slerp(q0: np.ndarray, q1: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Spherical interpolation between unit quaternions (..., 4) at fractions u (...,),
    along the shorter arc (q and -q are the same rotation)."""
    q0 = q0 / np.linalg.norm(q0, axis=-1, keepdims=True)
    q1 = q1 / np.linalg.norm(q1, axis=-1, keepdims=True)
    dot = np.sum(q0 * q1, axis=-1)
    q1 = np.where(dot[..., None] < 0, -q1, q1)
    dot = np.abs(dot)
    theta = np.arccos(np.clip(dot, -1.0, 1.0))
    sin = np.sin(theta)
    near = sin < 1e-9                      # (almost) the same rotation: linear is exact enough
    safe = np.where(near, 1.0, sin)
    w0 = np.where(near, 1.0 - u, np.sin((1.0 - u) * theta) / safe)
    w1 = np.where(near, u, np.sin(u * theta) / safe)
    out = w0[..., None] * q0 + w1[..., None] * q1
    return out / np.linalg.norm(out, axis=-1, keepdims=True)


def rot6d(rotation: np.ndarray) -> np.ndarray:
    """(..., 3, 3) -> (..., 6): first two columns, [R00, R10, R20, R01, R11, R21]
    (the EgoSmith lowdim convention)."""
    return np.concatenate([rotation[..., :, 0], rotation[..., :, 1]], axis=-1)


def matrix_to_quat(rotation: np.ndarray) -> np.ndarray:
    """(..., 3, 3) proper rotations -> (..., 4) unit XYZW (Shepperd: solved for the largest of
    w, x, y, z first, so nothing is divided by a small number)."""
    m = np.asarray(rotation, dtype=np.float64)
    tr = np.trace(m, axis1=-2, axis2=-1)
    d0, d1, d2 = m[..., 0, 0], m[..., 1, 1], m[..., 2, 2]
    pick = np.argmax(np.stack([tr, d0, d1, d2], axis=-1), axis=-1)          # 0: w, 1: x, 2: y, 3: z
    big = np.choose(pick, [tr, 2 * d0 - tr, 2 * d1 - tr, 2 * d2 - tr])
    s = 2 * np.sqrt(np.maximum(1.0 + big, 1e-12))                             # 4 |largest component|
    a21, a02, a10 = m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0], m[..., 1, 0] - m[..., 0, 1]
    p10, p02, p21 = m[..., 1, 0] + m[..., 0, 1], m[..., 0, 2] + m[..., 2, 0], m[..., 2, 1] + m[..., 1, 2]
    x = np.choose(pick, [a21 / s, s / 4, p10 / s, p02 / s])
    y = np.choose(pick, [a02 / s, p10 / s, s / 4, p21 / s])
    z = np.choose(pick, [a10 / s, p02 / s, p21 / s, s / 4])
    w = np.choose(pick, [s / 4, a21 / s, a02 / s, a10 / s])
    q = np.stack([x, y, z, w], axis=-1)
    return q / np.linalg.norm(q, axis=-1, keepdims=True)
