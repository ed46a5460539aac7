"""Per-stream accounting: every sample that reaches the assembler ends up counted in
exactly one way, so drop_stats can show where each one went."""
from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass
class StreamCounts:
    received: int = 0      # samples pushed
    used: int = 0          # video: frames written; latest/window: samples written to a row
    repeated: int = 0      # video: rows that repeat the previous frame (no frame near the tick)
    skipped: int = 0       # video: frames never written (another frame was nearer its tick)
    superseded: int = 0    # latest-wins: older samples replaced by a newer one in the same row
    late: int = 0          # arrived after their tick was finalised (latency budget exceeded)
    invalid: int = 0       # wrong shape/type, NaN, zero stamp: dropped with a reason
    out_of_order: int = 0  # stamp older than a sample already used
    outside: int = 0       # stamp before the episode start or after its end

    def to_json(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v}
