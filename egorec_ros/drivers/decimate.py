"""Frame-rate decimation by clock buckets: keep the first frame of each 1/fps bucket
(50 fps in, 30 out keeps exactly 30 a second, evenly spread: 2 of every 5 dropped)."""
from __future__ import annotations


class Decimator:
    def __init__(self, out_fps: float) -> None:
        self.out_fps = out_fps
        self._origin: int | None = None
        self._last_bucket: int | None = None

    def reset(self) -> None:
        self._origin = self._last_bucket = None

    def keep(self, t_ns: int) -> bool:
        if self._origin is None:
            self._origin = t_ns
        bucket = int((t_ns - self._origin) * self.out_fps) // 1_000_000_000
        if bucket == self._last_bucket or (self._last_bucket is not None and bucket < self._last_bucket):
            return False
        self._last_bucket = bucket
        return True
