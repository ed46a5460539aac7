"""Longest runs in a boolean or value sequence: the shape every QA stretch check takes."""
from __future__ import annotations

import numpy as np


def longest_true(mask: np.ndarray) -> tuple[int, int]:
    """(length, start) of the longest run of True; (0, 0) when there is none."""
    m = np.asarray(mask, bool)
    if not m.any():
        return 0, 0
    edges = np.diff(np.concatenate(([0], m.astype(np.int8), [0])))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    i = int(np.argmax(ends - starts))
    return int(ends[i] - starts[i]), int(starts[i])


def longest_equal(values: np.ndarray) -> tuple[int, int]:
    """(length, start) of the longest run of equal consecutive values; (0, 0) when empty."""
    v = np.asarray(values)
    if v.size == 0:
        return 0, 0
    same = v[1:] == v[:-1]
    length, start = longest_true(same)
    return (length + 1, start) if length else (1, 0)
