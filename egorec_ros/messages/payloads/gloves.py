"""Our GloveFrame (16x16 pressure, USB gloves also 16 IMU quaternions + validity)
and HandPose (21 joints x xyz)."""
from __future__ import annotations

import numpy as np
from rosbags.typesys.store import Typestore

from egorec_ros.messages.errors import PayloadError
from egorec_ros.messages.context import MessageContext
from egorec_ros.messages.definitions import type_name
from egorec_ros.rig.kinds import HAND_POSE as HAND_POSE_FIELD
from egorec_ros.rig.kinds import IMU_QUAT, IMU_VALID, PRESSURE, Field
from egorec_ros.messages.msg import Msg

GLOVE_FRAME = type_name("GloveFrame")
HAND_POSE = type_name("HandPose")


def shaped(values: Msg, field: Field, ctx: MessageContext, what: str) -> np.ndarray:
    """``values`` as the field's float32 array, or a PayloadError (a counted drop) naming
    the message when the size does not fit."""
    a = np.asarray(values, dtype=np.float32)
    if a.size != int(np.prod(field.shape)):
        raise PayloadError(f"{ctx}: {what} needs {int(np.prod(field.shape))} values {field.shape}, has {a.size}")
    return a.reshape(field.shape)


def glove_payload(msg: Msg, ctx: MessageContext) -> dict[str, np.ndarray]:
    """pressure (16, 16); imu_quat (16, 4) and imu_valid (16,) only when the glove sent them."""
    out = {"pressure": shaped(msg.pressure, PRESSURE, ctx, "GloveFrame.pressure")}
    if len(msg.imu_quat) or len(msg.imu_valid):
        out["imu_quat"] = shaped(msg.imu_quat, IMU_QUAT, ctx, "GloveFrame.imu_quat")
        out["imu_valid"] = shaped(msg.imu_valid, IMU_VALID, ctx, "GloveFrame.imu_valid")
    return out


def hand_pose_payload(msg: Msg, ctx: MessageContext) -> dict[str, np.ndarray]:
    return {"hand_pose": shaped(msg.joints, HAND_POSE_FIELD, ctx, "HandPose.joints")}


# ---- writing ----------------------------------------------------------------------------------

def glove_message(store: Typestore, payload: dict, header: Msg) -> Msg:
    empty = np.zeros(0, dtype=np.float32)
    return store.types[GLOVE_FRAME](
        header=header, pressure=np.asarray(payload["pressure"], dtype=np.float32).reshape(-1),
        imu_quat=np.asarray(payload.get("imu_quat", empty), dtype=np.float32).reshape(-1),
        imu_valid=np.asarray(payload.get("imu_valid", empty), dtype=np.float32).reshape(-1))


def hand_pose_message(store: Typestore, payload: dict, header: Msg) -> Msg:
    return store.types[HAND_POSE](header=header,
                                  joints=np.asarray(payload["hand_pose"], dtype=np.float32).reshape(-1))
