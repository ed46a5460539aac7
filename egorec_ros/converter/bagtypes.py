"""The typestore used to decode one bag, and the types it cannot decode.

Definitions stored in the bag win (ROS 1 bags always carry them; mcap and newer
sqlite3 bags do too). Types without a stored definition come from ROS 2 Humble
plus our egorec_ros messages. Unlike ``AnyReader``, one bad or unknown
definition does not make the whole bag unreadable: its topics are listed as
undecodable and skipped.
"""
from __future__ import annotations

from collections.abc import Iterable

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


def bag_typestore(connections: Iterable[Connection], *, ros1: bool) -> tuple[Typestore, dict[str, str]]:
    """-> (typestore, {msgtype: why it cannot be decoded})."""
    connections = list(connections)
    store = get_typestore(Stores.EMPTY)
    problems: dict[str, str] = {}
    from_bag: set[str] = set()
    for conn in _unique_definitions(connections):
        try:
            types = _parse_definition(conn)
            store.register(types)
        except (TypesysError, ValueError, KeyError, AssertionError) as exc:
            problems[conn.msgtype] = f"its definition stored in the bag cannot be used ({exc})"
            continue
        from_bag.update(types)
    if not ros1:
        base = ros2_typestore()
        store.register({name: fields for name, fields in base.fielddefs.items() if name not in store.fielddefs})
        for conn in connections:
            if conn.digest and conn.msgtype not in from_bag and conn.msgtype in store.fielddefs \
                    and conn.digest.startswith("RIHS01_") and store.hash_rihs01(conn.msgtype) != conn.digest:
                problems.setdefault(conn.msgtype, "the bag's type hash differs from the ROS 2 Humble definition "
                                                  "and the bag stores no definition")
    for conn in connections:
        if conn.msgtype not in store.fielddefs:
            problems.setdefault(conn.msgtype, "unknown message type (the bag stores no definition and it is not "
                                              "a ROS 2 Humble or egorec_ros type)")
        elif missing := _unresolved(store, conn.msgtype, set()):
            problems.setdefault(conn.msgtype, f"its definition uses the unknown type {missing}")
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
            node, arg = arg[0]
        if node == Nodetype.NAME and (missing := _unresolved(store, arg, seen)):
            return missing
    return None


def _unique_definitions(connections: list[Connection]) -> list[Connection]:
    seen: set[tuple[str, str]] = set()
    out = []
    for conn in connections:
        key = (conn.msgtype, conn.msgdef.data)
        if conn.msgdef.format != MessageDefinitionFormat.NONE and key not in seen:
            seen.add(key)
            out.append(conn)
    return out


def _parse_definition(conn: Connection) -> dict:
    """Same parsing as rosbags' AnyReader, per connection."""
    data = conn.msgdef.data
    if conn.msgdef.format == MessageDefinitionFormat.MSG:
        return dict(get_types_from_msg(data, conn.msgtype))
    types: dict = {}
    if data.startswith(f"{_IDL_SEPARATOR}IDL: "):
        for part in data.split(_IDL_SEPARATOR)[1:]:
            types.update(get_types_from_idl(part.split("\n", 1)[1]))
    else:
        types.update(get_types_from_idl(data))
    return types
