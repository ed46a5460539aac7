"""Simulated devices: payload contracts (DEVICE_KINDS), and payloads that look like sensor data."""
from __future__ import annotations

import itertools
import zlib
from collections import defaultdict
from dataclasses import replace

import numpy as np
import pytest

from egorec_ros.assembly.sample import Sample
from egorec_ros.codecs.force_matrix import encode_row_diff
from egorec_ros.rig.compile import compile_rig
from egorec_ros.rig.kinds import DEVICE_KINDS, StreamKind
from egorec_ros.rig.load import load_rig
from egorec_ros.rig.model import Rig
from egorec_ros.sim.flaws import CLEAN, DEFAULT
from egorec_ros.sim.replay import simulate

GLOVES = compile_rig({"name": "gloves", "devices": {
    "lg": {"kind": "ble_glove", "streams": {"pressure": {}}},
    "rg": {"kind": "usb_glove", "streams": {"pressure": {}, "hand_pose": {}}}}})


def by_stream(samples) -> dict[str, list[Sample]]:
    out: dict[str, list[Sample]] = defaultdict(list)
    for s in samples:
        out[s.stream].append(s)
    return out


def first_of_each(rig: Rig, **kw) -> dict[str, Sample]:
    out: dict[str, Sample] = {}
    for s in simulate(rig, 2.0, **kw):
        out.setdefault(s.stream, s)
        if len(out) == len(rig.streams):
            return out
    raise AssertionError(f"streams without samples: {set(rig.streams) - set(out)}")


@pytest.mark.parametrize("rig", [load_rig(n) for n in ("appendix_b", "d435_single", "uvc_pair", "gripper_single")]
                         + [GLOVES], ids=lambda r: r.name)
def test_payloads_follow_the_declared_contract_at_rig_sizes(rig):
    kinds = {d.id: d.kind for d in rig.devices}
    for sid, sample in first_of_each(rig).items():
        spec = rig.streams[sid]
        p = sample.payload
        if spec.kind is StreamKind.VIDEO:
            assert p.dtype == np.uint8 and p.shape == (spec.source["height"], spec.source["width"], 3), sid
        elif spec.kind is StreamKind.DEPTH:
            assert p.dtype == np.uint16 and p.shape == (spec.source["height"], spec.source["width"]), sid
        elif spec.kind is StreamKind.IMU:
            assert p.dtype == np.float32 and p.shape == (6,), sid
        elif spec.kind is StreamKind.TRAJECTORY:
            assert p.dtype == np.float64 and p.shape == (8,), sid
        else:
            fields = DEVICE_KINDS[kinds[spec.device]][spec.role].fields
            assert set(p) == {f.name for f in fields}, sid
            for f in fields:
                assert p[f.name].shape == f.shape and p[f.name].dtype == np.dtype(f.dtype), (sid, f.name)
                assert np.all(np.isfinite(p[f.name])), (sid, f.name)


def test_frames_move_but_stay_close_like_video():
    frames = [s.payload for s in itertools.islice(simulate(load_rig("uvc_pair"), 2.0, sizes=(640, 480)), 60)
              if s.stream == "cam0.rgb"]
    diffs = [np.abs(a.astype(np.int16) - b).mean() for a, b in zip(frames, frames[1:])]
    noise = np.random.default_rng(0).integers(0, 256, (2,) + frames[0].shape)
    random_diff = np.abs(noise[0] - noise[1]).mean()          # ~85 for uniform noise
    assert min(diffs) > 0.5, "every frame differs from the previous one"
    assert max(diffs) < 0.15 * random_diff, "consecutive frames are close, as on real video"
    assert np.abs(frames[-1].astype(np.int16) - frames[0]).mean() > 2 * np.mean(diffs), "the scene moves on"
    neighbours = np.abs(np.diff(frames[0].astype(np.int16), axis=1)).mean()
    assert neighbours < 0.15 * random_diff, "a scene, not noise: neighbouring pixels are alike"


def test_stereo_right_is_left_shifted_by_the_wall_disparity():
    rig = load_rig("appendix_b")
    first = first_of_each(rig, flaws=CLEAN, sizes=(640, 400))
    left = first["ego.left"].payload.astype(np.int16)
    right = first["ego.right"].payload.astype(np.int16)
    errors = [np.abs(right[:, 40:560] - left[:, 40 + d:560 + d]).mean() for d in range(40)]
    cal = rig.devices[0].calibration
    focal = cal["left_camera"]["intrinsic"][0] * 640 / cal["resolution"][0]
    expected = focal * cal["baseline"] / 2.5                  # the wall of the scene is at 2.5 m
    assert abs(int(np.argmin(errors)) - expected) <= 1.0
    assert min(errors) < 0.3 * errors[0]


def test_depth_has_near_objects_before_a_far_wall_and_holes_at_their_borders():
    rig = load_rig("d435_single")
    clean = [s.payload for s in itertools.islice(simulate(rig, 2.0, flaws=CLEAN), 40) if s.stream == "head.depth"]
    holed = [s.payload for s in itertools.islice(simulate(rig, 2.0, flaws=replace(DEFAULT, drop_prob=0.0)), 40)
             if s.stream == "head.depth"]
    assert len(clean) >= 10 and len(clean) == len(holed)
    for c, h in zip(clean, holed):
        assert not np.any(c == 0), "CLEAN has no holes"
        assert np.mean(np.abs(c.astype(int) - 2500) < 40) > 0.4, "mostly the wall at 2.5 m"
        assert np.any(c < 1900), "objects in front of the wall"
        assert np.array_equal(h[h > 0], c[h > 0]), "holes only remove depth"
        holes = (h == 0) & (c > 0)
        assert 0.005 < holes.mean() < 0.1
        edge = np.zeros_like(holes)
        edge[:, 1:] |= np.abs(np.diff(c.astype(np.int32), axis=1)) > 200
        near_edge = np.zeros_like(edge)
        for dx in range(-30, 31):                              # within 30 px of a depth step
            near_edge |= np.roll(edge, dx, axis=1)
        density_near, density_far = holes[near_edge].mean(), holes[~near_edge].mean()
        assert density_near > 4 * density_far, "occlusion holes hug the object borders"


def test_quaternions_are_unit_and_turn():
    streams = by_stream(simulate(load_rig("appendix_b"), 4.0, sizes=(160, 120)))
    for sid in ("ego.slam", "gripper_a.slam"):
        q = np.array([s.payload[4:] for s in streams[sid]])
        assert np.abs(np.linalg.norm(q, axis=1) - 1).max() < 1e-12
        assert abs(np.dot(q[0], q[-1])) < 1 - 1e-5, f"{sid} turns"
        xyz = np.array([s.payload[1:4] for s in streams[sid]])
        assert np.linalg.norm(np.diff(xyz, axis=0), axis=1).max() < 0.05, "smooth: < 5 cm per frame"
    quats = np.array([s.payload["imu_quat"] for s in streams["left_glove.pressure"]])
    assert quats.dtype == np.float32
    assert np.abs(np.linalg.norm(quats, axis=2) - 1).max() < 1e-5
    assert np.abs(quats[0] - quats[-1]).max() > 0.05, "glove IMUs move"


def test_imu_senses_gravity_and_rotation():
    streams = by_stream(simulate(load_rig("appendix_b"), 4.0, sizes=(160, 120)))
    imu = np.array([s.payload for s in streams["ego.imu"]])
    assert np.linalg.norm(imu[:, :3], axis=1) == pytest.approx(9.81, abs=0.6)
    gyro = imu[:, 3:]
    # the gyro integrates to the rotation the SLAM trajectory reports
    q = np.array([s.payload[4:] for s in streams["ego.slam"]])
    slam_angle = 2 * np.arccos(np.clip(abs(np.dot(q[0], q[-1])), 0, 1))
    assert slam_angle > 0.01
    assert np.linalg.norm(gyro.sum(axis=0) * 0.005) == pytest.approx(slam_angle, rel=0.35, abs=0.01)


def test_gripper_streams_follow_one_grip_cycle():
    streams = by_stream(simulate(load_rig("gripper_single"), 12.0, sizes=(160, 120), flaws=CLEAN))
    state = np.array([s.payload["state"] for s in streams["gripper.state"]])
    assert np.all((state[:, 0] >= 0) & (state[:, 0] <= 100)) and set(np.unique(state[:, 1])) == {0.0, 1.0}
    force_t = np.array([s.stamp_ns for s in streams["gripper.left_force"]])
    force_z = np.array([s.payload["force"][2] for s in streams["gripper.left_force"]])
    nearest = np.abs(force_t[None, :] - np.array([s.stamp_ns for s in streams["gripper.state"]])[:, None]).argmin(1)
    assert np.corrcoef(state[:, 2], force_z[nearest])[0, 1] > 0.95
    assert np.all(np.abs(force_z[nearest][state[:, 1] == 0]) < 100), "no squeeze while open"

    matrices = np.array([s.payload["matrix"] for s in streams["gripper.left_force_matrix"]])
    touching = np.abs(matrices).reshape(len(matrices), -1).max(axis=1) > 0
    assert touching.any() and not touching.all()
    assert np.array_equal(touching, state[:len(touching), 1] == 1) or abs(
        touching.mean() - state[:, 1].mean()) < 0.05, "contact patches while gripped"
    contact = matrices[touching]
    assert (contact == 0).mean() > 0.7, "zero background with a deadband"
    assert np.abs(contact[contact != 0]).min() >= 2.0
    assert contact[..., 2].max() < 3276, "fits row_diff_quantized at scale 10"
    encoded = encode_row_diff(contact[:10], scale=10).tobytes()
    noise = encode_row_diff(np.random.default_rng(0).normal(0, contact.std(), contact[:10].shape), 10).tobytes()
    ratio, noise_ratio = (len(b) / len(zlib.compress(b, 6)) for b in (encoded, noise))
    assert ratio > 5 and ratio > 4 * noise_ratio, "compresses like tactile data, not like noise"


def test_glove_pressure_has_blobs_and_the_hand_closes():
    streams = by_stream(simulate(GLOVES, 10.0))
    pressure = np.array([s.payload["pressure"] for s in streams["rg.pressure"]])
    assert pressure.min() >= 0 and pressure.max() <= 4095
    zeros = (pressure == 0).mean(axis=(1, 2))
    assert zeros.min() > 0.15 and np.median(zeros) > 0.5, "blobs on a zero background (deadband)"
    assert pressure.max(axis=(1, 2)).max() > 1000 and pressure.max(axis=(1, 2)).min() == 0, "grasp and release"
    valid = np.array([s.payload["imu_valid"] for s in streams["rg.pressure"]])
    assert set(np.unique(valid)) <= {0.0, 1.0} and valid.mean() > 0.95
    pose = np.array([s.payload["hand_pose"] for s in streams["rg.hand_pose"]])
    tips = pose[:, 4::4]                                       # fingertips
    reach = np.linalg.norm(tips, axis=2).mean(axis=1)
    assert reach.max() - reach.min() > 0.03, "fingers curl and open"
    assert set(streams["lg.pressure"][0].payload) == {"pressure"}, "BLE gloves send pressure only"
