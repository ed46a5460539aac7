"""CPU seconds per thread role of this process, for benchmarks on a shared machine.

A process's CPU time (os.times) says *that* a conversion costs more than its lower bound; this
says *where*. Every Python thread started inside the block reports its own CPU time
(time.thread_time) when its ``run`` returns, under a role taken from its name; the main
thread's is read at the ends of the block; "native" is the rest of the process's CPU: threads
Python did not start (x264's frame threads, Arrow's pool), plus Python threads still running
when the block ends. Exact (no sampling), and CPU seconds, unlike wall time, barely change
with the load of other processes.
"""
from __future__ import annotations

import os
import threading
import time
from typing import Any

ROLES = ("main", "reader", "encoders", "rows", "other", "native")


def _role(name: str) -> str:
    if name.startswith("egorec-reader"):
        return "reader"
    if name.startswith("encoder-"):
        return "encoders"
    if name.startswith("rows"):
        return "rows"
    return "other"


def _process_cpu() -> float:
    t = os.times()
    return t.user + t.system


class ThreadCpu:
    """``with ThreadCpu() as cpu: ...`` then ``cpu.by_role()``: CPU seconds each role used
    during the block. Patches threading.Thread.run while the block runs (a benchmark's own
    process only)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._roles = dict.fromkeys(ROLES, 0.0)
        self._run: Any = None
        self._main = self._total = 0.0

    def __enter__(self) -> ThreadCpu:
        self._run = original = threading.Thread.run
        roles, lock = self._roles, self._lock

        def run(thread: threading.Thread) -> None:
            try:
                original(thread)
            finally:
                with lock:
                    roles[_role(thread.name)] += time.thread_time()

        threading.Thread.run = run          # type: ignore[method-assign]
        self._main, self._total = time.thread_time(), _process_cpu()
        return self

    def __exit__(self, *exc: object) -> None:
        self._main, self._total = time.thread_time() - self._main, _process_cpu() - self._total
        threading.Thread.run = self._run     # type: ignore[method-assign]

    def by_role(self) -> dict[str, float]:
        with self._lock:
            out = dict(self._roles)
        out["main"] = self._main
        out["native"] = max(0.0, self._total - sum(v for k, v in out.items() if k != "native"))
        return out
