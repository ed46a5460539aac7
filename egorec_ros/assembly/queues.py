"""Pending samples of one stream and the rule that takes them into a row.

Three rules (§5.3, made exact):
* ``VideoQueue``  one frame per row: the pending frame nearest the tick within a
  tolerance, each frame at most once, in stamp order; no frame near the tick ->
  repeat the previous one. Frames that lose to a nearer one are "skipped".
* ``LatestQueue`` latest-wins: the newest unused sample with stamp <= tick.
* ``WindowQueue`` everything with stamp <= tick not yet written (IMU, SLAM points).

A sample is *visible* to the row of tick t only if it arrived by the row's deadline
t + D. A queue decides about visible samples only and leaves the others pending,
untouched: so what happens to a sample (and how it is counted) depends on its stamp
and arrival alone, never on when it was handed over. That is what makes live and
replay mode give the same rows and the same counts.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from egorec_ros.assembly.counts import StreamCounts

# stamp -> deadline of the row the sample belongs to, or None if that row is after the episode
Due = Callable[[int], "int | None"]


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

    def _take_due(self, t: int, deadline: int) -> list[Pending]:
        """Remove and return the samples with stamp <= t that arrived by the deadline (in
        stamp order); the others stay pending."""
        visible: list[Pending] = []
        rest: list[Pending] = []
        for j, p in enumerate(self.pending):
            if p.stamp > t:
                rest.extend(self.pending[j:])
                break
            (visible if p.arrival <= deadline else rest).append(p)
        self.pending = rest
        return visible

    def close(self, due: Due) -> None:
        """The episode ended: count what is still pending (after the last row, or lost)."""
        for p in self.pending:
            deadline = due(p.stamp)
            if deadline is None:
                self.counts.outside += 1
            else:
                self._lost(p, deadline)
        self.pending = []

    def _lost(self, item: Pending, deadline: int) -> int:
        """Count a sample that will never be written. Latest-wins and windows take every
        visible sample of a row, so one still pending that belongs to a built row arrived
        after that row's deadline."""
        self.counts.late += 1
        return 1

    def _note_alive(self, stamp: int) -> None:
        self.last_alive = max(self.last_alive, stamp)


class VideoQueue(_Queue):
    def __init__(self) -> None:
        super().__init__()
        self.last: Pending | None = None
        self.on_late: Callable[[int], None] | None = None   # told the stamp of every frame counted late

    def take(self, t: int, deadline: int, tolerance: int, due: Callable[[int], int]) -> tuple[Pending | None, bool, int]:
        """(frame, repeated, frames lost since the previous row) for the tick (or master
        frame stamp) ``t``; ``due`` gives the deadline of the tick nearest a stamp."""
        last = self.last.stamp if self.last is not None else None
        best: Pending | None = None
        for p in self.pending:
            if p.stamp > t + tolerance:
                break
            if p.arrival > deadline:
                continue
            self._note_alive(p.stamp)
            if p.stamp < t - tolerance or (last is not None and p.stamp <= last):
                continue
            if best is None or abs(p.stamp - t) < abs(best.stamp - t):
                best = p
        # visible frames older than the chosen one (or than the tolerance) can never be used
        limit = best.stamp if best is not None else t - tolerance
        keep, gap = [], 0
        for p in self.pending:
            if p is best:
                continue
            if p.arrival <= deadline and (p.stamp < limit or (last is not None and p.stamp <= last)):
                gap += self._lost(p, due(p.stamp))
            else:
                keep.append(p)
        self.pending = keep
        if best is None:
            if self.last is not None:
                self.counts.repeated += 1
            return self.last, True, gap
        self.counts.used += 1
        if best.arrival > due(best.stamp):
            self.counts.delayed += 1
        self.last = best
        return best, False, gap

    def _lost(self, item: Pending, deadline: int) -> int:
        """Count a frame that will never be written; 1 if it is a hole in the stream."""
        if item.arrival > deadline:
            self.counts.late += 1
            if self.on_late is not None:
                self.on_late(item.stamp)
            return 1
        if self.last is not None and item.stamp <= self.last.stamp:
            self.counts.out_of_order += 1
            return 0
        self.counts.skipped += 1
        return 1


class LatestQueue(_Queue):
    def __init__(self) -> None:
        super().__init__()
        self.last_used = -1

    def take(self, t: int, previous: int, deadline: int) -> Pending | None:
        """The newest visible sample with stamp <= t. Older visible ones are superseded,
        or late if they belonged to an earlier row (stamp <= the previous tick); a row
        never goes back in time, so a sample not newer than the last one used is late."""
        visible = self._take_due(t, deadline)
        if not visible:
            return None
        chosen = visible.pop()
        for old in visible:
            if old.stamp <= previous:
                self.counts.late += 1
            else:
                self.counts.superseded += 1
        if chosen.stamp <= self.last_used:
            self.counts.late += 1
            return None
        if chosen.stamp <= previous:
            self.counts.delayed += 1
        self.last_used = chosen.stamp
        self.counts.used += 1
        self._note_alive(chosen.stamp)
        return chosen


class WindowQueue(_Queue):
    """Samples with stamp in (t_{i-1}, t_i] go into row i; one that arrives after row i's
    deadline goes into the first row whose deadline it made (with its true stamp) and
    is counted delayed."""

    def take(self, t: int, previous: int, deadline: int) -> list[Pending]:
        out = self._take_due(t, deadline)
        self.counts.used += len(out)
        self.counts.delayed += sum(p.stamp <= previous for p in out)
        if out:
            self._note_alive(out[-1].stamp)
        return out


def stack(items: list[Pending], dtype: str) -> np.ndarray:
    return np.stack([np.asarray(p.payload, dtype=dtype).reshape(-1) for p in items])
