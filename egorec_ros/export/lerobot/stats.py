"""Feature statistics in LeRobot's shape (lerobot/datasets/compute_stats.py): per feature
min, max, mean, std, count and quantiles q01..q99; vectors per dimension, images per
channel as (3, 1, 1) in [0, 1], depth as (1, 1, 1) in millimetres. As lerobot 0.6.1's
recorder writes them: float64 values, int64 ``count``, integer columns included (0.4.4
kept min/max of integer columns int64; 0.6 computes them in float64). Per-episode stats are exact; the dataset stats are
aggregated from them as LeRobot does (count-weighted means, pooled variance, weighted
quantiles)."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from egorec_ros.export.lerobot.layout import QUANTILES

Q_KEYS = tuple(f"q{int(round(q * 100)):02d}" for q in QUANTILES)


def vector_stats(values: np.ndarray) -> dict[str, np.ndarray]:
    """(N,) or (N, D) -> stats of shape (1,) or (D,)."""
    v = np.asarray(values, np.float64).reshape(len(values), -1)
    out = {"min": v.min(0), "max": v.max(0), "mean": v.mean(0), "std": v.std(0), "count": np.array([len(v)])}
    for key, q in zip(Q_KEYS, np.quantile(v, QUANTILES, axis=0)):
        out[key] = q
    return out


def image_stats(frames: np.ndarray, count: int) -> dict[str, np.ndarray]:
    """(K, h, w, 3) uint8 sample of an episode's frames -> per-channel (3, 1, 1) in [0, 1];
    ``count`` is the episode's frame count (what LeRobot records, not the sample size).
    Exact, from one 256-bin histogram per channel (no float copy of the pixels)."""
    px = frames.reshape(-1, 3)
    hist = np.stack([np.bincount(px[:, c], minlength=256) for c in range(3)])   # (3, 256)
    return _histogram_stats(hist, np.arange(256) / 255.0, count)


def depth_stats(codes: np.ndarray, levels: np.ndarray, count: int) -> dict[str, np.ndarray]:
    """(K, h, w) 12-bit depth codes -> (1, 1, 1) stats in what LeRobot reads them as
    (``levels[code]``, millimetres): LeRobot 0.6 keeps depth stats in the stored unit
    (compute_stats.py: no /255 for ``is_depth_map`` features)."""
    hist = np.bincount(codes.reshape(-1), minlength=len(levels))[None, : len(levels)]
    return _histogram_stats(hist, levels, count)


def _histogram_stats(hist: np.ndarray, levels: np.ndarray, count: int) -> dict[str, np.ndarray]:
    """(C, L) counts of L sorted levels -> per-channel (C, 1, 1) stats."""
    hist = hist.astype(np.float64)
    n = hist.sum(1)
    mean = hist @ levels / n
    std = np.sqrt(np.maximum(hist @ levels**2 / n - mean**2, 0.0))
    seen = hist > 0
    last = len(levels) - 1
    out = {"min": levels[seen.argmax(1)], "max": levels[last - seen[:, ::-1].argmax(1)], "mean": mean, "std": std}
    cdf = np.cumsum(hist, 1) / n[:, None]
    for key, q in zip(Q_KEYS, QUANTILES):
        out[key] = levels[np.minimum((cdf < q).sum(1), last)]   # lower quantile: first level whose cdf reaches q
    out = {k: v.reshape(-1, 1, 1) for k, v in out.items()}
    out["count"] = np.array([count])
    return out


def aggregate(per_episode: Sequence[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Dataset stats of one feature from its episodes' stats."""
    counts = np.array([int(s["count"][0]) for s in per_episode], np.float64)
    w = (counts / counts.sum()).reshape(-1, *([1] * np.ndim(per_episode[0]["mean"])))
    means = np.stack([s["mean"] for s in per_episode])
    mean = (w * means).sum(0)
    var = (w * (np.stack([s["std"] for s in per_episode]) ** 2 + (means - mean) ** 2)).sum(0)
    out = {"min": np.min(np.stack([s["min"] for s in per_episode]), 0),
           "max": np.max(np.stack([s["max"] for s in per_episode]), 0),
           "mean": mean, "std": np.sqrt(var), "count": np.array([int(counts.sum())])}
    for key in Q_KEYS:
        out[key] = (w * np.stack([s[key] for s in per_episode])).sum(0)
    return out


def to_json(stats: dict[str, np.ndarray]) -> dict:
    return {k: np.asarray(v).tolist() for k, v in stats.items()}
