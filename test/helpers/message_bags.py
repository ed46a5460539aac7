"""Small bags written message by message, for converter tests of odd real-world shapes."""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
from rosbags.rosbag2 import StoragePlugin, Writer

from egorec_ros.messages.payloads.camera_info import CAMERA_INFO
from egorec_ros.messages.payloads.images import COMPRESSED_IMAGE, IMAGE, image_message, jpeg_message
from egorec_ros.messages.payloads.imu import IMU
from egorec_ros.messages.payloads.stamps import header_message
from egorec_ros.messages.typestores import ros2_typestore
from helpers.convert import START_NS

STORE = ros2_typestore()
FRAME_NS = 33_333_333
SIZE = (64, 48)


def camera_info(stamp_ns: int, width: int = SIZE[0], height: int = SIZE[1]) -> object:
    k = np.array([50.0, 0, 32, 0, 50.0, 24, 0, 0, 1])
    p = np.array([50.0, 0, 32, 0, 0, 50.0, 24, 0, 0, 0, 1, 0])
    return STORE.types[CAMERA_INFO](
        header=header_message(STORE, stamp_ns, "cam"), height=height, width=width, distortion_model="plumb_bob",
        d=np.zeros(5), k=k, r=np.eye(3).ravel(), p=p, binning_x=0, binning_y=0,
        roi=STORE.types["sensor_msgs/msg/RegionOfInterest"](x_offset=0, y_offset=0, height=0, width=0,
                                                            do_rectify=False))


def frame(i: int) -> np.ndarray:
    pixels = np.zeros((SIZE[1], SIZE[0], 3), np.uint8)
    pixels[:, (i * 3) % SIZE[0]] = 255
    return pixels


def imu_message(stamp_ns: int) -> object:
    t = STORE.types
    vec = t["geometry_msgs/msg/Vector3"](x=0.0, y=0.0, z=9.8)
    return t[IMU](header=header_message(STORE, stamp_ns, "imu"), orientation=t["geometry_msgs/msg/Quaternion"](
        x=0.0, y=0.0, z=0.0, w=1.0), orientation_covariance=np.zeros(9), angular_velocity=vec,
        angular_velocity_covariance=np.zeros(9), linear_acceleration=vec, linear_acceleration_covariance=np.zeros(9))


Message = tuple[str, str, int, object]        # topic, type, receive time, message


def camera_messages(image_topic: str, info_topic: str | None, frames: int = 30, *,
                    compressed: bool = False) -> list[Message]:
    out: list[Message] = []
    for i in range(frames):
        t = START_NS + i * FRAME_NS
        header = header_message(STORE, t, "cam")
        msg = jpeg_message(STORE, frame(i), header) if compressed else image_message(STORE, frame(i), header)
        out.append((image_topic, COMPRESSED_IMAGE if compressed else IMAGE, t + 1_000_000, msg))
        if info_topic and i % 3 == 0:
            out.append((info_topic, CAMERA_INFO, t + 1_000_000, camera_info(t)))
    return out


def write_messages(path: Path, messages: Iterable[Message], *, mcap: bool = False,
                   definitions: dict[str, str] | None = None) -> Path:
    """A rosbag2 folder of ``messages``; ``definitions``: msgtype -> .msg text stored instead of
    a real definition (the messages of such types are given serialized, as bytes)."""
    writer = Writer(path, version=Writer.VERSION_LATEST, storage_plugin=StoragePlugin.MCAP if mcap
                    else StoragePlugin.SQLITE3)
    with writer:
        conns = {}
        for topic, msgtype, log_ns, msg in sorted(messages, key=lambda m: m[2]):
            if (topic, msgtype) not in conns:
                if definitions and msgtype in definitions:
                    conns[topic, msgtype] = writer.add_connection(topic, msgtype, msgdef=definitions[msgtype],
                                                                  rihs01="RIHS01_" + "0" * 64)
                else:
                    conns[topic, msgtype] = writer.add_connection(topic, msgtype, typestore=STORE)
            data = msg if isinstance(msg, bytes) else STORE.serialize_cdr(msg, msgtype)
            writer.write(conns[topic, msgtype], log_ns, data)
    return path
