"""Poses -> trajectory point float64 [t, x, y, z, qx, qy, qz, qw].

t is on the sensor clock (§3.1): SlamPose.sensor_time; for the standard pose
messages the header stamp in seconds (the bag receive time if the header stamp
is zero). tf2_msgs/TFMessage carries many transforms: the stream's
``child_frame`` option picks the one that is the trajectory.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from rosbags.typesys.store import Typestore

from egorec_ros.messages.context import MessageContext
from egorec_ros.messages.payloads.stamps import header_ns
from egorec_ros.messages.definitions import type_name
from egorec_ros.messages.msg import Msg

POSE_STAMPED = "geometry_msgs/msg/PoseStamped"
POSE_WITH_COVARIANCE_STAMPED = "geometry_msgs/msg/PoseWithCovarianceStamped"
TRANSFORM_STAMPED = "geometry_msgs/msg/TransformStamped"
ODOMETRY = "nav_msgs/msg/Odometry"
TF_MESSAGE = "tf2_msgs/msg/TFMessage"
SLAM_POSE = type_name("SlamPose")
CHILD_FRAME = "child_frame"


def _point(t: float, position: Msg, orientation: Msg) -> np.ndarray:
    return np.array([t, position.x, position.y, position.z,
                     orientation.x, orientation.y, orientation.z, orientation.w], dtype=np.float64)


def _header_seconds(msg: Msg, ctx: MessageContext) -> float:
    return (header_ns(msg) or ctx.log_ns) / 1e9


def pose_stamped_point(msg: Msg, ctx: MessageContext) -> np.ndarray:
    return _point(_header_seconds(msg, ctx), msg.pose.position, msg.pose.orientation)


def pose_with_covariance_point(msg: Msg, ctx: MessageContext) -> np.ndarray:
    return _point(_header_seconds(msg, ctx), msg.pose.pose.position, msg.pose.pose.orientation)


def odometry_point(msg: Msg, ctx: MessageContext) -> np.ndarray:
    return pose_with_covariance_point(msg, ctx)


def transform_point(msg: Msg, ctx: MessageContext) -> np.ndarray:
    """A geometry_msgs/TransformStamped (alone, or picked out of a TFMessage)."""
    return _point(_header_seconds(msg, ctx), msg.transform.translation, msg.transform.rotation)


def slam_pose_point(msg: Msg, ctx: MessageContext) -> np.ndarray:
    return _point(float(msg.sensor_time), msg.pose.position, msg.pose.orientation)


def pick_transform(msg: Msg, options: Mapping[str, object]) -> Msg | None:
    """The transform of the stream's child frame in a TFMessage (None: not in this message)."""
    child = options[CHILD_FRAME]
    return next((tf for tf in msg.transforms if tf.child_frame_id == child), None)


# ---- writing ----------------------------------------------------------------------------------

def _pose(store: Typestore, p: np.ndarray) -> Msg:
    return store.types["geometry_msgs/msg/Pose"](
        position=store.types["geometry_msgs/msg/Point"](x=p[1], y=p[2], z=p[3]),
        orientation=store.types["geometry_msgs/msg/Quaternion"](x=p[4], y=p[5], z=p[6], w=p[7]))


def slam_pose_message(store: Typestore, payload: np.ndarray, header: Msg) -> Msg:
    p = np.asarray(payload, dtype=np.float64)
    return store.types[SLAM_POSE](header=header, sensor_time=p[0], pose=_pose(store, p))


def pose_stamped_message(store: Typestore, payload: np.ndarray, header: Msg) -> Msg:
    """t is not kept: PoseStamped has only the header stamp."""
    return store.types[POSE_STAMPED](header=header, pose=_pose(store, np.asarray(payload, dtype=np.float64)))


def odometry_message(store: Typestore, payload: np.ndarray, header: Msg, child_frame: str = "") -> Msg:
    t = store.types
    pose = t["geometry_msgs/msg/PoseWithCovariance"](pose=_pose(store, np.asarray(payload, dtype=np.float64)),
                                                       covariance=np.zeros(36))
    zero = t["geometry_msgs/msg/Vector3"](x=0.0, y=0.0, z=0.0)
    twist = t["geometry_msgs/msg/TwistWithCovariance"](twist=t["geometry_msgs/msg/Twist"](linear=zero, angular=zero),
                                                        covariance=np.zeros(36))
    return t[ODOMETRY](header=header, child_frame_id=child_frame, pose=pose, twist=twist)


def tf_message(store: Typestore, payload: np.ndarray, header: Msg, child_frame: str) -> Msg:
    t = store.types
    p = np.asarray(payload, dtype=np.float64)
    transform = t["geometry_msgs/msg/Transform"](
        translation=t["geometry_msgs/msg/Vector3"](x=p[1], y=p[2], z=p[3]),
        rotation=t["geometry_msgs/msg/Quaternion"](x=p[4], y=p[5], z=p[6], w=p[7]))
    return t[TF_MESSAGE](transforms=[t[TRANSFORM_STAMPED](header=header, child_frame_id=child_frame,
                                                           transform=transform)])
