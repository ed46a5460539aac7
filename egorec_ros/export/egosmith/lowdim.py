"""The 116-d lowdim vector of EgoSmith (hawor_wrist_world_v2), all hand values in the SLAM
world frame, metres:

  0:3 / 3:6     left / right wrist position (joint 0)
  6:12 / 12:18  left / right wrist rot6d [R00, R10, R20, R01, R11, R21] (wrist -> world)
  18:33 / 33:48 left / right fingertips, thumb -> little (joints 4, 8, 12, 16, 20)
  48:96         the same 48 values at frame t+1 (the action)
  96:112        head camera world -> camera 4x4, row-major
  112:116       [fx, fy, cx, cy]
"""
from __future__ import annotations

import numpy as np

from egorec_ros.export.egosmith.rotations import rot6d

SIZE = 116
TIPS = (4, 8, 12, 16, 20)
STATE = slice(0, 48)
ACTION = slice(48, 96)
EXTRINSIC = slice(96, 112)
INTRINSIC = slice(112, 116)


def hand_state(joints: np.ndarray, rotations: np.ndarray) -> np.ndarray:
    """(N, 48) from world joints (N, 2, 21, 3) and wrist rotations (N, 2, 3, 3), every frame
    filled (an unseen hand is infilled before this; its presence bit says it was not seen)."""
    n = len(joints)
    wrist = joints[:, :, 0, :].reshape(n, 6)
    r6 = rot6d(rotations).reshape(n, 12)
    tips = joints[:, :, TIPS, :].reshape(n, 30)
    return np.concatenate([wrist, r6, tips], axis=1)


def assemble(state: np.ndarray, w2c: np.ndarray, intrinsic: np.ndarray, frames: np.ndarray) -> np.ndarray:
    """(len(frames), 116) float32 for the frame numbers ``frames`` (each < N - 1: the action
    is the state of the next frame)."""
    frames = np.asarray(frames, dtype=np.int64)
    out = np.empty((len(frames), SIZE), dtype=np.float64)
    out[:, STATE] = state[frames]
    out[:, ACTION] = state[frames + 1]
    out[:, EXTRINSIC] = w2c[frames].reshape(len(frames), 16)
    out[:, INTRINSIC] = intrinsic
    return out.astype(np.float32)


def presence(present: np.ndarray) -> np.ndarray:
    """(N, 2) bool -> (N,) bitmask: left 1, right 2."""
    return present[:, 0].astype(np.int64) | (present[:, 1].astype(np.int64) << 1)
