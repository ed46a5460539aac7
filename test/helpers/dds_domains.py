"""The DDS domain ids each test file may use.

Each file has a range of its own, so a process one test left behind can never be seen by another
file's test (the console test once saw two publishers per topic: a recorder from another file
shared its domain). A file picks ``domain_for(__name__)``: inside its range by pid, so two test
runs at once differ too. ROS allows domain ids 0..232.
"""
from __future__ import annotations

import os

RANGES: dict[str, range] = {
    "test_console_review_marks": range(1, 5),
    "test_console_security": range(5, 10),
    "test_recorder_lifecycle_dds": range(10, 30),
    "test_console_browser_rclpy": range(30, 36),
    "test_nodes_rclpy_preview_drain": range(36, 42),
    "test_transport_dds_type_hash": range(42, 50),
    "test_console_browser": range(50, 60),
    "test_drivers_node": range(60, 90),
    "test_live_preview": range(90, 100),
    "test_transport_dds": range(100, 120),
    "test_transport_dds_processes": range(120, 130),
    "test_nodes_rclpy_transport": range(130, 140),
    "test_upload_recorder_node": range(140, 150),
    "test_recorder_node_task_folder": range(150, 160),
    "test_transport_dds_replay": range(160, 170),
    "test_nodes_rclpy": range(170, 190),
    "test_transport_dds_control": range(190, 210),
    "test_console_stale_status": range(210, 213),
    "test_transport_dds_faults": range(213, 226),
    "test_console_stop": range(226, 230),
    "bench_service_call": range(230, 231),
    "bench_console": range(231, 232),      # bench/ (ab_windows.recording): not tests, but not in their domains either
    "bench_preview": range(232, 233),
}


def domain_for(module: str) -> int:
    """A domain id of ``module``'s range (``__name__`` of a test file)."""
    name = module.rsplit(".", 1)[-1]
    if name not in RANGES:
        raise LookupError(f"{name} has no DDS domain range: give it a free one in RANGES of {__file__}")
    ids = RANGES[name]
    return ids[os.getpid() % len(ids)]
