"""Gripper forces: geometry_msgs/WrenchStamped (N -> mN), our ForceMatrix and GripperState."""
from __future__ import annotations

import numpy as np
from rosbags.typesys.store import Typestore

from egorec_ros.messages.errors import PayloadError
from egorec_ros.messages.context import MessageContext
from egorec_ros.messages.definitions import type_name
from egorec_ros.messages.msg import Msg

WRENCH_STAMPED = "geometry_msgs/msg/WrenchStamped"
FORCE_MATRIX = type_name("ForceMatrix")
GRIPPER_STATE = type_name("GripperState")
MN_PER_N = 1000.0


def wrench_payload(msg: Msg, ctx: MessageContext) -> dict[str, np.ndarray]:
    f = msg.wrench.force
    return {"force": (np.array([f.x, f.y, f.z], dtype=np.float64) * MN_PER_N).astype(np.float32)}


def force_matrix_payload(msg: Msg, ctx: MessageContext) -> dict[str, np.ndarray]:
    shape = (int(msg.rows), int(msg.cols), int(msg.channels))
    data = np.asarray(msg.data, dtype=np.float32)
    if data.size != shape[0] * shape[1] * shape[2]:
        raise PayloadError(f"{ctx}: ForceMatrix {shape[0]}x{shape[1]}x{shape[2]} needs "
                           f"{shape[0] * shape[1] * shape[2]} values, has {data.size}")
    return {"matrix": data.reshape(shape)}


def gripper_state_payload(msg: Msg, ctx: MessageContext) -> dict[str, np.ndarray]:
    return {"state": np.array([msg.open_pct, msg.gripped, msg.fz_mn], dtype=np.float32)}


# ---- writing ----------------------------------------------------------------------------------

def wrench_message(store: Typestore, payload: dict, header: Msg) -> Msg:
    f = np.asarray(payload["force"], dtype=np.float64) / MN_PER_N
    v = store.types["geometry_msgs/msg/Vector3"]
    wrench = store.types["geometry_msgs/msg/Wrench"](force=v(x=f[0], y=f[1], z=f[2]), torque=v(x=0.0, y=0.0, z=0.0))
    return store.types[WRENCH_STAMPED](header=header, wrench=wrench)


def force_matrix_message(store: Typestore, payload: dict, header: Msg) -> Msg:
    m = np.asarray(payload["matrix"], dtype=np.float32)
    rows, cols, channels = m.shape
    return store.types[FORCE_MATRIX](header=header, rows=rows, cols=cols, channels=channels, data=m.reshape(-1))


def gripper_state_message(store: Typestore, payload: dict, header: Msg) -> Msg:
    s = np.asarray(payload["state"], dtype=np.float32)
    return store.types[GRIPPER_STATE](header=header, open_pct=s[0], gripped=s[1], fz_mn=s[2])
