"""The console shows its recorder's /diagnostics entries whichever recorder publishes them: the
rclpy recorder names them by the node's full name (``/egorec_recorder: cam0.rgb``), the DDS
recorder by its ``--name`` (``rec: cam0.rgb``). The console dropped every rclpy entry (found
running the console against the rclpy recorder on Jazzy)."""
from __future__ import annotations

from egorec_ros.console.link import diagnostics_list
from egorec_ros.live.diagnostics import DIAGNOSTIC_ARRAY, ERROR, OK, WARN, diagnostic_array, diagnostic_status
from egorec_ros.messages.decode import deserialize


def _array(*statuses) -> object:
    return deserialize(DIAGNOSTIC_ARRAY, diagnostic_array(1_000, "/x", statuses))


def test_entries_of_the_rclpy_and_the_dds_recorder_are_both_found():
    msg = _array(diagnostic_status(WARN, "/egorec_recorder: recorder", "OVERLOADED", "/egorec_recorder", {"rows": 3}),
                 diagnostic_status(OK, "/egorec_recorder: cam0.rgb", "30.0 Hz", "/egorec_recorder", {}),
                 diagnostic_status(ERROR, "/other_recorder: recorder", "x", "/other_recorder", {}),
                 diagnostic_status(OK, "egorec_recorder_2: recorder", "idle", "egorec_recorder_2", {}))
    for name in ("egorec_recorder", "/egorec_recorder"):
        got = diagnostics_list(msg, name)
        assert [(d["name"], d["level"], d["message"]) for d in got] == [("recorder", "warn", "OVERLOADED"),
                                                                        ("cam0.rgb", "ok", "30.0 Hz")]
        assert got[0]["values"] == {"rows": "3"}
    dds = _array(diagnostic_status(OK, "rec: recorder", "idle", "rec", {}),
                 diagnostic_status(OK, "rec2: recorder", "idle", "rec2", {}))
    assert [d["name"] for d in diagnostics_list(dds, "rec")] == ["recorder"]


def test_a_namespaced_node():
    msg = _array(diagnostic_status(OK, "/lab/rec: cam0.rgb", "30.0 Hz", "/lab/rec", {}))
    assert [d["name"] for d in diagnostics_list(msg, "lab/rec")] == ["cam0.rgb"]
