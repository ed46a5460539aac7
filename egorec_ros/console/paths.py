"""The only files the console serves: inside the current task folder, named by a relative path
without ``..``, after every decoding the request went through. Anything else is refused."""
from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote

VIDEO_SUFFIXES = (".mp4", ".mkv")


class PathRefused(ValueError):
    """A requested path that is not a file of the task folder we serve."""


def task_file(task_dir: Path, relative: str, suffixes: tuple[str, ...] = VIDEO_SUFFIXES) -> Path:
    """``task_dir / relative`` if it is an existing file with one of ``suffixes`` strictly inside
    ``task_dir`` (symlinks resolved); PathRefused otherwise. ``relative`` is decoded until stable,
    so ``%2e%2e`` and double-encoded ``%252e%252e`` are the ``..`` they stand for."""
    text = relative
    for _ in range(5):
        decoded = unquote(text)
        if decoded == text:
            break
        text = decoded
    parts = Path(text.replace("\\", "/")).parts
    if not parts or Path(text).is_absolute() or any(p in ("..", ".") for p in parts) or "\0" in text:
        raise PathRefused(f"{relative!r}: not a path inside the task folder")
    root = task_dir.resolve()
    path = (root / text).resolve()
    if not path.is_relative_to(root) or path == root:
        raise PathRefused(f"{relative!r}: outside the task folder")
    if path.suffix not in suffixes or not path.is_file():
        raise PathRefused(f"{relative!r}: no such video in the task folder")
    return path
