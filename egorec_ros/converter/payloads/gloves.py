"""Our GloveFrame (16x16 pressure, USB gloves also 16 IMU quaternions + validity)
and HandPose (21 joints x xyz)."""
from __future__ import annotations

import numpy as np
from rosbags.typesys.store import Typestore

from egorec_ros.converter.errors import PayloadError
from egorec_ros.converter.payloads.context import MessageContext
from egorec_ros.messages.definitions import type_name

GLOVE_FRAME = type_name("GloveFrame")
HAND_POSE = type_name("HandPose")
IMUS = 16


def glove_payload(msg: object, ctx: MessageContext) -> dict[str, np.ndarray]:
    """pressure (16, 16); imu_quat (16, 4) and imu_valid (16,) only when the glove sent them."""
    out = {"pressure": np.asarray(msg.pressure, dtype=np.float32).reshape(16, 16)}
    quat = np.asarray(msg.imu_quat, dtype=np.float32)
    valid = np.asarray(msg.imu_valid, dtype=np.float32)
    if quat.size or valid.size:
        if quat.size != IMUS * 4 or valid.size != IMUS:
            raise PayloadError(f"{ctx}: GloveFrame IMU fields need {IMUS * 4} quaternion values and {IMUS} "
                               f"flags, have {quat.size} and {valid.size}")
        out["imu_quat"] = quat.reshape(IMUS, 4)
        out["imu_valid"] = valid
    return out


def hand_pose_payload(msg: object, ctx: MessageContext) -> dict[str, np.ndarray]:
    return {"hand_pose": np.asarray(msg.joints, dtype=np.float32).reshape(21, 3)}


# ---- writing ----------------------------------------------------------------------------------

def glove_message(store: Typestore, payload: dict, header: object) -> object:
    empty = np.zeros(0, dtype=np.float32)
    return store.types[GLOVE_FRAME](
        header=header, pressure=np.asarray(payload["pressure"], dtype=np.float32).reshape(-1),
        imu_quat=np.asarray(payload.get("imu_quat", empty), dtype=np.float32).reshape(-1),
        imu_valid=np.asarray(payload.get("imu_valid", empty), dtype=np.float32).reshape(-1))


def hand_pose_message(store: Typestore, payload: dict, header: object) -> object:
    return store.types[HAND_POSE](header=header,
                                  joints=np.asarray(payload["hand_pose"], dtype=np.float32).reshape(-1))
