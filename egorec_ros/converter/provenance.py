"""Where an episode came from (the ``source`` key of its episode row), and which bag windows
a task already holds, so a farm run again after an interruption converts only what is missing.

A bag is known by its size and a hash of its first and last chunk (``CHUNK`` bytes of each
storage file): cheap for a 10 000-bag farm (two reads per file), and unchanged when the bag
is moved or listed under another path. A window is known by its start and end on the bag's
clock. Path, size, hash and window go into the row; the match ignores the path.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from egorec_ros.converter.split import EpisodeWindow
from egorec_ros.layout.paths import TaskPaths
from egorec_ros.schema.episode_row import read_episode_row

CHUNK = 1 << 20
SourceKey = tuple[int, str, int, int]           # (size, hash, window start, window end)


def bag_identity(bag: str | Path) -> tuple[int, str]:
    """(total bytes, blake2b of the first and last CHUNK of each storage file, in name order)."""
    path = Path(bag)
    files = sorted(f for f in path.iterdir() if f.suffix in (".db3", ".mcap")) if path.is_dir() else [path]
    digest, size = hashlib.blake2b(digest_size=16), 0
    for file in files:
        with open(file, "rb") as f:
            length = f.seek(0, 2)
            size += length
            f.seek(0)
            digest.update(length.to_bytes(8, "little") + f.read(CHUNK))      # not the name: a bag may be renamed
            if length > CHUNK:
                f.seek(max(CHUNK, length - CHUNK))
                digest.update(f.read(CHUNK))
    return size, digest.hexdigest()


def source_of(bag: str, identity: tuple[int, str], window: EpisodeWindow) -> dict[str, Any]:
    size, digest = identity
    return {"bag": bag, "size": size, "hash": f"blake2b-128:{digest}",
            "window": [window.start_ns, window.end_ns], "reason": window.reason}


def source_key(source: dict[str, Any]) -> SourceKey | None:
    try:
        start, end = source["window"]
        return int(source["size"]), str(source["hash"]), int(start), int(end)
    except (KeyError, TypeError, ValueError):
        return None


def converted_windows(paths: TaskPaths) -> set[SourceKey]:
    """The bag windows the task's committed episodes were converted from (rows with a source)."""
    keys = set()
    for number in paths.list_episodes():
        row = paths.episode_row(number)
        if row.exists():
            key = source_key(read_episode_row(row).get("source") or {})
            if key is not None:
                keys.add(key)
    return keys
