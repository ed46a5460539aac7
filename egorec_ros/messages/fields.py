"""The field layout of a ROS message type in plain terms, so code outside ``messages/``
(the DDS type builder in ``transport/dds``) can walk a definition without rosbags' types.

A field is ``(name, node)``; a node is ``("base", (type name, string bound))``,
``("name", message type)``, ``("array", (element node, length))`` or
``("sequence", (element node, bound))`` — rosbags' field definitions with the kind spelt out.
"""
from __future__ import annotations

from rosbags.interfaces import Nodetype

from egorec_ros.messages.typestores import ros2_typestore

Node = tuple[str, tuple]
_KINDS = {Nodetype.BASE: "base", Nodetype.NAME: "name", Nodetype.ARRAY: "array", Nodetype.SEQUENCE: "sequence"}


def message_fields(ros_type: str) -> list[tuple[str, Node]]:
    """Fields of ``ros_type`` (the Humble types plus ours); KeyError naming the type when unknown."""
    store = ros2_typestore()
    if ros_type not in store.fielddefs:
        raise KeyError(f"message type {ros_type} is not in the typestore; known types are the ROS 2 Humble "
                       "types and egorec_ros/msg/*, egorec_ros/srv/*")
    return [(name, _plain(desc)) for name, desc in store.fielddefs[ros_type][1]]


def _plain(desc: tuple) -> Node:
    kind, arg = desc
    name = _KINDS[kind]
    if name in ("array", "sequence"):
        sub, size = arg
        return name, (_plain(sub), size)
    return name, arg
