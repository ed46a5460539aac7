"""Camera checks from the per-frame figures the encoders gathered (codecs.frame_stats):
the longest gap (rows repeating one frame: no new frame came), frozen content (new frames,
identical picture), black or blown-out stretches (RGB only)."""
from __future__ import annotations

from typing import Mapping

import numpy as np

from egorec_ros.codecs.frame_stats import FrameSeries
from egorec_ros.qa.runs import longest_equal, longest_true
from egorec_ros.qa.thresholds import QaThresholds
from egorec_ros.qa.verdict import REDO, WARN, Finding


def video_checks(series: Mapping[str, tuple[str, FrameSeries]], fps: float, t: QaThresholds,
                 findings: list[Finding]) -> dict:
    """``series``: image_key -> (kind, figures). Appends findings; returns the figures per key."""
    figures = {}
    ms = 1000.0 / fps
    for key, (kind, s) in series.items():
        if s.repeat.size == 0:
            continue
        # a gap: a frame plus the rows repeating it
        gap_rows, gap_at = longest_true(s.repeat)
        gap_ms = (gap_rows + 1) * ms if gap_rows else ms
        # frozen: the longest run of new frames (not repeats) showing one picture; black or
        # blown-out frames are all alike and reported as such, not as frozen
        exposed = np.ones_like(s.repeat) if kind == "depth" else (s.luma > t.black_luma) & (s.luma < t.blown_luma)
        fresh = np.flatnonzero(~s.repeat & exposed)
        run, at = longest_equal(s.hash[fresh])
        frozen = run if run > 1 else 0
        first, last = (int(fresh[at]), int(fresh[at + run - 1])) if frozen else (0, 0)
        fig = {"longest_gap_ms": round(gap_ms, 1), "frozen_frames": frozen}
        level = REDO if gap_ms >= t.gap_redo_ms else WARN if gap_ms >= t.gap_warn_ms else None
        if level:
            findings.append(Finding(level, "gap", f"{key}: no new frame for {gap_ms:.0f} ms "
                                                  f"(rows {gap_at - 1}..{gap_at + gap_rows - 1})"))
        level = REDO if frozen >= t.frozen_redo_frames else WARN if frozen >= t.frozen_warn_frames else None
        if level:
            findings.append(Finding(level, "frozen", f"{key}: picture frozen for {frozen} new frames "
                                                     f"(rows {first}..{last}, {(last - first + 1) * ms:.0f} ms): "
                                                     "identical content"))
        if kind != "depth":
            fig.update(_exposure(key, s, ms, t, findings))
        figures[key] = fig
    return figures


def _exposure(key: str, s: FrameSeries, ms: float, t: QaThresholds, findings: list[Finding]) -> dict:
    out = {"mean_luma": round(float(s.luma.mean()), 1)}
    for name, mask in (("black", s.luma <= t.black_luma), ("blown out", s.luma >= t.blown_luma)):
        rows, at = longest_true(mask)
        out[f"{name.replace(' ', '_')}_frames"] = rows
        level = REDO if rows >= t.black_redo_frames else WARN if rows >= t.black_warn_frames else None
        if level:
            findings.append(Finding(level, name.replace(" ", "_"), f"{key}: {name} for {rows} frames "
                                                                   f"({rows * ms:.0f} ms from row {at})"))
    return out
