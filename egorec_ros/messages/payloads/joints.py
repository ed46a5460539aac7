"""sensor_msgs/JointState -> {"position", "velocity", "effort"} float32 arrays.

Feeds a state or action column; velocity and effort may be empty (ROS allows it)
and are then left out of the payload.
"""
from __future__ import annotations

import numpy as np
from rosbags.typesys.store import Typestore

from egorec_ros.messages.errors import PayloadError
from egorec_ros.messages.context import MessageContext
from egorec_ros.messages.msg import Msg

JOINT_STATE = "sensor_msgs/msg/JointState"
FIELDS = ("position", "velocity", "effort")


def joint_state_payload(msg: Msg, ctx: MessageContext) -> dict[str, np.ndarray]:
    n = len(msg.name)
    out = {}
    for field in FIELDS:
        values = np.asarray(getattr(msg, field), dtype=np.float32)
        if values.size and n and values.size != n:
            raise PayloadError(f"{ctx}: JointState has {n} joint names but {values.size} {field} values")
        if values.size:
            out[field] = values
    return out


def joint_state_message(store: Typestore, payload: dict, header: Msg) -> Msg:
    n = len(np.asarray(payload["position"]))
    arrays = {f: np.asarray(payload.get(f, np.zeros(0)), dtype=np.float64) for f in FIELDS}
    return store.types[JOINT_STATE](header=header, name=[f"joint{i + 1}" for i in range(n)], **arrays)
