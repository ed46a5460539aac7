"""Live simulation: a rig's samples delivered to a callback in real time, one thread per device.

This is what a recorder sees from real drivers: samples from several threads at
once, stamped on the host clock at capture, arriving a little (sometimes a lot)
later. The schedule is the replay schedule shifted to the start instant, so a live
run and ``simulate`` with the same seed carry identical payloads and identical
stamps relative to their start (``stamp_ns - start_ns``, the same for arrival and
raw stamps). ``arrival_ns`` is the scheduled arrival; a busy machine may deliver
later, which ``max_lag_ns`` reports.

When the machine cannot render in time, a device behaves like a real one: a sample
due more than ``BEHIND_NS`` ago is dropped, unrendered, and counted (``behind``), so
what is delivered was captured about now. Keeping the schedule instead published a
growing backlog whose stamps lagged seconds behind the recorder's clock: every
sample fell outside its row's deadline and episodes ended with no row (issue 24).
"""
from __future__ import annotations

import threading
import time
from collections import Counter
from typing import Callable

import numpy as np

from egorec_ros.assembly.sample import Sample
from egorec_ros.rig.model import Rig
from egorec_ros.sim.devices import rig_sources
from egorec_ros.sim.flaws import DEFAULT, FlawsChoice
from egorec_ros.sim.merge import merge_ticks
from egorec_ros.sim.plan import Plan, Sizes
from egorec_ros.sim.schedule import Source, deliveries

SLEEP_MIN_NS = 200_000
BEHIND_NS = 150_000_000   # a sample due longer ago than this is dropped: a real driver drops frames it
                          # cannot hand over, it does not queue them (a V4L2 camera's 4 buffers hold 133 ms);
                          # later than the default latency budget D (150 ms), no row could take it anyway


class LiveRig:
    """Start with ``start()`` (or ``with``); ``on_sample`` is called from the device threads.

    ``clock`` is the host clock of the stamps: ``time.time_ns`` by default, like a ROS
    ``header.stamp`` from the system clock; pass ``time.monotonic_ns`` for a monotonic
    host clock. Pacing always uses ``time.monotonic_ns``."""

    def __init__(self, rig: Rig, on_sample: Callable[[Sample], object], *, seconds: float | None = None,
                 seed: int = 0, flaws: FlawsChoice = DEFAULT, sizes: Sizes = None,
                 clock: Callable[[], int] = time.time_ns):
        if seconds is not None and not seconds > 0:
            raise ValueError(f"seconds must be > 0 (or None to run until stop()), got {seconds!r}")
        self._sources = rig_sources(rig, Plan(seed, flaws, sizes))
        _warm_up(self._sources)
        self._on_sample, self._seconds, self._seed, self._clock = on_sample, seconds, seed, clock
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._errors: list[BaseException] = []
        self.start_ns = 0                   # host-clock instant of the run start (stamp base)
        self.delivered: Counter[str] = Counter()
        self.max_lag_ns = 0                 # worst delivery behind the scheduled arrival
        self.behind: Counter[str] = Counter()   # samples dropped because they were due BEHIND_NS ago

    def start(self) -> int:
        """Start the device threads; returns the host-clock start instant."""
        if self._threads:
            raise RuntimeError("this LiveRig was already started; make a new one for another run")
        self.start_ns, self._mono0 = self._clock(), time.monotonic_ns()
        self._threads = [threading.Thread(target=self._run, args=(sources,), name=f"sim-{device}", daemon=True)
                         for device, sources in self._sources.items()]
        for t in self._threads:
            t.start()
        return self.start_ns

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for a finite run to finish; True when every device thread is done."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for t in self._threads:
            t.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
        self._raise_error()
        return not any(t.is_alive() for t in self._threads)

    def stop(self) -> None:
        """Stop delivering, join the threads, and raise the first error a callback raised."""
        self._stop.set()
        for t in self._threads:
            t.join()
        self._raise_error()

    def __enter__(self) -> LiveRig:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self, sources: list[Source]) -> None:
        try:
            ticks = merge_ticks(deliveries(s, seed=self._seed, start_ns=self.start_ns, seconds=self._seconds)
                                for s in sources)
            for tick in ticks:
                due = self._mono0 + (tick.arrival_ns - self.start_ns)
                ahead = due - time.monotonic_ns()
                # sleeping hands the GIL over, and getting it back can take a switch interval
                # (5 ms); when the sample is due anyway, deliver without sleeping
                if (ahead > SLEEP_MIN_NS and self._stop.wait(ahead / 1e9)) or self._stop.is_set():
                    return
                lag = time.monotonic_ns() - due
                if lag > BEHIND_NS:
                    with self._lock:
                        self.behind[tick.stream] += 1
                    continue
                sample = tick.sample()
                self._on_sample(sample)
                with self._lock:
                    self.delivered[sample.stream] += 1
                    self.max_lag_ns = max(self.max_lag_ns, lag)
        except BaseException as exc:  # noqa: BLE001 - handed to the thread that calls stop()/wait()
            with self._lock:
                self._errors.append(exc)
            self._stop.set()

    def _raise_error(self) -> None:
        with self._lock:
            if self._errors:
                raise RuntimeError(f"simulated device thread failed: {self._errors[0]!r}") from self._errors[0]


def _warm_up(sources: dict[str, list[Source]]) -> None:
    """Render one throw-away payload per stream so textures and sprites exist before the clock
    starts; otherwise the first frames would be late by the set-up time."""
    rng = np.random.default_rng(0)
    for group in sources.values():
        for source in group:
            for out in source.outputs:
                out.render(0, 0.0, rng)
