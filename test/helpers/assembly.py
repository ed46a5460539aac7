"""What the assembly tests share (no tests here):

* ``Feed`` / ``feed_samples``: synthetic streams with exactly known stamps and arrivals
  (rate, jitter, transport delay, spikes beyond the latency budget, drops, outages,
  bursts), whose payloads name their sample, so a row tells which samples it holds;
* ``Rows``: an ``AssemblyOutput`` that keeps rows in memory (no encoding);
* ``replay`` / ``live_like``: the two ways a recorder drives the assembler;
* ``check_rules``: every rule of the issue re-derived from samples and rows alone
  (which frame each row must hold, which window each IMU sample and trajectory point
  must land in, what latest-wins must pick, t0, status) and every count re-derived
  from its definition in ``counts.py``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from egorec_ros.assembly.assembler import Assembler, AssemblyConfig, AssemblyReport
from egorec_ros.assembly.counts import StreamCounts
from egorec_ros.assembly.sample import Sample
from egorec_ros.qa.frame_marks import MAX_RANGES, capped
from egorec_ros.rig.compile import compile_rig
from egorec_ros.rig.kinds import DEVICE_KINDS, StreamKind
from egorec_ros.rig.model import Rig

START = 1_800_000_000_000_000_000
MS = 1_000_000
SECOND = 1_000_000_000
TINY = {"width": 16, "height": 16}

# D435 (forensic columns, depth) + UVC (status) + gripper (force: latest-wins, SLAM: window) + USB glove
RIG_A = compile_rig({"name": "synth_a", "fps": 30, "devices": {
    "cam": {"kind": "d435", "streams": {"rgb": TINY, "depth": TINY}},
    "side": {"kind": "uvc", "streams": {"rgb": TINY}},
    "grip": {"kind": "gripper", "rig": 1, "streams": {"rgb": TINY, "left_force": {}, "slam": {}}},
    "glove": {"kind": "usb_glove", "sensor": "left_glove", "streams": {"pressure": {}}}}})
# S80 stereo (two videos, depth, IMU window, SLAM window) + UVC + BLE glove
RIG_B = compile_rig({"name": "synth_b", "fps": 30, "devices": {
    "ego": {"kind": "s80m", "role": "ego", "streams": {"left": TINY, "right": TINY, "depth": TINY,
                                                       "imu": {}, "slam": {}}},
    "side": {"kind": "uvc", "streams": {"rgb": TINY}},
    "glove": {"kind": "ble_glove", "sensor": "right_glove", "streams": {"pressure": {}}}}})


# ---- synthetic streams -------------------------------------------------------------------

@dataclass(frozen=True)
class Frame:
    """A video/depth payload naming its sample; a LazyFrame the fake output never decodes."""

    stream: str
    index: int

    def array(self) -> np.ndarray:
        return np.zeros((16, 16, 3), np.uint8)


@dataclass(frozen=True)
class Feed:
    """How one synthetic stream captures and delivers (times in ms unless named)."""

    stream: str
    rate_hz: float
    jitter_ms: float = 0.0       # sd of the capture stamp (clipped to +-0.4 period)
    delay_ms: float = 2.0        # transport base delay
    spread_ms: float = 0.0       # mean of an exponential extra delay
    spike_prob: float = 0.0      # chance of an extra delay uniform in [0, spike_ms]
    spike_ms: float = 0.0
    drop_prob: float = 0.0
    outages: tuple[tuple[float, float], ...] = ()   # (start_s, duration_s) after the episode start
    burst: int = 1               # samples delivered together (IMU packets)
    lead_s: float = 0.5          # the stream runs this long before the episode start
    raw_offset_ns: int = 0       # != 0: samples carry a device stamp (raw_stamp_ns)


def payload(rig: Rig, stream: str, index: int) -> Any:
    spec = rig.streams[stream]
    if spec.kind in (StreamKind.VIDEO, StreamKind.DEPTH):
        return Frame(stream, index)
    if spec.kind is StreamKind.IMU:
        return np.array([index, 0, 0, 0, 0, 0], np.float32)
    if spec.kind is StreamKind.TRAJECTORY:
        return np.array([index, 0, 0, 0, 0, 0, 0, 1], np.float64)
    kind = next(d.kind for d in rig.devices if d.id == spec.device)
    return {f.name: np.full(f.shape, index, np.float32) for f in DEVICE_KINDS[kind][spec.role].fields}


def feed_samples(rig: Rig, feed: Feed, seconds: float, rng: np.random.Generator,
                 start_ns: int = START) -> list[Sample]:
    period = 1e9 / feed.rate_hz
    n = int((seconds + feed.lead_s) * feed.rate_hz) + 1
    true = -feed.lead_s * 1e9 + rng.uniform(0, period) + np.arange(n) * period
    jitter = np.clip(rng.normal(0.0, feed.jitter_ms * MS, n), -0.4 * period, 0.4 * period)
    stamp = start_ns + np.rint(true + jitter).astype(np.int64)
    delay = feed.delay_ms * MS + (rng.exponential(feed.spread_ms * MS, n) if feed.spread_ms else 0.0)
    delay = delay + np.where(rng.random(n) < feed.spike_prob, rng.uniform(0, feed.spike_ms * MS, n), 0.0)
    arrival = stamp + np.rint(delay).astype(np.int64)
    if feed.burst > 1:   # a packet is sent when its last sample is in
        group = np.arange(n) // feed.burst
        last = np.minimum((group + 1) * feed.burst - 1, n - 1)
        arrival = np.maximum.reduceat(arrival, np.arange(0, n, feed.burst))[group]
        arrival = np.maximum(arrival, stamp[last])
    keep = (rng.random(n) >= feed.drop_prob) & (true < seconds * 1e9)
    for begin, length in feed.outages:
        keep &= ~((true >= begin * 1e9) & (true < (begin + length) * 1e9))
    return [Sample(feed.stream, int(stamp[i]), int(arrival[i]), payload(rig, feed.stream, i),
                   int(stamp[i]) + feed.raw_offset_ns if feed.raw_offset_ns else 0)
            for i in np.flatnonzero(keep)]


def merged(rig: Rig, feeds: list[Feed], seconds: float, seed: int, start_ns: int = START) -> list[Sample]:
    """All feeds' samples in arrival order, as a recorder or a bag delivers them."""
    rng = np.random.default_rng(seed)
    samples = [s for f in feeds for s in feed_samples(rig, f, seconds, rng, start_ns)]
    return sorted(samples, key=lambda s: (s.arrival_ns, s.stream, s.stamp_ns))


def clean_feeds(rig: Rig, **overrides: Any) -> list[Feed]:
    """One feed per stream of ``rig`` at its role's nominal rate (IMU in packets of 4)."""
    feeds = []
    for spec in rig.streams.values():
        kind = next(d.kind for d in rig.devices if d.id == spec.device)
        rate = DEVICE_KINDS[kind][spec.role].rate_hz
        burst = 4 if spec.kind is StreamKind.IMU else 1
        feeds.append(Feed(spec.id, rate, burst=burst, **overrides.get(spec.id, {})))
    return feeds


# ---- driving the assembler ---------------------------------------------------------------

@dataclass
class Rows:
    """AssemblyOutput keeping rows in memory."""

    keys: list[str] | None = None
    values: list[dict] = field(default_factory=list)
    frames: list[dict] = field(default_factory=list)

    def begin(self, video_keys: list[str]) -> None:
        assert self.keys is None, "begin() is called once"
        self.keys = list(video_keys)

    def row(self, values: dict, frames: dict) -> None:
        assert set(frames) == set(self.keys), "every recorded stream has a frame in every row"
        self.values.append(dict(values))
        self.frames.append(dict(frames))


def replay(rig: Rig, samples: list[Sample], stop_ns: int, config: AssemblyConfig = AssemblyConfig(),
           start_ns: int = START) -> tuple[Rows, AssemblyReport]:
    """Replay mode: samples in arrival order, the clock is their arrival (record_samples)."""
    rows = Rows()
    assembler = Assembler(rig, rows, start_ns=start_ns, config=config)
    for s in samples:
        if s.arrival_ns > stop_ns + assembler.latency_ns:
            break
        assembler.push(s)
    return rows, assembler.finish(stop_ns)


def live_like(rig: Rig, samples: list[Sample], stop_ns: int, rng: np.random.Generator, *,
              max_lag_ns: int, config: AssemblyConfig = AssemblyConfig(),
              start_ns: int = START) -> tuple[Rows, AssemblyReport]:
    """Live mode without threads: each sample reaches the recorder up to ``max_lag_ns``
    after its arrival stamp; the tick thread wakes every 1-12 ms, reads the clock, takes
    what was delivered, pushes it and builds what is due (as ``Recorder._step``)."""
    delivered = np.array([s.arrival_ns for s in samples]) + rng.integers(0, max_lag_ns + 1, len(samples))
    order = np.argsort(delivered, kind="stable")
    rows = Rows()
    assembler = Assembler(rig, rows, start_ns=start_ns, config=config)
    now, i = start_ns, 0
    while True:
        now += int(rng.uniform(1, 12) * MS)
        j = int(np.searchsorted(delivered[order], now, side="right"))
        batch = sorted((samples[k] for k in order[i:j]), key=lambda s: s.arrival_ns)
        i = j
        for s in batch:
            if s.arrival_ns <= stop_ns + assembler.latency_ns:
                assembler.push(s)
        if now > stop_ns + assembler.horizon_ns:
            return rows, assembler.finish(stop_ns, now)
        assembler.advance(now)


# ---- the rules, re-derived ---------------------------------------------------------------

def _marks_entry(rows: list[int]) -> dict | None:
    """A frame_marks entry re-derived from the marked rows (with repeats: two late frames of a row)."""
    if not rows:
        return None
    ranges: list[list[int]] = []
    for r in sorted(set(rows)):
        if ranges and r == ranges[-1][1] + 1:
            ranges[-1][1] = r
        else:
            ranges.append([r, r])
    out: dict = {"rows": len(set(rows)), "ranges": capped(ranges)}
    if len(ranges) > MAX_RANGES:
        out["merged_from"] = len(ranges)
    if len(rows) != len(set(rows)):
        out["samples"] = len(rows)
    return out


@dataclass
class _Stream:
    stamp: np.ndarray
    arrival: np.ndarray
    samples: list[Sample]


def _streams(samples: list[Sample], start_ns: int) -> dict[str, _Stream]:
    """Samples that are part of the episode: arrived at or after its start."""
    by: dict[str, list[Sample]] = {}
    for s in samples:
        if s.arrival_ns >= start_ns:
            by.setdefault(s.stream, []).append(s)
    return {k: _Stream(np.array([s.stamp_ns for s in v], np.int64), np.array([s.arrival_ns for s in v], np.int64), v)
            for k, v in by.items()}


def sample_index(payload_value: Any) -> int:
    return int(np.asarray(payload_value).flat[0])


def check_rules(rig: Rig, samples: list[Sample], rows: Rows, report: AssemblyReport, stop_ns: int,
                config: AssemblyConfig = AssemblyConfig(), start_ns: int = START) -> None:
    """Assert every rule of the assembler on one episode replayed from ``samples`` (valid
    ones, in arrival order; those arriving after stop + D are not part of it)."""
    fps_num = int(rig.fps)
    assert rig.fps == fps_num, "the checker handles integer rates"
    D, tol = int(config.latency_ms * MS), int(config.tolerance_ticks * SECOND / rig.fps)
    streams = _streams([s for s in samples if s.arrival_ns <= stop_ns + D], start_ns)
    counts = report.streams
    n = len(rows.values)
    assert n == report.rows
    for sid, c in counts.items():
        assert c.get("received", 0) == StreamCounts(**c).fates() == len(streams.get(sid, _Stream(np.zeros(0), np.zeros(0), [])).samples), \
            f"{sid}: the books do not balance: {c}"
        assert c.get("restamped", 0) == 0
    if n == 0:
        return
    t0 = report.t0

    def tick(k: int) -> int:
        return t0 + (k * SECOND) // fps_num

    ticks = np.array([tick(k) for k in range(n)], np.int64)
    deadlines = ticks + D
    previous_tick = tick(-1)
    assert ticks[-1] <= stop_ns < tick(n), "rows run from t0 to the stop, one per tick"

    def row_of(stamp: int) -> int:   # first tick at or after the stamp (n: after the last row)
        return int(np.searchsorted(ticks, stamp, side="left"))

    def nearest(stamp: int) -> int:  # the tick nearest the stamp, the earlier on a tie, >= 0
        k = row_of(stamp)
        return k - 1 if k > 0 and stamp - tick(k - 1) <= tick(k) - stamp else k

    for k, v in enumerate(rows.values):
        assert v["timestamp"] == pytest.approx((ticks[k] - t0) / 1e9, abs=1e-9)
        assert v["wall_time"] == ticks[k] / 1e9

    # ---- video: which frame each row must hold ------------------------------------------
    included = rows.keys
    slot_stream = {s.slot: s for s in rig.streams.values() if s.slot and s.kind in (StreamKind.VIDEO, StreamKind.DEPTH)}
    assert sorted(report.missing_streams) == sorted(s.id for slot, s in slot_stream.items() if slot not in included)
    for sid in report.missing_streams:
        before = int((streams[sid].stamp < start_ns).sum()) if sid in streams else 0
        assert counts[sid].get("outside", 0) == before
        assert counts[sid].get("excluded", 0) == counts[sid].get("received", 0) - before
    master_slot = rig.master_slot if rig.master_slot in included else next(
        (slot for slot in included if slot_stream[slot].kind is StreamKind.VIDEO), None)
    chosen: dict[str, list[Sample]] = {}
    for slot in sorted(included, key=lambda x: slot_stream[x].kind is StreamKind.DEPTH):
        spec = slot_stream[slot]
        st = streams[spec.id]
        by_payload = {id(s.payload): s for s in st.samples}
        written: list[Sample] = []
        last: int | None = None
        repeats = 0
        repeated_rows: list[int] = []
        for k in range(n):
            x = by_payload[id(rows.frames[k][slot])]
            anchor = ticks[k] if spec.kind is StreamKind.VIDEO else chosen[spec.master][k].stamp_ns
            eligible = ((st.arrival <= deadlines[k]) & (np.abs(st.stamp - anchor) <= tol)
                        & (st.stamp >= t0 - tol) & (st.stamp >= start_ns))
            if last is not None:
                eligible &= st.stamp > last
            if k > 0 and x is written[-1]:
                assert not eligible.any(), f"{slot} row {k}: repeated although a frame was there"
                repeats += 1
                repeated_rows.append(k)
            else:
                assert x.stamp_ns >= start_ns and eligible[st.samples.index(x)], f"{slot} row {k}: not eligible"
                best = np.abs(st.stamp[eligible] - anchor).min()
                assert abs(x.stamp_ns - anchor) == best, f"{slot} row {k}: a nearer frame was there"
                assert x.stamp_ns == st.stamp[eligible][np.abs(st.stamp[eligible] - anchor) == best].min()
                last = x.stamp_ns
            written.append(x)
        chosen[slot] = written
        c = counts[spec.id]
        distinct = {id(x) for x in written}
        assert c.get("used", 0) == len(distinct) and c.get("repeated", 0) == repeats
        assert c.get("delayed", 0) == sum(x.arrival_ns > tick(nearest(x.stamp_ns)) + D
                                          for x in {id(x): x for x in written}.values())
        stamps_written = np.array([x.stamp_ns for x in written])
        expected = dict(outside=0, late=0, skipped=0, out_of_order=0)
        late_rows: list[int] = []
        for y in st.samples:
            if id(y) in distinct:
                continue
            near = nearest(y.stamp_ns)
            if y.stamp_ns < start_ns or y.stamp_ns < t0 - tol or near >= n:
                expected["outside"] += 1
            elif y.arrival_ns > deadlines[near]:
                expected["late"] += 1
                late_rows.append(near)
            else:
                visible_at = int(np.searchsorted(deadlines, y.arrival_ns, side="left"))
                before = stamps_written[:visible_at]
                if (before.size and y.stamp_ns <= before.max()) or y.stamp_ns in stamps_written:
                    expected["out_of_order"] += 1
                else:
                    expected["skipped"] += 1
        assert {k: c.get(k, 0) for k in expected} == expected, f"{spec.id}: {c} vs {expected}"
        # frame_marks: the repeated rows, and the row each late frame was for
        marks = report.frame_marks["streams"][spec.id]
        assert marks.get("video") == slot
        for kind, marked in (("repeated", repeated_rows), ("late", late_rows)):
            want = _marks_entry(marked)
            assert marks.get(kind) == want, f"{spec.id} {kind}: marks {marks.get(kind)}, rows {want}"
    if master_slot is not None:
        hw = [v["hardware_ns"] for v in rows.values]
        assert hw == [x.stamp_ns for x in chosen[master_slot]]
        raw = [x.raw_stamp_ns for x in chosen[master_slot]]
        assert [v.get("raw_hw_ns", 0) for v in rows.values] == raw
        # t0: the first master frame near which every recorded stream has a frame in time
        others = [streams[slot_stream[o].id] for o in included if o != master_slot]
        for m in sorted(streams[slot_stream[master_slot].id].samples, key=lambda s: s.stamp_ns):
            if m.stamp_ns < start_ns or m.arrival_ns > m.stamp_ns + D:
                continue
            if all(np.any((np.abs(o.stamp - m.stamp_ns) <= tol) & (o.arrival <= m.stamp_ns + D) & (o.stamp >= start_ns))
                   for o in others):
                assert t0 == m.stamp_ns, "t0 is the first master frame every stream can match"
                break
        else:
            raise AssertionError("no master frame qualifies as t0")
    forensic = rig.forensic_slot
    if forensic in included:
        depth_slot = next((s for s, sp in slot_stream.items() if sp.master == forensic and s in included), None)
        for k, v in enumerate(rows.values):
            x = chosen[forensic][k]
            assert v["host_ns"] == x.arrival_ns and v["ts_src"] == int(x.raw_stamp_ns != 0)
            assert v["rgb_dup"] == int(k > 0 and x is chosen[forensic][k - 1])
            if depth_slot:
                assert v["depth_ns"] == chosen[depth_slot][k].stamp_ns
                assert v["depth_dup"] == int(k > 0 and chosen[depth_slot][k] is chosen[depth_slot][k - 1])

    # ---- latest-wins and windows ---------------------------------------------------------
    last_used_by_stream: dict[str, np.ndarray] = {}
    for spec in rig.streams.values():
        if spec.kind not in (StreamKind.LATEST, StreamKind.IMU, StreamKind.TRAJECTORY) or spec.id not in streams:
            continue
        st = streams[spec.id]
        in_episode = (st.stamp >= start_ns) & (st.stamp > previous_tick)
        c = counts[spec.id]
        expected = dict(used=0, delayed=0, late=0, superseded=0, outside=int((~in_episode | (st.stamp > ticks[-1])).sum()))
        alive = np.full(n, -1, np.int64)
        if spec.kind is StreamKind.LATEST:
            first_field, first_col = next(iter(spec.columns.items()))
            last_used = -1
            used = set()
            for k in range(n):
                cand = in_episode & (st.stamp <= ticks[k]) & (st.arrival <= deadlines[k]) & (st.stamp > last_used)
                v = rows.values[k]
                if not cand.any():
                    assert v.get(first_col) is None, f"{spec.id} row {k}: no new sample but a value"
                    continue
                i = int(np.flatnonzero(cand)[np.argmax(st.stamp[cand])])
                x = st.samples[i]
                assert v[first_col] is x.payload[first_field], f"{spec.id} row {k}: not the newest sample"
                if spec.ns_column:
                    assert v[spec.ns_column] == x.stamp_ns
                last_used = x.stamp_ns
                used.add(i)
                expected["used"] += 1
                expected["delayed"] += int(k > 0 and x.stamp_ns <= ticks[k - 1])
                alive[k] = last_used
            for i in np.flatnonzero(in_episode & (st.stamp <= ticks[-1])):
                if i not in used:
                    late = st.arrival[i] > deadlines[row_of(st.stamp[i])]
                    expected["late" if late else "superseded"] += 1
        else:
            points, ts = ("samples", "ts") if spec.kind is StreamKind.IMU else ("points", "ns")
            target = np.full(len(st.samples), -1)
            for i in np.flatnonzero(in_episode & (st.stamp <= ticks[-1])):
                r = row_of(st.stamp[i])
                j = r + int(np.searchsorted(deadlines[r:], st.arrival[i], side="left"))
                if j < n:
                    target[i] = j
                    expected["used"] += 1
                    expected["delayed"] += int(j > r)
                else:
                    expected["late"] += 1
            for k in range(n):
                want = np.flatnonzero(target == k)
                want = want[np.argsort(st.stamp[want], kind="stable")]
                v = rows.values[k]
                if not want.size:
                    assert v.get(spec.columns[ts]) is None
                    continue
                assert list(v[spec.columns[ts]]) == [int(st.stamp[i]) for i in want], f"{spec.id} row {k}"
                assert np.array_equal(v[spec.columns[points]], [np.ravel(st.samples[i].payload) for i in want])
                alive[k] = st.stamp[want].max()
        got = {key: c.get(key, 0) for key in expected}
        assert got == expected, f"{spec.id}: {c} vs {expected}"
        last_used_by_stream[spec.id] = np.maximum.accumulate(alive)

    # ---- status.<id>: connected while a stream of it was heard within the silence ------------
    silence = int(config.silence_s * SECOND)
    for sid in {s.status for s in rig.streams.values() if s.status}:
        heard = np.full(n, -1, np.int64)
        for spec in (s for s in rig.streams.values() if s.status == sid and s.id in streams):
            if spec.kind is StreamKind.VIDEO:
                if spec.slot not in included:
                    continue
                st = streams[spec.id]
                for k in range(n):
                    seen = ((st.arrival <= deadlines[k]) & (st.stamp <= ticks[k] + tol)
                            & (st.stamp >= t0 - tol) & (st.stamp >= start_ns))
                    heard[k] = max(heard[k], st.stamp[seen].max() if seen.any() else -1)
            else:
                heard = np.maximum(heard, last_used_by_stream[spec.id])
        want = ["connected" if heard[k] >= ticks[k] - silence else "disconnected" for k in range(n)]
        assert [v[f"status.{sid}"] for v in rows.values] == want, f"status.{sid}"


# ---- small rigs -------------------------------------------------------------------------

UVC = compile_rig({"name": "one_uvc", "fps": 30, "devices": {"cam": {"kind": "uvc", "streams": {"rgb": TINY}}}})
GRIP = compile_rig({"name": "grip", "fps": 30, "devices": {
    "g": {"kind": "gripper", "rig": 1, "streams": {"rgb": TINY, "left_force": {}, "slam": {}}}}})
