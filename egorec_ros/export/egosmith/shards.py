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


@dataclass
class _OpenShard:
    info: ShardInfo
    tmp: Path
    file: BinaryIO


class ShardWriter:
    """Owns the open ``.tar.tmp``: an episode is announced with its frame count (which picks
    its shard), then written to the returned file, or copied from a worker's part file."""

    def __init__(self, out: Path, frames_per_shard: int = DEFAULT_FRAMES_PER_SHARD) -> None:
        self.out, self.budget = out, frames_per_shard
        self.done: list[ShardInfo] = []
        self._open: _OpenShard | None = None

    def begin(self, episode_index: int, frames: int) -> BinaryIO:
        """The file to append the episode's ``frames`` (> 0) samples to."""
        if self._open is not None and self._open.info.frames + frames > self.budget:
            self.finish()
        if self._open is None:
            info = ShardInfo(PATTERN.format(len(self.done)))
            tmp = self.out / (info.name + ".tmp")
            self._open = _OpenShard(info, tmp, open(tmp, "wb"))
        self._open.info.frames += frames
        self._open.info.episodes.append(episode_index)
        return self._open.file

    def end(self) -> None:
        if self._open is not None and self._open.info.frames >= self.budget:
            self.finish()

    def add_part(self, part: Path, episode_index: int, frames: int) -> None:
        if frames:
            with open(part, "rb") as src:
                shutil.copyfileobj(src, self.begin(episode_index, frames), 1 << 20)
            self.end()

    def finish(self) -> None:
        if self._open is None:
            return
        shard = self._open                 # kept until renamed: a failed write leaves it to abort()
        shard.file.write(closing(shard.file.tell()))
        shard.file.flush()
        os.fsync(shard.file.fileno())
        shard.file.close()
        os.replace(shard.tmp, self.out / shard.info.name)
        self.done.append(shard.info)
        self._open = None

    def abort(self) -> None:
        """Remove the unfinished shard (complete shards stay: they are whole and valid)."""
        if self._open is None:
            return
        shard, self._open = self._open, None
        shard.file.close()
        shard.tmp.unlink(missing_ok=True)
