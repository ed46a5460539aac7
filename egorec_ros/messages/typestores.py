"""Typestores with the standard types plus ours, one per ROS generation.

ROS 2 bags are read and written with the Humble types; ROS 1 bags are written
with the Noetic types (their Header carries ``seq`` and their definitions and
md5 sums are what ROS 1 tools expect). Reading a ROS 1 bag uses the definitions
stored in the bag instead (see ``egorec_ros.bags.bagtypes``).
"""
from __future__ import annotations

from functools import lru_cache

from rosbags.typesys import Stores, get_typestore
from rosbags.typesys.store import Typestore

from egorec_ros.messages.definitions import custom_types

TF_MESSAGE = "tf2_msgs/msg/TFMessage"


@lru_cache(maxsize=1)
def ros2_typestore() -> Typestore:
    """ROS 2 Humble types + egorec_ros/msg/*. Shared: do not register into it."""
    store = get_typestore(Stores.ROS2_HUMBLE)
    store.register(custom_types())
    return store


@lru_cache(maxsize=1)
def ros1_typestore() -> Typestore:
    """ROS 1 Noetic types + egorec_ros/msg/* + tf2_msgs/TFMessage (absent from rosbags' Noetic store)."""
    store = get_typestore(Stores.ROS1_NOETIC)
    store.register(custom_types())
    if TF_MESSAGE not in store.fielddefs:
        store.register({TF_MESSAGE: ros2_typestore().fielddefs[TF_MESSAGE]})
    return store
