"""Samples + rig streams -> a bag (rosbag2 sqlite3, rosbag2 mcap or ROS 1), for tests.

Header stamps are ``stamp_ns`` and the bag's receive time is ``arrival_ns``, so
reading the bag back with the same streams gives the same samples (JPEG frames
up to JPEG loss). Each stream is written with the first message type that can
feed it (Image, Imu, SlamPose, WrenchStamped, ForceMatrix, GripperState,
GloveFrame, HandPose, JointState) unless ``msgtypes`` picks another one
(CompressedImage = JPEG, PoseStamped, Odometry, TFMessage).

The bag is built in a hidden folder next to ``path`` and moved into place when
complete: a failure leaves nothing behind.
"""
from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from rosbags.rosbag1 import Writer as Ros1Writer
from rosbags.rosbag2 import CompressionFormat, CompressionMode, StoragePlugin
from rosbags.rosbag2 import Writer as Ros2Writer

from egorec_ros.assembly.sample import Sample
from egorec_ros.bags.bagfile import ROS1, ROSBAG2_MCAP, ROSBAG2_SQLITE3
from egorec_ros.messages.mapping import accepted_types
from egorec_ros.messages.payloads import forces, gloves, images, imu, joints, poses
from egorec_ros.messages.payloads.markers import BOOL, STRING
from egorec_ros.messages.payloads.stamps import header_message
from egorec_ros.messages.typestores import ros1_typestore, ros2_typestore
from egorec_ros.rig.model import StreamSpec

# message type -> (typestore, payload, header) -> message
_WRITERS: dict[str, Callable] = {
    images.IMAGE: images.image_message,
    images.COMPRESSED_IMAGE: images.jpeg_message,
    imu.IMU: imu.imu_message,
    poses.SLAM_POSE: poses.slam_pose_message,
    poses.POSE_STAMPED: poses.pose_stamped_message,
    forces.WRENCH_STAMPED: forces.wrench_message,
    forces.FORCE_MATRIX: forces.force_matrix_message,
    forces.GRIPPER_STATE: forces.gripper_state_message,
    gloves.GLOVE_FRAME: gloves.glove_message,
    gloves.HAND_POSE: gloves.hand_pose_message,
    joints.JOINT_STATE: joints.joint_state_message,
}
# message types that also name the stream's child frame: (typestore, payload, header, child_frame)
_FRAME_WRITERS: dict[str, Callable] = {poses.ODOMETRY: poses.odometry_message, poses.TF_MESSAGE: poses.tf_message}
ROS1_COMPRESSION = {"lz4": Ros1Writer.CompressionFormat.LZ4, "bz2": Ros1Writer.CompressionFormat.BZ2}
ROS2_COMPRESSION = {"file": CompressionMode.FILE, "message": CompressionMode.MESSAGE,
                    "storage": CompressionMode.STORAGE}


def write_bag(path: str | Path, samples: Iterable[Sample], streams: Iterable[StreamSpec], *,
              storage: str = ROSBAG2_SQLITE3, compression: str | None = None,
              msgtypes: Mapping[str, str] | None = None,
              markers: Mapping[str, Sequence[tuple[int, bool | str]]] | None = None) -> Path:
    """Write ``samples`` of ``streams`` (each with a topic) to a new bag at ``path``.

    storage: "rosbag2/sqlite3", "rosbag2/mcap" (folders) or "ros1" (a .bag file).
    compression: rosbag2 "file" | "message" | "storage" (mcap chunks), all zstd; ROS 1 "lz4" | "bz2".
    msgtypes: stream id -> message type to write instead of the default.
    markers: topic -> [(receive time, value)]: std_msgs/Bool for bool values, std_msgs/String for
    str values (episode markers for splitting).
    """
    path = Path(path)
    if path.exists():
        raise FileExistsError(f"{path} exists; write_bag does not overwrite")
    if storage == ROS1 and path.suffix != ".bag":
        raise ValueError(f"{path}: a ROS 1 bag must be named *.bag")
    by_id = {s.id: s for s in streams}
    types = {sid: (msgtypes or {}).get(sid) or accepted_types(s)[0] for sid, s in by_id.items()}
    for sid, msgtype in types.items():
        if msgtype not in _WRITERS and msgtype not in _FRAME_WRITERS:
            raise ValueError(f"stream {sid!r}: cannot write {msgtype}; writable: "
                             f"{', '.join([*_WRITERS, *_FRAME_WRITERS])}")
        if msgtype == poses.TF_MESSAGE and not by_id[sid].source.get(poses.CHILD_FRAME):
            raise ValueError(f"stream {sid!r}: a TFMessage needs the stream option `{poses.CHILD_FRAME}`")
        if not by_id[sid].topic:
            raise ValueError(f"stream {sid!r} has no topic")
    staging = path.parent / f".{path.name}.partial"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        target = staging / path.name
        if storage == ROS1:
            _write_ros1(target, samples, by_id, types, markers or {}, compression)
        elif storage in (ROSBAG2_SQLITE3, ROSBAG2_MCAP):
            _write_ros2(target, samples, by_id, types, markers or {}, storage, compression)
        else:
            raise ValueError(f"storage must be {ROSBAG2_SQLITE3!r}, {ROSBAG2_MCAP!r} or {ROS1!r}, got {storage!r}")
        os.replace(target, path)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return path


def sample_message(store, spec: StreamSpec, msgtype: str, sample: Sample) -> object:
    """One sample of ``spec`` as a ``msgtype`` message stamped ``stamp_ns`` (also used by the
    simulated-devices publisher, so bags and live topics carry the same messages)."""
    header = header_message(store, sample.stamp_ns, spec.id)
    if msgtype in _FRAME_WRITERS:
        return _FRAME_WRITERS[msgtype](store, sample.payload, header, str(spec.source.get(poses.CHILD_FRAME, "")))
    if msgtype not in _WRITERS:
        raise ValueError(f"stream {spec.id!r}: cannot write {msgtype}; writable: {', '.join([*_WRITERS, *_FRAME_WRITERS])}")
    return _WRITERS[msgtype](store, sample.payload, header)


def _messages(samples: Iterable[Sample], streams: dict[str, StreamSpec], types: dict[str, str],
              markers: Mapping[str, Sequence[tuple[int, bool | str]]], store):
    """(connection key, message type, receive time, message) per sample, then per marker."""
    for sample in samples:
        spec = streams.get(sample.stream)
        if spec is None:
            raise ValueError(f"sample of stream {sample.stream!r}, which is not among the given streams")
        msgtype = types[spec.id]
        yield (spec.topic, msgtype), msgtype, sample.arrival_ns, sample_message(store, spec, msgtype, sample)
    for topic, values in markers.items():
        for log_ns, value in values:
            msgtype = BOOL if isinstance(value, bool) else STRING
            yield (topic, msgtype), msgtype, log_ns, store.types[msgtype](data=value)


def _connections(writer, streams: dict[str, StreamSpec], types: dict[str, str],
                 markers: Mapping[str, Sequence[tuple[int, bool | str]]], store) -> dict:
    """(topic, message type) -> connection; streams sharing a topic (TF) share its connection."""
    keys = {(spec.topic, types[sid]) for sid, spec in streams.items()}
    keys |= {(topic, BOOL if isinstance(v, bool) else STRING) for topic, values in markers.items() for _, v in values}
    return {key: writer.add_connection(key[0], key[1], typestore=store) for key in sorted(keys)}


def _write_ros2(target: Path, samples, streams, types, markers, storage: str, compression: str | None) -> None:
    store = ros2_typestore()
    plugin = StoragePlugin.MCAP if storage == ROSBAG2_MCAP else StoragePlugin.SQLITE3
    writer = Ros2Writer(target, version=Ros2Writer.VERSION_LATEST, storage_plugin=plugin)
    if compression:
        if compression not in ROS2_COMPRESSION:
            raise ValueError(f"rosbag2 compression must be one of {', '.join(ROS2_COMPRESSION)}")
        writer.set_compression(ROS2_COMPRESSION[compression], CompressionFormat.ZSTD)
    with writer:
        conns = _connections(writer, streams, types, markers, store)
        for key, msgtype, log_ns, msg in _messages(samples, streams, types, markers, store):
            writer.write(conns[key], log_ns, store.serialize_cdr(msg, msgtype))


def _write_ros1(target: Path, samples, streams, types, markers, compression: str | None) -> None:
    store = ros1_typestore()
    writer = Ros1Writer(target)
    if compression:
        if compression not in ROS1_COMPRESSION:
            raise ValueError(f"ROS 1 chunk compression must be one of {', '.join(ROS1_COMPRESSION)}")
        writer.set_compression(ROS1_COMPRESSION[compression])
    with writer:
        conns = _connections(writer, streams, types, markers, store)
        for key, msgtype, log_ns, msg in _messages(samples, streams, types, markers, store):
            writer.write(conns[key], log_ns, store.serialize_ros1(msg, msgtype))
