"""ROS times and headers <-> integer nanoseconds (ROS 1 and ROS 2 messages alike:
rosbags gives both a ``builtin_interfaces/msg/Time`` with sec/nanosec)."""
from __future__ import annotations

from rosbags.typesys.store import Typestore
from egorec_ros.messages.msg import Msg

HEADER = "std_msgs/msg/Header"
TIME = "builtin_interfaces/msg/Time"


def time_ns(stamp: Msg) -> int:
    return int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)


def header_ns(msg: Msg) -> int | None:
    """The message's header stamp in ns, or None when the message has no header."""
    header = getattr(msg, "header", None)
    return None if header is None else time_ns(header.stamp)


def time_message(store: Typestore, ns: int) -> Msg:
    sec, nanosec = divmod(int(ns), 1_000_000_000)
    return store.types[TIME](sec=sec, nanosec=nanosec)


def header_message(store: Typestore, stamp_ns: int, frame_id: str = "") -> Msg:
    """A Header for either ROS generation (the ROS 1 one has a ``seq`` field)."""
    fields = {"stamp": time_message(store, stamp_ns), "frame_id": frame_id}
    if any(name == "seq" for name, _ in store.fielddefs[HEADER][1]):
        fields["seq"] = 0
    return store.types[HEADER](**fields)
