"""ROS message definitions -> cyclonedds IdlStruct classes.

The DDS types are derived, never written by hand: from the field layout the message
layer gives (``messages.fields``: the Humble types and ours from ``msg/*.msg``).
A ROS type ``pkg/msg/Name`` becomes the DDS type ``pkg::msg::dds_::Name_`` with
final extensibility, which is what rmw_cyclonedds_cpp announces, so the two match.

The classes are used to create topics (type name and XTypes type information in
discovery) and by the byte-equality test; samples never go through them: the
transport writes and takes serialized CDR bytes directly (see ``rawio``).
"""
from __future__ import annotations

from functools import lru_cache

from cyclonedds.idl import IdlStruct, make_idl_struct
from cyclonedds.idl import types as t

from egorec_ros.messages.fields import Node, message_fields
from egorec_ros.messages.typestores import ros2_typestore
from egorec_ros.transport.dds.names import ros_type as ros_type_of

# ROS 2 IDL: byte -> octet, char -> uint8 (rosidl), the rest by name
_BASE = {"bool": bool, "byte": t.byte, "char": t.uint8, "int8": t.int8, "uint8": t.uint8,
         "int16": t.int16, "uint16": t.uint16, "int32": t.int32, "uint32": t.uint32,
         "int64": t.int64, "uint64": t.uint64, "float32": t.float32, "float64": t.float64}


def dds_type_name(ros_type: str) -> str:
    """``sensor_msgs/msg/Image`` -> ``sensor_msgs::msg::dds_::Image_`` (also for srv Request/Response)."""
    parts = ros_type.split("/")
    if len(parts) != 3:
        raise ValueError(f"{ros_type!r} is not a ROS 2 type name (package/msg/Name)")
    pkg, ns, name = parts
    return f"{pkg}::{ns}::dds_::{name}_"


@lru_cache(maxsize=None)
def idl_type(ros_type: str) -> type[IdlStruct]:
    """The IdlStruct class of ``ros_type``; KeyError naming the type when it is unknown."""
    annotations = {name: _field_type(node) for name, node in message_fields(ros_type)}
    if not annotations:          # rosidl gives empty messages one member
        annotations = {"structure_needs_at_least_one_member": t.uint8}
    cls = make_idl_struct(ros_type.rsplit("/", 1)[1] + "_", dds_type_name(ros_type), annotations)
    cls.__idl_annotations__["extensibility"] = "final"
    return cls


def _field_type(node: Node):
    kind, arg = node
    if kind == "base":
        name, bound = arg
        if name == "string":
            return t.bounded_str[bound] if bound else str  # type: ignore[misc]
        if name not in _BASE:
            raise ValueError(f"no DDS type for the ROS base type {name!r}")
        return _BASE[name]
    if kind == "name":
        return idl_type(arg)
    sub, size = arg
    if kind == "array":
        return t.array[_field_type(sub), size]  # type: ignore[misc]
    if kind == "sequence":
        inner = _field_type(sub)
        return t.sequence[inner, size] if size else t.sequence[inner]  # type: ignore[misc]
    raise ValueError(f"unknown field node {node!r}")


@lru_cache(maxsize=None)
def service_wrapper_type(srvtype: str, half: str) -> type[IdlStruct]:
    """The DDS type of a service request or reply as rmw_cyclonedds_cpp puts it on the wire:
    ``pkg::srv::dds_::Name_Request_`` (``_Response_``) = {uint64 guid, int64 seq} + the fields."""
    if half not in ("Request", "Response"):
        raise ValueError(f"half must be 'Request' or 'Response', got {half!r}")
    ros_type = f"{srvtype}_{half}"
    fields = {"client_guid": t.uint64, "sequence_number": t.int64}
    fields.update({name: _field_type(node) for name, node in message_fields(ros_type)})
    cls = make_idl_struct(ros_type.rsplit("/", 1)[1] + "_", dds_type_name(ros_type), fields)
    cls.__idl_annotations__["extensibility"] = "final"
    return cls


@lru_cache(maxsize=None)
def type_hash_user_data(dds_type: str) -> bytes:
    """``typehash=RIHS01_<sha256>;``: what rmw_cyclonedds_cpp (Jazzy on) puts in an endpoint's
    USER_DATA QoS, the ROS type hash of REP 2011 (rosbags computes it from the same definitions).
    Jazzy reads it from every endpoint it discovers: without it each ``ros2`` command and node that
    saw ours warned "Failed to parse type hash ... from USER_DATA '(null)'" once per endpoint, and
    ``ros2 topic info -v`` showed no type hash. Humble ignores it. ``b""`` for a type rosbags cannot hash."""
    name = ros_type_of(dds_type)
    if name is None:
        return b""
    try:
        digest = ros2_typestore().hash_rihs01(name)
    except Exception:  # noqa: BLE001 - no hash only costs Jazzy's graph the type hash (and a warning)
        return b""
    return f"typehash={digest};".encode()
