"""Free disk space while recording: a recording must stop, with its episode committed,
before the disk is full, because a full disk fails only at commit (the videos are remuxed
then, which needs room for a copy of the largest one).

The margin kept free is what the rest of the episode still needs: the bytes written in
``DRAIN_S`` seconds at the measured data rate (rows still being built, encoders draining)
plus the largest staged video (its remuxed copy at commit) plus ``MIN_FREE``.
"""
from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

from egorec_ros.errors import UserError

MIN_FREE = 16 * 1024 * 1024   # bytes always left free (metadata, the data parquet's footer, other programs)
DRAIN_S = 3.0                 # seconds of data the end of an episode may still write (rows due, encoder queues)


class DiskFullError(UserError, RuntimeError):
    """Not enough free space to start (or go on) recording; the message says how much there is."""


def free_bytes(path: str | Path) -> int | None:
    """Free bytes for an unprivileged writer on the filesystem holding ``path`` (None: unknown)."""
    try:
        return shutil.disk_usage(path).free
    except OSError:
        return None


def largest_file(folder: Path | None) -> int:
    if folder is None:
        return 0
    try:
        return max((e.stat().st_size for e in os.scandir(folder) if e.is_file()), default=0)
    except OSError:
        return 0


class DiskGuard:
    """Watches the free space of one filesystem; ``free`` is injectable for tests."""

    def __init__(self, path: str | Path, *, min_free: int = MIN_FREE,
                 free: Callable[[Path], int | None] = free_bytes, clock: Callable[[], float] = time.monotonic):
        self.path, self.min_free, self._free, self._clock = Path(path), min_free, free, clock
        self._last: tuple[float, int] | None = None
        self.rate = 0.0        # bytes/s consumed, smoothed
        self.free = 0           # bytes free at the last check
        self.needed = min_free  # the margin at the last check

    def check_start(self) -> None:
        free = self._free(self.path)
        if free is not None and free < self.min_free:
            raise DiskFullError(f"{self.path}: only {mib(free)} free, recording needs at least {mib(self.min_free)}; "
                                "free some space or record to another disk (--out)")

    def margin(self, staged: Path | None = None) -> int:
        return self.min_free + int(self.rate * DRAIN_S) + largest_file(staged)

    def low(self, staged: Path | None = None) -> bool:
        """Update the data rate; True when free space is below the margin the episode needs."""
        free, now = self._free(self.path), self._clock()
        if free is None:
            return False
        if self._last is not None and now > self._last[0]:
            used = max(0, self._last[1] - free) / (now - self._last[0])
            self.rate = used if self.rate == 0 else 0.7 * self.rate + 0.3 * used
        self._last, self.free, self.needed = (now, free), free, self.margin(staged)
        return free < self.needed


def mib(n: int) -> str:
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB"
