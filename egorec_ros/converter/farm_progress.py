"""Progress of a whole bag farm: bags done / failed / left (and already converted by an
earlier run), rows, throughput, ETA, and what each node did. A line at most every
``every_s`` seconds while it runs (a 10 000-bag farm must not print 10 000 lines) and one at
the end; ``RunProgress`` shows the bags being converted at the moment."""
from __future__ import annotations

import sys
import time
from collections import Counter
from typing import TextIO

FARM_EVERY_S = 30.0


class FarmProgress:
    def __init__(self, bags: int, already: int, *, every_s: float = FARM_EVERY_S, stream: TextIO | None = None,
                 enabled: bool = True) -> None:
        self.bags, self.already = bags, already
        self.done = self.failed = self.rows = 0
        self.node_bags: Counter[str] = Counter()
        self.node_rows: Counter[str] = Counter()
        self._began = self._last = time.monotonic()
        self._every_s, self._stream, self._enabled = every_s, stream or sys.stderr, enabled

    @property
    def left(self) -> int:
        return self.bags - self.already - self.done - self.failed

    def episode(self, node: str, rows: int) -> None:
        self.rows += rows
        self.node_rows[node or "driver"] += rows

    def bag(self, node: str, failed: bool) -> None:
        """A bag finished (all its episodes committed or failed)."""
        if failed:
            self.failed += 1
        else:
            self.done += 1
            self.node_bags[node or "driver"] += 1
        if self._enabled and time.monotonic() - self._last >= self._every_s:
            self._last = time.monotonic()
            print(self.line(), file=self._stream, flush=True)

    def line(self) -> str:
        elapsed = max(time.monotonic() - self._began, 1e-9)
        finished = self.done + self.failed
        rate = finished / elapsed
        eta = time.strftime("%H:%M:%S", time.gmtime(self.left / rate)) if rate > 0 and self.left / rate < 86400 \
            else ("?" if rate <= 0 else f"{self.left / rate / 86400:.1f} days")
        nodes = ", ".join(f"{n} {self.node_bags[n]} bags {self.node_rows[n]} rows" for n in sorted(self.node_rows))
        already = f", {self.already} already converted" if self.already else ""
        return (f"farm: {self.done} bags done, {self.failed} failed, {self.left} left{already}; {self.rows} rows; "
                f"{rate * 60:.1f} bags/min, {self.rows / elapsed:.0f} rows/s; ETA {eta}"
                + (f"; nodes: {nodes}" if nodes else ""))
