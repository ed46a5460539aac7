"""Device kinds of the spec (§4) and the streams (roles) each kind produces.

A role is what a device publishes, independent of names on disk: a gripper has
an ``rgb`` role, a ``left_force`` role, ... The rig compiler turns roles into slot
and column names (§2, §4); simulated devices and the bag converter produce samples
keyed by role fields. This table is the single place that says which roles a kind
has and what their payloads look like.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class StreamKind(str, Enum):
    VIDEO = "video"            # one frame per row (nearest to the tick)
    DEPTH = "depth"            # follows its master video slot frame by frame (§4.8)
    IMU = "imu"                # window: samples in (t_{i-1}, t_i] -> imu_ts_ns + observation.imu
    TRAJECTORY = "trajectory"  # window: SLAM points in (t_{i-1}, t_i] -> X + X_ns
    LATEST = "latest"          # latest-wins snapshot of one or more fields


@dataclass(frozen=True)
class Field:
    """One array carried by a LATEST sample (payload[name])."""

    name: str
    shape: tuple[int, ...]
    dtype: str = "float32"


@dataclass(frozen=True)
class Role:
    kind: StreamKind
    fields: tuple[Field, ...] = ()
    rate_hz: float = 30.0      # nominal rate, used by simulation and reports
    optional: bool = False     # a rig may leave it out


PRESSURE = Field("pressure", (16, 16))
IMU_QUAT = Field("imu_quat", (16, 4))
IMU_VALID = Field("imu_valid", (16,))
HAND_POSE = Field("hand_pose", (21, 3))
FORCE = Field("force", (3,))
FORCE_MATRIX = Field("matrix", (250, 250, 3))
GRIPPER_STATE = Field("state", (3,))

_SLAM = Role(StreamKind.TRAJECTORY, rate_hz=30.0, optional=True)

DEVICE_KINDS: dict[str, dict[str, Role]] = {
    "uvc": {
        "rgb": Role(StreamKind.VIDEO),
        "slam": _SLAM,
    },
    "d435": {
        "rgb": Role(StreamKind.VIDEO),
        "depth": Role(StreamKind.DEPTH, optional=True),
        "slam": _SLAM,
    },
    "s80m": {
        "left": Role(StreamKind.VIDEO),
        "right": Role(StreamKind.VIDEO, optional=True),
        "depth": Role(StreamKind.DEPTH, optional=True),
        "imu": Role(StreamKind.IMU, rate_hz=200.0, optional=True),
        "slam": _SLAM,
    },
    "gripper": {
        "rgb": Role(StreamKind.VIDEO),
        "left_force": Role(StreamKind.LATEST, (FORCE,), rate_hz=100.0, optional=True),
        "right_force": Role(StreamKind.LATEST, (FORCE,), rate_hz=100.0, optional=True),
        "left_force_matrix": Role(StreamKind.LATEST, (FORCE_MATRIX,), rate_hz=30.0, optional=True),
        "right_force_matrix": Role(StreamKind.LATEST, (FORCE_MATRIX,), rate_hz=30.0, optional=True),
        "state": Role(StreamKind.LATEST, (GRIPPER_STATE,), rate_hz=30.0, optional=True),
        "slam": _SLAM,
    },
    # a teleop stack's sensor_msgs/JointState topics: measured joints -> an observation
    # column, commands -> the ``action`` column; the joint count comes from the rig (dim)
    "joint_state": {
        "state": Role(StreamKind.LATEST, (Field("position", (0,)),), optional=True),
        "action": Role(StreamKind.LATEST, (Field("position", (0,)),), optional=True),
    },
    "usb_glove": {
        "pressure": Role(StreamKind.LATEST, (PRESSURE, IMU_QUAT, IMU_VALID), rate_hz=60.0),
        "hand_pose": Role(StreamKind.LATEST, (HAND_POSE,), rate_hz=30.0, optional=True),
    },
    "ble_glove": {
        "pressure": Role(StreamKind.LATEST, (PRESSURE,), rate_hz=60.0),
        "hand_pose": Role(StreamKind.LATEST, (HAND_POSE,), rate_hz=30.0, optional=True),
    },
}

GLOVE_KINDS = ("usb_glove", "ble_glove")
