"""``/diagnostics`` messages (``diagnostic_msgs``), shared by the recorder and the drivers
node; kept apart from the recorder so a drivers process does not load pyarrow and PyAV."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from egorec_ros.messages.payloads.stamps import header_message
from egorec_ros.messages.typestores import ros2_typestore

DIAGNOSTICS_TOPIC, DIAGNOSTIC_ARRAY = "/diagnostics", "diagnostic_msgs/msg/DiagnosticArray"
DIAG_STATUS, KEY_VALUE = "diagnostic_msgs/msg/DiagnosticStatus", "diagnostic_msgs/msg/KeyValue"
OK, WARN, ERROR, STALE = 0, 1, 2, 3      # DiagnosticStatus levels


def diagnostic_status(level: int, name: str, message: str, hardware_id: str, values: Mapping[str, object]):
    """One ``DiagnosticStatus``; ``values`` become its key/value pairs as text."""
    types = ros2_typestore().types
    return types[DIAG_STATUS](level=level, name=name, message=message, hardware_id=hardware_id,
                              values=[types[KEY_VALUE](key=k, value=str(v)) for k, v in values.items()])


def diagnostic_array(stamp_ns: int, node: str, statuses: Sequence) -> bytes:
    """The serialized ``DiagnosticArray`` of ``statuses``, stamped ``stamp_ns`` by ``node``."""
    store = ros2_typestore()
    msg = store.types[DIAGNOSTIC_ARRAY](header=header_message(store, stamp_ns, node), status=list(statuses))
    return bytes(store.serialize_cdr(msg, DIAGNOSTIC_ARRAY))
