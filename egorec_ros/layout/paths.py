"""Where the files of a task directory live (§1.1), from info.json's templates."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from egorec_ros.layout.numbering import DEFAULT_CHUNKS_SIZE, EpisodeNumber

DATA_PATH = "data/chunk-{c:03d}/episode-{f:03d}.parquet"
VIDEO_PATH = "videos/chunk-{c:03d}/{image_key}/episode-{f:03d}.{ext}"
EPISODES_PATH = "meta/episodes/chunk-{c:03d}/episode-{f:03d}.parquet"

META = "meta"
INFO = "meta/info.json"
STATS = "meta/stats.json"
TASKS = "meta/tasks.jsonl"
RECYCLED = "meta/recycled_episode.json"
LOCK = "meta/.writer.lock"
STAGING_PREFIX = ".staging-episode-"
SET_ASIDE = ".set_aside"

_DATA_FILE = re.compile(r"^episode-(\d+)\.parquet$")
_CHUNK_DIR = re.compile(r"^chunk-(\d+)$")


@dataclass(frozen=True)
class TaskPaths:
    """Paths of one task directory, following the templates declared in its info.json."""

    root: Path
    chunks_size: int = DEFAULT_CHUNKS_SIZE
    data_template: str = DATA_PATH
    video_template: str = VIDEO_PATH
    episodes_template: str = EPISODES_PATH

    @classmethod
    def from_info(cls, root: Path, info: dict | None, chunks_size: int = DEFAULT_CHUNKS_SIZE) -> "TaskPaths":
        """The task's own templates; a new task (no info.json yet) gets the defaults."""
        info = info or {}
        return cls(Path(root), int(info.get("chunks_size", chunks_size)),
                   info.get("data_path", DATA_PATH), info.get("video_path", VIDEO_PATH),
                   info.get("episodes_path", EPISODES_PATH))

    def number(self, episode_index: int) -> EpisodeNumber:
        return EpisodeNumber.from_index(episode_index, self.chunks_size)

    def data(self, n: EpisodeNumber) -> Path:
        return self.root / self.data_template.format(c=n.chunk, f=n.file)

    def video(self, n: EpisodeNumber, image_key: str, ext: str) -> Path:
        return self.root / self.video_template.format(c=n.chunk, f=n.file, image_key=image_key, ext=ext)

    def episode_row(self, n: EpisodeNumber) -> Path:
        return self.root / self.episodes_template.format(c=n.chunk, f=n.file)

    def staging(self, n: EpisodeNumber) -> Path:
        return self.root / f"{STAGING_PREFIX}{n.index:06d}"

    @property
    def info(self) -> Path:
        return self.root / INFO

    @property
    def stats(self) -> Path:
        return self.root / STATS

    @property
    def tasks(self) -> Path:
        return self.root / TASKS

    @property
    def recycled(self) -> Path:
        return self.root / RECYCLED

    @property
    def set_aside(self) -> Path:
        return self.root / SET_ASIDE

    def list_episodes(self) -> list[EpisodeNumber]:
        """Committed episodes, found by their data files (never by guessing from counts);
        dotfiles, temporaries and anything not matching the template are ignored (§8.2)."""
        data_dir = self.root / self.data_template.split("/", 1)[0]
        found: list[EpisodeNumber] = []
        if not data_dir.is_dir():
            return found
        for chunk_dir in data_dir.iterdir():
            m = _CHUNK_DIR.match(chunk_dir.name)
            if not m or not chunk_dir.is_dir():
                continue
            for f in chunk_dir.iterdir():
                fm = _DATA_FILE.match(f.name)
                if fm and int(fm.group(1)) < self.chunks_size:
                    found.append(EpisodeNumber(int(m.group(1)) * self.chunks_size + int(fm.group(1)),
                                               self.chunks_size))
        return sorted(found)

    def list_staged(self) -> list[tuple[int, Path]]:
        """Staged (unfinished) episodes: (episode_index, folder)."""
        if not self.root.is_dir():
            return []
        out = []
        for p in self.root.iterdir():
            if p.is_dir() and p.name.startswith(STAGING_PREFIX):
                tail = p.name[len(STAGING_PREFIX):]
                if tail.isdigit():
                    out.append((int(tail), p))
        return sorted(out)
