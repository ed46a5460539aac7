"""A tqdm bar per bag of a run, counted in messages read, fed by the jobs wherever they
run; quiet when stderr is not a terminal. Bars open with a bag's first job and close
with its last, so a parallel run shows the bags being converted at that moment."""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from tqdm import tqdm

from egorec_ros.converter.episode_job import EpisodeJob, EpisodeOutcome


class RunProgress:
    def __init__(self, jobs: Sequence[EpisodeJob], totals: dict[str, int | None], *,
                 enabled: bool | None = None) -> None:
        self._bag = {j.order: j.bag for j in jobs}
        self._left = Counter(j.bag for j in jobs)        # jobs of each bag not finished yet
        self._totals = totals
        self._counted: Counter[int] = Counter()
        self._bars: dict[str, tqdm] = {}
        self._disable = None if enabled is None else not enabled   # None: tqdm's own tty check

    def advance(self, order: int, n: int) -> None:
        self._counted[order] += n
        self._bar(self._bag[order]).update(n)

    def done(self, outcome: EpisodeOutcome) -> None:
        """The job ended: count what its progress messages had not reported yet."""
        bar = self._bar(outcome.bag)
        bar.update(max(0, outcome.messages - self._counted.pop(outcome.order, 0)))
        self._left[outcome.bag] -= 1
        if not self._left[outcome.bag]:
            bar.close()

    def close(self) -> None:
        for bar in self._bars.values():
            bar.close()

    def _bar(self, bag: str) -> tqdm:
        if bag not in self._bars:
            self._bars[bag] = tqdm(total=self._totals.get(bag), unit="msg", desc=Path(bag).name,
                                   disable=self._disable, leave=True, dynamic_ncols=True)
        return self._bars[bag]
