"""A bag converts to the rows of recording the same samples through the assembler directly.

Simulated Appendix B devices (clean: no jitter or drops, so the bag holds exactly the
samples) are written as rosbag2 sqlite3, rosbag2 mcap and ROS 1 bags; `egorec convert`
must give the same data parquet, drop_stats and videos as ``record_samples`` of the
samples themselves. Both paths encode identical frames with identical settings, so the
(lossy) videos decode to the same pictures (see ``assert_same_videos``).
"""
from __future__ import annotations

import json

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from egorec_ros.codecs.probe import count_frames
from egorec_ros.bags.bagwrite import write_bag
from egorec_ros.recorder.replay import record_samples
from egorec_ros.rig.load import load_rig
from egorec_ros.store import TaskWriter
from egorec_ros.validate.validate import validate_task
from helpers.convert import START_NS, assert_same_videos, convert, data_table, sim_samples, small_rig, task_files

SECONDS = 3.0


@pytest.fixture(scope="module")
def direct(tmp_path_factory) -> tuple[list, Path]:
    """The samples, and the episode recorded from them by the assembler without any bag."""
    rig = small_rig()
    samples = sim_samples(rig, SECONDS, seed=7)
    root = tmp_path_factory.mktemp("direct") / "task"
    with TaskWriter(root, task_name="conv") as writer:
        # a whole bag: from the first sample to the last one received
        result, _ = record_samples(writer, rig, samples, start_ns=START_NS,
                                   stop_ns=max(s.arrival_ns for s in samples) + 1)
    assert result.rows > 80
    return samples, root


@pytest.mark.parametrize("storage, name", [("rosbag2/sqlite3", "sqlite3"), ("rosbag2/mcap", "mcap"),
                                           ("ros1", "ros1.bag")])
def test_bag_converts_to_the_rows_of_a_direct_recording(direct, tmp_path, storage, name):
    samples, direct_dir = direct
    bag = write_bag(tmp_path / name, samples, small_rig().streams.values(), storage=storage)
    convert([bag], tmp_path / "out")
    converted = tmp_path / "out" / "conv"
    assert data_table(converted).equals(data_table(direct_dir))
    rows = data_table(direct_dir).num_rows
    videos = sorted(converted.rglob("videos/**/*.mp4"))
    assert len(videos) == 5                  # stereo left/right/depth + two gripper cameras
    assert all(count_frames(v) == rows for v in videos)
    assert_same_videos(converted, direct_dir)
    row = pq.read_table(converted / "meta/episodes/chunk-000/episode-000.parquet").to_pylist()[0]
    direct_row = pq.read_table(direct_dir / "meta/episodes/chunk-000/episode-000.parquet").to_pylist()[0]
    stats = json.loads(row["drop_stats"])
    assert stats.pop("notes")[0].startswith("clock of ")      # the conversion's clock decisions, for reports
    assert stats == json.loads(direct_row["drop_stats"])
    assert row["created_at"] == pytest.approx(min(s.arrival_ns for s in samples) / 1e9)   # bag time, not now
    assert validate_task(converted) == []


def test_converting_the_same_bag_twice_gives_identical_files(direct, tmp_path):
    samples, _ = direct
    bag = write_bag(tmp_path / "bag", samples, small_rig().streams.values(), storage="rosbag2/mcap")
    convert([bag], tmp_path / "a")
    convert([bag], tmp_path / "b")
    assert task_files(tmp_path / "a" / "conv") == task_files(tmp_path / "b" / "conv")     # parquet, metadata
    assert_same_videos(tmp_path / "a" / "conv", tmp_path / "b" / "conv")


TELEOP_RIG = """\
name: teleop
devices:
  cam: {kind: uvc, streams: {rgb: {topic: /cam/image_raw, width: 320, height: 240}}}
  arm:
    kind: joint_state
    streams:
      state:  {topic: /arm/joint_states, dim: 7}
      action: {topic: /teleop/joint_command, dim: 7}
"""


def test_teleop_joint_states_become_the_state_and_action_columns(tmp_path):
    """A teleop stack publishes measured and commanded joints as sensor_msgs/JointState."""
    rig_path = tmp_path / "teleop.yaml"
    rig_path.write_text(TELEOP_RIG)
    rig = load_rig(rig_path)
    samples = sim_samples(rig, 2.0, seed=5)
    bag = write_bag(tmp_path / "teleop.bag", samples, rig.streams.values(), storage="ros1", compression="bz2")
    with TaskWriter(tmp_path / "direct", task_name="conv") as writer:
        record_samples(writer, rig, samples, start_ns=START_NS, stop_ns=max(s.arrival_ns for s in samples) + 1)
    done = convert([bag], tmp_path / "out", rig_args=["--rig", rig_path])
    converted = data_table(tmp_path / "out" / "conv")
    assert "/arm/joint_states" in TELEOP_RIG and "not mapped /arm/joint_states" not in done.stdout
    assert converted.equals(data_table(tmp_path / "direct"))
    assert {"observation.arm_position", "action"} <= set(converted.column_names)
    actions = [a for a in converted.column("action").to_pylist() if a]
    assert len(actions) >= converted.num_rows - 2 and all(len(a) == 7 for a in actions)
    assert validate_task(tmp_path / "out" / "conv") == []
