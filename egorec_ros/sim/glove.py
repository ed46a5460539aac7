"""Simulated data gloves (USB and BLE): 16x16 pressure, 16 IMU quaternions, validity, hand pose.

One seeded grasp cycle drives everything, so the streams agree with each other:
when the hand closes, contact blobs appear on the pressure map (fingertips first,
then the palm), the finger IMUs rotate with the flexion and the hand-pose joints
curl. Pressure is raw sensor counts (0..4095) with a small deadband, like the
firmware output; hand pose is metres in the wrist frame, or in the ego SLAM world
frame when the rig says ``hand_pose: {frame: ego_slam_world}`` (placed by the hand's motion).
"""
from __future__ import annotations

import numpy as np

from egorec_ros.rig.kinds import DEVICE_KINDS
from egorec_ros.rig.model import Device
from egorec_ros.sim.motion import Motion, quat_from_rotvec, quat_mul, quat_rotate
from egorec_ros.sim.plan import Plan, one_clock, streams_by_role
from egorec_ros.sim.schedule import Output, Source

PRESSURE_DEADBAND = 40.0
HAND_POSE_LATENCY_MS = 10.0   # the pose solver runs on the host after the frame

# contact sites on the 16x16 map: (row, col, sigma in taxels, peak counts, closure at first touch)
_SITES = np.array([
    (1.5, 1.5, 0.9, 2600, 0.45), (1.0, 4.5, 0.9, 3000, 0.40), (1.0, 7.5, 0.9, 3100, 0.40),
    (1.0, 10.5, 0.9, 2800, 0.45), (1.5, 13.5, 0.8, 2200, 0.50),            # fingertips
    (5.0, 4.5, 1.0, 1400, 0.60), (5.0, 7.5, 1.0, 1500, 0.60), (5.0, 10.5, 1.0, 1300, 0.65),
    (11.5, 5.5, 1.4, 1800, 0.70), (11.5, 10.5, 1.4, 1600, 0.75),           # mid phalanges, palm
])
_ROWS, _COLS = np.mgrid[0:16, 0:16].astype(np.float64)
_BLOBS = np.exp(-((_ROWS - _SITES[:, 0, None, None]) ** 2 + (_COLS - _SITES[:, 1, None, None]) ** 2)
                / (2.0 * _SITES[:, 2, None, None] ** 2)) * _SITES[:, 3, None, None]

# hand skeleton: knuckle (MCP) positions (m, x toward the thumb side, y along the fingers,
# z out of the back of the hand), phalanx lengths, max flexion per joint and finger yaw
_KNUCKLES = np.array([[0.035, 0.030, -0.010], [0.025, 0.090, 0.0], [0.003, 0.095, 0.0],
                      [-0.018, 0.090, 0.0], [-0.036, 0.080, 0.0]])
_PHALANGES = np.array([[0.040, 0.032, 0.028], [0.045, 0.025, 0.020], [0.050, 0.030, 0.022],
                       [0.046, 0.028, 0.021], [0.036, 0.021, 0.019]])
_MAX_FLEX = np.array([0.9, 1.3, 1.0])
_YAW = np.array([0.7, 0.1, 0.0, -0.1, -0.2])


class Grasp:
    """Hand closure in [0, 1] over time: open, close, hold, open again, with per-finger lag."""

    def __init__(self, seed: int):
        rng = np.random.default_rng([seed, 0x4752415350])
        self._w = 2.0 * np.pi * rng.uniform(0.12, 0.3)
        self._phase = rng.uniform(0.0, 2.0 * np.pi)
        self._lag = np.linspace(0.0, 0.4, 5)

    def fingers(self, t_s: float) -> np.ndarray:
        """(5,) closure of thumb..little finger."""
        return np.clip(0.5 + 0.8 * np.sin(self._w * t_s + self._phase - self._lag), 0.0, 1.0)


def pressure(closure: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    site_closure = np.concatenate([closure, closure[1:4], closure[[1, 3]]])
    onset = _SITES[:, 4]
    strength = np.clip((site_closure - onset) / (1.0 - onset), 0.0, 1.0)
    counts = np.tensordot(strength, _BLOBS, axes=1) * (1.0 + 0.03 * rng.standard_normal((16, 16)))
    counts[counts < PRESSURE_DEADBAND] = 0.0
    return np.clip(counts, 0.0, 4095.0).astype(np.float32)


def finger_quats(hand: np.ndarray, closure: np.ndarray, t_s: float) -> np.ndarray:
    """(16, 4) XYZW: back of the hand, then 3 segments per finger, each flexed about its axis."""
    flex = np.cumsum(closure[:, None] * _MAX_FLEX[None, :], axis=1)            # (5, 3)
    axes = np.stack([np.cos(_YAW), -np.sin(_YAW), np.zeros(5)], axis=1)        # flexion axis per finger
    rotvec = np.concatenate([np.zeros((1, 3)), (flex[..., None] * axes[:, None, :]).reshape(15, 3)])
    rotvec[:, 2] += 0.02 * np.sin(3.0 * t_s + np.arange(16))                   # small wobble: sensors differ
    return quat_mul(hand[None, :], quat_from_rotvec(rotvec)).astype(np.float32)


def hand_pose(closure: np.ndarray, left: bool) -> np.ndarray:
    """(21, 3) joints: wrist, then MCP, PIP, DIP, tip of thumb..little finger."""
    angles = np.cumsum(closure[:, None] * _MAX_FLEX[None, :], axis=1)          # (5, 3)
    along, down = np.cos(angles), -np.sin(angles)
    steps = np.stack([along * np.sin(_YAW)[:, None], along * np.cos(_YAW)[:, None], down], axis=-1)
    joints = _KNUCKLES[:, None, :] + np.concatenate(
        [np.zeros((5, 1, 3)), np.cumsum(_PHALANGES[..., None] * steps, axis=1)], axis=1)
    pose = np.concatenate([np.zeros((1, 3)), joints.reshape(20, 3)])
    if left:
        pose[:, 0] *= -1.0
    return pose.astype(np.float32)


def world_hand_pose(local: np.ndarray, motion: Motion, t_s: float) -> np.ndarray:
    """Hand-local joints -> the world frame: rotated by the hand orientation (the one the
    glove IMU reports, ``motion.quat``) and placed at the wrist position ``motion.position``."""
    q = np.broadcast_to(motion.quat(t_s), local.shape[:-1] + (4,))
    return (quat_rotate(q, local.astype(np.float64)) + motion.position(t_s)).astype(np.float32)


def glove(device: Device, plan: Plan) -> list[Source]:
    roles = streams_by_role(device)
    seed = plan.seed_of(device.id)
    grasp, motion = Grasp(seed), Motion(seed, reach_m=0.25, turn_rad=0.6)
    fields = DEVICE_KINDS[device.kind]["pressure"].fields
    invalid_prob = plan.flaws_of(device, (roles["pressure"].id,)).invalid_prob
    has_imu = any(f.name == "imu_quat" for f in fields)

    def frame(index: int, t_s: float, rng: np.random.Generator) -> dict[str, np.ndarray]:
        closure = grasp.fingers(t_s)
        out = {"pressure": pressure(closure, rng)}
        if has_imu:
            out["imu_quat"] = finger_quats(motion.quat(t_s), closure, t_s)
            out["imu_valid"] = (rng.random(16) >= invalid_prob).astype(np.float32)
        return out

    frame_bytes = sum(int(np.prod(f.shape)) * 4 for f in fields)
    sources = [one_clock(device, plan, [Output(roles["pressure"].id, frame_bytes, frame)])]
    if "hand_pose" in roles:
        left = device.hand == "left"
        in_world = roles["hand_pose"].source.get("frame") == "ego_slam_world"

        def pose(index: int, t_s: float, rng: np.random.Generator) -> dict[str, np.ndarray]:
            joints = hand_pose(grasp.fingers(t_s), left)
            if in_world:   # the hand the glove IMU sees, placed in the ego SLAM world frame
                joints = world_hand_pose(joints, motion, t_s)
            return {"hand_pose": joints}

        sources.append(one_clock(device, plan, [Output(roles["hand_pose"].id, 21 * 3 * 4, pose,
                                                       HAND_POSE_LATENCY_MS)]))
    return sources
