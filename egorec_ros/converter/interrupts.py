"""Ctrl-C that waits for the end of a block: committing an episode into the task dir
is never cut in half (the interrupt is raised right after it)."""
from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield               # signals only reach the main thread anyway
        return
    received: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if received:
        raise KeyboardInterrupt
