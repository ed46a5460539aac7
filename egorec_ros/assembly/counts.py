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


# what each count of a drop_stats entry means, for reports (the fields of StreamCounts below)
MEANINGS = {
    "received": "samples that reached the assembler",
    "used": "written to a row (video: distinct frames written)",
    "repeated": "video: rows that repeat the previous frame, no frame came near the tick (share: of the rows)",
    "skipped": "video: arrived in time but never written, a nearer frame won its tick",
    "superseded": "latest-wins sensors: arrived in time but a newer sample took its row (normal when a "
                  "sensor is faster than the rows)",
    "late": "never written: arrived after its row's deadline (tick + latency budget)",
    "out_of_order": "video: arrived in time but its stamp is not after a frame already written",
    "invalid": "dropped: wrong shape or type, NaN, zero stamp",
    "outside": "stamp before the episode's first row or after its last one",
    "excluded": "video: the stream was left out of the episode (silent at its start)",
    "delayed": "of used: arrived after its own row's deadline, so it went into a later row",
    "restamped": "handed over after the row it was in time for had been built",
}

# above this share a problem count is "high": worth a look (a camera repeating 1 row in 20, ...);
# below it is the normal cost of live timing (jitter, a late sample now and then)
HIGH_SHARE = 0.05


def problems(counts: Mapping[str, int]) -> dict[str, int]:
    """The non-zero problem counts of one stream (a drop_stats entry or StreamCounts.to_json())."""
    return {k: counts[k] for k in PROBLEMS if counts.get(k)}


def problem_shares(counts: Mapping[str, int]) -> dict[str, float]:
    """Each non-zero problem count as a share of what it is out of: ``repeated`` of the rows the
    stream is in (used + repeated), the others of the samples received."""
    out = {}
    for kind, n in problems(counts).items():
        whole = counts.get("used", 0) + n if kind == "repeated" else counts.get("received", 0)
        out[kind] = n / whole if whole else 1.0
    return out


def judged(counts: Mapping[str, int]) -> str:
    """'late 148 (2.1 %, ok), repeated 132 (9.8 %, HIGH)': problem counts with their share and
    whether that is normal (below HIGH_SHARE) or worth a look."""
    return ", ".join(f"{kind} {counts[kind]} ({100 * share:.1f} %, {'HIGH' if share > HIGH_SHARE else 'ok'})"
                     for kind, share in problem_shares(counts).items())


def high(counts: Mapping[str, int]) -> dict[str, float]:
    """The problem shares above HIGH_SHARE."""
    return {k: s for k, s in problem_shares(counts).items() if s > HIGH_SHARE}


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
