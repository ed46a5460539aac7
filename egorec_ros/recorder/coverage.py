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
from egorec_ros.rig.kinds import StreamKind
from egorec_ros.rig.model import Rig


def _s(ns: float) -> str:
    return f"{round(ns / 1e9, 2) + 0.0:.2f}"   # + 0.0: no "-0.00"


def coverage(report: AssemblyReport, rig: Rig, lags: Mapping[str, StampLag], done_ns: int | None,
             commit_seconds: float | None = None, latency_ns: int | None = None) -> str:
    """'rows cover 10.00 s of the 29.09 s from start to commit: first row 0.03 s after start (first
    frame of head.rgb 0.00 s, head.depth 0.00 s after start); last row 0.00 s before the stop;
    stop to commit 19.09 s (latency budget 0.15 s, encoders catching up 18.24 s, commit 0.70 s)'.
    ``commit_seconds`` (the commit's own time) and
    ``latency_ns`` (D), if known, split the time after the stop."""
    rows_s = report.rows / rig.fps
    video_streams = {s.slot: s.id for s in rig.streams.values() if s.kind in (StreamKind.VIDEO, StreamKind.DEPTH)}
    parts = []
    if report.t0 is not None:
        firsts = {sid: (lags[sid].first_stamp - report.start_ns) / 1e9 for slot, sid in video_streams.items()
                  if slot in report.video_keys and sid in lags}
        waited = ", ".join(f"{sid} {_s(s * 1e9)} s" for sid, s in sorted(firsts.items(), key=lambda kv: -kv[1]))
        parts.append(f"first row {_s(report.t0 - report.start_ns)} s after start"
                     + (f" (first frame of {waited} after start)" if waited else ""))
        last_tick = report.t0 + round((report.rows - 1) * 1e9 / rig.fps) if report.rows else report.t0
        parts.append(f"last row {_s(max(0, report.stop_ns - last_tick))} s before the stop")
    if report.missing_streams:
        parts.append(f"left out (no frame in time for the start): {', '.join(report.missing_streams)}")
    whole = (done_ns if done_ns is not None else report.stop_ns) - report.start_ns
    if done_ns is not None:
        after = done_ns - report.stop_ns
        if commit_seconds is None or latency_ns is None:
            why = "latency budget, encoders catching up, commit"
        else:
            commit = commit_seconds * 1e9
            why = (f"latency budget {_s(latency_ns)} s, encoders catching up "
                   f"{_s(max(0.0, after - latency_ns - commit))} s, commit {_s(commit)} s")
        parts.append(f"stop to commit {_s(after)} s ({why})")
    return f"rows cover {rows_s:.2f} s of the {_s(whole)} s from start to commit: " + "; ".join(parts)
