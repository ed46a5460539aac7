"""Per-stream accounting: every sample that reaches the assembler ends up counted in
exactly one way, so drop_stats can show where each one went.

The books balance for every stream, whatever its kind:

    received == used + skipped + superseded + late + out_of_order + invalid + outside + excluded

``repeated``, ``delayed`` and ``restamped`` are not fates but facts about rows and
samples already counted above: for a recorded video stream ``used + repeated`` is the
number of rows; ``delayed`` counts used samples that went into a later row than their
own; ``restamped`` counts samples the recorder handed over after their row was built.

A sample's row: video, the tick nearest its stamp; latest-wins and windows, the first
tick at or after its stamp. Its deadline is that tick + D.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Mapping

# the counts a person should look at: frames repeated or lost, samples late or unusable
PROBLEMS = ("repeated", "skipped", "late", "out_of_order", "invalid")


def problems(counts: Mapping[str, int]) -> dict[str, int]:
    """The non-zero problem counts of one stream (a drop_stats entry or StreamCounts.to_json())."""
    return {k: counts[k] for k in PROBLEMS if counts.get(k)}


@dataclass
class StreamCounts:
    received: int = 0      # samples pushed
    used: int = 0          # written to a row (video: distinct frames written)
    skipped: int = 0       # video: arrived in time but never written (a nearer frame won its tick)
    superseded: int = 0    # latest-wins: arrived in time but a newer sample took its row
    late: int = 0          # never written because it arrived after its row's deadline
    out_of_order: int = 0  # video: arrived in time but its stamp is not after a frame already written
    invalid: int = 0       # wrong shape/type, NaN, zero stamp: dropped with a reason
    outside: int = 0       # stamp before the episode's first row or after its last one
    excluded: int = 0      # video: the stream was left out of the episode (silent at its start)
    repeated: int = 0      # video: rows that repeat the previous frame (no frame near the tick)
    delayed: int = 0       # of ``used``: arrived after their row's deadline, written into a later row
    restamped: int = 0     # handed over after the row they were in time for had been built

    def to_json(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v}

    def fates(self) -> int:
        """Samples accounted for; equals ``received`` when the books balance."""
        return (self.used + self.skipped + self.superseded + self.late + self.out_of_order + self.invalid
                + self.outside + self.excluded)
