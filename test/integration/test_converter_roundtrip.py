"""Samples -> bag (every format) -> samples gives back the same streams, stamps and payloads."""
from __future__ import annotations

import numpy as np
import pytest

from egorec_ros.assembly.sample import Sample
from egorec_ros.codecs.lazy_frame import frame_array
from egorec_ros.bags.bagfile import open_bag
from egorec_ros.bags.bagwrite import write_bag
from egorec_ros.messages.payloads import images, poses
from egorec_ros.converter.plan import plan_topics
from egorec_ros.converter.samples import iter_samples
from egorec_ros.rig.kinds import StreamKind
from egorec_ros.rig.load import load_rig
from egorec_ros.rig.model import StreamSpec

RIG = load_rig("appendix_b")          # every stream kind: stereo, depth, IMU, SLAM, forces, matrices, gloves
JOINTS = StreamSpec(id="arm.joints", device="arm", role="joints", kind=StreamKind.LATEST, topic="/arm/joints",
                    columns={"position": "observation.state", "velocity": "v", "effort": "e"})
STREAMS = [*RIG.streams.values(), JOINTS]
T0 = 1_700_000_000_123_456_789
SHAPES = {"force": (3,), "matrix": (250, 250, 3), "state": (3,), "pressure": (16, 16), "imu_quat": (16, 4),
          "imu_valid": (16,), "hand_pose": (21, 3), "position": (7,), "velocity": (7,), "effort": (7,)}


def payload(spec: StreamSpec, rng: np.random.Generator):
    if spec.kind is StreamKind.VIDEO:
        return rng.integers(0, 256, (48, 64, 3), dtype=np.uint8)
    if spec.kind is StreamKind.DEPTH:
        return rng.integers(0, 65536, (48, 64), dtype=np.uint16)
    if spec.kind is StreamKind.IMU:
        return rng.normal(size=6).astype(np.float32)
    if spec.kind is StreamKind.TRAJECTORY:
        return rng.normal(size=8)
    return {f: rng.normal(size=SHAPES[f]).astype(np.float32) for f in spec.columns}


def make_samples(streams, n: int = 3, seed: int = 0) -> list[Sample]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        for j, spec in enumerate(streams):
            stamp = T0 + i * 33_333_333 + j * 1_000
            out.append(Sample(spec.id, stamp, stamp + 2_000_000 + j, payload(spec, rng)))
    return sorted(out, key=lambda s: s.arrival_ns)


def read_back(path, streams) -> list[Sample]:
    with open_bag(path) as bag:
        return list(iter_samples(bag, plan_topics(bag, streams)))


def assert_same_payload(a, b):
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            assert_same_payload(a[k], b[k])
        return
    a, b = frame_array(a), frame_array(b)
    assert (a.dtype, a.shape) == (b.dtype, b.shape)
    np.testing.assert_array_equal(a, b)


def assert_round_trip(sent: list[Sample], back: list[Sample]):
    assert len(back) == len(sent)
    for a, b in zip(sent, back):
        assert (b.stream, b.stamp_ns, b.arrival_ns) == (a.stream, a.stamp_ns, a.arrival_ns)
        assert_same_payload(a.payload, b.payload)


@pytest.mark.parametrize("storage, compression, name", [
    ("rosbag2/sqlite3", None, "sqlite3"),
    ("rosbag2/sqlite3", "file", "sqlite3_zstd_file"),
    ("rosbag2/sqlite3", "message", "sqlite3_zstd_message"),
    ("rosbag2/mcap", None, "mcap"),
    ("rosbag2/mcap", "storage", "mcap_zstd_chunks"),
    ("ros1", None, "plain.bag"),
    ("ros1", "lz4", "lz4.bag"),
    ("ros1", "bz2", "bz2.bag"),
])
def test_every_stream_kind_round_trips(tmp_path, storage, compression, name):
    sent = make_samples(STREAMS)
    path = write_bag(tmp_path / name, sent, STREAMS, storage=storage, compression=compression)
    assert_round_trip(sent, read_back(path, STREAMS))
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]       # no staging left behind


def test_jpeg_frames_round_trip_up_to_jpeg_loss(tmp_path):
    cam = RIG.streams["gripper_a.rgb"]
    yy, xx = np.mgrid[0:96, 0:128]
    frames = [np.stack([xx * 2 + i, yy * 2, xx + yy], -1).astype(np.uint8) for i in range(3)]
    sent = [Sample(cam.id, T0 + i * 10**7, T0 + i * 10**7 + 5, f) for i, f in enumerate(frames)]
    path = write_bag(tmp_path / "jpeg", sent, [cam], storage="rosbag2/mcap", msgtypes={cam.id: images.COMPRESSED_IMAGE})
    with open_bag(path) as bag:
        assert bag.topics[cam.topic].msgtype == images.COMPRESSED_IMAGE
    back = read_back(path, [cam])
    assert [(s.stamp_ns, s.arrival_ns) for s in back] == [(s.stamp_ns, s.arrival_ns) for s in sent]
    for a, b in zip(frames, back):
        decoded = frame_array(b.payload)
        assert decoded.shape == a.shape and np.abs(decoded.astype(int) - a).mean() < 2.0


@pytest.mark.parametrize("storage", ["rosbag2/sqlite3", "ros1"])
def test_trajectories_from_tf_odometry_and_pose_stamped(tmp_path, storage):
    def traj(sid, topic, **source):
        return StreamSpec(id=sid, device=sid.split(".")[0], role="slam", kind=StreamKind.TRAJECTORY,
                          topic=topic, source=source)
    left, right = traj("left.slam", "/tf", child_frame="left_tcp"), traj("right.slam", "/tf", child_frame="right_tcp")
    odom, pose = traj("odom.slam", "/odom", child_frame="base"), traj("pose.slam", "/pose")
    streams = [left, right, odom, pose]
    rng = np.random.default_rng(3)
    sent = []
    for i in range(4):
        for j, s in enumerate(streams):
            stamp = T0 + i * 10**8 + j
            point = rng.normal(size=8)
            point[0] = stamp / 1e9           # these messages carry t only in their header stamp
            sent.append(Sample(s.id, stamp, stamp + 1000, point))
    msgtypes = {left.id: poses.TF_MESSAGE, right.id: poses.TF_MESSAGE, odom.id: poses.ODOMETRY,
                pose.id: poses.POSE_STAMPED}
    path = write_bag(tmp_path / ("t.bag" if storage == "ros1" else "t"), sent, streams, storage=storage,
                     msgtypes=msgtypes)
    back = read_back(path, streams)
    assert [(s.stream, s.stamp_ns) for s in back] == [(s.stream, s.stamp_ns) for s in sent]
    for a, b in zip(sent, back):
        np.testing.assert_allclose(b.payload, a.payload, rtol=0, atol=1e-9)


def test_ble_glove_without_imu_fields(tmp_path):
    glove = StreamSpec(id="g.pressure", device="g", role="pressure", kind=StreamKind.LATEST, topic="/g",
                       columns={"pressure": "observation.left_glove"})
    sent = [Sample(glove.id, T0 + i, T0 + i, {"pressure": np.full((16, 16), i, np.float32)}) for i in range(2)]
    assert_round_trip(sent, read_back(write_bag(tmp_path / "g", sent, [glove]), [glove]))


def test_write_failures_leave_nothing_and_never_overwrite(tmp_path):
    sent = make_samples(STREAMS, n=1)
    stray = Sample("nobody.rgb", T0, T0, np.zeros((4, 4, 3), np.uint8))
    with pytest.raises(ValueError, match="nobody.rgb"):
        write_bag(tmp_path / "bad", [*sent, stray], STREAMS)
    assert list(tmp_path.iterdir()) == []
    path = write_bag(tmp_path / "good.bag", sent, STREAMS, storage="ros1")
    with pytest.raises(FileExistsError):
        write_bag(path, sent, STREAMS, storage="ros1")
