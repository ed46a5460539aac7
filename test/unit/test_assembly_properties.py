"""Property tests of the tick assembler over random jittered streams.

Hypothesis draws the imperfections (rates off nominal, capture jitter, transport delay,
spikes past the latency budget, drops, outages) and the configuration; numpy draws the
samples from them. Every episode must obey every rule as ``check_rules`` re-derives it:
each video frame in a row is the nearest one within tolerance of its tick or a counted
repeat, each IMU sample and trajectory point lands in exactly one row, latest-wins picks
the newest in-time sample, and every count is exactly what its definition says. Live
mode (a tick thread waking at random times, samples handed over late by up to the
margin) gives the same rows and counts as replay.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from egorec_ros.assembly.assembler import AssemblyConfig
from egorec_ros.assembly.counts import StreamCounts
from egorec_ros.rig.kinds import StreamKind
from helpers.assembly import MS, RIG_A, RIG_B, SECOND, START, Feed, check_rules, clean_feeds, live_like, merged, replay

PROPERTY = settings(max_examples=100, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@st.composite
def flawed_feed(draw: st.DrawFn, feed: Feed, seconds: float, video: bool) -> Feed:
    outages = ()
    if draw(st.booleans()):
        outages = ((draw(st.floats(0.0, seconds)), draw(st.floats(0.05, 1.5))),)
    return Feed(feed.stream, feed.rate_hz * draw(st.floats(0.8, 1.25)),
                jitter_ms=draw(st.floats(0.0, 8.0)), delay_ms=draw(st.floats(0.0, 30.0)),
                spread_ms=draw(st.floats(0.0, 20.0)), spike_prob=draw(st.floats(0.0, 0.15)),
                spike_ms=draw(st.floats(0.0, 400.0)), drop_prob=draw(st.floats(0.0, 0.25)),
                outages=outages, burst=feed.burst, lead_s=draw(st.floats(0.0, 0.5)),
                raw_offset_ns=draw(st.sampled_from([0, 7_000_000])) if video else 0)


@st.composite
def episodes(draw: st.DrawFn):
    rig = draw(st.sampled_from([RIG_A, RIG_B]))
    seconds = draw(st.floats(0.8, 4.0))
    feeds = [draw(flawed_feed(f, seconds, rig.streams[f.stream].kind in (StreamKind.VIDEO, StreamKind.DEPTH)))
             for f in clean_feeds(rig)]
    config = AssemblyConfig(latency_ms=draw(st.sampled_from([60.0, 150.0, 300.0])),
                            tolerance_ticks=draw(st.sampled_from([0.5, 0.75, 1.0])),
                            silence_s=draw(st.sampled_from([0.1, 0.3, 1.0])),
                            start_timeout_s=draw(st.sampled_from([0.3, 3.0])))
    seed = draw(st.integers(0, 2**31))
    stop = START + int(draw(st.floats(0.3, seconds)) * SECOND)
    return Episode(rig.name, tuple(feeds), seconds, seed, stop, config)


@dataclasses.dataclass(frozen=True)
class Episode:
    """What hypothesis drew (short to print); ``samples`` makes the streams from it."""

    rig_name: str
    feeds: tuple[Feed, ...]
    seconds: float
    seed: int
    stop: int
    config: AssemblyConfig

    @property
    def rig(self):
        return {r.name: r for r in (RIG_A, RIG_B)}[self.rig_name]

    def samples(self):
        return merged(self.rig, list(self.feeds), self.seconds, self.seed)


def same_rows(a, b) -> bool:
    if a.keys != b.keys or len(a.values) != len(b.values) or a.frames != b.frames:
        return False
    for x, y in zip(a.values, b.values):
        if x.keys() != y.keys():
            return False
        for key, value in x.items():
            if isinstance(value, (np.ndarray, list)) and not np.array_equal(value, y[key]):
                return False
            if not isinstance(value, (np.ndarray, list)) and value != y[key]:
                return False
    return True


@pytest.mark.slow
@PROPERTY
@given(episodes())
def test_every_replayed_episode_obeys_every_rule(episode):
    rig, samples, stop, config = episode.rig, episode.samples(), episode.stop, episode.config
    rows, report = replay(rig, samples, stop, config)
    check_rules(rig, samples, rows, report, stop, config)


@pytest.mark.slow
@PROPERTY
@given(episodes(), st.integers(0, 5))
def test_live_gives_the_rows_and_counts_of_replay(episode, margin_ms):
    rig, samples, stop, config, seed = episode.rig, episode.samples(), episode.stop, episode.config, episode.seed
    config = dataclasses.replace(config, finalize_margin_ms=float(margin_ms))
    want_rows, want = replay(rig, samples, stop, config)
    rows, got = live_like(rig, samples, stop, np.random.default_rng(seed), max_lag_ns=margin_ms * MS, config=config)
    assert got.t0 == want.t0 and got.video_keys == want.video_keys
    assert got.streams == want.streams
    assert got.frame_marks == want.frame_marks
    assert same_rows(rows, want_rows)


@pytest.mark.slow
@PROPERTY
@given(episodes())
def test_samples_handed_over_too_late_are_counted_never_lost(episode):
    """A starved tick thread (hand-over up to 250 ms after arrival) changes which samples
    are in time, not the bookkeeping: every sample handed over is counted exactly once
    (those handed over after the episode was finished are the recorder's idle ones)."""
    rig, samples, stop, config, seed = episode.rig, episode.samples(), episode.stop, episode.config, episode.seed
    _, want = replay(rig, samples, stop, config)
    rows, got = live_like(rig, samples, stop, np.random.default_rng(seed), max_lag_ns=250 * MS, config=config)
    for sid, c in got.streams.items():
        assert c.get("received", 0) == StreamCounts(**c).fates() <= want.streams[sid].get("received", 0), sid
    tolerance = int(config.tolerance_ticks * SECOND / rig.fps)
    stamp = {s.payload: s.stamp_ns for s in samples if rig.streams[s.stream].kind is StreamKind.VIDEO}
    for k, frames in enumerate(rows.frames):
        tick = got.t0 + k * SECOND // 30
        for slot, frame in frames.items():
            repeated = k > 0 and rows.frames[k - 1][slot] == frame
            assert repeated or frame not in stamp or abs(stamp[frame] - tick) <= tolerance
