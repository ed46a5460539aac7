"""Tiny inline SVG line charts: enough to see a trajectory or a force curve in a
report without a plotting library.

Layout, top to bottom, nothing overlapping: the title (cut with an ellipsis when too long
for the width; the whole title is the tooltip), the legend in rows, the plot box, the
axis ranges."""
from __future__ import annotations

from html import escape
from typing import Sequence

import numpy as np

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b")
CHAR_PX = 6.2          # width of a character at font-size 10-11, for layout without a font engine
LINE_PX = 13
PAD = 10


def line_chart(series: Sequence[tuple[str, np.ndarray, np.ndarray]], *, width: int = 420, height: int = 180,
               title: str = "", equal_axes: bool = False) -> str:
    """``series``: (label, x, y) triples drawn as polylines in one box."""
    series = [(label, np.asarray(x, float), np.asarray(y, float)) for label, x, y in series if len(x)]
    if not series:
        return f'<p class="empty">{escape(title)}: no data</p>'
    legend = _legend_rows([label for label, _, _ in series], width - 2 * PAD)
    top = LINE_PX + 4 + LINE_PX * len(legend) + 4          # title, legend rows, gap
    bottom = height - LINE_PX - 2                           # axis ranges below the box
    xs = np.concatenate([s[1] for s in series])
    ys = np.concatenate([s[2] for s in series])
    x0, x1, y0, y1 = xs.min(), xs.max(), ys.min(), ys.max()
    if equal_axes:
        span = max(x1 - x0, y1 - y0) or 1.0
        x1, y1 = x0 + span, y0 + span
    box_w, box_h = width - 2 * PAD, max(bottom - top, 10)
    sx = (box_w - 4) / ((x1 - x0) or 1.0)
    sy = (box_h - 4) / ((y1 - y0) or 1.0)
    parts = [f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img">',
             f'<title>{escape(title)}</title>',
             f'<text x="{PAD}" y="{LINE_PX}" font-size="11" font-weight="600">{escape(_fit(title, width))}</text>']
    for row, items in enumerate(legend):
        y = LINE_PX * (row + 2) + 2
        for i, x in items:
            color = COLORS[i % len(COLORS)]
            parts.append(f'<line x1="{PAD + x}" y1="{y - 4}" x2="{PAD + x + 12}" y2="{y - 4}" stroke="{color}" '
                         f'stroke-width="2"/><text x="{PAD + x + 15}" y="{y}" font-size="10" fill="{color}">'
                         f'{escape(series[i][0])}</text>')
    parts.append(f'<rect x="{PAD}" y="{top}" width="{box_w}" height="{box_h}" fill="none" stroke="#ccc"/>')
    for i, (_, xs, ys) in enumerate(series):
        px = PAD + 2 + (xs - x0) * sx
        py = top + box_h - 2 - (ys - y0) * sy
        step = max(1, len(px) // 1500)  # keep the page light on long episodes
        points = " ".join(f"{a:.1f},{b:.1f}" for a, b in zip(px[::step], py[::step]))
        parts.append(f'<polyline points="{points}" fill="none" stroke="{COLORS[i % len(COLORS)]}" '
                     'stroke-width="1.2"/>')
    parts.append(f'<text x="{PAD}" y="{height - 3}" font-size="9" fill="#666">x {x0:.3g}..{x1:.3g}, '
                 f'y {y0:.3g}..{y1:.3g}</text></svg>')
    return "".join(parts)


def _legend_rows(labels: Sequence[str], width: float) -> list[list[tuple[int, float]]]:
    """(series index, x offset) per legend entry, wrapped into rows that fit ``width``."""
    rows: list[list[tuple[int, float]]] = [[]]
    x = 0.0
    for i, label in enumerate(labels):
        w = 15 + len(label) * CHAR_PX + 12
        if rows[-1] and x + w > width:
            rows.append([])
            x = 0.0
        rows[-1].append((i, x))
        x += w
    return rows


def _fit(text: str, width: int) -> str:
    room = int((width - 2 * PAD) / CHAR_PX)
    return text if len(text) <= room else text[:max(room - 1, 1)] + "…"
