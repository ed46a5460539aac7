"""sensor_msgs/Imu <-> imu payload float32 [ax, ay, az, gx, gy, gz] (m/s^2, rad/s)."""
from __future__ import annotations

import numpy as np
from rosbags.typesys.store import Typestore

from egorec_ros.messages.context import MessageContext
from egorec_ros.messages.msg import Msg

IMU = "sensor_msgs/msg/Imu"


def imu_payload(msg: Msg, ctx: MessageContext) -> np.ndarray:
    a, g = msg.linear_acceleration, msg.angular_velocity
    return np.array([a.x, a.y, a.z, g.x, g.y, g.z], dtype=np.float32)


def imu_message(store: Typestore, payload: np.ndarray, header: Msg) -> Msg:
    """Orientation unknown: covariance[0] = -1, as sensor_msgs/Imu documents."""
    v = store.types["geometry_msgs/msg/Vector3"]
    p = np.asarray(payload, dtype=np.float64)
    no_orientation = np.zeros(9)
    no_orientation[0] = -1.0
    return store.types[IMU](
        header=header, orientation=store.types["geometry_msgs/msg/Quaternion"](x=0.0, y=0.0, z=0.0, w=1.0),
        orientation_covariance=no_orientation,
        angular_velocity=v(x=p[3], y=p[4], z=p[5]), angular_velocity_covariance=np.zeros(9),
        linear_acceleration=v(x=p[0], y=p[1], z=p[2]), linear_acceleration_covariance=np.zeros(9))
