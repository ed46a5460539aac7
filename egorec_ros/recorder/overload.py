"""Saying plainly when the recorder cannot keep up, and what to do about it.

Two signs: an encoder's queue filling up (it is slower than the frames arrive; once the
queue is full, rows are built late and frames repeated), and video frames repeated in
more than ``REPEAT_WARN`` of the rows (whatever the cause: an encoder or the machine too
slow, or the camera itself delivering too few frames in time).
"""
from __future__ import annotations

from collections.abc import Mapping

BACKLOG_WARN = 15     # frames queued for one encoder (its queue holds 30: 1 s at 30 fps)
REPEAT_WARN = 0.10    # fraction of rows repeating a stream's previous frame
MIN_ROWS = 30         # judge repeats only after a second of rows
ADVICE = ("record at a smaller --size, with a faster codec or preset (--codec h264), or with --depth mkv "
          "(lossless FFV1 depth costs far less CPU than 12-bit HEVC)")


def _worst_encoder(backlog: Mapping[str, int]) -> tuple[str, int]:
    return max(((k, v) for k, v in backlog.items() if k != "rows"), key=lambda kv: kv[1], default=("", 0))


def backlog_warning(backlog: Mapping[str, int]) -> str:
    key, n = _worst_encoder(backlog)
    if n < BACKLOG_WARN:
        return ""
    return f"encoder {key} is {n} frames behind: this machine cannot encode the rig in real time"


def repeat_warning(repeated: Mapping[str, int], rows: int) -> str:
    if rows < MIN_ROWS or not repeated:
        return ""
    key, n = max(repeated.items(), key=lambda kv: kv[1])
    if n <= REPEAT_WARN * rows:
        return ""
    return f"{key} repeated {n} of {rows} frames ({100 * n / rows:.0f} %)"


def live_warning(backlog: Mapping[str, int], repeated: Mapping[str, int], rows: int) -> str:
    """One line for the progress display and the recorder status ("" when all is well)."""
    problems = [w for w in (backlog_warning(backlog), repeat_warning(repeated, rows)) if w]
    return f"OVERLOADED: {'; '.join(problems)} -> {ADVICE}" if problems else ""


def episode_warnings(streams: Mapping[str, Mapping[str, int]], rows: int, peak_backlog: Mapping[str, int]) -> list[str]:
    """Lines for the end-of-episode summary: every video stream whose frames were repeated
    in more than REPEAT_WARN of the rows, and an encoder that fell behind."""
    out = []
    for sid, counts in streams.items():
        n = counts.get("repeated", 0)
        if rows and n > REPEAT_WARN * rows:
            out.append(f"{sid} repeated {n} of {rows} frames ({100 * n / rows:.0f} %): it was not captured "
                       "or not encoded in time")
    key, n = _worst_encoder(peak_backlog)
    if n >= BACKLOG_WARN:
        out.append(f"encoder {key} fell up to {n} frames behind: this machine could not encode the rig in real time")
    if out:
        out.append(f"to keep up, {ADVICE}")
    return out
