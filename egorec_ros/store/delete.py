"""Deleting a committed episode (the operator's "redo", DESIGN "The operator's loop").

Its files go: data parquet, every video, the episode row. The number is never reused and
``total_episodes`` (the high-water mark in info.json) is not rolled back (§1.3): unlike an
abort, a deletion writes no recycled marker. stats.json is rebuilt from the remaining
episodes' rows (task-level statistics describe the episodes the task holds).

Atomic by roll-forward: the files to remove are first written to an intent file
``meta/.deleting-episode-NNNNNN.json``; then the data parquet goes (the commit point: an
episode exists iff its data file does), then the videos and the row, then stats.json, then
the intent file. A crash at any point leaves the intent file, and the next writer of the task
(``TaskWriter``: recorder, convert, ``egorec delete``) finishes the deletion before anything else.
"""
from __future__ import annotations

import re
from pathlib import Path

from egorec_ros.layout import atomic
from egorec_ros.layout.numbering import EpisodeNumber
from egorec_ros.layout.paths import META, TaskPaths
from egorec_ros.store import metadata

INTENT_PREFIX = ".deleting-episode-"
_INTENT = re.compile(r"^\.deleting-episode-(\d+)\.json$")


def episode_files(paths: TaskPaths, n: EpisodeNumber) -> list[Path]:
    """Every file of a committed episode, data parquet first. Videos are found on disk (a task's
    video slots may change between episodes, §1.2.3), not from info.json."""
    files = [paths.data(n)]
    video_root = paths.root / paths.video_template.split("/", 1)[0]
    probe = paths.video(n, "KEY", "EXT").relative_to(video_root)   # chunk-ccc/KEY/episode-fff.EXT
    chunk_dir, _key, name = probe.parts
    stem = name.rsplit(".", 1)[0] + "."
    if (video_root / chunk_dir).is_dir():
        files += sorted(p for key in (video_root / chunk_dir).iterdir() if key.is_dir()
                        for p in key.iterdir() if p.is_file() and p.name.startswith(stem))
    files.append(paths.episode_row(n))
    return files


def delete_episode(paths: TaskPaths, n: EpisodeNumber) -> list[Path]:
    """Remove episode ``n`` (caller holds the task's writer lock); returns the files removed.
    FileNotFoundError when it is not a committed episode."""
    if not paths.data(n).exists():
        raise FileNotFoundError(f"{paths.root}: episode {n.index} does not exist (no {paths.data(n).relative_to(paths.root)})")
    files = episode_files(paths, n)
    intent = _intent_path(paths, n)
    atomic.write_json(intent, {"episode_index": n.index,
                               "files": [str(p.relative_to(paths.root)) for p in files]})
    _finish(paths, intent)
    return files


def finish_deletions(paths: TaskPaths) -> list[int]:
    """Complete deletions a crash interrupted; the episode numbers finished."""
    meta = paths.root / META
    done = []
    if meta.is_dir():
        for intent in sorted(meta.iterdir()):
            m = _INTENT.match(intent.name)
            if m:
                _finish(paths, intent)
                done.append(int(m.group(1)))
    return done


def pending_deletions(paths: TaskPaths) -> list[int]:
    meta = paths.root / META
    if not meta.is_dir():
        return []
    return sorted(int(m.group(1)) for p in meta.iterdir() if (m := _INTENT.match(p.name)))


def _finish(paths: TaskPaths, intent: Path) -> None:
    doc = atomic.read_json(intent)
    for rel in doc["files"]:
        target = paths.root / rel
        target.unlink(missing_ok=True)
        atomic.fsync_path(target.parent)
    metadata.rebuild_stats(paths)
    intent.unlink()
    atomic.fsync_path(intent.parent)


def _intent_path(paths: TaskPaths, n: EpisodeNumber) -> Path:
    return paths.root / META / f"{INTENT_PREFIX}{n.index:06d}.json"
