"""Committed episodes whose data parquet cannot be read (a damaged disk, a bad copy).

The data parquet is the only copy of a committed episode's rows (the crash journal is
removed at commit), so nothing can rebuild it. What can be done: restore the file from a
backup, or move the episode (data, row, videos) to ``.set_aside/`` so the rest of the
task validates again; its number is not reused (§1.3: completed numbers never return).
"""
from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from egorec_ros.layout.lock import TaskLock
from egorec_ros.layout.numbering import EpisodeNumber
from egorec_ros.layout.paths import TaskPaths
from egorec_ros.store import metadata


@dataclass(frozen=True)
class DamagedEpisode:
    number: EpisodeNumber
    data: Path
    error: str

    def describe(self, root: Path) -> str:
        return (f"episode {self.number.index}: committed, but its data file {self.data.relative_to(root)} cannot be "
                f"read ({self.error}); its rows existed only there, so recover cannot rebuild it. Restore the file "
                f"from a backup, or run `egorec recover --set-aside-damaged {root}` to move the episode (data, "
                "episode row, videos) to .set_aside/ so the rest of the task validates (its number is not reused)")


def find_damaged(paths: TaskPaths) -> list[DamagedEpisode]:
    """Committed episodes whose data parquet footer cannot be read (cheap: footers only)."""
    out = []
    for n in paths.list_episodes():
        try:
            pq.read_metadata(paths.data(n))
        except Exception as exc:   # thrift, truncation, I/O: whatever it is, the file is unusable
            out.append(DamagedEpisode(n, paths.data(n), f"{type(exc).__name__}: {str(exc).strip()}"))
    return out


def set_aside_damaged(task_dir: Path) -> list[str]:
    """Move every damaged committed episode to ``.set_aside/`` and rebuild stats.json; returns
    one line per episode moved."""
    lines = []
    with TaskLock(task_dir):
        paths = TaskPaths.from_info(task_dir, metadata.read_info(TaskPaths(task_dir)))
        info = metadata.read_info(paths) or {}
        for d in find_damaged(paths):
            dest = paths.set_aside / f"damaged-episode-{d.number.index:06d}-{time.strftime('%Y%m%dT%H%M%S')}"
            dest.mkdir(parents=True, exist_ok=True)
            files = [paths.episode_row(d.number), *(paths.video(d.number, k, e)
                                                    for k, e in info.get("video_extensions", {}).items())]
            for f in [*files, d.data]:   # the data file last: the episode exists until it goes
                if f.exists():
                    shutil.move(str(f), dest / str(f.relative_to(paths.root)).replace("/", "__"))
            lines.append(f"episode {d.number.index}: set aside (data file damaged) -> {dest.relative_to(paths.root)}; "
                         "its number is not reused")
        if lines:
            metadata.rebuild_stats(paths)
    return lines
