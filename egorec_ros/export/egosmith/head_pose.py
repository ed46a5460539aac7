"""Head pose at each frame's stamp, from the ego SLAM trajectory column.

Points are paired by their host stamps (``_ns``, §3.1, §8.2.4 — never by the sensor-clock
``t``): a frame between two points within ``tolerance_ns`` of both gets the linear position
and slerp rotation at its stamp; a frame on a point gets that point; anything else (before
the first point, after the last, across a gap, points without a stamp) has no pose."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from egorec_ros.export.egosmith.rotations import quat_to_matrix, slerp

DEFAULT_TOLERANCE_NS = 100_000_000   # 100 ms: three ticks at 30 fps; SLAM runs at the camera rate


@dataclass(frozen=True)
class HeadPoses:
    valid: np.ndarray         # (N,) bool: a pose exists at this frame's stamp
    rotation: np.ndarray      # (N, 3, 3) body -> world (identity where not valid)
    translation: np.ndarray   # (N, 3)
    why: np.ndarray           # (N,) object: reason where not valid, "" where valid


def interpolate(points: np.ndarray, points_ns: np.ndarray, frame_ns: np.ndarray,
                tolerance_ns: int = DEFAULT_TOLERANCE_NS) -> HeadPoses:
    """``points`` (M, 8) [t, x, y, z, qx, qy, qz, qw]; ``points_ns`` (M,) host stamps (0 = none);
    ``frame_ns`` (N,) frame stamps (0 = none)."""
    frame_ns = np.asarray(frame_ns, dtype=np.int64)
    n = len(frame_ns)
    keep = np.asarray(points_ns, dtype=np.int64) > 0
    ns, pts = np.asarray(points_ns, dtype=np.int64)[keep], np.asarray(points, dtype=np.float64)[keep]
    order = np.argsort(ns, kind="stable")
    ns, pts = ns[order], pts[order]
    why = np.full(n, "", dtype=object)
    if len(ns) == 0:
        why[:] = "no SLAM point with a host stamp in this episode"
        return HeadPoses(np.zeros(n, bool), np.tile(np.eye(3), (n, 1, 1)), np.zeros((n, 3)), why)
    hi = np.clip(np.searchsorted(ns, frame_ns, side="left"), 0, len(ns) - 1)
    exact = ns[hi] == frame_ns
    lo = np.where(exact, hi, np.maximum(hi - 1, 0))
    inside = (ns[lo] <= frame_ns) & (frame_ns <= ns[hi])
    near = (frame_ns - ns[lo] <= tolerance_ns) & (ns[hi] - frame_ns <= tolerance_ns)
    valid = (frame_ns > 0) & inside & near
    why[frame_ns <= 0] = "frame has no stamp"
    why[(frame_ns > 0) & ~inside] = "frame stamp outside the SLAM trajectory"
    why[(frame_ns > 0) & inside & ~near] = f"SLAM gap: no point within {tolerance_ns / 1e6:g} ms on both sides"
    span = (ns[hi] - ns[lo]).astype(np.float64)
    u = np.where(span > 0, (frame_ns - ns[lo]) / np.where(span > 0, span, 1.0), 0.0)
    u = np.clip(u, 0.0, 1.0)
    translation = pts[lo, 1:4] + u[:, None] * (pts[hi, 1:4] - pts[lo, 1:4])
    rotation = quat_to_matrix(slerp(pts[lo, 4:8], pts[hi, 4:8], u))
    rotation[~valid] = np.eye(3)
    translation[~valid] = 0.0
    return HeadPoses(valid, rotation, translation, why)
