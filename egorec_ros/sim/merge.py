"""Merge the deliveries of many sources into one stream in arrival order, lazily.

Each source yields deliveries in capture order, and nothing it yields later can
arrive before the first stamp of its next delivery (arrival >= stamp, stamps
increase). So a tick may leave the buffer once its arrival is below the smallest
such bound over all sources: memory stays at about one delivery per source, and
the output is exactly sorted by (arrival_ns, stream, stamp_ns).
"""
from __future__ import annotations

import heapq
from typing import Iterable, Iterator

from egorec_ros.assembly.sample import Sample
from egorec_ros.sim.schedule import Source, Tick, deliveries


def merge_ticks(sources: Iterable[Iterator[list[Tick]]]) -> Iterator[Tick]:
    fronts: list[tuple[int, int, list[Tick], Iterator[list[Tick]]]] = []
    for i, it in enumerate(sources):
        first = next(it, None)
        if first:
            fronts.append((first[0].stamp_ns, i, first, it))
    heapq.heapify(fronts)
    pending: list[tuple[int, str, int, Tick]] = []
    while fronts:
        _, i, delivery, it = heapq.heappop(fronts)
        for tick in delivery:
            heapq.heappush(pending, (tick.arrival_ns, tick.stream, tick.stamp_ns, tick))
        following = next(it, None)
        if following:
            heapq.heappush(fronts, (following[0].stamp_ns, i, following, it))
        bound = fronts[0][0] if fronts else None
        while pending and (bound is None or pending[0][0] < bound):
            yield heapq.heappop(pending)[3]


def source_samples(sources: Iterable[Source], *, seed: int, start_ns: int,
                   seconds: float | None) -> Iterator[Sample]:
    """Samples of these sources in arrival order; payloads are rendered as they are yielded."""
    ticks = merge_ticks(deliveries(s, seed=seed, start_ns=start_ns, seconds=seconds) for s in sources)
    return (tick.sample() for tick in ticks)
