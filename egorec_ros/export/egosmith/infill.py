"""A pose for every frame of a hand that is not seen, as EgoSmith writes one: EgoSmith never
writes an empty hand (its lowdim QA and the trainer reject a zero rot6d); it infills and keeps
``presence`` as the only record of what was observed.

EgoSmith's deterministic infill (stages/hawor_infiller_stage.py ``_interp_and_smooth_hand_time``),
per hand and per value: linear interpolation in time between the nearest observed frames,
the nearest observation held before the first and after the last one (``np.interp``), then a
5-frame box filter (edge-padded) applied to the filled frames only. Here the values are the
21 world keypoints; the wrist rotation is slerped between the observed palm rotations (held
likewise, not box-filtered) so that it stays a rotation whatever the keypoints do in between.

A hand never observed in the episode is what EgoSmith leaves for one (zero MANO parameters):
the wrist at the world origin with the identity rotation; its keypoints all at the wrist.
Where EgoSmith zeroes a hand observed in a single frame, that observation is held instead
(a jump to the origin would be motion that never happened)."""
from __future__ import annotations

import numpy as np

from egorec_ros.export.egosmith.rotations import matrix_to_quat, quat_to_matrix, slerp

SMOOTH_WINDOW = 5


def _anchors(observed: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each of N frames: the observed frame at or before it, the one at or after it (held
    at the ends), and the fraction between them."""
    t = np.flatnonzero(observed)
    n = len(observed)
    hi = np.clip(np.searchsorted(t, np.arange(n), side="left"), 0, len(t) - 1)
    lo = np.clip(np.where(t[hi] > np.arange(n), hi - 1, hi), 0, len(t) - 1)
    lo_t, hi_t = t[lo], t[hi]
    span = (hi_t - lo_t).astype(np.float64)
    u = np.where(span > 0, (np.arange(n) - lo_t) / np.where(span > 0, span, 1.0), 0.0)
    return lo_t, hi_t, np.clip(u, 0.0, 1.0)


def _box_filtered(values: np.ndarray, window: int = SMOOTH_WINDOW) -> np.ndarray:
    """(N, D) -> the centred moving mean of ``window`` frames, edges padded with the end value."""
    left, right = window // 2, window - 1 - window // 2
    padded = np.concatenate([np.repeat(values[:1], left, axis=0), values, np.repeat(values[-1:], right, axis=0)])
    c = np.cumsum(np.concatenate([np.zeros((1, values.shape[1])), padded]), axis=0)
    return (c[window:] - c[:-window]) / window


def infill_hand(joints: np.ndarray, rotation: np.ndarray, seen: np.ndarray,
                rotation_seen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One hand: joints (N, 21, 3), rotations (N, 3, 3), frames where the keypoints are observed
    (N,) and where the rotation is (N,; a subset) -> both with every frame filled."""
    n = len(joints)
    joints, rotation = joints.astype(np.float64).copy(), rotation.astype(np.float64).copy()
    if not seen.any():
        return np.zeros_like(joints), np.tile(np.eye(3), (n, 1, 1))
    flat = joints.reshape(n, -1)
    lo, hi, u = _anchors(seen)
    filled = flat[lo] + u[:, None] * (flat[hi] - flat[lo])
    if (~seen).any() and n > 1:
        filled[~seen] = _box_filtered(filled)[~seen]
    filled[seen] = flat[seen]
    if rotation_seen.any():
        q = matrix_to_quat(np.where(rotation_seen[:, None, None], rotation, np.eye(3)))
        lo, hi, u = _anchors(rotation_seen)
        between = quat_to_matrix(slerp(q[lo], q[hi], u))
        rotation = np.where(rotation_seen[:, None, None], rotation, between)
    else:
        rotation = np.tile(np.eye(3), (n, 1, 1))
    return filled.reshape(joints.shape), rotation


def infill(joints: np.ndarray, rotations: np.ndarray, seen: np.ndarray,
           rotation_seen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Both hands: joints (N, 2, 21, 3), rotations (N, 2, 3, 3), masks (N, 2)."""
    pairs = [infill_hand(joints[:, h], rotations[:, h], seen[:, h], rotation_seen[:, h]) for h in range(2)]
    return np.stack([p[0] for p in pairs], axis=1), np.stack([p[1] for p in pairs], axis=1)
