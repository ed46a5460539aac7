"""Simulated devices: timing, ordering, determinism and the scripted flaws."""
from __future__ import annotations

import itertools
import time
from collections import defaultdict
from dataclasses import replace

import numpy as np
import pytest

from egorec_ros.assembly.sample import Sample
from egorec_ros.rig.kinds import DEVICE_KINDS
from egorec_ros.rig.load import load_rig
from egorec_ros.sim.flaws import CLEAN, DEFAULT, Flaws, incidents
from egorec_ros.sim.replay import DEFAULT_START_NS, simulate

SMALL = (160, 120)   # timing tests do not look at pixels
START = DEFAULT_START_NS


def run(rig_name: str, seconds: float, **kw) -> list[Sample]:
    kw.setdefault("sizes", SMALL)
    return list(simulate(load_rig(rig_name), seconds, **kw))


def by_stream(samples: list[Sample]) -> dict[str, list[Sample]]:
    out: dict[str, list[Sample]] = defaultdict(list)
    for s in samples:
        out[s.stream].append(s)
    return out


def stamps_ms(samples: list[Sample]) -> np.ndarray:
    return (np.array([s.stamp_ns for s in samples], dtype=np.int64) - START) / 1e6


def payload_bytes(payload) -> bytes:
    if isinstance(payload, dict):
        return b"".join(k.encode() + np.ascontiguousarray(v).tobytes() for k, v in sorted(payload.items()))
    return np.ascontiguousarray(payload).tobytes()


@pytest.fixture(scope="module")
def appendix_b() -> list[Sample]:
    return run("appendix_b", 6.0, seed=7)


def test_same_seed_gives_bit_identical_samples_and_another_seed_does_not():
    a, b, c = (run("gripper_single", 1.5, seed=s) for s in (1, 1, 2))
    assert [(s.stream, s.stamp_ns, s.arrival_ns, s.raw_stamp_ns) for s in a] == \
           [(s.stream, s.stamp_ns, s.arrival_ns, s.raw_stamp_ns) for s in b]
    assert all(payload_bytes(x.payload) == payload_bytes(y.payload) for x, y in zip(a, b))
    first_c = {s.stream: s for s in reversed(c)}
    differing = [s.stream for s in reversed(a) if s.stream in first_c
                 and payload_bytes(s.payload) != payload_bytes(first_c[s.stream].payload)]
    assert set(differing) == {s.stream for s in a}, "another seed changes every stream's payloads"
    assert [s.stamp_ns for s in a[:20]] != [s.stamp_ns for s in c[:20]]


def test_samples_come_in_arrival_order_never_before_capture(appendix_b):
    keys = [(s.arrival_ns, s.stream, s.stamp_ns) for s in appendix_b]
    assert keys == sorted(keys)
    assert len(set(keys)) == len(keys)
    assert all(s.arrival_ns >= s.stamp_ns for s in appendix_b)
    assert all(START <= s.stamp_ns < START + 6_000_000_000 for s in appendix_b)
    for samples in by_stream(appendix_b).values():   # each stream is one FIFO
        assert np.all(np.diff([s.arrival_ns for s in samples]) >= 0)
        assert np.all(np.diff([s.stamp_ns for s in samples]) > 0)


def test_every_stream_runs_at_its_nominal_rate(appendix_b):
    rig = load_rig("appendix_b")
    kinds = {d.id: d.kind for d in rig.devices}
    streams = by_stream(appendix_b)
    assert set(streams) == set(rig.streams)
    for sid, spec in rig.streams.items():
        nominal = DEVICE_KINDS[kinds[spec.device]][spec.role].rate_hz
        rate = (len(streams[sid]) - 1) / ((streams[sid][-1].stamp_ns - streams[sid][0].stamp_ns) / 1e9)
        assert rate == pytest.approx(nominal, rel=0.03), sid


def test_clean_schedule_is_exact_and_undelayed():
    samples = run("uvc_pair", 3.0, flaws=CLEAN)
    for sid, ss in by_stream(samples).items():
        assert len(ss) == 90, sid
        assert np.abs(np.diff(stamps_ms(ss)) - 1000 / 30).max() < 1e-5
        assert all(s.arrival_ns == s.stamp_ns and s.raw_stamp_ns == 0 for s in ss)


def test_transport_delay_grows_with_payload_and_has_late_spikes():
    delays = defaultdict(list)    # full-size frames are not kept: 6 s of them is ~700 MB
    for s in simulate(load_rig("gripper_single"), 6.0, flaws=replace(DEFAULT, spike_prob=0.03)):
        delays[s.stream].append((s.arrival_ns - s.stamp_ns) / 1e6)
    delay = {sid: np.array(d) for sid, d in delays.items()}
    assert 1.0 < np.median(delay["gripper.left_force"]) < 6.0
    # a 1280x960 RGB frame is 3.7 MB: ~5 ms more on the wire than a 12-byte force
    assert np.median(delay["gripper.rgb"]) > np.median(delay["gripper.left_force"]) + 3.0
    spiked = np.concatenate([d[d > 100.0] for d in delay.values()])
    assert spiked.size > 0 and spiked.max() < 300.0 + 50.0


def test_dropouts_lose_a_few_samples():
    clean = by_stream(run("uvc_pair", 10.0, flaws=CLEAN))
    lossy = by_stream(run("uvc_pair", 10.0, flaws=replace(DEFAULT, drop_prob=0.05)))
    for sid in clean:
        lost = len(clean[sid]) - len(lossy[sid])
        assert 3 <= lost <= 35, (sid, lost)
        gaps = np.diff(stamps_ms(lossy[sid]))
        assert gaps.max() > 1.5 * 1000 / 30


def test_imu_arrives_in_bursts_of_individually_stamped_samples(appendix_b):
    imu = by_stream(appendix_b)["ego.imu"]
    bursts: dict[int, list[Sample]] = defaultdict(list)
    for s in imu:
        bursts[s.arrival_ns].append(s)
    sizes = [len(b) for b in bursts.values()]
    assert sizes.count(10) >= len(sizes) - 3          # a dropped packet or the run edge
    gaps = []
    for burst in bursts.values():
        st = np.array([s.stamp_ns for s in burst])
        gaps.append(np.diff(st) / 1e6)
        assert burst[0].arrival_ns >= st.max()
    gaps = np.concatenate(gaps)
    assert np.all(gaps > 0) and np.median(gaps) == pytest.approx(5.0, abs=0.2)   # 200 Hz inside a burst
    arrivals = np.array(sorted(bursts)) / 1e6
    assert np.median(np.diff(arrivals)) == pytest.approx(50.0, abs=3.0)


def test_s80c_frames_are_decimated_from_a_50_fps_sensor():
    samples = run("appendix_b", 3.0, flaws=CLEAN)
    gaps = np.round(np.diff(stamps_ms(by_stream(samples)["ego.left"])), 3)
    assert set(gaps) == {20.0, 40.0}
    assert np.mean(gaps) == pytest.approx(1000 / 30, abs=0.5)
    assert np.count_nonzero(gaps == 40.0) == pytest.approx(2 * np.count_nonzero(gaps == 20.0), abs=2)
    # right eye and depth are the same sensor frames
    streams = by_stream(samples)
    assert [s.stamp_ns for s in streams["ego.right"]] == [s.stamp_ns for s in streams["ego.left"]]


def test_a_camera_with_a_fast_clock_delivers_30_84_fps():
    samples = run("uvc_pair", 10.0, flaws={"cam0": replace(CLEAN, rate_scale=30.84 / 30), "*": CLEAN})
    streams = by_stream(samples)
    assert len(streams["cam0.rgb"]) in (308, 309)
    assert len(streams["cam1.rgb"]) == 300


def test_incidents_stall_a_camera_drift_another_and_disconnect_a_glove():
    rig = load_rig("appendix_b")
    script = incidents(rig, 10.0)
    assert script["ego"].rate_scale == pytest.approx(30.84 / 30)
    (stall_at, stall_for), = script["gripper_a"].outages
    (gone_at, gone_for), = script["left_glove"].outages
    streams = by_stream(run("appendix_b", 10.0, flaws=script))

    def silent(sid: str, t0: float, length: float) -> None:
        t = stamps_ms(streams[sid]) / 1e3
        assert not np.any((t >= t0) & (t < t0 + length)), sid
        assert np.diff(t).max() >= length - 0.05, sid

    for sid in ("gripper_a.rgb", "gripper_a.left_force", "gripper_a.slam"):
        silent(sid, stall_at, stall_for)
    for sid in ("left_glove.pressure", "left_glove.hand_pose"):
        silent(sid, gone_at, gone_for)
    assert np.diff(stamps_ms(streams["gripper_b.rgb"])).max() < 100    # the other gripper keeps going
    assert np.diff(stamps_ms(streams["right_glove.pressure"])).max() < 100
    ego_rate = (len(streams["ego.left"]) - 1) / ((streams["ego.left"][-1].stamp_ns - streams["ego.left"][0].stamp_ns) / 1e9)
    assert ego_rate == pytest.approx(30.84, rel=0.01)


def test_device_clock_stamps_have_offset_and_drift(appendix_b):
    device_clock = {"ego.left", "ego.right", "ego.depth", "ego.imu", "gripper_a.rgb", "gripper_b.rgb"}
    assert {sid for sid, ss in by_stream(appendix_b).items() if all(s.raw_stamp_ns for s in ss)} == device_clock
    assert not any(s.raw_stamp_ns for s in appendix_b if s.stream not in device_clock)
    # without host jitter the device clock is exactly offset + drift * t
    clocked = replace(CLEAN, clock_offset_ms=2000.0, clock_drift_ppm=30.0)
    fits = {}
    for sid, ss in by_stream(run("appendix_b", 4.0, flaws=clocked)).items():
        if sid not in device_clock:
            continue
        t = stamps_ms(ss) / 1e3
        lag = np.array([s.raw_stamp_ns - s.stamp_ns for s in ss], dtype=np.float64)
        slope, offset = np.polyfit(t, lag, 1)
        assert 1e6 < abs(offset) <= 2000e6, sid
        assert 0 < abs(slope) <= 30e3, sid                   # ns per s: 30 ppm
        assert np.abs(lag - (offset + slope * t)).max() < 2.0, sid
        fits[sid] = (offset, slope)
    assert fits["ego.left"] == pytest.approx(fits["ego.imu"], abs=2.0), "one device, one clock"
    assert fits["gripper_a.rgb"] != pytest.approx(fits["gripper_b.rgb"], abs=1e3)


def test_slam_time_is_on_the_sensor_clock():
    for flaws, spread_ms in ((CLEAN, 1e-3), (DEFAULT, 5.0)):
        streams = by_stream(run("appendix_b", 4.0, flaws=flaws))
        for sid, epoch in (("ego.slam", "first_frame"), ("gripper_a.slam", "enter_press")):
            pts = np.array([s.payload for s in streams[sid]])
            assert pts.dtype == np.float64 and pts.shape[1] == 8
            assert np.all(np.diff(pts[:, 0]) > 0)
            offset = pts[:, 0] - stamps_ms(streams[sid]) / 1e3
            assert np.ptp(offset) * 1e3 < spread_ms, sid
            if epoch == "first_frame":
                assert abs(offset.mean()) < 0.05
            else:
                assert 1.0 <= offset.mean() <= 20.0


def test_endless_run_is_lazy():
    t0 = time.perf_counter()
    first = list(itertools.islice(simulate(load_rig("appendix_b"), None, sizes=SMALL), 3000))
    assert len(first) == 3000 and time.perf_counter() - t0 < 20
    assert first[-1].arrival_ns - START > 1_000_000_000


def test_sizes_override_per_slot_and_globally():
    rig = load_rig("d435_single")
    one = {s.stream: s.payload.shape for s in itertools.islice(simulate(rig, 1.0, sizes={"d435_depth": (320, 240)}), 10)}
    assert one["head.depth"] == (240, 320) and one["head.rgb"] == (720, 1280, 3)
    everywhere = {s.stream: s.payload.shape for s in itertools.islice(simulate(rig, 1.0, sizes=(640, 480)), 10)}
    assert everywhere == {"head.rgb": (480, 640, 3), "head.depth": (480, 640)}


@pytest.mark.parametrize("kwargs, message", [
    ({"flaws": {"no_such_device": DEFAULT}}, "unknown devices/streams"),
    ({"sizes": {"no_slot": (640, 480)}}, "not a video/depth slot"),
    ({"sizes": (641, 480)}, "positive even integers"),
    ({"sizes": (640,)}, "positive even integers"),
    ({"flaws": {"head": 0.1}}, "give a Flaws"),
    ({"seconds": 0}, "seconds must be > 0"),
])
def test_bad_requests_are_refused_with_a_clear_message(kwargs, message):
    kwargs.setdefault("seconds", 1.0)
    with pytest.raises(ValueError, match=message):
        simulate(load_rig("d435_single"), kwargs.pop("seconds"), **kwargs)


@pytest.mark.parametrize("knobs", [{"drop_prob": 1.5}, {"jitter_ms": -1.0}, {"rate_scale": 0.0},
                                   {"outages": ((1.0, 0.0),)}, {"spike_ms": (300.0, 100.0)}])
def test_flaws_refuse_impossible_knobs(knobs):
    with pytest.raises(ValueError, match="Flaws"):
        Flaws(**knobs)
