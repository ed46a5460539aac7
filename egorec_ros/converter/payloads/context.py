"""Where a message comes from, for payload functions that must name it in an
error (at once, or later from a lazy frame's ``array()``)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


def bag_time(log_ns: int, bag_start_ns: int) -> str:
    """A bag time in words, for error messages and reports."""
    return f"bag time {log_ns / 1e9:.6f} s (+{(log_ns - bag_start_ns) / 1e9:.3f} s)"


@dataclass(frozen=True, slots=True)
class MessageContext:
    bag: Path | str
    topic: str
    log_ns: int                   # bag receive time
    bag_start_ns: int = 0

    def __str__(self) -> str:
        return f"{self.bag}: {self.topic} at {bag_time(self.log_ns, self.bag_start_ns)}"
