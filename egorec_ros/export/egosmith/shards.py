"""Shards ``shard-%06d.tar``: whole episodes (never split) up to a frame budget, written as
``.tar.tmp`` and renamed when complete; an episode larger than the budget gets a shard alone."""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from egorec_ros.export.egosmith.tar_members import closing

DEFAULT_FRAMES_PER_SHARD = 10_000
PATTERN = "shard-{:06d}.tar"


@dataclass
class ShardInfo:
    name: str
    frames: int = 0
    episodes: list[int] = field(default_factory=list)


class ShardWriter:
    """Owns the open ``.tar.tmp``: an episode is announced with its frame count (which picks
    its shard), then written to the returned file, or copied from a worker's part file."""

    def __init__(self, out: Path, frames_per_shard: int = DEFAULT_FRAMES_PER_SHARD) -> None:
        self.out, self.budget = out, frames_per_shard
        self.done: list[ShardInfo] = []
        self._current: ShardInfo | None = None
        self._file: BinaryIO | None = None

    @property
    def tmp_path(self) -> Path | None:
        return None if self._current is None else self.out / (self._current.name + ".tmp")

    def begin(self, episode_index: int, frames: int) -> BinaryIO:
        """The file to append the episode's ``frames`` (> 0) samples to."""
        if self._current is not None and self._current.frames + frames > self.budget:
            self.finish()
        if self._current is None:
            self._current = ShardInfo(PATTERN.format(len(self.done)))
            self._file = open(self.tmp_path, "wb")
        self._current.frames += frames
        self._current.episodes.append(episode_index)
        return self._file

    def end(self) -> None:
        if self._current is not None and self._current.frames >= self.budget:
            self.finish()

    def add_part(self, part: Path, episode_index: int, frames: int) -> None:
        if frames:
            with open(part, "rb") as src:
                shutil.copyfileobj(src, self.begin(episode_index, frames), 1 << 20)
            self.end()

    def finish(self) -> None:
        if self._current is None or self._file is None:
            return
        self._file.write(closing(self._file.tell()))
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        os.replace(self.tmp_path, self.out / self._current.name)
        self.done.append(self._current)
        self._current, self._file = None, None

    def abort(self) -> None:
        """Remove the unfinished shard (complete shards stay: they are whole and valid)."""
        if self._file is not None:
            self._file.close()
        if self.tmp_path is not None and self.tmp_path.exists():
            self.tmp_path.unlink()
        self._current, self._file = None, None
