"""What reading one episode window of a bag found: counts, drops, clocks, notes."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from egorec_ros.converter.clocks import StreamClock
from egorec_ros.converter.issues import Issue


@dataclass
class ReadReport:
    bag: str
    messages: int = 0                     # messages read on mapped topics
    bytes: int = 0                        # their serialized size
    samples: Counter = field(default_factory=Counter)            # stream -> samples yielded
    dropped: dict[str, Issue] = field(default_factory=dict)      # stream -> payloads that did not fit
    clocks: dict[str, StreamClock] = field(default_factory=dict)
    receive_not_increasing: Issue = field(default_factory=Issue)  # bag times going backwards
    notes: list[str] = field(default_factory=list)

    def drop(self, stream: str, log_ns: int, detail: str) -> None:
        self.dropped.setdefault(stream, Issue()).add(log_ns, detail)

    def lines(self) -> list[str]:
        """Human-readable summary: one line per finding."""
        out = [(f"{self.bag}: {self.messages} messages, {self.bytes / 1e6:.1f} MB, "
                f"{sum(self.samples.values())} samples")]
        out += [f"  {s}: {n} samples, clock: {self.clocks[s].describe() if s in self.clocks else '?'}"
                for s, n in sorted(self.samples.items())]
        for stream, issue in sorted(self.dropped.items()):
            out.append(f"  {stream}: {issue.count} samples dropped; first: {issue.first}")
        for stream, clock in sorted(self.clocks.items()):
            for what, issue in (("zero header stamps (dropped)", clock.zero),
                                ("header stamps far from bag time", clock.far),
                                ("stamps not increasing", clock.not_increasing)):
                if issue:
                    out.append(f"  {stream}: {issue.count} {what}; first: {issue.first}")
        if self.receive_not_increasing:
            out.append(f"  {self.receive_not_increasing.count} messages with bag time going backwards; "
                       f"first: {self.receive_not_increasing.first}")
        out += [f"  note: {n}" for n in self.notes]
        return out
