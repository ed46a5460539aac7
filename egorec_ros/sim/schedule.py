"""When each simulated sample is captured, stamped and delivered.

A ``Source`` is one clock of a device (a camera frame set, an IMU, a force pump)
emitting one or more streams (``Output``). ``deliveries`` walks that clock and
yields what the recorder receives together: one capture, or a burst of IMU
samples. Timing is drawn from one seeded generator per source with a fixed number
of draws per capture, so enabling one flaw never reshuffles the others. Payloads
are not rendered here: a ``Tick`` renders its payload only when it is delivered,
from a generator seeded by (seed, stream, capture index), so a payload depends on
nothing but what it shows.
"""
from __future__ import annotations

import math
import zlib
from dataclasses import dataclass
from fractions import Fraction
from itertools import count
from typing import Any, Callable, Iterator

import numpy as np

from egorec_ros.assembly.sample import Sample
from egorec_ros.sim.flaws import Flaws

# (capture index, true capture time in seconds since the run start, payload rng) -> payload
Render = Callable[[int, float, np.random.Generator], Any]


def stable_id(text: str) -> int:
    """A seed component from a name; unlike hash() it is the same in every process."""
    return zlib.crc32(text.encode("utf-8"))


@dataclass(frozen=True)
class Output:
    stream: str
    nbytes: int                 # payload size, drives the transport delay
    render: Render
    latency_ms: float = 0.0     # processing before sending (SLAM, depth engine); kept in CLEAN
    device_clock: bool = False  # samples carry raw_stamp_ns from the device clock


@dataclass(frozen=True)
class Source:
    device: str
    outputs: tuple[Output, ...]
    rate_hz: float
    flaws: Flaws
    sensor_hz: float | None = None  # delivered frames are decimated from a faster sensor clock
    burst: int = 1                  # captures delivered together (IMU packets)

    def __post_init__(self) -> None:
        if not self.outputs:
            raise ValueError(f"source of device {self.device!r} has no outputs")
        if self.sensor_hz is not None and self.sensor_hz < self.rate_hz:
            raise ValueError(f"{self.outputs[0].stream}: sensor rate {self.sensor_hz} Hz is below "
                             f"the delivered rate {self.rate_hz} Hz; decimation only drops frames")


@dataclass(frozen=True, slots=True)
class Tick:
    """A scheduled sample whose payload is rendered on delivery."""

    arrival_ns: int
    stream: str
    stamp_ns: int
    raw_stamp_ns: int
    index: int
    t_s: float
    render: Render
    seed: int

    def sample(self) -> Sample:
        rng = np.random.default_rng([self.seed, stable_id(self.stream), self.index])
        return Sample(self.stream, self.stamp_ns, self.arrival_ns, self.render(self.index, self.t_s, rng),
                      self.raw_stamp_ns)


def deliveries(source: Source, *, seed: int, start_ns: int, seconds: float | None) -> Iterator[list[Tick]]:
    """Deliveries in capture order: every tick has arrival >= stamp, and the first stamp of a
    delivery is a lower bound for all later stamps (what ``merge`` relies on)."""
    f, outs = source.flaws, source.outputs
    rng = np.random.default_rng([seed, stable_id(outs[0].stream), 1])
    clock = np.random.default_rng([seed, stable_id(source.device), 2]).uniform(-1.0, 1.0, 2)
    clock_offset_ns, clock_rate = clock[0] * f.clock_offset_ms * 1e6, 1.0 + clock[1] * f.clock_drift_ppm * 1e-6

    sensor_hz = source.sensor_hz or source.rate_hz
    period_ns = 1e9 / (sensor_hz * f.rate_scale)
    keep = Fraction(source.rate_hz).limit_denominator(10**6) / Fraction(sensor_hz).limit_denominator(10**6)
    jitter_cap = 0.4 * period_ns
    phase_ns = float(rng.uniform(0.0, period_ns))
    end_ns = math.inf if seconds is None else seconds * 1e9
    last_arrival = [0] * len(outs)

    def deliver(batch: list[tuple[int, float, int]], draws: np.ndarray) -> list[Tick]:
        lo, hi = f.spike_ms
        spike_ms = lo + draws[1] * (hi - lo) if draws[0] < f.spike_prob else 0.0
        last_stamp = batch[-1][2]
        ticks = []
        for i, out in enumerate(outs):
            if draws[2 + 2 * i] < f.drop_prob:
                continue
            delay_ms = (f.delay_ms + f.delay_per_mb_ms * out.nbytes / 1e6 + spike_ms + out.latency_ms
                        - math.log1p(-draws[3 + 2 * i]) * f.delay_jitter_ms)
            arrival = max(last_stamp + round(delay_ms * 1e6), last_arrival[i])  # one FIFO per stream
            last_arrival[i] = arrival
            for k, t_ns, stamp in batch:
                raw = start_ns + round(clock_offset_ns + t_ns * clock_rate) if out.device_clock else 0
                ticks.append(Tick(start_ns + arrival, out.stream, start_ns + stamp, raw, k, t_ns / 1e9,
                                  out.render, seed))
        return ticks

    batch: list[tuple[int, float, int]] = []
    k = 0
    for j in count():
        t_ns = phase_ns + j * period_ns
        if t_ns >= end_ns:
            break
        if (j + 1) * keep.numerator // keep.denominator == j * keep.numerator // keep.denominator:
            continue  # decimated away (never true without a sensor clock: keep == 1)
        jitter = min(max(float(rng.standard_normal()) * f.jitter_ms * 1e6, -jitter_cap), jitter_cap)
        if not f.in_outage(t_ns / 1e9):
            batch.append((k, t_ns, round(t_ns + jitter)))
        k += 1
        if k % source.burst == 0:
            draws = rng.random(2 + 2 * len(outs))
            ticks = deliver(batch, draws) if batch else []
            if ticks:
                yield ticks
            batch = []
    ticks = deliver(batch, rng.random(2 + 2 * len(outs))) if batch else []
    if ticks:
        yield ticks
