"""meta/episodes rows (§7): one row per episode, with the per-episode authority for
force-matrix scale (force_matrix_specs) and SLAM frames (slam_specs, §7.2).

``stats`` (JSON) is our additive column: the episode's own feature statistics, so
stats.json can be rebuilt exactly after a deletion or a recovery. ``qa`` (JSON) is the
other: the episode's QA verdict (``egorec_ros.qa``), "{}" when none was computed. ``frame_marks``
(JSON) says where each camera stream's rows were repeated, late or invalid, as row ranges
(``egorec_ros.qa.frame_marks``), "{}" in older rows.
``source`` (JSON, only in rows of converted episodes) says which bag and window an episode
was converted from (``converter/provenance.py``): written only when given, so recorded
episodes' rows keep their bytes.
Missing columns read from older rows get their defaults (§7.2 last bullet).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

import pyarrow as pa
import pyarrow.parquet as pq

from egorec_ros.layout import atomic

EPISODE_COLUMNS: dict[str, tuple[pa.DataType, Any]] = {
    "episode_index": (pa.int64(), 0),
    "task_index": (pa.int64(), 0),
    "start_frame_index": (pa.int64(), 0),
    "end_frame_index": (pa.int64(), 0),
    "length": (pa.int64(), 0),
    "created_at": (pa.float64(), 0.0),
    "duration_sec": (pa.float64(), 0.0),
    "drop_stats": (pa.string(), "{}"),
    "video_codec": (pa.string(), "{}"),
    "calibration": (pa.string(), "{}"),
    "force_matrix_specs": (pa.string(), "{}"),
    "slam_specs": (pa.string(), "{}"),
    "stats": (pa.string(), "{}"),
    "qa": (pa.string(), "{}"),
    "frame_marks": (pa.string(), "{}"),
}
OPTIONAL_JSON_COLUMNS = ("source",)
JSON_COLUMNS = ("drop_stats", "video_codec", "calibration", "force_matrix_specs", "slam_specs", "stats", "qa",
                "frame_marks")


def episode_row_table(values: Mapping[str, Any]) -> pa.Table:
    unknown = set(values) - set(EPISODE_COLUMNS) - set(OPTIONAL_JSON_COLUMNS)
    if unknown:
        raise KeyError(f"unknown episode row columns {sorted(unknown)}")
    cols = {}
    for name, (type_, default) in EPISODE_COLUMNS.items():
        v = values.get(name, default)
        if name in JSON_COLUMNS and not isinstance(v, str):
            v = json.dumps(v, ensure_ascii=False, sort_keys=True)
        cols[name] = pa.array([v], type_)
    for name in OPTIONAL_JSON_COLUMNS:
        if values.get(name) is not None:
            v = values[name]
            cols[name] = pa.array([v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, sort_keys=True)])
    return pa.table(cols)


def write_episode_row(path: Path, values: Mapping[str, Any]) -> None:
    """Atomically: a kill mid-write must not leave a torn row beside a finished episode."""
    with atomic.atomic_path(path) as tmp:
        pq.write_table(episode_row_table(values), tmp, compression="zstd")


def read_episode_row(path: Path) -> dict[str, Any]:
    """One episode row as a dict, JSON columns parsed, missing columns defaulted."""
    row = pq.read_table(path).to_pylist()
    if len(row) != 1:
        raise ValueError(f"{path}: an episode row file holds exactly one row, found {len(row)}")
    return _parsed(row[0])


def default_episode_row(episode_index: int) -> dict[str, Any]:
    """What a reader assumes when an episode has no row file: every column's default."""
    return _parsed({"episode_index": episode_index})


def _parsed(row: Mapping[str, Any]) -> dict[str, Any]:
    out = {name: row.get(name, default) for name, (_, default) in EPISODE_COLUMNS.items()}
    for name in JSON_COLUMNS:
        out[name] = json.loads(out[name] or "{}")
    extra = {k: v for k, v in row.items() if k not in out}
    for name in OPTIONAL_JSON_COLUMNS:
        if isinstance(extra.get(name), str):
            extra[name] = json.loads(extra[name] or "{}")
    return out | extra
