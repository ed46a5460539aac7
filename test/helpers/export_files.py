"""Comparing exports file by file."""
from __future__ import annotations

from pathlib import Path


def dataset_files(root: Path) -> dict[str, bytes]:
    """Every file of an export by relative path (copied videos are byte-identical too)."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
