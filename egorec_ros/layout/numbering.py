"""Episode numbers (§1.3): k is the 0-based global number, the parquet
``episode_index`` is k + 1, and the files live at chunk k // chunks_size, file
k % chunks_size. Keeping the two numberings in one type stops them from mixing.
"""
from __future__ import annotations

from dataclasses import dataclass

DEFAULT_CHUNKS_SIZE = 1000


@dataclass(frozen=True, order=True)
class EpisodeNumber:
    k: int
    chunks_size: int = DEFAULT_CHUNKS_SIZE

    def __post_init__(self) -> None:
        if self.k < 0:
            raise ValueError(f"episode number k must be >= 0, got {self.k}")
        if self.chunks_size < 1:
            raise ValueError(f"chunks_size must be >= 1, got {self.chunks_size}")

    @classmethod
    def from_index(cls, episode_index: int, chunks_size: int = DEFAULT_CHUNKS_SIZE) -> "EpisodeNumber":
        """From the 1-based parquet ``episode_index``."""
        if episode_index < 1:
            raise ValueError(f"episode_index is 1-based (§1.3), got {episode_index}")
        return cls(episode_index - 1, chunks_size)

    @property
    def index(self) -> int:
        """The parquet ``episode_index`` column value (1-based)."""
        return self.k + 1

    @property
    def chunk(self) -> int:
        return self.k // self.chunks_size

    @property
    def file(self) -> int:
        return self.k % self.chunks_size

    def __str__(self) -> str:
        return f"episode {self.index} (chunk-{self.chunk:03d}/episode-{self.file:03d})"
