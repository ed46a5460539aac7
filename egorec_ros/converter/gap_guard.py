"""A long silence of the master camera ends the episode, instead of filling it with repeats.

Rows are built on the master stream's tick grid up to the newest arrival, so a sample that
arrives days after the last master frame (a bag with one image, then IMU three days later)
would make the assembler build every row in between, each repeating that frame: millions of
rows and a video of one picture. A live recorder would have been stopped long before.

So, per episode, when a sample arrives more than ``max_gap_s`` (bag receive time) after the
last master frame, the episode ends there: the rows up to the last master frame are kept
and the rest of the window is not read; the note says where, how long and what to do
(``--gap`` cuts such a bag into episodes at its gaps; ``--max-gap`` raises the limit).
Shorter silences are filled with counted repeats, as live.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from egorec_ros.assembly.sample import Sample
from egorec_ros.converter.clocks import duration_words
from egorec_ros.rig.kinds import StreamKind
from egorec_ros.rig.model import Rig

DEFAULT_MAX_GAP_S = 10.0


def master_stream(rig: Rig) -> str | None:
    """The video stream whose frames set the rows: the master slot's, else the first video."""
    videos = [s for s in rig.streams.values() if s.kind is StreamKind.VIDEO]
    return next((s.id for s in videos if s.slot == rig.master_slot), videos[0].id if videos else None)


class GapGuard:
    def __init__(self, rig: Rig, max_gap_s: float, when: Callable[[int], str]) -> None:
        self.master = master_stream(rig)
        self.max_gap_s = max_gap_s
        self._max_gap_ns = int(max_gap_s * 1e9)
        self._when = when
        self.note: str | None = None      # set when the guard ended the episode

    def watch(self, samples: Iterable[Sample]) -> Iterator[Sample]:
        """``samples`` up to the first one arriving more than the limit after the last master frame."""
        last: int | None = None
        for sample in samples:
            if last is not None and sample.arrival_ns - last > self._max_gap_ns:
                self.note = (
                    f"episode ended at {self._when(last)}: the master stream {self.master} has no frame for "
                    f"{duration_words((sample.arrival_ns - last) / 1e9)} after it (next sample: {sample.stream} at "
                    f"{self._when(sample.arrival_ns)}), more than --max-gap {self.max_gap_s:g} s; the rest of "
                    "this window is not converted: cut the bag at its gaps with --gap SECONDS to convert it as "
                    "further episodes")
                return
            if sample.stream == self.master:
                last = sample.arrival_ns
            yield sample
