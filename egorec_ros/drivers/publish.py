"""The one output of a driver core: ``publish(topic, msg)`` with a message object of the
shared ``ros2_typestore()`` (``store``); headers carry the host stamp at capture."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from egorec_ros.messages.payloads.stamps import header_message
from egorec_ros.messages.typestores import ros2_typestore

Publish = Callable[[str, object], None]
store = ros2_typestore          # ROS 2 Humble + egorec_ros/msg types, built once per process


def header(stamp_ns: int, frame_id: str = "") -> Any:
    return header_message(ros2_typestore(), stamp_ns, frame_id)
