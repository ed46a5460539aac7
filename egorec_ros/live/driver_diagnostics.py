"""Driver health -> ``diagnostic_msgs/DiagnosticArray``: one status per driver (ok /
disconnected, published, reconnects, bad frames per reason as ``bad.<reason>``), plus the
rig devices that run no driver (not plugged in, not placed) and the plugged devices the rig
does not name. ``rqt_runtime_monitor`` and ``ros2 topic echo /diagnostics`` show them."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from egorec_ros.drivers.discovery import Found
from egorec_ros.drivers.health import OK as STATUS_OK
from egorec_ros.live.node import DIAG_STATUS, DIAGNOSTIC_ARRAY, ERROR, KEY_VALUE, OK, WARN
from egorec_ros.messages.payloads.stamps import header_message
from egorec_ros.messages.typestores import ros2_typestore


def driver_status(node: str, name: str, snapshot: Mapping, where: str, new_bad: int):
    """``snapshot``: ``Health.snapshot()``; ``new_bad``: bad frames since the last report (WARN)."""
    bad = snapshot["bad"]
    if snapshot["status"] != STATUS_OK:
        level, text = ERROR, f"disconnected: {snapshot['detail']}"
    elif new_bad:
        level, text = WARN, f"ok; {new_bad} bad frames in the last period ({', '.join(f'{k} {v}' for k, v in sorted(bad.items()))} in all)"
    else:
        level, text = OK, "ok"
    values = {"status": snapshot["status"], "where": where, "published": snapshot["published"],
              "reconnects": snapshot["reconnects"], **{f"bad.{k}": v for k, v in sorted(bad.items())}}
    return _status(level, f"{node}: {name}", text, snapshot["device"], values)


def not_running(node: str, name: str, why: str):
    return _status(ERROR, f"{node}: {name}", f"not running: {why}", name, {"status": "not running"})


def not_in_rig(node: str, found: Found):
    return _status(WARN, f"{node}: {found.key}", f"plugged in at {found.where} but not in the rig: not used",
                   found.key, {"status": "not in the rig", "where": found.where})


def diagnostic_array(stamp_ns: int, node: str, statuses: Sequence) -> bytes:
    store = ros2_typestore()
    msg = store.types[DIAGNOSTIC_ARRAY](header=header_message(store, stamp_ns, node), status=list(statuses))
    return bytes(store.serialize_cdr(msg, DIAGNOSTIC_ARRAY))


def _status(level: int, name: str, message: str, hardware_id: str, values: Mapping):
    types = ros2_typestore().types
    return types[DIAG_STATUS](level=level, name=name, message=message, hardware_id=hardware_id,
                              values=[types[KEY_VALUE](key=k, value=str(v)) for k, v in values.items()])
