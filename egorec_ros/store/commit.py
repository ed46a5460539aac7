"""Moving a finished staged episode into place (DESIGN "Commit is atomic and crash-safe").

Order: videos, episode row, then the data parquet, which is the commit point (an
episode exists iff its data file does); then info.json, stats.json, tasks.jsonl and
the recycled marker. Every step checks what is already done, so ``egorec recover``
can rerun the whole function after a crash at any point and land in the same state.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from egorec_ros.layout import atomic
from egorec_ros.layout.paths import TaskPaths
from egorec_ros.layout.recycle import clear_recycled
from egorec_ros.schema import tasks
from egorec_ros.schema.episode_row import read_episode_row
from egorec_ros.store import metadata
from egorec_ros.store.row_sink import DATA_FILE
from egorec_ros.store.staging import EPISODE_ROW, Manifest


class CommitError(RuntimeError):
    """A staged episode that cannot be committed (its data file is missing)."""


def commit_staged(paths: TaskPaths, folder: Path, *, rebuild_stats: bool = False) -> Manifest:
    manifest = Manifest.read(folder)
    n = paths.number(manifest.episode_index)
    data_final = paths.data(n)
    if not (folder / DATA_FILE).exists() and not data_final.exists():
        raise CommitError(f"{folder}: no data parquet staged or in place for episode {n.index}")
    if not data_final.exists():  # before the commit point: move the rest first
        for key in manifest.video_extensions:
            _move_if_present(folder / manifest.video_file(key), paths.video(n, key, manifest.video_extensions[key]))
        _move_if_present(folder / EPISODE_ROW, paths.episode_row(n))
        atomic.replace(folder / DATA_FILE, data_final)  # the commit point
    metadata.update_info(paths, manifest.declaration, n.index, manifest.video_extensions, manifest.task_name)
    if rebuild_stats:
        metadata.rebuild_stats(paths)
    else:
        metadata.merge_stats(paths, read_episode_row(paths.episode_row(n))["stats"])
    tasks.ensure_task(paths.tasks, manifest.task)
    clear_recycled(paths.recycled, n.index)
    shutil.rmtree(folder)
    return manifest


def _move_if_present(src: Path, dst: Path) -> None:
    if src.exists():
        atomic.replace(src, dst)
