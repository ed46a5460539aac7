"""Pairing by time, never by row number (§5.3, §8.2.4)."""
from __future__ import annotations

import numpy as np


def nearest(reference_ns: np.ndarray, query_ns: np.ndarray) -> np.ndarray:
    """Index into ``reference_ns`` (sorted) of the nearest stamp for each query stamp;
    -1 where the query stamp is 0 (no stamp)."""
    ref = np.asarray(reference_ns, dtype=np.int64)
    q = np.asarray(query_ns, dtype=np.int64)
    if len(ref) == 0:
        return np.full(len(q), -1)
    right = np.clip(np.searchsorted(ref, q), 1, len(ref) - 1) if len(ref) > 1 else np.zeros(len(q), int)
    left = np.maximum(right - 1, 0)
    pick = np.where(np.abs(q - ref[left]) <= np.abs(ref[right] - q), left, right)
    return np.where(q == 0, -1, pick)
