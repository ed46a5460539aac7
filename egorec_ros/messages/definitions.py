"""Our .msg files -> rosbags type definitions (``egorec_ros/msg/<Name>``).

The .msg files stay the single source of truth; ``egorec_ros.resources`` finds them
(package data, the source checkout, or a colcon install's share/egorec_ros/msg).
"""
from __future__ import annotations

from functools import lru_cache

from rosbags.typesys import get_types_from_msg

from egorec_ros import resources

PACKAGE = resources.PACKAGE
NAMES = ("GloveFrame", "HandPose", "ForceMatrix", "GripperState", "SlamPose")


def type_name(name: str) -> str:
    """ROS 2 type name of one of our messages, e.g. ``egorec_ros/msg/SlamPose``."""
    return f"{PACKAGE}/msg/{name}"


@lru_cache(maxsize=1)
def custom_types() -> dict:
    """Parsed definitions of all our messages, ready for ``Typestore.register``."""
    folder = resources.msg_dir(NAMES)
    types: dict = {}
    for name in NAMES:
        types.update(get_types_from_msg((folder / f"{name}.msg").read_text(encoding="utf-8"), type_name(name)))
    return types
