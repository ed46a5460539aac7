"""Atomic file writes (DESIGN: ``.<name>.tmp`` beside the target, then ``os.replace``),
with fsync so a power loss leaves either the old or the new file, never half of one."""
from __future__ import annotations

import json
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator


def tmp_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.tmp")


def fsync_path(path: Path) -> None:
    """Flush a file's data, or a folder's entries (a rename), to the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def replace(src: Path, dst: Path) -> None:
    """Move ``src`` onto ``dst`` atomically and make the rename durable."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    os.replace(src, dst)
    fsync_path(dst.parent)


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """Yields a temporary path to write; on success it replaces ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = tmp_path(path)
    try:
        yield tmp
        fsync_path(tmp)
        replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def write_bytes(path: Path, data: bytes) -> None:
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def write_json(path: Path, obj: object, *, indent: int | None = 2) -> None:
    text = json.dumps(obj, ensure_ascii=False, indent=indent)
    write_bytes(path, (text + "\n").encode("utf-8"))


def read_json(path: Path) -> Any:
    return json.loads(Path(path).read_text(encoding="utf-8"))
