"""Replay-style simulation: every sample of a rig, in arrival order, as fast as it can be made."""
from __future__ import annotations

from typing import Iterator

from egorec_ros.assembly.sample import Sample
from egorec_ros.rig.model import Rig
from egorec_ros.sim.devices import rig_sources
from egorec_ros.sim.flaws import DEFAULT, FlawsChoice
from egorec_ros.sim.merge import source_samples
from egorec_ros.sim.plan import Plan, Sizes

DEFAULT_START_NS = 1_767_225_600_000_000_000   # 2026-01-01T00:00:00Z on the host clock


def simulate(rig: Rig, seconds: float | None, *, seed: int = 0, start_ns: int = DEFAULT_START_NS,
             flaws: FlawsChoice = DEFAULT, sizes: Sizes = None) -> Iterator[Sample]:
    """Samples captured in [start_ns, start_ns + seconds) (forever if ``seconds`` is None),
    ordered by (arrival_ns, stream, stamp_ns). Lazy: memory stays at about one delivery per
    source however long the run, and a payload is rendered only when its sample is yielded."""
    if seconds is not None and not seconds > 0:
        raise ValueError(f"seconds must be > 0 (or None for an endless run), got {seconds!r}")
    sources = rig_sources(rig, Plan(seed, flaws, sizes))
    return source_samples([s for group in sources.values() for s in group], seed=seed, start_ns=start_ns,
                          seconds=seconds)
