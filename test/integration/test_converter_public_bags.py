"""The converter on real bags recorded by other people (shared/bags, see its README)."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from egorec_ros.codecs.lazy_frame import frame_array
from egorec_ros.bags.bagfile import ROS1, ROSBAG2_MCAP, ROSBAG2_SQLITE3, open_bag
from egorec_ros.converter.clocks import DEFAULT_POLICY, ClockPolicy
from egorec_ros.bags.errors import BagError
from egorec_ros.messages.errors import FrameError
from egorec_ros.converter.plan import plan_topics
from egorec_ros.converter.report import ReadReport
from egorec_ros.converter.samples import iter_samples
from egorec_ros.rig.compile import compile_rig
from egorec_ros.rig.kinds import StreamKind
from egorec_ros.rig.model import StreamSpec
from helpers.bags import BAGS, requires_public_bags

pytestmark = requires_public_bags


TINY_SVO = ("tiny_svo.bag", "tiny_svo_rosbag2_sqlite3", "tiny_svo_rosbag2_mcap")
TINY_SVO_RIG = compile_rig({"devices": {"cam": {"kind": "s80m", "role": "ego", "streams": {
    "left": {"topic": "/camera/image_raw", "width": 752, "height": 480},
    "imu": {"topic": "/imu/data"},
    "slam": {"topic": "/Rig"}}}}})


def stream(sid: str, kind: StreamKind, topic: str, columns: dict | None = None, **source) -> StreamSpec:
    device, role = sid.split(".")
    return StreamSpec(id=sid, device=device, role=role, kind=kind, topic=topic, columns=columns or {},
                      source=source)


def read(name: str | Path, streams, report: ReadReport | None = None, policy: ClockPolicy = DEFAULT_POLICY) -> list:
    with open_bag(BAGS / name) as bag:
        return list(iter_samples(bag, plan_topics(bag, streams), report=report, policy=policy))


@pytest.mark.parametrize("name, storage, topics", [
    ("tiny_svo.bag", ROS1, {"/camera/image_raw": ("sensor_msgs/msg/Image", 10),
                            "/camera/camera_info": ("sensor_msgs/msg/CameraInfo", 11),
                            "/imu/data": ("sensor_msgs/msg/Imu", 35), "/Rig": ("geometry_msgs/msg/PoseStamped", 42),
                            "/imu/magnetometer": ("geometry_msgs/msg/Vector3Stamped", 35),
                            "/rosout": ("rosgraph_msgs/msg/Log", 6)}),
    ("tiny_svo_rosbag2_sqlite3", ROSBAG2_SQLITE3, {"/camera/image_raw": ("sensor_msgs/msg/Image", 10),
                                                   "/imu/data": ("sensor_msgs/msg/Imu", 35)}),
    ("tiny_svo_rosbag2_mcap", ROSBAG2_MCAP, {"/Rig": ("geometry_msgs/msg/PoseStamped", 42)}),
    ("aruco_images.bag", ROS1, {"/raspicam_node/image/compressed": ("sensor_msgs/msg/CompressedImage", 1),
                                "/raspicam_node/camera_info": ("sensor_msgs/msg/CameraInfo", 15)}),
    ("file_compression", ROSBAG2_SQLITE3, {"/topic": ("std_msgs/msg/String", 383),
                                           "/rosout": ("rcl_interfaces/msg/Log", 392)}),
    ("wbag_sqlite3_5files", ROSBAG2_SQLITE3, {"AAA": ("std_msgs/msg/String", 804),
                                              "HHH": ("std_msgs/msg/String", 726)}),
    ("rosbag2parquet_array_msgs", ROSBAG2_MCAP, {"/one_shot/imu": ("sensor_msgs/msg/Imu", 1),
                                                 "/one_shot/joint_state": ("sensor_msgs/msg/JointState", 1)}),
    ("rosbags_rs_test_bag_mcap", ROSBAG2_MCAP, {"/test/sensor_msgs/image": ("sensor_msgs/msg/Image", 2),
                                                "/test/tf2_msgs/tf_message": ("tf2_msgs/msg/TFMessage", 2)}),
])
def test_every_public_bag_opens_lists_and_decodes(name, storage, topics):
    with open_bag(BAGS / name) as bag:
        assert bag.storage == storage
        for topic, (msgtype, count) in topics.items():
            info = bag.topics[topic]
            assert (info.msgtype, info.count, info.decodable) == (msgtype, count, True)
        n, last = 0, 0
        for raw in bag.messages():
            bag.decode(raw)                    # every message of every topic deserializes
            assert raw.log_ns >= last          # receive-time order across topics and files
            last, n = raw.log_ns, n + 1
        assert n == bag.message_count == sum(t.count for t in bag.topics.values())


def test_split_and_zstd_compressed_bags_iterate_all_messages():
    with open_bag(BAGS / "file_compression") as bag:        # 4 zstd-compressed sqlite3 files
        texts = [bag.decode(m).data for m in bag.messages(["/topic"])]
        assert len(texts) == 383 and bag.message_count == 775
    with open_bag(BAGS / "wbag_sqlite3_5files") as bag:     # 5 split files
        per_topic = {}
        for m in bag.messages():
            per_topic[m.topic] = per_topic.get(m.topic, 0) + 1
        assert sum(per_topic.values()) == 6074 == bag.message_count
        assert per_topic == {t: i.count for t, i in bag.topics.items()}


def test_tiny_svo_ros1_sqlite3_and_mcap_give_the_same_samples():
    runs = [read(name, TINY_SVO_RIG.streams.values()) for name in TINY_SVO]
    ros1, sqlite3, mcap = runs
    counts = {s: sum(x.stream == s for x in ros1) for s in ("cam.left", "cam.imu", "cam.slam")}
    assert counts == {"cam.left": 10, "cam.imu": 35, "cam.slam": 42}
    for other in (sqlite3, mcap):
        assert len(other) == len(ros1)
        for a, b in zip(ros1, other):
            assert (a.stream, a.stamp_ns, a.arrival_ns) == (b.stream, b.stamp_ns, b.arrival_ns)
            np.testing.assert_array_equal(frame_array(a.payload), frame_array(b.payload))
    first_frame = frame_array(next(s for s in ros1 if s.stream == "cam.left").payload)
    assert first_frame.shape == (480, 752) and first_frame.dtype == np.uint8 and first_frame.std() > 10
    imu = next(s for s in ros1 if s.stream == "cam.imu").payload
    assert imu.dtype == np.float32 and imu.shape == (6,) and -10.5 < imu[2] < -9.0     # gravity on z
    pose = next(s for s in ros1 if s.stream == "cam.slam")
    assert pose.payload.dtype == np.float64 and pose.payload[0] == pytest.approx(pose.stamp_ns / 1e9)
    assert np.linalg.norm(pose.payload[4:]) == pytest.approx(1.0, abs=1e-6)


def test_progress_is_reported_per_bag_in_messages():
    with open_bag(BAGS / "tiny_svo.bag") as bag:
        plan = plan_topics(bag, TINY_SVO_RIG.streams.values())
        calls: list[int] = []
        reached: list[int] = []
        samples = list(iter_samples(bag, plan, progress=lambda n, log_ns: (calls.append(n), reached.append(log_ns))))
        assert sum(calls) == 87 == len(samples) == sum(bag.topics[t].count for t in plan.topics)
        assert len(calls) == 2                        # batched, not one call per message
        assert reached[0] < reached[1] == max(s.arrival_ns for s in samples)     # with the bag time reached


def test_aruco_compressed_jpeg_decodes_to_1280x960():
    samples = read("aruco_images.bag", [stream("cam.rgb", StreamKind.VIDEO, "/raspicam_node/image/compressed")])
    assert len(samples) == 1
    pixels = frame_array(samples[0].payload)
    assert pixels.shape == (960, 1280, 3) and pixels.dtype == np.uint8 and 20 < pixels.mean() < 235


def test_rosbags_rs_invalid_image_payloads_give_the_clear_error():
    samples = read("rosbags_rs_test_bag_mcap", [
        stream("cam.rgb", StreamKind.VIDEO, "/test/sensor_msgs/image"),
        stream("cam2.rgb", StreamKind.VIDEO, "/test/sensor_msgs/compressed_image")])
    assert len(samples) == 4                    # mapping is lazy: the samples exist, decoding fails
    for s in samples:
        with pytest.raises(FrameError) as err:
            frame_array(s.payload)
        text = str(err.value)
        assert "rosbags_rs_test_bag_mcap" in text and "/test/sensor_msgs/" in text and "bag time" in text
    raw_error = next(str(pytest.raises(FrameError, frame_array, s.payload).value) for s in samples
                     if s.stream == "cam.rgb")
    assert "640x480 'rgb8'" in raw_error and "data has 30 bytes" in raw_error


def test_rosbags_rs_pose_force_and_tf_messages_map():
    # the synthetic bag's header stamps lag its bag time by 3 to 9 s, differently per topic
    samples = read("rosbags_rs_test_bag_mcap", policy=ClockPolicy(allow_mixed=True), streams=[
        stream("arm.force", StreamKind.LATEST, "/test/geometry_msgs/wrench_stamped", {"force": "f"}),
        stream("odo.slam", StreamKind.TRAJECTORY, "/test/nav_msgs/odometry"),
        stream("tf.slam", StreamKind.TRAJECTORY, "/test/tf2_msgs/tf_message", child_frame="child_frame"),
        stream("js.state", StreamKind.LATEST, "/test/sensor_msgs/joint_state", {"position": "p"})])
    by = {s.stream: s for s in samples}
    np.testing.assert_array_equal(by["arm.force"].payload["force"], np.float32([10000, 5000, 2000]))  # N -> mN
    np.testing.assert_array_equal(by["odo.slam"].payload[1:], [1, 2, 0, 0, 0, 0, 1])
    np.testing.assert_array_equal(by["tf.slam"].payload[1:], [1, 2, 3, 0, 0, 0, 1])
    assert by["tf.slam"].payload[0] == pytest.approx(by["tf.slam"].stamp_ns / 1e9)
    np.testing.assert_allclose(by["js.state"].payload["effort"], [1, 2, 3])


def test_array_msgs_imu_and_joint_state_values():
    report = ReadReport("array_msgs")
    samples = read("rosbag2parquet_array_msgs", [
        stream("s80.imu", StreamKind.IMU, "/one_shot/imu"),
        stream("arm.joints", StreamKind.LATEST, "/one_shot/joint_state",
               {"position": "observation.state", "velocity": "v", "effort": "e"})], report)
    by = {s.stream: s for s in samples}
    np.testing.assert_array_equal(by["s80.imu"].payload, np.float32([1, 2, 3, 0.1, 0.2, 0.3]))
    joints = by["arm.joints"].payload
    np.testing.assert_array_equal(joints["position"], np.float32([1.5, -0.5, 0.8]))
    np.testing.assert_array_equal(joints["velocity"], np.float32([0.1, 0.2, 0.3]))
    np.testing.assert_array_equal(joints["effort"], np.float32([10.1, 10.2, 10.3]))
    # their header stamps are zero: the receive time stamps them, and the report says so
    assert all(s.stamp_ns == s.arrival_ns for s in samples)
    assert sum("header stamps are zero" in n for n in report.notes) == 2


@pytest.mark.parametrize("folder", ["tiny_svo_rosbag2_mcap", "tiny_svo_rosbag2_sqlite3", "wbag_sqlite3_5files"])
def test_lone_storage_file_without_metadata_opens(tmp_path, folder):
    source = sorted((BAGS / folder).glob("*.mcap")) + sorted((BAGS / folder).glob("*.db3"))
    lone = tmp_path / source[0].name
    shutil.copyfile(source[0], lone)
    with open_bag(lone) as bag:
        assert bag.message_count == sum(1 for _ in bag.messages()) > 0
        assert all(t.decodable for t in bag.topics.values())
    if folder.startswith("tiny_svo"):
        assert [s.stamp_ns for s in read(lone, TINY_SVO_RIG.streams.values())] == \
            [s.stamp_ns for s in read(folder, TINY_SVO_RIG.streams.values())]
    folder_without_metadata = tmp_path / "just_one_file"
    folder_without_metadata.mkdir()
    shutil.copyfile(source[0], folder_without_metadata / source[0].name)
    with open_bag(folder_without_metadata) as bag:
        assert bag.message_count > 0


@pytest.mark.parametrize("name", ["tiny_svo.bag", "tiny_svo_rosbag2_mcap", "tiny_svo_rosbag2_sqlite3"])
def test_truncated_bag_gives_a_bag_error(tmp_path, name):
    source = BAGS / name
    if source.is_dir():
        source = next(p for p in source.iterdir() if p.suffix in (".mcap", ".db3"))
    cut = tmp_path / source.name
    cut.write_bytes(source.read_bytes()[: source.stat().st_size // 2])
    with pytest.raises(BagError) as err, open_bag(cut) as bag:
        list(iter_samples(bag, plan_topics(bag, TINY_SVO_RIG.streams.values())))
    text = str(err.value)
    assert str(cut) in text and ("reindex" in text or "recover" in text)
    assert sorted(p.name for p in tmp_path.iterdir()) == [cut.name]      # nothing left behind


def test_not_a_bag_and_missing_bag_give_bag_errors(tmp_path):
    junk = tmp_path / "notes.bag"
    junk.write_text("hello")
    with pytest.raises(BagError, match="not a ROS 1 bag, MCAP or sqlite3"):
        open_bag(junk)
    with pytest.raises(BagError, match="no such bag"):
        open_bag(tmp_path / "missing.mcap")
    renamed = tmp_path / "tiny.db3"
    shutil.copyfile(BAGS / "tiny_svo_rosbag2_mcap" / "tiny_svo_rosbag2_mcap.mcap", renamed)
    with pytest.raises(BagError, match="content is rosbag2/mcap but its name ends in '.db3'"):
        open_bag(renamed)
    ros1_named_oddly = tmp_path / "tiny.rosbag"
    shutil.copyfile(BAGS / "tiny_svo.bag", ros1_named_oddly)
    with open_bag(ros1_named_oddly) as bag:
        assert bag.storage == ROS1 and bag.message_count == 139
