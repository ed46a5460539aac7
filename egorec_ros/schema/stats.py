"""Mergeable per-feature statistics (stats.json).

Stored as {count, mean, std, min, max} with per-dimension lists; merged across
episodes through accumulators: sum = mean*count, sum_sq = (std^2 + mean^2)*count.
``count`` is a plain integer (the reference reader does ``int(count)``); an older
writer's ``[N]`` is still read, never written.
Only rows that carry a real sample count (the §5.5 defaults [0.0]*d are "no sample",
not zeros), so a glove that was off half the episode does not drag its mean to 0.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

ACTION_PLACEHOLDER = {"count": 0, "mean": [0.0], "std": [1.0], "min": [0.0], "max": [0.0]}


@dataclass
class Accumulator:
    count: int
    total: np.ndarray
    total_sq: np.ndarray
    low: np.ndarray
    high: np.ndarray

    @classmethod
    def of(cls, values: np.ndarray) -> "Accumulator":
        v = np.asarray(values, dtype=np.float64)
        return cls(len(v), v.sum(axis=0), np.square(v).sum(axis=0), v.min(axis=0), v.max(axis=0))

    @classmethod
    def from_json(cls, doc: Mapping) -> "Accumulator":
        count = read_count(doc["count"])
        mean, std = np.asarray(doc["mean"], np.float64), np.asarray(doc["std"], np.float64)
        return cls(count, mean * count, (np.square(std) + np.square(mean)) * count,
                   np.asarray(doc["min"], np.float64), np.asarray(doc["max"], np.float64))

    def merge(self, other: "Accumulator") -> "Accumulator":
        if self.total.shape != other.total.shape:
            raise ValueError(f"stats of different widths {self.total.shape} vs {other.total.shape}")
        return Accumulator(self.count + other.count, self.total + other.total, self.total_sq + other.total_sq,
                           np.minimum(self.low, other.low), np.maximum(self.high, other.high))

    def to_json(self) -> dict:
        n = max(self.count, 1)
        mean = self.total / n
        std = np.sqrt(np.maximum(self.total_sq / n - np.square(mean), 0.0))
        return {"count": int(self.count), "mean": mean.tolist(), "std": std.tolist(),
                "min": self.low.tolist(), "max": self.high.tolist()}


class FeatureStats:
    """Accumulators by feature name."""

    def __init__(self, accumulators: Mapping[str, Accumulator] | None = None) -> None:
        self.by_feature: dict[str, Accumulator] = dict(accumulators or {})

    def add(self, name: str, values: np.ndarray) -> None:
        if len(values) == 0:
            return
        acc = Accumulator.of(values)
        old = self.by_feature.get(name)
        self.by_feature[name] = acc if old is None else old.merge(acc)

    def merge(self, other: "FeatureStats") -> "FeatureStats":
        out = dict(self.by_feature)
        for name, acc in other.by_feature.items():
            out[name] = acc if name not in out else out[name].merge(acc)
        return FeatureStats(out)

    def to_json(self) -> dict:
        doc = {name: acc.to_json() for name, acc in sorted(self.by_feature.items())}
        doc.setdefault("action", dict(ACTION_PLACEHOLDER))  # real actions have real stats
        return doc

    @classmethod
    def from_json(cls, doc: Mapping) -> "FeatureStats":
        return cls({name: Accumulator.from_json(v) for name, v in doc.items()
                    if read_count(v.get("count", 0)) > 0})


def read_count(value: object) -> int:
    """A block's count: an integer, or an older writer's one-element list ``[N]``."""
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value) or value < 0:
        raise ValueError(f"stats count must be a non-negative integer, got {value!r}")
    return int(value)
