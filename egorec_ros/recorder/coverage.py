"""Where an episode's time went: how much of it, from start to commit, its rows cover.

An episode's rows cover rows / fps seconds; the time from the start request to the commit
is longer by the wait for the first row (every recorded video stream must deliver a frame
near the first master frame: a camera that takes seconds to stream first delays it), the
time after the last row until the stop, and the drain and commit after the stop (the
encoders' backlog). A d435_single episode had 12.67 s of rows against ~22 s between start
and commit with nothing saying why; the summary line names each part.
"""
from __future__ import annotations

from collections.abc import Mapping

from egorec_ros.assembly.assembler import AssemblyReport
from egorec_ros.recorder.stamp_lag import StampLag


def coverage(report: AssemblyReport, fps: float, lags: Mapping[str, StampLag], done_ns: int | None,
             video_streams: Mapping[str, str]) -> str:
    """'rows cover 12.67 s of the 22.04 s from start to commit: first row 3.10 s after start
    (first frame of d435.depth 3.05 s after start, d435.rgb 0.08 s), last row 0.03 s before the
    stop, stop to commit 6.2 s (encoding backlog and commit)'. ``video_streams``: slot -> stream id."""
    rows_s = report.rows / fps
    parts = []
    if report.t0 is not None:
        firsts = {sid: (lags[sid].first_stamp - report.start_ns) / 1e9 for slot, sid in video_streams.items()
                  if slot in report.video_keys and sid in lags}
        waited = ", ".join(f"{sid} {s:.2f} s" for sid, s in sorted(firsts.items(), key=lambda kv: -kv[1]))
        parts.append(f"first row {(report.t0 - report.start_ns) / 1e9:.2f} s after start"
                     + (f" (first frame of {waited} after start)" if waited else ""))
        last_tick = report.t0 + round((report.rows - 1) * 1e9 / fps) if report.rows else report.t0
        parts.append(f"last row {(report.stop_ns - last_tick) / 1e9:.2f} s before the stop")
    if report.missing_streams:
        parts.append(f"left out (no frame in time for the start): {', '.join(report.missing_streams)}")
    whole = (done_ns if done_ns is not None else report.stop_ns) - report.start_ns
    if done_ns is not None:
        parts.append(f"stop to commit {(done_ns - report.stop_ns) / 1e9:.2f} s (latency budget, encoding "
                     "backlog and commit)")
    return f"rows cover {rows_s:.2f} s of the {whole / 1e9:.2f} s from start to commit: " + "; ".join(parts)
