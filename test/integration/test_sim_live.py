"""Live simulation: real-time delivery from device threads, identical to replay for one seed."""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from egorec_ros.assembly.sample import Sample
from egorec_ros.rig.load import load_rig
from egorec_ros.sim.live import BEHIND_NS, LiveRig
from egorec_ros.sim.replay import simulate

SMALL = (320, 240)


def _payload_equal(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    return np.array_equal(a, b)


def test_live_run_takes_real_time_and_matches_replay():
    rig = load_rig("appendix_b")
    got: list[tuple[Sample, int]] = []
    lock = threading.Lock()

    def on_sample(sample: Sample) -> None:
        with lock:
            got.append((sample, time.time_ns()))

    live = LiveRig(rig, on_sample, seconds=2.0, seed=5, sizes=SMALL)
    t0 = time.monotonic()
    start_ns = live.start()
    assert live.wait(timeout=10.0)
    wall, end_ns = time.monotonic() - t0, time.time_ns()
    live.stop()

    replay = list(simulate(rig, 2.0, seed=5, sizes=SMALL, start_ns=0))
    assert 1.95 <= wall <= 2.0 + 0.6, "2 s of samples (plus late arrivals) take ~2 s"
    assert len(got) + sum(live.behind.values()) == len(replay), "every sample delivered or dropped (behind)"
    assert len(got) == sum(live.delivered.values())
    assert abs(end_ns - wall * 1e9 - start_ns) < 0.1e9, "stamps are on the host clock"

    def rel(s: Sample, base: int) -> tuple:
        return s.stream, s.stamp_ns - base, s.arrival_ns - base, s.raw_stamp_ns - base if s.raw_stamp_ns else 0

    live_by_key = {rel(s, start_ns): s for s, _ in got}
    replay_by_key = {rel(s, 0): s for s in replay}
    assert live_by_key.keys() <= replay_by_key.keys()
    assert all(_payload_equal(live_by_key[k].payload, replay_by_key[k].payload) for k in live_by_key)

    lateness_ms = np.array([(seen - s.arrival_ns) / 1e6 for s, seen in got])
    assert np.median(lateness_ms) < 15.0, "delivered at the scheduled arrival"
    assert live.max_lag_ns < 500e6


def test_a_device_behind_drops_and_counts_like_a_real_one_and_stamps_stay_near_now():
    """A consumer stalled for 1.5 s (a machine that cannot keep up): the devices drop what is
    overdue, unrendered, and count it; what they deliver after the stall was captured about now.
    Keeping the schedule instead delivered a backlog whose stamps lagged seconds behind now."""
    rig = load_rig("uvc_pair")
    stall_until = [0.0]
    lags_ms: list[float] = []

    def on_sample(sample: Sample) -> None:
        if not stall_until[0]:
            stall_until[0] = time.monotonic() + 1.5
        if time.monotonic() < stall_until[0]:
            time.sleep(0.3)
        else:
            lags_ms.append((time.time_ns() - sample.stamp_ns) / 1e6)

    live = LiveRig(rig, on_sample, seconds=3.0, seed=1, sizes=SMALL)
    live.start()
    assert live.wait(timeout=20.0)
    live.stop()
    scheduled = sum(1 for _ in simulate(rig, 3.0, seed=1, sizes=SMALL))
    assert sum(live.behind.values()) > 0.3 * scheduled, live.behind
    assert sum(live.delivered.values()) + sum(live.behind.values()) == scheduled
    assert len(lags_ms) > 20, "delivers again after the stall"
    assert max(lags_ms) < BEHIND_NS / 1e6 + 150, f"stamps lag up to {max(lags_ms):.0f} ms behind now"


def test_stop_ends_an_endless_run_promptly():
    counts = []
    live = LiveRig(load_rig("gripper_single"), lambda s: counts.append(s.stream), sizes=SMALL)
    with live:
        time.sleep(0.5)
        t0 = time.monotonic()
    assert time.monotonic() - t0 < 0.5
    # delivered, or dropped because a starved machine could not render them in time
    assert 120 < len(counts) + sum(live.behind.values()) < 230, "~0.5 s of a 350 samples/s rig"
    n = len(counts)
    time.sleep(0.1)
    assert len(counts) == n, "nothing is delivered after stop()"


def test_a_failing_callback_is_reported_not_swallowed():
    def on_sample(sample: Sample) -> None:
        raise KeyError("recorder broke")

    live = LiveRig(load_rig("uvc_pair"), on_sample, seconds=1.0, sizes=SMALL)
    live.start()
    with pytest.raises(RuntimeError, match="recorder broke"):
        live.wait(timeout=5.0)
    with pytest.raises(RuntimeError, match="already started"):
        live.start()
