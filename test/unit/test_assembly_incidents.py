"""The big incidents of a recording session, through the assembler: a camera running at
30.84 fps, a camera that stalls for 2 s, a glove that disconnects and comes back, an
episode started while a backlog of old samples is being handed over, and episodes
recorded back to back from one stream of samples."""
from __future__ import annotations

import dataclasses
import itertools
from fractions import Fraction

import numpy as np
import pytest

from egorec_ros.assembly.tick_grid import TickGrid
from egorec_ros.rig.compile import compile_rig
from egorec_ros.rig.load import load_rig
from egorec_ros.rig.resize import with_video_sizes
from egorec_ros.sim.flaws import CLEAN, incidents
from egorec_ros.sim.replay import simulate
from helpers.assembly import MS, SECOND, START, TINY, UVC, Feed, check_rules, merged, replay

SMALL = (32, 24)


def runs(values: list[str]) -> list[tuple[str, int]]:
    return [(k, len(list(g))) for k, g in itertools.groupby(values)]


def samples_in(rows, samples: list) -> set[int]:
    """Indices of the samples whose payload (or one of its arrays) a row holds."""
    owner = {}
    for i, s in enumerate(samples):
        for part in (s.payload.values() if isinstance(s.payload, dict) else (s.payload,)):
            owner[id(part)] = i
    held = [f for frames in rows.frames for f in frames.values()]
    held += [v for values in rows.values for v in values.values()]
    return {owner[id(x)] for x in held if id(x) in owner}


def sim(rig, seconds: float, flaws, seed: int = 3, start_ns: int = START) -> list:
    """Samples of ``seconds`` of simulated devices, plus half a second for late arrivals."""
    return list(simulate(rig, seconds + 0.5, seed=seed, start_ns=start_ns, flaws=flaws))


def test_a_camera_at_30_84_fps_never_builds_up_lag():
    """The reference collector took the oldest queued frame each tick: a 30.84 fps camera
    then lags 0.84 frames more every second. Nearest-wins skips the surplus frame instead,
    so over ten minutes the frame in each row stays within half a frame of its tick."""
    minutes = 10
    feed = Feed("cam.rgb", 30.84, jitter_ms=0.4, delay_ms=3.0, spread_ms=1.0)
    samples = merged(UVC, [feed], minutes * 60, seed=1)
    stop = START + minutes * 60 * SECOND
    rows, report = replay(UVC, samples, stop)
    assert report.rows == (stop - report.t0) * 30 // SECOND + 1, "a row for every tick from t0 to the stop"
    ticks = report.t0 + np.arange(report.rows, dtype=np.int64) * SECOND // 30
    offset = np.array([v["hardware_ns"] for v in rows.values]) - ticks
    half_frame = SECOND / 30.84 / 2
    assert np.abs(offset).max() <= half_frame + 2 * MS       # 16.2 ms + jitter
    first, last = np.abs(offset[:1800]).mean(), np.abs(offset[-1800:]).mean()
    assert abs(last - first) < 1 * MS, f"lag built up: {first / MS:.2f} ms -> {last / MS:.2f} ms"
    c = report.streams["cam.rgb"]
    assert c.get("repeated", 0) == 0
    assert abs(c["skipped"] - 0.84 * 60 * minutes) <= 2, "one surplus frame skipped every 1.2 s"
    assert rows.values[-1]["timestamp"] == (ticks[-1] - report.t0) / 1e9


def test_the_tick_grid_is_exact_however_long_the_episode():
    day = 24 * 3600
    for fps in (30.0, 29.97, 30000 / 1001, 15.0):
        grid = TickGrid.at(START, fps)
        rate = Fraction(fps).limit_denominator(1001)
        i = int(day * fps)
        assert grid.tick(i) - START == i * SECOND * rate.denominator // rate.numerator
        for t in (grid.tick(i) - 1, grid.tick(i), grid.tick(i) + 1):
            k = grid.nearest(t)
            assert abs(t - grid.tick(k)) <= min(abs(t - grid.tick(k - 1)), abs(t - grid.tick(k + 1)))


@pytest.mark.slow
def test_every_incident_at_once_on_the_appendix_b_rig():
    """Appendix B with default flaws: the ego camera at 30.84 fps, the first gripper
    stalled 2 s at 40 %, the left glove away 1.5 s at 60 %. Every rule and count holds,
    and the incidents show where a user looks for them."""
    rig = with_video_sizes(load_rig("appendix_b"), SMALL)
    seconds = 10
    samples = sim(rig, seconds, incidents(rig, seconds))
    stop = START + seconds * SECOND
    rows, report = replay(rig, samples, stop)
    check_rules(rig, samples, rows, report, stop)
    assert rows.keys == ["stereo_left", "stereo_right", "stereo_depth", "gripper_rgb", "gripper_2_rgb"]
    assert report.streams["ego.left"]["skipped"] >= 6, "the 30.84 fps camera's surplus is skipped"
    assert 58 <= report.streams["gripper_a.rgb"]["repeated"] <= 64, "2 s stall = 60 repeated rows"
    glove = runs([v["status.left_glove"] for v in rows.values])
    assert [k for k, _ in glove] == ["connected", "disconnected", "connected"]
    assert 12 <= glove[1][1] <= 18, "1.5 s away, disconnected after 1 s of silence"


def test_a_stalled_camera_repeats_its_last_frame_then_picks_up_again():
    rig = with_video_sizes(load_rig("uvc_pair"), SMALL)
    seconds = 10
    samples = sim(rig, seconds, incidents(rig, seconds, CLEAN))
    stop = START + seconds * SECOND
    rows, report = replay(rig, samples, stop)
    check_rules(rig, samples, rows, report, stop)
    c = report.streams["cam1.rgb"]
    assert 59 <= c["repeated"] <= 61 and c.get("late", 0) == 0
    status = runs([v["status.head_right_rgb"] for v in rows.values])
    assert [k for k, _ in status] == ["connected", "disconnected", "connected"]
    assert 29 <= status[1][1] <= 31, "disconnected from 1 s into the 2 s stall until it ends"
    repeated = [k for k in range(1, len(rows.frames))
                if rows.frames[k]["head_right_rgb"] is rows.frames[k - 1]["head_right_rgb"]]
    assert repeated == list(range(repeated[0], repeated[0] + len(repeated))), "one block, mid-episode"
    assert abs(repeated[0] / 30 - 0.4 * seconds) < 0.1


def test_a_glove_that_disconnects_and_comes_back():
    rig = compile_rig({"name": "glove", "fps": 30, "devices": {
        "cam": {"kind": "uvc", "streams": {"rgb": TINY}},
        "hand": {"kind": "usb_glove", "sensor": "left_glove", "streams": {"pressure": {}, "hand_pose": {}}}}})
    seconds = 8
    samples = sim(rig, seconds, incidents(rig, seconds, CLEAN))
    stop = START + seconds * SECOND
    rows, report = replay(rig, samples, stop)
    check_rules(rig, samples, rows, report, stop)
    status = [v["status.left_glove"] for v in rows.values]
    pressure = [v.get("observation.left_glove") is not None for v in rows.values]
    assert [k for k, _ in runs(status)] == ["connected", "disconnected", "connected"]
    gap = [k for k, _ in runs(pressure)]
    assert gap == [True, False, True], "no value while away, values again once back"
    away = runs(pressure)[1][1]
    assert 34 <= away <= 38, "1.2 s away (15 % of 8 s)"
    assert abs(runs(status)[1][1] - (away - 30)) <= 2, "disconnected after 1 s of silence, until it is back"
    assert report.streams["hand.pressure"].get("late", 0) == 0


def test_an_episode_started_during_a_backlog_takes_nothing_from_before_its_start():
    """The recorder was busy (say, committing the previous episode) and hands over 3 s
    of queued samples right after the new episode started. They are counted as outside
    the episode; no row holds one, and its videos start with fresh frames."""
    rig = with_video_sizes(load_rig("gripper_single"), SMALL)
    before = sim(rig, 4.0, CLEAN, start_ns=START - 3 * SECOND)
    backlog = [s for s in before if s.stamp_ns < START]
    flushed = [dataclasses.replace(s, arrival_ns=START + 1 * MS) for s in backlog]
    samples = sorted(flushed + [s for s in before if s.stamp_ns >= START], key=lambda s: s.arrival_ns)
    stop = START + SECOND
    rows, report = replay(rig, samples, stop)
    check_rules(rig, samples, rows, report, stop)
    assert all(samples[i].stamp_ns >= START for i in samples_in(rows, samples))
    assert sum(c.get("outside", 0) for c in report.streams.values()) >= len(backlog)
    assert report.t0 >= START and rows.values[0]["hardware_ns"] >= START


def test_episodes_back_to_back_share_no_sample():
    rig = with_video_sizes(load_rig("gripper_single"), SMALL)
    samples = sim(rig, 4.0, incidents(rig, 4.0))
    episodes = [(START, START + int(1.7 * SECOND)), (START + int(1.7 * SECOND) + 1, START + 4 * SECOND)]
    used = []
    for start, stop in episodes:
        rows, report = replay(rig, samples, stop, start_ns=start)
        check_rules(rig, samples, rows, report, stop, start_ns=start)
        held = samples_in(rows, samples)
        assert all(start <= samples[i].stamp_ns <= stop + SECOND // 30 for i in held)
        used.append(held)
    assert used[0] and used[1] and not used[0] & used[1]
