"""Where a message comes from, for payload functions that must name it in an
error (at once, or later from a lazy frame's ``array()``). Source-neutral: a bag
file and its bag time, or a live topic and the host's receive time."""
from __future__ import annotations

from dataclasses import dataclass

BAG_TIME = "bag time"
RECEIVE_TIME = "receive time"


def receive_time(log_ns: int, start_ns: int, clock: str = BAG_TIME) -> str:
    """A receive time in words, for error messages and reports."""
    return f"{clock} {log_ns / 1e9:.6f} s (+{(log_ns - start_ns) / 1e9:.3f} s)"


@dataclass(frozen=True, slots=True)
class MessageContext:
    source: str                   # the bag file, or the live topic's transport ("dds", "rclpy" ...)
    topic: str
    log_ns: int                   # receive time: the bag's, or the host's for a live message
    start_ns: int = 0             # receive time of the source's first message
    clock: str = BAG_TIME         # what log_ns is, in words

    def __str__(self) -> str:
        return f"{self.source}: {self.topic} at {receive_time(self.log_ns, self.start_ns, self.clock)}"
