"""What the Review page shows of one committed episode: its videos (the MP4s themselves where a
browser plays them; depth and other codecs as a server-made H.264 preview), a timeline of forces,
glove pressure and SLAM from the data parquet, the drop counts of its episode row, and a thumbnail
strip (after a stop). Reads the task folder only; the recorder is not involved."""
from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import av
import numpy as np

from egorec_ros.dataset.task import Task
from egorec_ros.live.preview import jpeg, preview_rgb

BROWSER_CODECS = ("h264", "av1", "vp9")     # what Chromium's <video> plays from an MP4
TIMELINE_POINTS = 400
PREVIEW_WIDTH = 320


def _codec(path: Path) -> str:
    with av.open(str(path)) as c:
        return c.streams.video[0].codec_context.name


def videos(task: Task, index: int) -> list[dict[str, Any]]:
    """[{key, depth, path (relative to the task folder), playable}] of episode ``index``."""
    ep = task.episode(index)
    out = []
    for key in ep.video_keys:
        path = ep.video_path(key)
        assert path is not None
        depth = ep.is_depth(key)
        out.append({"key": key, "depth": depth, "path": path.relative_to(task.root).as_posix(),
                    "playable": not depth and path.suffix == ".mp4" and _codec(path) in BROWSER_CODECS})
    return out


def preview_video(task: Task, index: int, key: str, out: Path) -> Path:
    """An H.264 MP4 of stream ``key`` about PREVIEW_WIDTH wide, depth false-coloured, same frame
    count and rate as the episode (so it plays in step with the others); made once, cached."""
    if out.exists():
        return out
    ep = task.episode(index)
    fps = Fraction(task.fps).limit_denominator(1001)
    tmp = out.with_suffix(".part.mp4")
    out.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(tmp), "w") as container:
        stream = None
        for frame in ep.frames(key):
            rgb = preview_rgb(frame, PREVIEW_WIDTH)
            rgb = np.ascontiguousarray(rgb[: rgb.shape[0] // 2 * 2, : rgb.shape[1] // 2 * 2])
            if stream is None:
                stream = container.add_stream("libx264", rate=fps)
                stream.width, stream.height, stream.pix_fmt = rgb.shape[1], rgb.shape[0], "yuv420p"
                stream.options = {"preset": "veryfast", "crf": "28"}
            for packet in stream.encode(av.VideoFrame.from_ndarray(rgb, format="rgb24")):
                container.mux(packet)
        if stream is not None:
            for packet in stream.encode(None):
                container.mux(packet)
    tmp.replace(out)
    return out


def thumbnails(task: Task, index: int, per_stream: int = 4) -> list[dict[str, Any]]:
    """A strip per video stream: ``per_stream`` JPEG frames spread over the episode (base64 data URLs)."""
    import base64

    ep = task.episode(index)
    rows = max(1, len(ep))
    wanted = sorted({min(rows - 1, round(i * (rows - 1) / max(1, per_stream - 1))) for i in range(per_stream)})
    out = []
    for key in ep.video_keys:
        frames = []
        for i, frame in enumerate(ep.frames(key)):
            if i in wanted:
                data = jpeg(preview_rgb(frame, 160))
                frames.append({"row": i, "src": "data:image/jpeg;base64," + base64.b64encode(data).decode()})
            if i >= wanted[-1]:
                break
        out.append({"key": key, "frames": frames})
    return out


def _downsample(values: np.ndarray, points: int = TIMELINE_POINTS) -> list[float]:
    if len(values) <= points:
        return [round(float(v), 3) for v in values]
    idx = np.linspace(0, len(values) - 1, points).astype(int)
    return [round(float(v), 3) for v in values[idx]]


def timeline(task: Task, index: int) -> dict[str, Any]:
    """Series over the episode's rows: force magnitudes, glove pressure sums, SLAM samples per row
    (0 = tracking gave nothing), rows where a sensor's sample did not advance (repeated), and per
    camera stream the row ranges that were repeated, late or invalid (the row's frame_marks; {}
    for an episode recorded before they were kept)."""
    ep = task.episode(index)
    cols = [c for c in ep.columns if not c.endswith("_force_matrix")]
    table = ep.read(cols)
    rows = table.num_rows
    series: list[dict[str, Any]] = []
    repeats: dict[str, list[int]] = {}
    for name in cols:
        col = table.column(name)
        if not name.startswith("observation."):
            continue
        short = name.removeprefix("observation.")
        if name.endswith("_force"):
            mags = np.array([float(np.linalg.norm(v)) if v else 0.0 for v in col.to_pylist()])
            series.append({"name": short, "kind": "force", "values": _downsample(mags)})
        elif name.endswith("_glove") or name.endswith("_glove_pressure"):
            sums = np.array([float(np.sum(v)) if v else 0.0 for v in col.to_pylist()])
            series.append({"name": short, "kind": "glove", "values": _downsample(sums)})
        elif name.endswith("_trajectory_ns"):
            counts = np.array([len(v or []) for v in col.to_pylist()], dtype=float)
            series.append({"name": short.removesuffix("_ns"), "kind": "slam", "values": _downsample(counts)})
        if name.endswith("_ns") and str(col.type) == "int64" and rows > 1:
            ns = np.asarray(col.to_numpy(zero_copy_only=False), dtype=np.int64)
            stale = np.flatnonzero((ns[1:] == ns[:-1]) & (ns[1:] > 0)) + 1
            if len(stale):
                repeats[short.removesuffix("_ns")] = stale.tolist()[:TIMELINE_POINTS]
    row, _problem = ep.row_or_default()
    drops = row.get("drop_stats") or {}
    if isinstance(drops, str):
        drops = json.loads(drops or "{}")
    marks = row.get("frame_marks") or {}
    return {"rows": rows, "fps": task.fps, "series": series, "repeats": repeats,
            "drop_stats": drops.get("streams", {}) if isinstance(drops, dict) else {},
            "frame_marks": marks if isinstance(marks, dict) else {}}
