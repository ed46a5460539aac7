"""Ctrl-C during `egorec record`, defined: the first one finishes and commits the current
episode and records no further ones; the second discards the current episode (number
recycled, staging removed). SIGTERM (how launch and systemd stop a process) asks for what
the first Ctrl-C does, however often it comes. The handlers only count: no KeyboardInterrupt
is raised in the middle of a commit or a thread hand-over, so the program decides at safe points."""
from __future__ import annotations

import signal
import threading
from typing import Any


class Interrupts:
    def __init__(self) -> None:
        self.count = 0
        self._previous: Any = None   # the SIGINT handler to restore
        self._previous_term: Any = None

    def _handle(self, signum, frame) -> None:
        self.count += 1   # nothing else: this runs between any two bytecodes of the main thread

    def _terminate(self, signum, frame) -> None:
        self.count = max(self.count, 1)   # finish and commit, never discard

    def __enter__(self) -> "Interrupts":
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
            self._previous_term = signal.signal(signal.SIGTERM, self._terminate)
        return self

    def __exit__(self, *exc: object) -> None:
        # after a Ctrl-C the program is ending: a late one (0.3 s after, as the process
        # winds down) must neither raise KeyboardInterrupt nor, once the interpreter has
        # reset its handlers at exit, kill it (exit -2); SIG_IGN survives that reset
        if self._previous is not None:
            signal.signal(signal.SIGINT, signal.SIG_IGN if self.count else self._previous)
        if self._previous_term is not None:
            signal.signal(signal.SIGTERM, self._previous_term)
