"""S80M/S80C driver end to end through a real subprocess pipe: a fake SDK writes the
big-endian records at 50 fps (with junk and a broken JPEG); JPEGs, IMU and depth are
checked bit-exactly, the 50 -> 30 fps decimation by clock buckets, IMU of dropped frames
carried into the next one, the SDK exiting (restarted), and a recorded valid task."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from helpers import fake_s80 as fake
from helpers.drivers import Published, record, rig_with_camera, wait_for
from egorec_ros.drivers.decimate import Decimator
from egorec_ros.drivers.health import DISCONNECTED, OK
from egorec_ros.drivers.s80 import S80, S80Config, S80Topics

FAKE = Path(fake.__file__)
TOPICS = S80Topics("/ego/left/image_raw", "/ego/right/image_raw", "/ego/imu", "/ego/depth/image_raw")


def s80(published: Published, n: int, depth: bool, corrupt: bool, then: str = "wait", live: bool = False) -> S80:
    command = [sys.executable, str(FAKE), str(n), "1" if depth else "0", "1" if corrupt else "0", then]
    command += ["live"] if live else []
    return S80(S80Config(command, TOPICS, with_depth=depth), published)


def ns(stamp) -> int:
    return stamp.sec * 10**9 + stamp.nanosec


def test_decimation_keeps_the_first_frame_of_each_bucket():
    d = Decimator(30.0)
    kept = [k for k in range(100) if d.keep(k * 20_000_000)]        # 2 s at 50 fps
    assert len(kept) == 60
    assert kept[:6] == [0, 2, 4, 5, 7, 9]                            # buckets 0, 1, 2, 3, 4, 5
    assert [t // 20_000_000 for t in (0,)] == [0] and not d.keep(99 * 20_000_000)


def test_records_decode_bit_exactly_with_decimation_and_imu_carry():
    published = Published()
    n = 40
    driver = s80(published, n, depth=True, corrupt=True).start()
    try:
        wait_for(lambda: driver.decoder.kept + driver.decoder.dropped == n - 1, "the records", timeout=60)
    finally:
        driver.stop()
    valid = [k for k in range(n) if k != fake.BROKEN]
    d = Decimator(30.0)
    kept = [k for k in valid if d.keep(fake.BASE_TS + k * fake.PERIOD_NS)]
    lefts = published.on(TOPICS.left)
    assert [bytes(m.data) for m in lefts] == [fake.jpeg(k) for k in kept]
    assert [bytes(m.data) for m in published.on(TOPICS.right)] == [fake.jpeg(k + 1000) for k in kept]
    assert all(m.format == "jpeg" for m in lefts)
    depths = published.on(TOPICS.depth)
    assert [d.encoding for d in depths] == ["16UC1"] * len(kept)
    for msg, k in zip(depths, kept):
        got = np.frombuffer(bytes(msg.data), "<u2").reshape(msg.height, msg.width)
        assert np.array_equal(got, fake.depth(k))
    left_stamps = [ns(m.header.stamp) for m in lefts]
    assert ns(depths[0].header.stamp) - left_stamps[0] == 2000
    assert ns(published.on(TOPICS.right)[0].header.stamp) - left_stamps[0] == 1000

    # every IMU sample of every record that arrived, once, in order, published with the
    # next kept frame; records after the last kept frame keep theirs pending
    imus = published.on(TOPICS.imu)
    last_kept = kept[-1]
    want = np.concatenate([fake.imu_rows(k) for k in valid if k <= last_kept])
    got = np.array([[m.linear_acceleration.x, m.linear_acceleration.y, m.linear_acceleration.z,
                     m.angular_velocity.x, m.angular_velocity.y, m.angular_velocity.z] for m in imus])
    assert np.array_equal(got, want[:, [4, 5, 6, 1, 2, 3]])
    # an IMU sample is stamped on the clock mapping of the frame it is published with
    imu_offsets = np.array([ns(m.header.stamp) for m in imus]) - want[:, 0].astype(np.int64)
    frame_of = np.searchsorted(np.array(kept), [k for k in valid if k <= last_kept for _ in range(fake.IMU_PER_FRAME)])
    frame_offsets = np.array(left_stamps) - (fake.BASE_TS + np.array(kept) * fake.PERIOD_NS)
    assert np.array_equal(imu_offsets, frame_offsets[frame_of])
    bad = driver.health.bad
    # the junk and the broken JPEG, plus false starts while resynchronising (how many
    # depends on how the pipe chunked the bytes)
    assert bad["jpeg_marker"] >= 2 and bad["resync_bytes"] > 0
    assert driver.decoder.dropped == (n - 1) - len(kept)
    assert set(bad) <= {"jpeg_marker", "jpeg_length", "imu_count", "resync_bytes"}


def test_the_sdk_exiting_is_an_unplug():
    published = Published()
    statuses = []
    driver = s80(published, 3, depth=False, corrupt=False, then="1")
    driver.health.on_status = lambda s, d: statuses.append(s)
    driver.start()
    try:
        wait_for(lambda: driver.health.reconnects >= 1 and len(published.on(TOPICS.left)) >= 4, "a restarted SDK")
    finally:
        driver.stop()
    assert statuses[:3] == [OK, DISCONNECTED, OK]
    assert driver.health.status == DISCONNECTED


def test_recorded_s80_output_makes_a_valid_task(tmp_path):
    published = Published()
    driver = s80(published, 45, depth=True, corrupt=False, live=True).start()
    try:
        wait_for(lambda: driver.decoder.kept + driver.decoder.dropped == 45, "the records", timeout=60)
    finally:
        driver.stop()
    rig = rig_with_camera("drivers_s80_rig")
    task, result = record(tmp_path, rig, published.items)
    from egorec_ros.dataset.task import open_task
    episode = open_task(task).episode(result.number.index)
    assert result.rows >= 20
    table = episode.read(["observation.imu", "imu_ts_ns"]).to_pydict()
    assert sum(len(x) for x in table["observation.imu"]) >= 4 * (result.rows - 2), "4 IMU samples a frame, 50 fps"
    assert driver.health.bad == {}
    assert [len(x) for x in table["observation.imu"]] == [len(x) for x in table["imu_ts_ns"]]
    assert "stereo_depth" in episode.video_keys
