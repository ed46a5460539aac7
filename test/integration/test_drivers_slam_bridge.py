"""SLAM bridge end to end through a real subprocess printing ORB-SLAM lines: parsing,
sensor time from the rig's epoch, host stamps (given or read time), bad lines counted,
the process exiting = unplug (restarted with backoff), and a recorded valid task."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from helpers.drivers import Published, record, rig_with_camera, wait_for
from egorec_ros.drivers import clock
from egorec_ros.drivers.health import DISCONNECTED, OK
from egorec_ros.drivers.slam_bridge import SlamBridge, SlamConfig

FAKE = Path(__file__).parents[1] / "helpers" / "fake_slam.py"
TOPIC = "/ego/slam"


def bridge(tmp_path: Path, lines: list[str], publish: Published, then: str = "wait",
           epoch: str = "first_frame") -> SlamBridge:
    script = tmp_path / "lines.txt"
    script.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return SlamBridge(SlamConfig([sys.executable, str(FAKE), str(script), then], TOPIC, "ego_cam_optical", epoch),
                      publish)


def ns(stamp) -> int:
    return stamp.sec * 10**9 + stamp.nanosec


def test_lines_become_slam_poses_bit_exactly(tmp_path):
    published = Published()
    lines = ["ORB-SLAM3 Copyright (C) 2017-2020 Carlos Campos ...", "Camera Parameters:",
             "[1712.250000] XYZ:(0.125,-2.5,3e-3) Quat:(w=1.0,x=0.0,y=0.0,z=0.0) Host:(1800000000123456789)",
             "[1712.283333] XYZ:(0.5, 0.25, -1.75) Quat:(w=0.5,x=0.5,y=-0.5,z=0.5)",
             "[1712.3] XYZ:(1,2) Quat:(w=1,x=0,y=0,z=0)",                                # malformed
             "[1712.31] XYZ:(nan,0,0) Quat:(w=1,x=0,y=0,z=0)",                           # not finite
             "[1712.32] XYZ:(0,0,0) Quat:(w=2,x=0,y=0,z=0)",                             # not a rotation
             "[1700.0] XYZ:(0,0,0) Quat:(w=1,x=0,y=0,z=0)",                              # t went back
             "[1712.4] XYZ:(1,1,1) Quat:(w=0,x=1,y=0,z=0) Host:({mono})"]
    published = Published()
    b = bridge(tmp_path, lines, published)
    before = clock.now_ns()
    b.start()
    try:
        wait_for(lambda: published.count(TOPIC) == 3, "three poses")
        wait_for(lambda: b.health.bad.get("t_backwards"), "the counters")
    finally:
        b.stop()
    first, second, third = published.on(TOPIC)
    assert first.__msgtype__ == "egorec_ros/msg/SlamPose" and first.header.frame_id == "ego_cam_optical"
    assert first.sensor_time == 0.0 and second.sensor_time == 1712.283333 - 1712.25
    p, q = second.pose.position, second.pose.orientation
    assert (p.x, p.y, p.z, q.x, q.y, q.z, q.w) == (0.5, 0.25, -1.75, 0.5, -0.5, 0.5, 0.5)
    assert (first.pose.position.x, first.pose.position.y, first.pose.position.z) == (0.125, -2.5, 0.003)
    assert ns(first.header.stamp) == 1800000000123456789
    arrivals = [a for _, _, a in published.items]
    assert before <= ns(second.header.stamp) <= arrivals[1], "no Host: the read time"
    assert before <= ns(third.header.stamp) <= arrivals[2], "Host on the monotonic clock mapped to Unix"
    bad = b.health.bad
    assert (bad["malformed"], bad["not_finite"], bad["quat_norm"], bad["t_backwards"], bad["other_lines"]) == \
        (1, 1, 1, 1, 2)
    assert b.health.status == DISCONNECTED and b.process._proc is None


def test_epoch_from_the_device_keeps_t(tmp_path):
    published = Published()
    b = bridge(tmp_path, ["[5.5] XYZ:(0,0,0) Quat:(w=1,x=0,y=0,z=0)"], published, epoch="enter_press")
    b.start()
    try:
        wait_for(lambda: published.count() == 1, "a pose")
    finally:
        b.stop()
    assert published.on(TOPIC)[0].sensor_time == 5.5


def test_a_process_that_exits_is_restarted(tmp_path):
    published = Published()
    b = bridge(tmp_path, ["[1.0] XYZ:(0,0,0) Quat:(w=1,x=0,y=0,z=0)"], published, then="3")
    statuses = []
    b.health.on_status = lambda s, d: statuses.append((s, d))
    b.start()
    try:
        wait_for(lambda: published.count() >= 3, "three runs of the process")
    finally:
        b.stop()
    assert b.health.reconnects >= 2
    assert [s for s, _ in statuses[:4]] == [OK, DISCONNECTED, OK, DISCONNECTED]
    assert "exit code 3" in statuses[1][1]
    assert all(m.sensor_time == 0.0 for m in published.on(TOPIC)), "each run starts its own epoch"


def test_a_missing_program_is_retried_with_backoff(tmp_path):
    b = SlamBridge(SlamConfig([str(tmp_path / "no_such_slam")], TOPIC, "ego_cam_optical"), Published()).start()
    try:
        wait_for(lambda: len(b.loop.delays) >= 3, "three attempts")
    finally:
        b.stop()
    assert b.loop.delays[:3] == [0.2, 0.4, 0.8]
    assert b.health.status == DISCONNECTED and b.health.reconnects == 0


def test_recorded_poses_make_a_valid_task(tmp_path):
    lines = []
    for k in range(30):
        lines += [f"[{100 + k / 30:.6f}] XYZ:({k * 0.01},0,0) Quat:(w=1,x=0,y=0,z=0) Host:({{mono}})", "SLEEP 0.03"]
    published = Published()
    b = bridge(tmp_path, lines, published)
    b.start()
    try:
        wait_for(lambda: published.count() == 30, "thirty poses")
    finally:
        b.stop()
    rig = rig_with_camera("drivers_ego_slam_rig")
    task, result = record(tmp_path, rig, published.items, camera="ego.rgb")
    from egorec_ros.dataset.task import open_task
    traj = open_task(task).episode(result.number.index).trajectory("observation.ego_slam_trajectory")
    points = traj[0] if isinstance(traj, tuple) else traj.points
    assert len(points) >= 25 and points[0][0] == pytest.approx(0.0) and np.all(np.diff(np.asarray(points)[:, 1]) > 0)
