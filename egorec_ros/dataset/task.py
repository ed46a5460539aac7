"""Reading a task directory (§8.2 reader rules): refuse unknown formats, list episodes
by their data files, decide which columns an episode has from its own parquet schema,
and take meanings (scales, frames) from the episode row first, then info.json."""
from __future__ import annotations

from functools import cached_property
from pathlib import Path

from egorec_ros.dataset.episode import Episode
from egorec_ros.errors import UserError
from egorec_ros.layout import atomic
from egorec_ros.layout.paths import TaskPaths
from egorec_ros.schema.info import FORMAT


class DatasetError(UserError, ValueError):
    """A task directory this reader cannot read (the message says why)."""


class Task:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        info_path = self.root / "meta" / "info.json"
        try:
            info = atomic.read_json(info_path)
        except FileNotFoundError:
            raise DatasetError(f"{self.root}: no meta/info.json; not a pooled_episodes_v1 task directory") from None
        except ValueError as exc:
            raise DatasetError(f"{info_path}: not valid JSON ({exc})") from exc
        if not isinstance(info, dict) or info.get("format") != FORMAT:
            found = info.get("format") if isinstance(info, dict) else None
            raise DatasetError(f"{info_path}: format is {found!r}; this reader only reads {FORMAT!r} (§8.2.1)")
        self.info: dict = info
        self.paths = TaskPaths.from_info(self.root, info)

    @property
    def fps(self) -> float:
        return float(self.info["fps"])

    @property
    def features(self) -> dict:
        return self.info.get("features", {})

    @property
    def video_extensions(self) -> dict[str, str]:
        return self.info.get("video_extensions", {})

    @cached_property
    def episodes(self) -> list[Episode]:
        return [Episode(self, n) for n in self.paths.list_episodes()]

    def episode(self, episode_index: int) -> Episode:
        for ep in self.episodes:
            if ep.index == episode_index:
                return ep
        raise KeyError(f"{self.root}: no episode {episode_index}; have "
                       f"{[e.index for e in self.episodes][:20]}")

    def __len__(self) -> int:
        return len(self.episodes)

    def __iter__(self):
        return iter(self.episodes)


def open_task(root: str | Path) -> Task:
    return Task(root)
