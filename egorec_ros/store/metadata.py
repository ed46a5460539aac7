"""Task-level metadata updates after an episode lands or leaves: info.json, stats.json,
tasks.jsonl. Each update is atomic and safe to repeat (recovery may redo it)."""
from __future__ import annotations

from typing import Mapping

import pyarrow.parquet as pq

from egorec_ros.errors import UserError
from egorec_ros.layout import atomic
from egorec_ros.layout.paths import TaskPaths
from egorec_ros.schema import info as info_json
from egorec_ros.schema.declaration import Declaration
from egorec_ros.schema.episode_row import read_episode_row
from egorec_ros.schema.stats import FeatureStats


def read_info(paths: TaskPaths) -> dict | None:
    try:
        doc = atomic.read_json(paths.info)
    except FileNotFoundError:
        return None
    if not isinstance(doc, dict):
        raise ValueError(f"{paths.info}: info.json must be a JSON object")
    return doc


class CameraShapeError(UserError, ValueError):
    """An episode would record a camera at another size (or rate) than the task's earlier episodes."""


def check_cameras(paths: TaskPaths, decl: Declaration) -> None:
    """Refuse, before anything is written, an episode whose cameras differ from the task's:
    info.json keeps one size per camera, which the validator and readers check every episode against."""
    cameras = info_json.camera_entries(decl, [v.key for v in decl.videos])
    changes = info_json.camera_changes(read_info(paths), cameras)
    if changes:
        raise CameraShapeError(
            f"{paths.root}: camera {'; '.join(changes)} (meta/info.json cameras). A task keeps one size per "
            "camera, so that info.json describes the frames of every episode (§6.3); record at the task's "
            "size (`--size`, or the rig's stream width/height), or into another task (`--task NAME` or "
            "another `--out`)")


def update_info(paths: TaskPaths, decl: Declaration, episode_index: int, video_extensions: Mapping[str, str],
                task_name: str) -> dict:
    present = pq.read_schema(paths.data(paths.number(episode_index))).names
    contribution = info_json.episode_contribution(decl, present, video_extensions)
    merged = info_json.merge_info(read_info(paths), contribution, episode_index=episode_index,
                                  task_name=task_name, fps=decl.fps, chunks_size=paths.chunks_size)
    atomic.write_json(paths.info, merged)
    return merged


def read_stats(paths: TaskPaths) -> FeatureStats:
    try:
        return FeatureStats.from_json(atomic.read_json(paths.stats))
    except FileNotFoundError:
        return FeatureStats()


def merge_stats(paths: TaskPaths, episode_stats: Mapping) -> None:
    merged = read_stats(paths).merge(FeatureStats.from_json(episode_stats))
    atomic.write_json(paths.stats, merged.to_json())


def rebuild_stats(paths: TaskPaths) -> None:
    """stats.json from the per-episode stats of every committed episode (exact after a
    deletion or a recovery, where an incremental merge could count twice)."""
    total = FeatureStats()
    for n in paths.list_episodes():
        row_path = paths.episode_row(n)
        if row_path.exists():
            total = total.merge(FeatureStats.from_json(read_episode_row(row_path)["stats"]))
    atomic.write_json(paths.stats, total.to_json())
