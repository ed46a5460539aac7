"""Aborted episodes free their number (§1.3) through ``meta/recycled_episode.json``
= {"episode_index": N, "freed_at": ISO}; completed or deleted numbers never return."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

from egorec_ros.layout import atomic


def read_recycled(path: Path) -> int | None:
    try:
        doc = atomic.read_json(path)
    except FileNotFoundError:
        return None
    except ValueError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc}); delete it if no episode number needs recycling") from exc
    n = doc.get("episode_index") if isinstance(doc, dict) else None
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"{path}: episode_index must be a positive integer, got {n!r}")
    return n


def write_recycled(path: Path, episode_index: int) -> None:
    now = dt.datetime.now(dt.timezone.utc).astimezone().isoformat(timespec="seconds")
    atomic.write_json(path, {"episode_index": episode_index, "freed_at": now}, indent=None)


def clear_recycled(path: Path, episode_index: int) -> None:
    """Remove the marker if it still names ``episode_index`` (the number is used now)."""
    if read_recycled(path) == episode_index:
        path.unlink()
        atomic.fsync_path(path.parent)
