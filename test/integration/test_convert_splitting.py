"""One bag, several episodes: split by gaps, explicit time ranges and marker topics.

Each episode must hold the rows a recorder would have written had it been started and
stopped at the cut points: ``record_samples`` of the samples received in that window.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from egorec_ros.bags.bagwrite import write_bag
from egorec_ros.recorder.replay import record_samples
from egorec_ros.store import TaskWriter
from egorec_ros.validate.validate import validate_task
from helpers.convert import START_NS, convert, data_table, sim_samples, small_rig

S = 1_000_000_000
HORIZON = 155_000_000             # latency budget + finalisation margin (AssemblyConfig defaults)
SECONDS = 3.0


@pytest.fixture(scope="module")
def samples():
    return sim_samples(small_rig(), SECONDS, seed=11)


@pytest.fixture(scope="module")
def marked_bag(tmp_path_factory, samples) -> Path:
    """Bool flag /recording: on 0.4-1.3 s and 1.9 s to the end; String /events: start at 0.2 s,
    stop at 1.0 s, a word that is neither, start at 2.1 s, stop at 2.6 s."""
    markers = {"/recording": [(START_NS + 4 * S // 10, True), (START_NS + 13 * S // 10, False),
                              (START_NS + 19 * S // 10, True)],
               "/events": [(START_NS + 2 * S // 10, "start"), (START_NS + S, "STOP"),
                           (START_NS + 15 * S // 10, "calibrating"), (START_NS + 21 * S // 10, " Start"),
                           (START_NS + 26 * S // 10, "stop")]}
    return write_bag(tmp_path_factory.mktemp("marked") / "bag", samples, small_rig().streams.values(),
                     storage="rosbag2/sqlite3", markers=markers)


def recorded(samples, tmp_path: Path, start_ns: int, stop_ns: int, *, received_from: int | None = None,
             received_before: int | None = None):
    """The data table a recorder gets from the samples received in [received_from, received_before)."""
    chosen = [s for s in samples if (received_from is None or s.arrival_ns >= received_from)
              and (received_before is None or s.arrival_ns < received_before)]
    root = tmp_path / f"direct-{start_ns}"
    with TaskWriter(root) as writer:
        result, _ = record_samples(writer, small_rig(), chosen, start_ns=start_ns, stop_ns=stop_ns)
    return data_table(root)


def assert_episodes(task_dir: Path, expected: list) -> None:
    assert validate_task(task_dir) == []
    for n, table in enumerate(expected, start=1):
        got = data_table(task_dir, n)
        assert got.num_rows == table.num_rows
        assert got.drop_columns("episode_index").equals(table.drop_columns("episode_index")), f"episode {n}"
    assert not (task_dir / "data/chunk-000" / f"episode-{len(expected):03d}.parquet").exists()


def cut(samples, tmp_path, start_ns: int, stop_ns: int):
    """What a recorder started at start_ns and stopped at stop_ns records from the bag's samples."""
    return recorded(samples, tmp_path, start_ns, stop_ns, received_from=start_ns,
                    received_before=stop_ns + HORIZON)


def test_split_by_time_ranges(tmp_path, samples, marked_bag):
    bag_start = min(s.arrival_ns for s in samples)
    convert([marked_bag], tmp_path, "--range", "0.5", "1.5", "--range", "2", "2.8")
    expected = [cut(samples, tmp_path, bag_start + a, bag_start + b)
                for a, b in ((S // 2, 3 * S // 2), (2 * S, 28 * S // 10))]
    assert [t.num_rows for t in expected] == [30, 24]
    assert_episodes(tmp_path / "conv", expected)


def test_split_by_bool_recording_flag(tmp_path, samples, marked_bag):
    done = convert([marked_bag], tmp_path, "--marker", "/recording")
    end = max(s.arrival_ns for s in samples) + 1          # the second episode is still open at the bag's end
    expected = [cut(samples, tmp_path, START_NS + 4 * S // 10, START_NS + 13 * S // 10),
                cut(samples, tmp_path, START_NS + 19 * S // 10, end)]
    assert_episodes(tmp_path / "conv", expected)
    assert "no stop before the bag ended" in done.stdout


def test_split_by_string_start_stop_events(tmp_path, samples, marked_bag):
    convert([marked_bag], tmp_path, "--marker", "/events")
    expected = [cut(samples, tmp_path, START_NS + 2 * S // 10, START_NS + S),
                cut(samples, tmp_path, START_NS + 21 * S // 10, START_NS + 26 * S // 10)]
    assert_episodes(tmp_path / "conv", expected)


def test_split_by_gap(tmp_path):
    """Two recordings 2.5 s apart in one bag: a gap of more than 1 s between them."""
    rig = small_rig()
    parts = [sim_samples(rig, 1.2, seed=1), sim_samples(rig, 1.0, seed=2, start_ns=START_NS + 37 * S // 10)]
    bag = write_bag(tmp_path / "gap.bag", sorted(parts[0] + parts[1], key=lambda s: s.arrival_ns),
                    rig.streams.values(), storage="ros1")
    done = convert([bag], tmp_path, "--gap", "1.0")
    expected = [recorded(p, tmp_path, p[0].stamp_ns, max(s.arrival_ns for s in p) + 1) for p in parts]
    assert_episodes(tmp_path / "conv", expected)
    assert done.stdout.count("gap > 1 s") >= 2


def test_marker_topic_that_is_not_a_marker_is_refused(tmp_path, marked_bag):
    done = convert([marked_bag], tmp_path, "--marker", "/ego/imu", expect=1)
    assert "marker topic /ego/imu carries sensor_msgs/msg/Imu" in done.stderr
    assert not (tmp_path / "conv").exists()
