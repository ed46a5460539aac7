"""Progress of a conversion, fed by the jobs wherever they run: per bag, messages read,
bag time reached, rows so far and the time left.

On a terminal a tqdm bar per bag (opened with its first job, closed with its last, so a
parallel run shows the bags being converted at that moment); otherwise (a log file, CI)
a plain line per bag every ``plain_every_s`` seconds. Rows are estimated from the bag
time reached (one row per tick from the window start) until a job reports its real
count: a bag that would make millions of rows shows it at once.
"""
from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from tqdm import tqdm

from egorec_ros.converter.episode_job import EpisodeJob, EpisodeOutcome

PLAIN_EVERY_S = 10.0


class RunProgress:
    def __init__(self, jobs: Sequence[EpisodeJob], totals: dict[str, int | None], *, fps: float,
                 enabled: bool | None = None, plain_every_s: float = PLAIN_EVERY_S,
                 stream: TextIO | None = None) -> None:
        self._jobs = {j.order: j for j in jobs}
        self._left = Counter(j.bag for j in jobs)        # jobs of each bag not finished yet
        self._start: dict[str, int] = {}                               # bag -> its first window start (bag time 0 here)
        for j in jobs:
            self._start[j.bag] = min(self._start.get(j.bag, j.window.start_ns), j.window.start_ns)
        self._totals, self._fps = totals, fps
        self._counted: Counter[int] = Counter()          # order -> messages reported
        self._read: Counter[str] = Counter()             # bag -> messages read
        self._reached: dict[int, int] = {}               # order -> bag time of its last message read
        self._rows: Counter[str] = Counter()             # bag -> rows of its finished jobs
        self._began: dict[str, float] = {}
        self._stream = stream or sys.stderr
        tty = self._stream.isatty()
        self._bars_on = tty if enabled is None else enabled and tty
        self._plain_on = (not tty) if enabled is None else enabled and not tty
        self._plain_every_s, self._last_plain = plain_every_s, time.monotonic()
        self._bars: dict[str, tqdm] = {}

    def advance(self, order: int, n: int, log_ns: int) -> None:
        job = self._jobs[order]
        self._counted[order] += n
        self._reached[order] = max(self._reached.get(order, log_ns), log_ns)
        self._count(job.bag, n)

    def done(self, outcome: EpisodeOutcome) -> None:
        """The job ended: count what its progress messages had not reported yet, and its rows."""
        bag = outcome.bag
        self._count(bag, max(0, outcome.messages - self._counted.pop(outcome.order, 0)))
        self._reached.pop(outcome.order, None)
        self._rows[bag] += outcome.rows
        self._left[bag] -= 1
        if not self._left[bag] and bag in self._bars:
            self._bars[bag].close()

    def close(self) -> None:
        for bar in self._bars.values():
            bar.close()

    def line(self, bag: str) -> str:
        """Where the conversion of ``bag`` is: messages, bag time, rows, time left."""
        read, total = self._read[bag], self._totals.get(bag)
        count = f"{read}/{total} messages ({100 * read / total:.0f} %)" if total else f"{read} messages"
        return f"{Path(bag).name}: {count}, {self._reached_rows(bag)}, ETA {self._eta(bag)}"

    def _reached_rows(self, bag: str) -> str:
        running = {o: t for o, t in self._reached.items() if self._jobs[o].bag == bag}
        rows = self._rows[bag] + sum(self._estimate(o, t) for o, t in running.items())
        where = f"bag time +{(max(running.values()) - self._start[bag]) / 1e9:.1f} s, " if running else ""
        return f"{where}~{rows} rows"

    # ---- internals ---------------------------------------------------------------------------

    def _count(self, bag: str, n: int) -> None:
        self._began.setdefault(bag, time.monotonic())
        self._read[bag] += n
        if self._bars_on:
            bar = self._bar(bag)
            bar.update(n)
            bar.set_postfix_str(self._reached_rows(bag), refresh=False)      # tqdm shows the ETA
        elif self._plain_on and time.monotonic() - self._last_plain >= self._plain_every_s:
            self._last_plain = time.monotonic()
            print(f"converting {self.line(bag)}", file=self._stream, flush=True)

    def _estimate(self, order: int, reached_ns: int) -> int:
        """Rows a running job has built about now: one per tick since its window opened."""
        return max(0, int((reached_ns - self._jobs[order].window.start_ns) * self._fps / 1e9))

    def _eta(self, bag: str) -> str:
        total, read = self._totals.get(bag), self._read[bag]
        elapsed = time.monotonic() - self._began.get(bag, time.monotonic())
        if not total or not read or elapsed <= 0:
            return "?"
        left = max(0.0, (total - read) * elapsed / read)
        return time.strftime("%H:%M:%S", time.gmtime(left)) if left < 86400 else f"{left / 86400:.1f} days"

    def _bar(self, bag: str) -> tqdm:
        if bag not in self._bars:
            self._bars[bag] = tqdm(total=self._totals.get(bag), unit="msg", desc=Path(bag).name, file=self._stream,
                                   leave=True, dynamic_ncols=True)
        return self._bars[bag]
