"""Episode windows: whole bag, gaps, explicit ranges, Bool and String markers."""
from __future__ import annotations

import numpy as np
import pytest

from egorec_ros.assembly.sample import Sample
from egorec_ros.bags.bagfile import open_bag
from egorec_ros.bags.bagwrite import write_bag
from egorec_ros.messages.errors import StreamMappingError
from egorec_ros.converter.plan import plan_topics
from egorec_ros.converter.samples import iter_samples
from egorec_ros.converter.split import (
    EpisodeWindow,
    split_by_gap,
    split_by_marker,
    split_by_ranges,
    whole_bag,
)
from egorec_ros.rig.kinds import StreamKind
from egorec_ros.rig.model import StreamSpec

S = 1_000_000_000
T0 = 1_700_000_000 * S
IMU = StreamSpec(id="s.imu", device="s", role="imu", kind=StreamKind.IMU, topic="/imu")
GRIP = StreamSpec(id="g.state", device="g", role="state", kind=StreamKind.LATEST, topic="/state",
                  columns={"state": "observation.gripper_state"})
# IMU at 10 Hz over [0, 1] s and [4, 5] s, gripper state at 2 Hz over [0, 2] s: quiet from 2 s to 4 s
IMU_TIMES = [T0 + i * S // 10 for i in range(11)] + [T0 + 4 * S + i * S // 10 for i in range(11)]
GRIP_TIMES = [T0 + i * S // 2 for i in range(5)]


@pytest.fixture(scope="module")
def bag_path(tmp_path_factory):
    samples = [Sample(IMU.id, t, t, np.zeros(6, np.float32)) for t in IMU_TIMES]
    samples += [Sample(GRIP.id, t, t, {"state": np.zeros(3, np.float32)}) for t in GRIP_TIMES]
    markers = {
        "/recording": [(T0 + S // 5, True), (T0 + S // 2, True), (T0 + 3 * S // 2, False),
                       (T0 + 4 * S + S // 5, True)],                      # open at the end
        "/events": [(T0 + S // 10, "stop"), (T0 + 3 * S // 10, " START "), (T0 + 4 * S // 10, "note"),
                    (T0 + 7 * S // 10, "Stop"), (T0 + 42 * S // 10, "begin"), (T0 + 46 * S // 10, "end")],
    }
    root = tmp_path_factory.mktemp("split")
    return write_bag(root / "episodes.mcap", sorted(samples, key=lambda s: s.arrival_ns), [IMU, GRIP],
                     storage="rosbag2/mcap", markers=markers)


def spans(windows: list[EpisodeWindow]) -> list[tuple[float, float]]:
    return [((w.start_ns - T0) / S, (w.end_ns - T0) / S) for w in windows]


def test_whole_bag_is_one_window(bag_path):
    with open_bag(bag_path) as bag:
        (w,) = whole_bag(bag)
        assert (w.start_ns, w.end_ns) == (T0, T0 + 5 * S + 1)


def test_split_by_gap_cuts_where_no_mapped_topic_speaks(bag_path):
    with open_bag(bag_path) as bag:
        assert spans(split_by_gap(bag, ["/imu", "/state"], 1.5)) == [(0, 2 + 1e-9), (4, 5 + 1e-9)]
        assert spans(split_by_gap(bag, ["/imu"], 1.5)) == [(0, 1 + 1e-9), (4, 5 + 1e-9)]
        assert len(split_by_gap(bag, ["/imu", "/state"], 2.5)) == 1
        assert len(split_by_gap(bag, ["/imu"], 0.05)) == 22              # every message its own episode


def test_split_by_ranges_relative_and_absolute(bag_path):
    with open_bag(bag_path) as bag:
        rel = split_by_ranges(bag, [[4, 4.5], [0.5, 1.0]])
        assert spans(rel) == [(0.5, 1.0), (4, 4.5)]                        # sorted by start
        epoch = split_by_ranges(bag, [[T0 / S + 0.5, T0 / S + 1.0]], origin="epoch")
        assert (epoch[0].start_ns, epoch[0].end_ns) == (rel[0].start_ns, rel[0].end_ns)
        assert spans(split_by_ranges(bag, [[-3, 0.2], [4.9, 99]])) == [(0, 0.2), (4.9, 5 + 1e-9)]   # clipped
        with pytest.raises(ValueError, match="overlap"):
            split_by_ranges(bag, [[0, 2], [1, 3]])
        with pytest.raises(ValueError, match="ends before it starts"):
            split_by_ranges(bag, [[2, 1]])
        with pytest.raises(ValueError, match="outside the bag"):
            split_by_ranges(bag, [[10, 20]])
        with pytest.raises(ValueError, match="origin"):
            split_by_ranges(bag, [[0, 1]], origin="utc")


def test_bool_recording_flag(bag_path):
    with open_bag(bag_path) as bag:
        windows = split_by_marker(bag, "/recording")
        assert spans(windows) == [(0.2, 1.5), (4.2, 5 + 1e-9)]
        assert "no stop before the bag ended" in windows[1].reason


def test_string_start_stop_words(bag_path):
    with open_bag(bag_path) as bag:
        assert spans(split_by_marker(bag, "/events")) == [(0.3, 0.7)]    # stray stop and unknown words ignored
        custom = split_by_marker(bag, "/events", start_words=("begin", "start"), stop_words=("end", "stop"))
        assert spans(custom) == [(0.3, 0.7), (4.2, 4.6)]
        with pytest.raises(StreamMappingError, match="a marker is std_msgs/msg/Bool"):
            split_by_marker(bag, "/imu")
        with pytest.raises(StreamMappingError, match="not in the bag"):
            split_by_marker(bag, "/nope")


def test_samples_of_a_window_are_those_received_in_it(bag_path):
    with open_bag(bag_path) as bag:
        plan = plan_topics(bag, [IMU, GRIP])
        assert set(plan.topics) == {"/imu", "/state"}
        assert {t.topic for t in plan.unmapped} == {"/recording", "/events"}
        first, second = split_by_marker(bag, "/recording")
        got = [s.arrival_ns for s in iter_samples(bag, plan, first)]
        assert got == sorted(t for t in IMU_TIMES + GRIP_TIMES if first.start_ns <= t < first.end_ns)
        assert [s.stream for s in iter_samples(bag, plan, second)] == ["s.imu"] * 9         # 4.2 .. 5.0 s
