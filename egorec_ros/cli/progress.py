"""A one-line live progress display (rewritten in place on a terminal, plain lines when piped)."""
from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from egorec_ros.recorder.session import RecorderStatus


class ProgressLine:
    def __init__(self, stream=sys.stderr, every_s: float = 2.0) -> None:
        self.stream, self.tty, self.every = stream, stream.isatty(), every_s
        self._last = 0.0
        self._width = 0

    def show(self, text: str) -> None:
        if self.tty:
            pad = max(0, self._width - len(text))
            self.stream.write("\r" + text + " " * pad)
            self._width = len(text)
            self.stream.flush()
        elif time.monotonic() - self._last >= self.every:
            self.stream.write(text + "\n")
            self._last = time.monotonic()

    def done(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()
        self._width = 0


def describe_status(status: RecorderStatus, elapsed_s: float) -> str:
    """rows, sample rate, drops by stream, the worst encoder backlog, and an overload warning
    saying what to do when the recorder cannot keep up."""
    received = sum(status.received.values())
    rate = received / elapsed_s if elapsed_s > 0 else 0.0
    dropped = {k: v for k, v in status.dropped.items() if v}
    for k, v in status.overflow.items():
        dropped[k] = dropped.get(k, 0) + v
    worst = max(status.backlog.items(), key=lambda kv: kv[1], default=("-", 0))
    drops = ", ".join(f"{k} {v}" for k, v in sorted(dropped.items(), key=lambda kv: -kv[1])[:3])
    target = f"/{status.rows_target}" if status.rows_target else ""
    return (f"rows {status.rows}{target}  samples {received} ({rate:.0f}/s)  "
            f"drops {sum(dropped.values())}{' (' + drops + ')' if drops else ''}  "
            f"backlog {worst[1]} ({worst[0]})" + (f"  {status.overload}" if status.overload else ""))
