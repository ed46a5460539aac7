"""What simulating a rig costs this machine: rendering every payload at its rate.

Simulated devices render in the recorder's own process (``egorec record --sim``) or beside
it (``sim-devices``): on a small machine their cost is taken from the encoders. The
capacity check adds it to the encoders' load, so a size the encoders alone could take
but the encoders plus the simulator cannot is stepped down like any other overload.
"""
from __future__ import annotations

import os
import time

import numpy as np

from egorec_ros.rig.model import Rig
from egorec_ros.sim.devices import rig_sources
from egorec_ros.sim.plan import Plan, Sizes

PROBE_PAYLOADS = 3       # timed renders per stream (after one untimed warm-up render)
PROBE_BUDGET_S = 0.05    # ... or fewer when one stream takes longer than this


def render_seconds_per_second(rig: Rig, sizes: Sizes = None, *, seed: int = 0) -> dict[str, float]:
    """Per stream: CPU seconds its payloads take to render per second of simulation."""
    out: dict[str, float] = {}
    rng = np.random.default_rng(seed)
    for sources in rig_sources(rig, Plan(seed, sizes=sizes)).values():
        for source in sources:
            for output in source.outputs:
                output.render(0, 0.0, rng)   # textures and sprites, built once
                started, n = time.perf_counter(), 0
                while n < PROBE_PAYLOADS and (n < 1 or time.perf_counter() - started < PROBE_BUDGET_S):
                    n += 1
                    output.render(n, 3.3 * n, rng)   # spread over a grip cycle (contact or not)
                out[output.stream] = (time.perf_counter() - started) / n * source.rate_hz
    return out


def machine_share(seconds_per_second: float) -> float:
    """CPU seconds per second as a fraction of the machine (the cores this process may use)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:   # not on Linux
        cores = os.cpu_count() or 1
    return seconds_per_second / max(1, cores)
