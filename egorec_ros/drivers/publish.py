"""The one output of a driver core: ``publish(topic, msg)`` with a rosbags message of
``ros2_typestore()``; headers carry the host stamp at capture."""
from __future__ import annotations

from collections.abc import Callable

from rosbags.typesys.store import Typestore

from egorec_ros.converter.payloads.stamps import header_message
from egorec_ros.messages.typestores import ros2_typestore

Publish = Callable[[str, object], None]


def store() -> Typestore:
    return ros2_typestore()


def header(stamp_ns: int, frame_id: str = "") -> object:
    return header_message(ros2_typestore(), stamp_ns, frame_id)
