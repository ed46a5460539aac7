"""Pending samples of one stream and the rule that takes them into a row.

Three rules (§5.3, made exact):
* ``VideoQueue``  one frame per row: the pending frame nearest the tick within a
  tolerance, each frame at most once, in stamp order; no frame near the tick ->
  repeat the previous one. Frames that lose to a nearer one are "skipped".
* ``LatestQueue`` latest-wins: the newest unused sample with stamp <= tick.
* ``WindowQueue`` everything with stamp <= tick not yet written (IMU, SLAM points).

A sample is eligible for tick t only if it arrived by the tick's deadline t + D, in
live and replay mode alike: that is what makes both give the same rows.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from egorec_ros.assembly.counts import StreamCounts


@dataclass(order=True)
class Pending:
    stamp: int
    arrival: int = field(compare=False)
    payload: Any = field(compare=False)
    raw: int = field(compare=False, default=0)


class _Queue:
    def __init__(self) -> None:
        self.pending: list[Pending] = []
        self.counts = StreamCounts()
        self.last_alive = -1           # stamp of the newest sample seen in time (for status)

    def add(self, item: Pending) -> None:
        if not self.pending or item.stamp >= self.pending[-1].stamp:
            self.pending.append(item)
        else:
            bisect.insort(self.pending, item)

    def drop_before(self, floor: int) -> None:
        """Forget samples from before the episode (stamp < floor)."""
        keep = bisect.bisect_left(self.pending, Pending(floor, 0, None))
        self.counts.outside += keep
        del self.pending[:keep]

    def _note_alive(self, stamp: int) -> None:
        self.last_alive = max(self.last_alive, stamp)


class VideoQueue(_Queue):
    def __init__(self) -> None:
        super().__init__()
        self.last: Pending | None = None

    def take(self, t: int, deadline: int, tolerance: int) -> tuple[Pending | None, bool, int]:
        """(frame, repeated, skipped frames) for the tick at ``t``."""
        skipped = 0
        # frames that can never be used again: older than the tolerance, or out of order
        floor = t - tolerance
        last_stamp = self.last.stamp if self.last is not None else -1
        while self.pending and (self.pending[0].stamp < floor or self.pending[0].stamp <= last_stamp):
            old = self.pending.pop(0)
            if old.stamp <= last_stamp:
                self.counts.out_of_order += 1
            else:
                skipped += 1
                self._count_lost(old, deadline)
        best = -1
        for j, p in enumerate(self.pending):
            if p.stamp > t + tolerance:
                break
            if p.arrival > deadline:
                continue
            self._note_alive(p.stamp)
            if best < 0 or abs(p.stamp - t) < abs(self.pending[best].stamp - t):
                best = j
        if best < 0:
            if self.last is not None:
                self.counts.repeated += 1
            return self.last, True, skipped
        chosen = self.pending[best]
        for old in self.pending[:best]:
            if old.arrival <= deadline:
                skipped += 1
                self.counts.skipped += 1
            else:
                self.counts.late += 1
        del self.pending[:best + 1]
        self.counts.used += 1
        self.last = chosen
        return chosen, False, skipped

    def _count_lost(self, item: Pending, deadline: int) -> None:
        if item.arrival > deadline:
            self.counts.late += 1
        else:
            self.counts.skipped += 1


class LatestQueue(_Queue):
    def __init__(self, period_ns: int) -> None:
        super().__init__()
        self.period = period_ns
        self.last_used = -1

    def take(self, t: int, deadline: int) -> Pending | None:
        """The newest sample with stamp <= t that arrived by the deadline. Older ones are
        superseded (or late, if they came after the deadline); a row never goes back in
        time, so a sample older than the last one used is late and dropped."""
        newest = -1
        for j, p in enumerate(self.pending):
            if p.stamp > t:
                break
            if p.arrival <= deadline:
                newest = j
        if newest < 0:
            return None
        chosen = self.pending[newest]
        for old in self.pending[:newest]:
            if old.arrival <= deadline:
                self.counts.superseded += 1
            else:
                self.counts.late += 1
        del self.pending[:newest + 1]
        if chosen.stamp <= self.last_used:
            self.counts.late += 1
            return None
        if chosen.stamp <= t - self.period:  # belonged to an earlier row but arrived after its deadline
            self.counts.late += 1
        self.last_used = chosen.stamp
        self.counts.used += 1
        self._note_alive(chosen.stamp)
        return chosen


class WindowQueue(_Queue):
    """Samples with stamp in (t_{i-1}, t_i] go into row i; one that arrives after row i
    was written goes into the next row (with its true stamp) and is counted late."""

    def __init__(self) -> None:
        super().__init__()
        self.closed_until = -1

    def take(self, t: int, deadline: int) -> list[Pending]:
        out, rest = [], []
        for p in self.pending:
            if p.stamp <= t and p.arrival <= deadline:
                if p.stamp <= self.closed_until:
                    self.counts.late += 1
                out.append(p)
            else:
                rest.append(p)
        self.pending = rest
        self.closed_until = t
        self.counts.used += len(out)
        if out:
            self._note_alive(out[-1].stamp)
        return out


def stack(items: list[Pending], dtype: str) -> np.ndarray:
    return np.stack([np.asarray(p.payload, dtype=dtype).reshape(-1) for p in items])
