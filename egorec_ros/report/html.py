"""`egorec inspect --html`: one self-contained page per task — per episode the first
frame of every video, where samples went (drops per stream), SLAM trajectories seen
from above and gripper forces over time."""
from __future__ import annotations

from html import escape
from pathlib import Path

import numpy as np

from egorec_ros.assembly.counts import HIGH_SHARE, MEANINGS, PROBLEMS, high, problem_shares
from egorec_ros.dataset import Episode, open_task
from egorec_ros.layout import atomic
from egorec_ros.qa.verdict import from_row
from egorec_ros.report.damage import damage, row_or_default
from egorec_ros.report.frame_marks import marks_svg
from egorec_ros.report.svg import line_chart
from egorec_ros.report.thumbnails import thumbnail_png

COUNT_KEYS = tuple(MEANINGS)
STYLE = """body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;font-size:12px;margin:.5em 0}td,th{border:1px solid #ddd;padding:2px 6px;text-align:right}
th{background:#f4f4f4}td.name{text-align:left}td.warn{background:#fff4d6}td.bad{background:#fde2e1}
.thumbs img{margin:2px;border:1px solid #ccc}
.thumbs figure{display:inline-block;margin:0 6px 6px 0;font-size:11px}section{border-top:2px solid #eee;margin-top:1.5em}
.empty{color:#999;font-size:12px}.damaged{color:#b00020;font-weight:bold}
.banner{background:#fde2e1;border:1px solid #e0a0a0;padding:.5em 1em;margin:.5em 0}
.banner ul{margin:.2em 0}dl.help{font-size:12px;display:grid;grid-template-columns:max-content auto;gap:2px 12px}
.qa{font-size:13px;padding:1px 8px;border-radius:8px;background:#eee;vertical-align:middle}
.qa.ok{background:#d8f5dc}.qa.warn{background:#fff4d6}.qa.redo{background:#fde2e1;color:#b00020}
ul.reasons{font-size:12px}dl.help dt{font-weight:600}dl.help dd{margin:0}ul.notes{font-size:12px;color:#444}svg{margin:0 8px 8px 0}"""


def write_report(task_dir: str | Path, out: str | Path, *, max_episodes: int = 50) -> Path:
    task = open_task(task_dir)
    info = task.info
    head = (f"<h1>{escape(str(info.get('task_name')))}</h1><p>{escape(str(task.root))} — "
            f"{len(task)} episodes (numbers used: {info.get('total_episodes')}), {info.get('fps')} fps, "
            f"{len(info.get('features', {}))} features, videos: "
            f"{escape(', '.join(f'{k}.{e}' for k, e in info.get('video_extensions', {}).items()))}</p>")
    shown = task.episodes[:max_episodes]
    sections = [_episode_section(ep) for ep in shown]
    if len(task) > max_episodes:
        sections.append(f"<p>… {len(task) - max_episodes} more episodes not shown</p>")
    page = (f"<!doctype html><meta charset='utf-8'><title>{escape(str(info.get('task_name')))}</title>"
            f"<style>{STYLE}</style>{head}{_banner(shown)}{_help()}{''.join(sections)}")
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
    parts = [f"<section><h2>episode {ep.index} {_verdict_badge(row.get('qa'))}</h2>"
             f"<p>{rows} rows, {duration:.2f} s, {columns} columns</p>"]
    if row_damage:
        parts.append(_damaged(row_damage))
    parts.append(_verdict_reasons(row.get("qa")))
    figures = "".join(_thumbnail(ep, k) for k in ep.video_keys)
    parts.append(f"<div class='thumbs'>{figures}</div>")
    parts.append(_drops_table(row["drop_stats"].get("streams", {})))
    parts.append(marks_svg(row.get("frame_marks") or {}, rows, ep.task.fps))
    notes = row["drop_stats"].get("notes", [])
    if notes:
        parts.append("<p>conversion notes (clocks):</p><ul class='notes'>"
                     + "".join(f"<li>{escape(n)}</li>" for n in notes) + "</ul>")
    charts = [_trajectories(ep), _forces(ep)]
    parts.append("".join(c for c in charts if c))
    parts.append("</section>")
    return "".join(parts)


def _verdict_badge(qa: dict | None) -> str:
    verdict, _ = from_row(qa)
    return f"<span class='qa {verdict}'>QA {escape(verdict)}</span>" if verdict else "<span class='qa'>QA -</span>"


def _verdict_reasons(qa: dict | None) -> str:
    _, reasons = from_row(qa)
    return ("<ul class='reasons'>" + "".join(f"<li>{escape(r)}</li>" for r in reasons) + "</ul>") if reasons else ""


def _thumbnail(ep: Episode, key: str) -> str:
    try:
        return f"<figure><img src='{thumbnail_png(ep, key)}'><figcaption>{escape(key)}</figcaption></figure>"
    except Exception as exc:   # a truncated or undecodable video: name it, show the others
        path = ep.video_path(key)
        note = _damaged(damage(ep.task.root, path, exc) if path is not None else f"{key}: no video file ({exc})")
        return f"<figure>{note}<figcaption>{escape(key)}</figcaption></figure>"


def _damaged(text: str) -> str:
    return f"<p class='damaged'>damaged: {escape(text)}</p>"
def _banner(episodes: list[Episode]) -> str:
    """A warning at the top when a stream repeats or loses more than HIGH_SHARE of its rows/samples."""
    items = [f"<li>episode {ep.index}: {escape(sid)} " + ", ".join(
                 f"{kind} {100 * share:.1f} %" for kind, share in shares.items()) + "</li>"
             for ep in episodes for sid, c in sorted(ep.row["drop_stats"].get("streams", {}).items())
             if (shares := high(c))]
    if not items:
        return ""
    return (f"<div class='banner'><b>⚠ Streams with more than {100 * HIGH_SHARE:g} % of their rows repeated or "
            f"samples lost</b> (a device or the machine could not keep up, or the latency budget is too short; "
            f"below {100 * HIGH_SHARE:g} % is the normal cost of timing jitter):<ul>{''.join(items)}</ul></div>")


def _help() -> str:
    """What the columns of the drop tables mean."""
    rows = "".join(f"<dt>{k}</dt><dd>{escape(v)}</dd>" for k, v in MEANINGS.items())
    return (f"<details><summary>How to read the drop tables</summary><p>Every sample a stream received is counted "
            f"once as used, skipped, superseded, late, out_of_order, invalid, outside or excluded; repeated, "
            f"delayed and restamped are facts about rows and samples already counted. Problem counts "
            f"({', '.join(PROBLEMS)}) show their share: amber below {100 * HIGH_SHARE:g} % (normal), red above "
            f"(worth a look).</p><dl class='help'>{rows}</dl></details>")


def _drops_table(streams: dict) -> str:
    if not streams:
        return "<p class='empty'>no per-stream accounting in drop_stats</p>"
    head = "".join(f"<th title='{escape(MEANINGS[k])}'>{k}</th>" for k in COUNT_KEYS)
    body = []
    for sid, c in sorted(streams.items()):
        shares = problem_shares(c)
        cells = "".join(_cell(c.get(k, 0), shares.get(k)) for k in COUNT_KEYS)
        body.append(f"<tr><td class='name'>{escape(sid)}</td>{cells}</tr>")
    return f"<table><tr><th>stream</th>{head}</tr>{''.join(body)}</table>"


def _cell(count: int, share: float | None) -> str:
    if share is None:
        return f"<td>{count}</td>"
    return f"<td class='{'bad' if share > HIGH_SHARE else 'warn'}'>{count} ({100 * share:.1f} %)</td>"


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
