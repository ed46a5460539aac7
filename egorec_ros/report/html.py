"""`egorec inspect --html`: one self-contained page per task — per episode the first
frame of every video, where samples went (drops per stream), SLAM trajectories seen
from above and gripper forces over time."""
from __future__ import annotations

from html import escape
from pathlib import Path

import numpy as np

from egorec_ros.assembly.counts import PROBLEMS
from egorec_ros.dataset import Episode, open_task
from egorec_ros.layout import atomic
from egorec_ros.report.damage import damage, row_or_default
from egorec_ros.report.svg import line_chart
from egorec_ros.report.thumbnails import thumbnail_png

COUNT_KEYS = ("received", "used", "repeated", "skipped", "superseded", "late", "invalid", "outside")
STYLE = """body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;font-size:12px;margin:.5em 0}td,th{border:1px solid #ddd;padding:2px 6px;text-align:right}
th{background:#f4f4f4}td.name{text-align:left}td.bad{background:#fde2e1}.thumbs img{margin:2px;border:1px solid #ccc}
.thumbs figure{display:inline-block;margin:0 6px 6px 0;font-size:11px}section{border-top:2px solid #eee;margin-top:1.5em}
.empty{color:#999;font-size:12px}.damaged{color:#b00020;font-weight:bold}"""


def write_report(task_dir: str | Path, out: str | Path, *, max_episodes: int = 50) -> Path:
    task = open_task(task_dir)
    info = task.info
    head = (f"<h1>{escape(str(info.get('task_name')))}</h1><p>{escape(str(task.root))} — "
            f"{len(task)} episodes (numbers used: {info.get('total_episodes')}), {info.get('fps')} fps, "
            f"{len(info.get('features', {}))} features, videos: "
            f"{escape(', '.join(f'{k}.{e}' for k, e in info.get('video_extensions', {}).items()))}</p>")
    sections = [_episode_section(ep) for ep in task.episodes[:max_episodes]]
    if len(task) > max_episodes:
        sections.append(f"<p>… {len(task) - max_episodes} more episodes not shown</p>")
    page = (f"<!doctype html><meta charset='utf-8'><title>{escape(str(info.get('task_name')))}</title>"
            f"<style>{STYLE}</style>{head}{''.join(sections)}")
    out = Path(out)
    atomic.write_bytes(out, page.encode("utf-8"))
    return out


def _episode_section(ep: Episode) -> str:
    """One episode; a damaged file is named in the section and the rest still shown."""
    try:
        rows, columns = len(ep), len(ep.columns)
    except Exception as exc:
        return (f"<section><h2>episode {ep.index}</h2>"
                f"{_damaged(damage(ep.task.root, ep.data_path, exc))}</section>")
    row, row_damage = row_or_default(ep)
    duration = rows / ep.task.fps if row_damage else row["duration_sec"]
    parts = [f"<section><h2>episode {ep.index}</h2><p>{rows} rows, {duration:.2f} s, {columns} columns</p>"]
    if row_damage:
        parts.append(_damaged(row_damage))
    figures = "".join(_thumbnail(ep, k) for k in ep.video_keys)
    parts.append(f"<div class='thumbs'>{figures}</div>")
    parts.append(_drops_table(row["drop_stats"].get("streams", {})))
    charts = [_trajectories(ep), _forces(ep)]
    parts.append("".join(c for c in charts if c))
    parts.append("</section>")
    return "".join(parts)


def _thumbnail(ep: Episode, key: str) -> str:
    try:
        return f"<figure><img src='{thumbnail_png(ep, key)}'><figcaption>{escape(key)}</figcaption></figure>"
    except Exception as exc:   # a truncated or undecodable video: name it, show the others
        note = _damaged(damage(ep.task.root, ep.video_path(key), exc))
        return f"<figure>{note}<figcaption>{escape(key)}</figcaption></figure>"


def _damaged(text: str) -> str:
    return f"<p class='damaged'>damaged: {escape(text)}</p>"


def _drops_table(streams: dict) -> str:
    if not streams:
        return "<p class='empty'>no per-stream accounting in drop_stats</p>"
    head = "".join(f"<th>{k}</th>" for k in COUNT_KEYS)
    body = []
    for sid, c in sorted(streams.items()):
        cells = "".join(f"<td class='{'bad' if k in PROBLEMS and c.get(k) else ''}'>{c.get(k, 0)}</td>"
                        for k in COUNT_KEYS)
        body.append(f"<tr><td class='name'>{escape(sid)}</td>{cells}</tr>")
    return f"<table><tr><th>stream</th>{head}</tr>{''.join(body)}</table>"


def _trajectories(ep: Episode) -> str:
    """One top view per trajectory: each lives in its own frame and origin (§6.6)."""
    charts = []
    for col in ep.trajectory_columns():
        points = ep.trajectory(col).points
        frame = ep.slam_spec(col).get("frame", "?")
        charts.append(line_chart([("x/y", points[:, 1], points[:, 2])], width=260, height=200, equal_axes=True,
                                 title=f"{col.removeprefix('observation.')} ({frame})"))
    return "".join(charts)


def _forces(ep: Episode) -> str:
    columns = [c for c in ep.columns if c.endswith("_force") and c.startswith("observation.")]
    if not columns:
        return ""
    table = ep.read(["timestamp", *columns])
    t = table.column("timestamp").to_numpy()
    series = []
    for col in columns:
        values = np.asarray(table.column(col).combine_chunks().flatten().to_numpy(zero_copy_only=False)).reshape(-1, 3)
        has = np.any(values != 0, axis=1)  # rows without a sample hold [0, 0, 0]
        series.append((col.removeprefix("observation."), t[has], np.linalg.norm(values[has], axis=1)))
    return line_chart(series, title="finger force |F| (mN) over time (s)")
