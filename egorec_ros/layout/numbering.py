"""Episode numbers (§1.3): k is the 0-based global number, the parquet
``episode_index`` is k + 1, and the files live at chunk k // chunks_size, file
k % chunks_size. Keeping the two numberings in one type stops them from mixing.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

DEFAULT_CHUNKS_SIZE = 1000
MAX_RANGE = 1_000_000            # a list is spelled out in memory: "1-999999999" is a typo
_EPISODE_PART = re.compile(r"([0-9]+)(?:\s*-\s*([0-9]+))?")   # "7" or "3-5"; ASCII digits only


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


def parse_episode_list(text: str) -> list[int]:
    """``"1, 3-5,4"`` -> ``[1, 3, 4, 5]``: 1-based ``episode_index`` values and A-B ranges
    (what the operator reads in `egorec inspect`), sorted, each once. The one parser of the
    commands that take episode lists (delete, upload, export egosmith); ValueError naming the
    bad part otherwise."""
    out: set[int] = set()
    parts = [p.strip() for p in text.split(",")]
    if not any(parts):
        raise ValueError(f"{text!r} names no episode; give numbers and ranges like 1,3-5")
    for part in parts:
        if not part:
            continue                       # "1,3," or "1,,3": a stray comma names nothing
        where = repr(part) if part == text.strip() else f"{part!r} in {text!r}"
        m = _EPISODE_PART.fullmatch(part)
        if m is None:
            raise ValueError(f"{where} is not an episode number or a range A-B")
        first = int(m[1])
        last = int(m[2]) if m[2] else first
        if first < 1:
            raise ValueError(f"{where}: episode numbers start at 1 (§1.3)")
        if last < first:
            raise ValueError(f"{where}: a range goes up (A-B with A <= B)")
        if last - first >= MAX_RANGE:
            raise ValueError(f"{where}: a range of more than {MAX_RANGE} episodes")
        out.update(range(first, last + 1))
    return sorted(out)
