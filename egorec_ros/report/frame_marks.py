"""The report's frame-marks strip: one lane per camera stream over the episode's rows, with
where rows were repeated, late or invalid (the episode row's ``frame_marks``), in the colours
the console's Review timeline uses."""
from __future__ import annotations

from html import escape
from typing import Any, Mapping

from egorec_ros.qa.frame_marks import KINDS

COLORS = {"repeated": "#d62728", "late": "#e6a100", "invalid": "#9467bd"}
LANE_PX = 34
ROW_PX = 6           # a kind's row in a stream's lane (repeated, late, invalid from the top)
PAD = 10


def marks_svg(marks: Mapping[str, Any], rows: int, fps: float, *, width: int = 860) -> str:
    """An inline SVG (or a line saying there are no marks to show). Each range is a rect with
    ``data-stream``, ``data-kind`` and ``data-rows`` ("first-last") and a tooltip in seconds."""
    streams = marks.get("streams") if isinstance(marks, Mapping) else None
    if not isinstance(streams, Mapping):
        return "<p class='empty'>frame marks: none recorded (episode written before they were kept)</p>"
    if not streams:
        return "<p class='empty'>frame marks: no camera stream in this episode</p>"
    box = width - 2 * PAD
    span = max(1, rows - 1)
    legend = "".join(f"<rect x='{PAD + 90 * i}' y='3' width='9' height='9' fill='{COLORS[k]}'/>"
                     f"<text x='{PAD + 90 * i + 13}' y='11' font-size='11'>{k}</text>" for i, k in enumerate(KINDS))
    height = 18 + LANE_PX * len(streams) + 14
    parts = [f"<svg class='frame-marks' width='{width}' height='{height}' viewBox='0 0 {width} {height}' role='img'>",
             "<title>rows repeated, late or invalid per camera stream</title>", legend]
    for i, (sid, entry) in enumerate(sorted(streams.items())):
        y = 18 + LANE_PX * i
        notes = []
        parts.append(f"<rect x='{PAD}' y='{y + 12}' width='{box}' height='{ROW_PX * len(KINDS)}' fill='#f6f6f6'/>")
        for k, kind in enumerate(KINDS):
            e = entry.get(kind) if isinstance(entry, Mapping) else None
            if not isinstance(e, Mapping):
                continue
            ranges = e.get("ranges") or []
            notes.append(f"{kind} {e.get('rows', 0)} rows" + (f" ({e['merged_from']} ranges merged to {len(ranges)})"
                                                                if e.get("merged_from") else ""))
            for a, b in ranges:
                x0, x1 = PAD + box * (a - 0.5) / span, PAD + box * (b + 0.5) / span
                x0 = max(PAD, x0)
                parts.append(f"<rect data-stream='{escape(sid)}' data-kind='{kind}' data-rows='{a}-{b}' "
                             f"x='{x0:.1f}' y='{y + 12 + ROW_PX * k}' width='{max(1.5, min(PAD + box, x1) - x0):.1f}' "
                             f"height='{ROW_PX - 1}' "
                             f"fill='{COLORS[kind]}'><title>{escape(sid)} {kind}: rows {a}..{b} "
                             f"({a / fps:.2f}-{(b + 1) / fps:.2f} s)</title></rect>")
        video = f" ({entry.get('video')})" if isinstance(entry, Mapping) and entry.get("video") else ""
        parts.append(f"<text x='{PAD}' y='{y + 10}' font-size='11'>{escape(sid + video)}: "
                     f"{escape(', '.join(notes) or 'none repeated or late')}</text>")
    parts.append(f"<text x='{PAD}' y='{height - 3}' font-size='10' fill='#666'>row 0</text>"
                 f"<text x='{PAD + box}' y='{height - 3}' font-size='10' fill='#666' text-anchor='end'>row {rows - 1} "
                 f"({rows / fps:.1f} s)</text></svg>")
    return "".join(parts)
