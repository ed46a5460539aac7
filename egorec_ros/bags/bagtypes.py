"""The typestore used to decode one bag, and the types it cannot decode.

Definitions stored in the bag win (ROS 1 bags always carry them; mcap and newer
sqlite3 bags do too). Types without a stored definition come from ROS 2 Humble
plus our egorec_ros messages. Unlike ``AnyReader``, one bad or unknown
definition does not make the whole bag unreadable: its topics are listed as
undecodable and skipped.
"""
from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import NamedTuple

from rosbags.interfaces import Connection, MessageDefinitionFormat, Nodetype
from rosbags.typesys import (
    Stores,
    TypesysError,
    get_types_from_idl,
    get_types_from_msg,
    get_typestore,
)
from rosbags.typesys.store import Typestore

from egorec_ros.messages.typestores import ros2_typestore

_IDL_SEPARATOR = "=" * 80 + "\n"


class _Definition(NamedTuple):
    """What a connection says about its type (hashable, so stores can be cached)."""

    msgtype: str
    format: MessageDefinitionFormat
    data: str
    digest: str


def ros2_type_name(msgtype: str) -> str:
    """The ROS 2 name of a message type: ``sensor_msgs/Image`` (stored by ROS 2 Crystal and
    Dashing bags, which also store no definitions) -> ``sensor_msgs/msg/Image``, so such
    bags decode with the Humble definitions and map like any other."""
    parts = msgtype.split("/")
    return f"{parts[0]}/msg/{parts[1]}" if len(parts) == 2 and all(parts) else msgtype


def bag_typestore(connections: Iterable[Connection], *, ros1: bool) -> tuple[Typestore, dict[str, str]]:
    """-> (typestore, {msgtype: why it cannot be decoded}). Cached per set of definitions:
    a bag is opened by the planner and again by every episode job, and building a store
    of all Humble types costs 0.1-0.25 s. Callers only read the store."""
    definitions = tuple(sorted({_Definition(c.msgtype, c.msgdef.format, c.msgdef.data, c.digest or "")
                                for c in connections}, key=lambda d: (d.msgtype, d.data, d.digest)))
    store, problems = _typestore(definitions, ros1)
    return store, dict(problems)


@functools.lru_cache(maxsize=8)
def _typestore(definitions: tuple[_Definition, ...], ros1: bool) -> tuple[Typestore, dict[str, str]]:
    store = get_typestore(Stores.EMPTY)
    problems: dict[str, str] = {}
    from_bag: set[str] = set()
    for definition in _unique_definitions(definitions):
        try:
            types = _parse_definition(definition)
            store.register(types)
        except (TypesysError, ValueError, KeyError, AssertionError) as exc:
            problems[definition.msgtype] = f"its definition stored in the bag cannot be used ({exc})"
            continue
        from_bag.update(types)
    if not ros1:
        base = ros2_typestore()
        store.register({name: fields for name, fields in base.fielddefs.items() if name not in store.fielddefs})
        for d in definitions:
            if d.digest and d.msgtype not in from_bag and d.msgtype in store.fielddefs \
                    and d.digest.startswith("RIHS01_") and store.hash_rihs01(d.msgtype) != d.digest:
                problems.setdefault(d.msgtype, "the bag's type hash differs from the ROS 2 Humble definition "
                                               "and the bag stores no definition")
    for d in definitions:
        if d.msgtype not in store.fielddefs:
            problems.setdefault(d.msgtype, "unknown message type (the bag stores no definition and it is not "
                                           "a ROS 2 Humble or egorec_ros type)")
        elif missing := _unresolved(store, d.msgtype, set()):
            problems.setdefault(d.msgtype, f"its definition uses the unknown type {missing}")
    return store, problems


def _unresolved(store: Typestore, name: str, seen: set[str]) -> str | None:
    """A type ``name`` refers to, directly or not, that the store does not have."""
    if name not in store.fielddefs:
        return name
    if name in seen:
        return None
    seen.add(name)
    for _, (node, arg) in store.fielddefs[name][1]:
        if node in (Nodetype.ARRAY, Nodetype.SEQUENCE):
            node, arg = arg[0]  # type: ignore[assignment, str-unpack]  # rosbags types nested field defs loosely
        if node == Nodetype.NAME and (missing := _unresolved(store, arg, seen)):  # type: ignore[arg-type]
            return missing
    return None


def _unique_definitions(definitions: tuple[_Definition, ...]) -> list[_Definition]:
    seen: set[tuple[str, str]] = set()
    out = []
    for d in definitions:
        key = (d.msgtype, d.data)
        if d.format != MessageDefinitionFormat.NONE and key not in seen:
            seen.add(key)
            out.append(d)
    return out


def _parse_definition(definition: _Definition) -> dict:
    """Same parsing as rosbags' AnyReader, per connection."""
    data = definition.data
    if definition.format == MessageDefinitionFormat.MSG:
        return dict(get_types_from_msg(data, definition.msgtype))
    types: dict = {}
    if data.startswith(f"{_IDL_SEPARATOR}IDL: "):
        for part in data.split(_IDL_SEPARATOR)[1:]:
            types.update(get_types_from_idl(part.split("\n", 1)[1]))
    else:
        types.update(get_types_from_idl(data))
    return types
