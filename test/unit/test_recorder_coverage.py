"""Issue 24 item 7: the episode summary says how much of the time from start to commit the rows
cover and where the rest went (no threads here: the figures are given)."""
from __future__ import annotations

import numpy as np

from egorec_ros.assembly.assembler import AssemblyReport
from egorec_ros.recorder.coverage import coverage
from egorec_ros.recorder.stamp_lag import StampLag
from egorec_ros.rig.load import load_rig

S = 1_000_000_000


def test_a_late_stream_and_a_long_drain_are_named_with_their_seconds():
    """12.67 s of rows against 22 s from start to commit: 3 s waiting for the depth stream's first
    frame, 6 s draining the encoders. The IMU shares the left camera's slot: it is not a video."""
    rig = load_rig("appendix_b")
    start, rows = 100 * S, 380
    t0 = start + 3 * S
    stop = t0 + round((rows - 1) * S / rig.fps)
    report = AssemblyReport(rows=rows, t0=t0, start_ns=start, stop_ns=stop,
                            video_keys=["stereo_left", "stereo_right", "stereo_depth", "gripper_rgb"],
                            missing_streams=["gripper_b.rgb"], streams={}, invalid_examples={}, unknown_streams={},
                            finalize_lag_ns=np.zeros(0, np.int64))
    lags = {"ego.left": StampLag(0, 0, 0, first_stamp=start + S // 50),
            "ego.imu": StampLag(0, 0, 0, first_stamp=start - S // 100),
            "ego.depth": StampLag(0, 0, 0, first_stamp=start + 29 * S // 10),
            "ego.right": StampLag(0, 0, 0, first_stamp=start + S // 50),
            "gripper_a.rgb": StampLag(0, 0, 0, first_stamp=start + S // 10)}
    done = stop + 6 * S
    text = coverage(report, rig, lags, done, commit_seconds=0.5, latency_ns=150_000_000)
    assert text.startswith("rows cover 12.67 s of the 21.63 s from start to commit: first row 3.00 s after start "
                           "(first frame of ego.depth 2.90 s, gripper_a.rgb 0.10 s, "), text
    assert "ego.imu" not in text
    assert "left out (no frame in time for the start): gripper_b.rgb" in text
    assert text.endswith("stop to commit 6.00 s (latency budget 0.15 s, encoders catching up 5.35 s, commit 0.50 s)")
