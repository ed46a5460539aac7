"""The tick assembler's rules (§5.3 made exact), checked on hand-computed cases
(the rules re-derived for any feed are ``helpers.assembly.check_rules``)."""
from __future__ import annotations

import numpy as np

from egorec_ros.assembly.assembler import Assembler, AssemblyConfig
from egorec_ros.assembly.sample import Sample
from egorec_ros.rig.compile import compile_rig
from helpers.assembly import (GRIP, MS, SECOND, START, TINY, UVC, Frame, Rows, check_rules, payload, replay,
                              sample_index)


# ---- hand-computed cases -----------------------------------------------------------------

P = SECOND // 30                      # 33_333_333


def at(k: int) -> int:
    """Offset of tick k from t0 (ticks are t0 + floor(k * 1e9 / 30), never a sum of rounded periods)."""
    return (k * SECOND) // 30

def frame(stream: str, index: int, stamp: int, arrival: int | None = None) -> Sample:
    return Sample(stream, START + stamp, START + (stamp + 2 * MS if arrival is None else arrival), Frame(stream, index))


def indices(rows: Rows, slot: str) -> list[int]:
    return [f.index for f in (r[slot] for r in rows.frames)]


def test_nearest_frame_wins_and_a_stalled_camera_repeats():
    t0 = 10 * MS
    stamps = {0: t0, 1: t0 + at(1) - 12 * MS, 2: t0 + at(1) + 3 * MS, 3: t0 + at(4) + 1 * MS, 4: t0 + at(5)}
    samples = sorted((frame("cam.rgb", i, s) for i, s in stamps.items()), key=lambda s: s.arrival_ns)
    stop = START + t0 + at(5)
    rows, report = replay(UVC, samples, stop)
    assert report.t0 == START + t0
    # row 1: frame 2 (3 ms away) beats frame 1 (12 ms away); rows 2, 3 have nothing within
    # 25 ms and repeat frame 2; row 4 takes frame 3; row 5 frame 4
    assert indices(rows, "head_left_rgb") == [0, 2, 2, 2, 3, 4]
    assert report.streams["cam.rgb"] == {"received": 5, "used": 4, "skipped": 1, "repeated": 2}
    check_rules(UVC, samples, rows, report, stop)


def test_a_frame_after_the_deadline_is_late_and_never_reorders_the_video():
    D = 150 * MS
    t0 = 10 * MS
    samples = [frame("cam.rgb", 0, t0), frame("cam.rgb", 1, t0 + at(1), arrival=t0 + at(1) + D + 1),   # 1 ns too late
               frame("cam.rgb", 2, t0 + at(2)), frame("cam.rgb", 3, t0 + at(3), arrival=t0 + at(3) + D)]  # just in time
    samples.sort(key=lambda s: s.arrival_ns)
    stop = START + t0 + at(3)
    rows, report = replay(UVC, samples, stop)
    assert indices(rows, "head_left_rgb") == [0, 0, 2, 3]
    assert report.streams["cam.rgb"] == {"received": 4, "used": 3, "late": 1, "repeated": 1}
    check_rules(UVC, samples, rows, report, stop)


def test_latest_wins_takes_the_newest_in_time_and_never_goes_back():
    t0 = 10 * MS
    D = 150 * MS

    def force(i: int, stamp: int, arrival: int) -> Sample:
        return Sample("g.left_force", START + stamp, START + arrival, payload(GRIP, "g.left_force", i))

    samples = [frame("g.rgb", k, t0 + at(k)) for k in range(5)] + [
        force(0, t0 - 5 * MS, t0 - 4 * MS),          # row 0
        force(1, t0 + 5 * MS, t0 + 6 * MS),          # row 1, superseded by 2
        force(2, t0 + 20 * MS, t0 + 21 * MS),        # row 1
        force(3, t0 + at(1) + 10 * MS, t0 + at(2) + D + 1),   # row 2's, 1 ns late: row 3 takes it (delayed)
        force(4, t0 + at(1) + 5 * MS, t0 + at(3) + D + 1),    # row 2's, older than 3 which was used: late
    ]
    samples.sort(key=lambda s: s.arrival_ns)
    stop = START + t0 + at(4)
    rows, report = replay(GRIP, samples, stop)
    col = "observation.gripper_left_force"
    got = [None if v.get(col) is None else sample_index(v[col]) for v in rows.values]
    assert got == [0, 2, None, 3, None]
    assert [v.get(col + "_ns") for v in rows.values] == [START + t0 - 5 * MS, START + t0 + 20 * MS, None,
                                                        START + t0 + at(1) + 10 * MS, None]
    assert report.streams["g.left_force"] == {"received": 5, "used": 3, "superseded": 1, "late": 1, "delayed": 1}
    check_rules(GRIP, samples, rows, report, stop)


def test_each_trajectory_point_lands_in_exactly_one_window():
    t0 = 50 * MS
    D = 150 * MS

    def point(i: int, stamp: int, arrival: int | None = None) -> Sample:
        return Sample("g.slam", START + stamp, START + (stamp + MS if arrival is None else arrival),
                      payload(GRIP, "g.slam", i))

    samples = [frame("g.rgb", k, t0 + at(k)) for k in range(4)] + [
        point(0, t0 + at(-1) + 1),       # row 0's window is (t_-1, t0]: just inside
        point(1, t0 + at(-1)),           # on its open left end: outside
        point(2, t0),                    # row 0 (the window is closed on the right)
        point(3, t0 + 1),                # row 1
        point(4, t0 + at(1), arrival=t0 + at(1) + D + 1),   # row 1's, late: row 2 with its true stamp
        point(5, t0 + at(3) + 1),        # after the last row: outside
    ]
    samples.sort(key=lambda s: s.arrival_ns)
    stop = START + t0 + at(3) + 5 * MS
    rows, report = replay(GRIP, samples, stop)
    column = "observation.slam_trajectory_ns"
    ns = [[] if v.get(column) is None else [int(x) for x in v[column]] for v in rows.values]
    assert ns == [[START + t0 + at(-1) + 1, START + t0], [START + t0 + 1], [START + t0 + at(1)], []]
    assert report.streams["g.slam"] == {"received": 6, "used": 4, "outside": 2, "delayed": 1}
    check_rules(GRIP, samples, rows, report, stop)


def test_t0_waits_for_every_camera_and_the_first_row_has_all_of_them():
    t0 = 100 * MS
    # cam starts at tick -2; side delivers its first frame near tick 2 only
    samples = [frame("cam.rgb", k, t0 + at(k - 2)) for k in range(8)]
    samples += [frame("side.rgb", k, t0 + at(k + 2) + 4 * MS) for k in range(5)]
    samples.sort(key=lambda s: s.arrival_ns)
    rig = compile_rig({"name": "two", "fps": 30, "devices": {"cam": {"kind": "uvc", "streams": {"rgb": TINY}},
                                                            "side": {"kind": "uvc", "streams": {"rgb": TINY}}}})
    stop = START + t0 + at(5)
    rows, report = replay(rig, samples, stop)
    assert report.t0 == START + t0 + at(2)
    assert indices(rows, "head_left_rgb")[0] == 4 and indices(rows, "head_right_rgb")[0] == 0
    assert report.streams["cam.rgb"]["outside"] == 4, "frames before t0 are not part of the episode"
    check_rules(rig, samples, rows, report, stop)


def test_a_camera_silent_past_the_start_timeout_is_left_out_and_reported():
    config = AssemblyConfig(start_timeout_s=0.5)
    samples = [frame("cam.rgb", k, 5 * MS + at(k)) for k in range(60)]
    samples += [frame("side.rgb", k, SECOND + at(k)) for k in range(20)]   # wakes up after 1 s
    samples.sort(key=lambda s: s.arrival_ns)
    rig = compile_rig({"name": "two", "fps": 30, "devices": {"cam": {"kind": "uvc", "streams": {"rgb": TINY}},
                                                            "side": {"kind": "uvc", "streams": {"rgb": TINY}}}})
    stop = START + at(55)
    rows, report = replay(rig, samples, stop, config)
    assert rows.keys == ["head_left_rgb"] and report.missing_streams == ["side.rgb"]
    assert report.t0 == START + 5 * MS, "once the timeout passed, t0 is the first frame of the rest"
    assert report.streams["side.rgb"] == {"received": 20, "excluded": 20}
    assert report.drop_stats()["missing_streams"] == ["side.rgb"]
    assert [v["status.head_right_rgb"] for v in rows.values] == ["disconnected"] * len(rows.values)
    check_rules(rig, samples, rows, report, stop, config)


def test_depth_follows_its_master_frame_by_frame():
    t0 = 10 * MS
    rig = compile_rig({"name": "d435", "fps": 30, "devices": {"cam": {"kind": "d435",
                                                                     "streams": {"rgb": TINY, "depth": TINY}}}})
    rgb = [Sample("cam.rgb", START + t0 + at(k), START + t0 + at(k) + 2 * MS, Frame("cam.rgb", k), START + 77 + k)
           for k in range(6)]
    # depth of frames 0..5 stamped like their colour frame, but frame 3's depth is lost
    depth = [Sample("cam.depth", START + t0 + at(k), START + t0 + at(k) + 9 * MS, Frame("cam.depth", k))
             for k in range(6) if k != 3]
    samples = sorted(rgb + depth, key=lambda s: s.arrival_ns)
    stop = START + t0 + at(5)
    rows, report = replay(rig, samples, stop)
    assert indices(rows, "d435_depth") == [0, 1, 2, 2, 4, 5]
    assert [v["depth_dup"] for v in rows.values] == [0, 0, 0, 1, 0, 0]
    assert [v["raw_hw_ns"] for v in rows.values] == [START + 77 + k for k in range(6)]
    check_rules(rig, samples, rows, report, stop)


def test_a_sample_handed_over_after_its_row_was_built_is_restamped_and_counted():
    """Live: a starved thread hands a sample over after its row was built. It cannot be
    in that row any more; it is counted as arriving then, and the books still balance."""
    rows = Rows()
    assembler = Assembler(UVC, rows, start_ns=START)
    for k in range(4):
        assembler.push(frame("cam.rgb", k, 10 * MS + at(k)))
    assembler.advance(START + 10 * MS + at(2) + 160 * MS)       # rows 0..2 are built
    assembler.push(frame("cam.rgb", 9, 10 * MS + at(2) + 5 * MS))    # in time for row 2, by its stamps
    report = assembler.finish(START + 10 * MS + at(3))
    assert indices(rows, "head_left_rgb") == [0, 1, 2, 3]
    c = report.streams["cam.rgb"]
    assert c["restamped"] == 1 and c["late"] == 1 and c["received"] == 5 == c["used"] + c["late"]


def test_samples_that_arrived_before_the_start_are_not_part_of_the_episode():
    samples = [frame("cam.rgb", k, -P + at(k)) for k in range(5)]   # frame 0 is stamped and arrives before
    samples.append(Sample("cam.rgb", START - MS, START + 3 * MS, Frame("cam.rgb", 99)))  # stamped before
    samples.sort(key=lambda s: s.arrival_ns)
    rows, report = replay(UVC, samples, START + at(3))
    assert report.streams["cam.rgb"] == {"received": 5, "used": 4, "outside": 1}
    assert 99 not in indices(rows, "head_left_rgb") and 0 not in indices(rows, "head_left_rgb")


def test_invalid_samples_are_dropped_with_a_reason():
    t0 = 10 * MS
    bad_force = {"force": np.array([1.0, np.nan, 0.0], np.float32)}
    samples = [frame("g.rgb", k, t0 + at(k)) for k in range(3)] + [
        Sample("g.left_force", START + t0, START + t0 + MS, bad_force),
        Sample("g.left_force", START + t0 + 1, START + t0 + MS, {"force": np.zeros(4, np.float32)}),
        Sample("g.rgb", START + t0 + 5, START + t0 + MS, np.zeros((8, 8, 3), np.uint8)),
        Sample("g.nope", START + t0, START + t0 + MS, None)]
    samples.sort(key=lambda s: s.arrival_ns)
    rows, report = replay(GRIP, samples, START + t0 + at(2))
    assert report.streams["g.left_force"] == {"received": 2, "invalid": 2}
    assert report.streams["g.rgb"]["invalid"] == 1
    reasons = report.invalid_examples
    assert "NaN" in reasons["g.left_force"][0] and "4 values" in reasons["g.left_force"][1]
    assert "8x8" in reasons["g.rgb"][0]
    assert report.drop_stats()["unknown_streams"] == {"g.nope": 1}
