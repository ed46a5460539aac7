"""How far each stream's header stamps are behind the moment the recorder received them.

A row takes a sample only if it arrived within the latency budget D of the sample's tick,
so a publisher whose stamps lag seconds behind the recorder's clock (a simulator or driver
that queues instead of dropping on a busy machine, a clock set apart from this one) gives
an episode with no row at all. Counting that is cheap (min, max, last per stream), and it is
what tells the user which publisher to look at and what to do.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

STEADY_SPREAD_NS = 250_000_000   # a lag varying less than this is a steady offset, not a growing backlog


@dataclass
class StampLag:
    """arrival - stamp (ns) of one stream's samples during an episode."""
    lowest: int
    highest: int
    last: int
    samples: int = 1
    first_stamp: int = 0      # the first sample the episode received (``coverage`` reads it)

    def add(self, lag_ns: int) -> None:
        self.lowest, self.highest = min(self.lowest, lag_ns), max(self.highest, lag_ns)
        self.last = lag_ns
        self.samples += 1


def track(lags: dict[str, StampLag], stream: str, arrival_ns: int, stamp_ns: int) -> None:
    lag = arrival_ns - stamp_ns
    entry = lags.get(stream)
    if entry is None:
        lags[stream] = StampLag(lag, lag, lag, first_stamp=stamp_ns)
    else:
        entry.add(lag)


def describe(stream: str, lag: StampLag, latency_ns: int) -> str:
    """'cam.rgb: stamps 2.31-4.05 s behind their arrival, growing (...what to do...)' for a stream
    beyond the latency budget; '' for one within it."""
    if lag.lowest <= latency_ns:
        return ""
    span = f"{lag.lowest / 1e9:.2f} s" if lag.highest - lag.lowest < 10_000_000 else \
        f"{lag.lowest / 1e9:.2f}-{lag.highest / 1e9:.2f} s"
    if lag.highest - lag.lowest > STEADY_SPREAD_NS:
        todo = ("growing or varying: its publisher is falling behind, queueing what it cannot send in time; "
                "lower its size or rate, or the load of the machine it runs on")
    else:
        need = (lag.highest + 50_000_000) / 1e6
        todo = (f"steady: its clock is apart from this machine's or its pipeline is slow; synchronise the "
                f"clocks (chrony, PTP) or give a latency budget above {need:.0f} ms (--latency-ms, "
                "parameter latency_ms)")
    return (f"{stream}: stamps {span} behind their arrival, over the {latency_ns / 1e6:.0f} ms latency budget "
            f"({lag.samples} samples; {todo})")


def describe_all(lags: Mapping[str, StampLag], latency_ns: int) -> list[str]:
    """One line per stream whose stamps lag beyond the budget, the worst first."""
    worst = sorted(lags.items(), key=lambda item: -item[1].lowest)
    return [text for stream, lag in worst if (text := describe(stream, lag, latency_ns))]
