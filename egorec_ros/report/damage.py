"""Damaged files met while summarising a task (inspect, the HTML report): named with the
error and stepped over, so one bad file does not hide the rest of the task."""
from __future__ import annotations

from pathlib import Path

from egorec_ros.dataset import Episode


def damage(root: Path, path: Path, exc: BaseException) -> str:
    """One damaged file: its path in the task and what reading it said."""
    return f"{Path(path).relative_to(root)}: {type(exc).__name__}: {str(exc).strip()}"


def row_or_default(ep: Episode) -> tuple[dict, str | None]:
    """The episode row, or every column's default and the damage when its file cannot be read."""
    row, exc = ep.row_or_default()
    return row, None if exc is None else damage(ep.task.root, ep.task.paths.episode_row(ep.number), exc)
