"""ROS names <-> the DDS names rmw_cyclonedds_cpp uses on the wire."""
from __future__ import annotations

import os

from egorec_ros.transport.errors import TransportConfigError

TOPIC_PREFIX = "rt"
REQUEST_PREFIX = "rq"
REPLY_PREFIX = "rr"


def dds_topic(ros_topic: str, prefix: str = TOPIC_PREFIX, suffix: str = "") -> str:
    """``/camera/image`` -> ``rt/camera/image``; services: ``rq/<name>Request`` / ``rr/<name>Reply``."""
    if not ros_topic or ros_topic.startswith("~"):
        raise ValueError(f"topic {ros_topic!r}: give a full ROS name (private names ~/x are resolved by a node)")
    return f"{prefix}/{ros_topic.lstrip('/')}{suffix}"


def ros_topic(dds_name: str) -> str | None:
    """``rt/camera/image`` -> ``/camera/image``; None for names that are not ROS topics."""
    prefix, _, rest = dds_name.partition("/")
    return "/" + rest if prefix == TOPIC_PREFIX and rest else None


def ros_type(dds_type: str) -> str | None:
    """``sensor_msgs::msg::dds_::Image_`` -> ``sensor_msgs/msg/Image``; None if not a ROS type."""
    parts = dds_type.split("::")
    if len(parts) != 4 or parts[2] != "dds_" or not parts[3].endswith("_"):
        return None
    return f"{parts[0]}/{parts[1]}/{parts[3][:-1]}"


def domain_id() -> int:
    """``ROS_DOMAIN_ID`` (0 when unset), as ROS 2 uses it."""
    value = os.environ.get("ROS_DOMAIN_ID", "").strip() or "0"
    try:
        domain = int(value)
    except ValueError:
        raise TransportConfigError(f"ROS_DOMAIN_ID={value!r} is not an integer (ROS uses 0..232)") from None
    if not 0 <= domain <= 232:
        raise TransportConfigError(f"ROS_DOMAIN_ID={domain} is outside 0..232")
    return domain
