"""ROS message definitions (rosbags typestore) -> cyclonedds IdlStruct classes.

The DDS types are derived, never written by hand: the standard types come from
rosbags' Humble typestore and ours from ``msg/*.msg`` (``ros2_typestore()``).
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
from rosbags.interfaces import Nodetype
from rosbags.typesys.store import Typestore

from egorec_ros.messages.typestores import ros2_typestore

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


def idl_type(ros_type: str, store: Typestore | None = None) -> type[IdlStruct]:
    """The IdlStruct class of ``ros_type``; KeyError naming the type when the typestore lacks it."""
    return _idl_type(ros_type, store or ros2_typestore())


@lru_cache(maxsize=None)
def _idl_type(ros_type: str, store: Typestore) -> type[IdlStruct]:
    if ros_type not in store.fielddefs:
        raise KeyError(f"message type {ros_type} is not in the typestore; known types are rosbags' "
                       "ROS 2 Humble types and egorec_ros/msg/*")
    _, fields = store.fielddefs[ros_type]
    annotations = {name: _field_type(desc, store) for name, desc in fields}
    if not annotations:          # rosidl gives empty messages one member
        annotations = {"structure_needs_at_least_one_member": t.uint8}
    cls = make_idl_struct(ros_type.rsplit("/", 1)[1] + "_", dds_type_name(ros_type), annotations)
    cls.__idl_annotations__["extensibility"] = "final"
    return cls


def _field_type(desc: tuple, store: Typestore):
    kind, arg = desc
    if kind == Nodetype.BASE:
        name, bound = arg
        if name == "string":
            return t.bounded_str[bound] if bound else str  # type: ignore[misc]
        if name not in _BASE:
            raise ValueError(f"no DDS type for the ROS base type {name!r}")
        return _BASE[name]
    if kind == Nodetype.NAME:
        return _idl_type(arg, store)
    sub, size = arg
    if kind == Nodetype.ARRAY:
        return t.array[_field_type(sub, store), size]  # type: ignore[misc]
    if kind == Nodetype.SEQUENCE:
        inner = _field_type(sub, store)
        return t.sequence[inner, size] if size else t.sequence[inner]  # type: ignore[misc]
    raise ValueError(f"unknown field node {desc!r}")


@lru_cache(maxsize=None)
def service_wrapper_type(srvtype: str, half: str) -> type[IdlStruct]:
    """The DDS type of a service request or reply as rmw_cyclonedds_cpp puts it on the wire:
    ``pkg::srv::dds_::Name_Request_`` (``_Response_``) = {uint64 guid, int64 seq} + the fields."""
    if half not in ("Request", "Response"):
        raise ValueError(f"half must be 'Request' or 'Response', got {half!r}")
    ros_type = f"{srvtype}_{half}"
    store = ros2_typestore()
    if ros_type not in store.fielddefs:
        raise KeyError(f"service type {srvtype} is not in the typestore (no {ros_type})")
    fields = {"client_guid": t.uint64, "sequence_number": t.int64}
    fields.update({name: _field_type(desc, store) for name, desc in store.fielddefs[ros_type][1]})
    cls = make_idl_struct(ros_type.rsplit("/", 1)[1] + "_", dds_type_name(ros_type), fields)
    cls.__idl_annotations__["extensibility"] = "final"
    return cls
