"""Progress of a whole bag farm: bags done / failed / left (and already converted by an
earlier run), rows, throughput, ETA, and what each node did. A line at most every
``every_s`` seconds while it runs (a 10 000-bag farm must not print 10 000 lines) and one at
the end; ``RunProgress`` shows the bags being converted at the moment.

Each node is credited with the episodes and rows it converted; a finished bag counts as one
of a node's bags when all its episodes ran there, else as split (its episodes ran on several
nodes: each of them shows ``+N split``, and the line says how many of the bags done were split)."""
from __future__ import annotations

import sys
import time
from collections import Counter, defaultdict
from typing import TextIO

FARM_EVERY_S = 30.0


class FarmProgress:
    def __init__(self, bags: int, already: int, *, every_s: float = FARM_EVERY_S, stream: TextIO | None = None,
                 enabled: bool = True) -> None:
        self.bags, self.already = bags, already
        self.done = self.failed = self.rows = 0
        self.split = 0
        self.node_bags: Counter[str] = Counter()       # bags converted wholly on the node
        self.node_split: Counter[str] = Counter()      # bags it converted some episodes of
        self.node_episodes: Counter[str] = Counter()
        self.node_rows: Counter[str] = Counter()
        self._bag_nodes: defaultdict[str, set[str]] = defaultdict(set)   # running bag -> nodes of its episodes
        self._began = self._last = time.monotonic()
        self._every_s, self._stream, self._enabled = every_s, stream or sys.stderr, enabled

    @property
    def left(self) -> int:
        return self.bags - self.already - self.done - self.failed

    def episode(self, bag: str, node: str, rows: int) -> None:
        """An episode of ``bag`` converted on ``node`` was committed."""
        node = node or "driver"
        self.rows += rows
        self.node_rows[node] += rows
        self.node_episodes[node] += 1
        self._bag_nodes[bag].add(node)

    def bag(self, bag: str, failed: bool) -> None:
        """A bag finished (all its episodes committed or failed)."""
        nodes = self._bag_nodes.pop(bag, set())
        if failed:
            self.failed += 1
        else:
            self.done += 1
            if len(nodes) == 1:
                self.node_bags[next(iter(nodes))] += 1
            elif nodes:
                self.split += 1
                self.node_split.update(nodes)
        if self._enabled and time.monotonic() - self._last >= self._every_s:
            self._last = time.monotonic()
            print(self.line(), file=self._stream, flush=True)

    def line(self) -> str:
        elapsed = max(time.monotonic() - self._began, 1e-9)
        finished = self.done + self.failed
        rate = finished / elapsed
        eta = time.strftime("%H:%M:%S", time.gmtime(self.left / rate)) if rate > 0 and self.left / rate < 86400 \
            else ("?" if rate <= 0 else f"{self.left / rate / 86400:.1f} days")
        nodes = ", ".join(f"{n} {self.node_bags[n]} bags" + (f" +{self.node_split[n]} split" if self.node_split[n] else "")
                          + f" {self.node_episodes[n]} episodes {self.node_rows[n]} rows"
                          for n in sorted(self.node_rows))
        already = f", {self.already} already converted" if self.already else ""
        split = f"; {self.split} of the bags done split over nodes" if self.split else ""
        return (f"farm: {self.done} bags done, {self.failed} failed, {self.left} left{already}; {self.rows} rows; "
                f"{rate * 60:.1f} bags/min, {self.rows / elapsed:.0f} rows/s; ETA {eta}{split}"
                + (f"; nodes: {nodes}" if nodes else ""))
