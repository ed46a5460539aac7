"""Tiny inline SVG line charts: enough to see a trajectory or a force curve in a
report without a plotting library."""
from __future__ import annotations

from html import escape
from typing import Sequence

import numpy as np

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b")


def line_chart(series: Sequence[tuple[str, np.ndarray, np.ndarray]], *, width: int = 420, height: int = 180,
               title: str = "", equal_axes: bool = False) -> str:
    """``series``: (label, x, y) triples drawn as polylines in one box."""
    series = [(label, np.asarray(x, float), np.asarray(y, float)) for label, x, y in series if len(x)]
    if not series:
        return f'<p class="empty">{escape(title)}: no data</p>'
    xs = np.concatenate([s[1] for s in series])
    ys = np.concatenate([s[2] for s in series])
    x0, x1, y0, y1 = xs.min(), xs.max(), ys.min(), ys.max()
    if equal_axes:
        span = max(x1 - x0, y1 - y0) or 1.0
        x1, y1 = x0 + span, y0 + span
    sx = (width - 20) / ((x1 - x0) or 1.0)
    sy = (height - 30) / ((y1 - y0) or 1.0)
    parts = [f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img">',
             f'<text x="4" y="12" font-size="11">{escape(title)}</text>',
             f'<rect x="10" y="18" width="{width - 20}" height="{height - 28}" fill="none" stroke="#ccc"/>']
    for i, (label, x, y) in enumerate(series):
        px = 10 + (x - x0) * sx
        py = height - 10 - (y - y0) * sy
        step = max(1, len(px) // 1500)  # keep the page light on long episodes
        points = " ".join(f"{a:.1f},{b:.1f}" for a, b in zip(px[::step], py[::step]))
        color = COLORS[i % len(COLORS)]
        parts.append(f'<polyline points="{points}" fill="none" stroke="{color}" stroke-width="1.2"/>')
        parts.append(f'<text x="{width - 10}" y="{30 + 12 * i}" font-size="10" text-anchor="end" '
                     f'fill="{color}">{escape(label)}</text>')
    parts.append(f'<text x="12" y="{height - 1}" font-size="9" fill="#666">x {x0:.3g}..{x1:.3g}, '
                 f'y {y0:.3g}..{y1:.3g}</text></svg>')
    return "".join(parts)
