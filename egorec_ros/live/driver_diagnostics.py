"""Driver health -> ``diagnostic_msgs/DiagnosticArray``: one status per driver (ok /
disconnected, published, reconnects, bad frames per reason as ``bad.<reason>``), plus the
rig devices that run no driver (not plugged in, not placed) and the plugged devices the rig
does not name. ``rqt_runtime_monitor`` and ``ros2 topic echo /diagnostics`` show them."""
from __future__ import annotations

from collections.abc import Mapping

from egorec_ros.drivers.discovery import Found
from egorec_ros.drivers.health import OK as STATUS_OK
from egorec_ros.live.diagnostics import ERROR, OK, WARN, diagnostic_status


def driver_status(node: str, name: str, snapshot: Mapping, where: str, new_bad: int):
    """``snapshot``: ``Health.snapshot()``; ``new_bad``: bad frames since the last report (WARN)."""
    bad = snapshot["bad"]
    if snapshot["status"] != STATUS_OK:
        level, text = ERROR, f"disconnected: {snapshot['detail']}"
    elif new_bad:
        level, text = WARN, f"ok; {new_bad} bad frames in the last period ({bad_frames(bad)} in all)"
    else:
        level, text = OK, "ok"
    values = {"status": snapshot["status"], "where": where, "published": snapshot["published"],
              "reconnects": snapshot["reconnects"], **{f"bad.{k}": v for k, v in sorted(bad.items())}}
    return diagnostic_status(level, f"{node}: {name}", text, snapshot["device"], values)


def bad_frames(bad: Mapping[str, int]) -> str:
    """``{"crc": 2, "short": 1}`` -> ``crc 2, short 1``."""
    return ", ".join(f"{k} {v}" for k, v in sorted(bad.items()))


def not_running(node: str, name: str, why: str):
    return diagnostic_status(ERROR, f"{node}: {name}", f"not running: {why}", name, {"status": "not running"})


def not_in_rig(node: str, found: Found):
    return diagnostic_status(WARN, f"{node}: {found.key}", f"plugged in at {found.where} but not in the rig: not used",
                   found.key, {"status": "not in the rig", "where": found.where})
