"""Samples taken from the middleware, handed to the subscribers' callbacks by one thread.

Reader histories are keep-last (depth 50 for the recorder): whatever takes samples out of
them must never wait for a callback, or fast topics overwrite samples that were never taken —
silent loss, IMU first, as soon as the recorder is busy (measured by bench_transport: 61 % of
the IMU lost by the rclpy recorder on a loaded machine, the bare subscriber 15 %). So the
taking side only appends here (``put``: microseconds) and this queue's thread runs the callbacks,
one at a time in arrival order. The queue is bounded in bytes: beyond it samples are dropped,
counted per subscription and reported once, instead of memory growing without end. And a topic
sample waiting longer than ``STALE_NS`` is dropped (counted, reported once) instead of handed on:
when the consumer is slower than the data for good (a starved recorder), a FIFO would otherwise
hand on nothing but seconds-old samples — all of them too late for a row (the recorder built no
row at all in bench_transport at load 20 on 2 cores) — where dropping the stale ones keeps the
fresh ones usable. Service requests never go stale (``stale_ns=None``).
"""
from __future__ import annotations

import sys
import threading
import time
from collections import deque
from dataclasses import dataclass

from egorec_ros.transport.base import RawCallback

MAX_PENDING_BYTES = 256 << 20      # ~2 s of Appendix B at 640x480
STALE_NS = 1_000_000_000           # the recorder's rows wait 150 ms for their samples (latency_ms)


@dataclass(eq=False)
class Target:
    """One subscription's callback and its counts."""

    name: str                      # the topic, for messages
    callback: RawCallback
    closed: bool = False           # set by the subscription's close(): queued samples are skipped
    stale_ns: int | None = STALE_NS  # dropped when it waited longer (None: never, e.g. service requests)
    dropped: int = 0               # not queued: MAX_PENDING_BYTES were waiting
    stale: int = 0                 # dropped after waiting longer than stale_ns
    errors: int = 0                # the callback raised


class CallbackQueue:
    def __init__(self, max_bytes: int = MAX_PENDING_BYTES, name: str = "egorec-callbacks") -> None:
        self.max_bytes = max_bytes
        self._items: deque[tuple[Target, bytes, int]] = deque()
        self._bytes = 0
        self.dropped = 0                # all subscriptions: not queued (full) or stale
        self._running = True
        self._ready = threading.Condition()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def put(self, target: Target, cdr: bytes, arrival_ns: int) -> None:
        with self._ready:
            if self._bytes > self.max_bytes:
                self._drop(target, stale=False, why=f"{self.max_bytes >> 20} MB behind")
                return
            self._items.append((target, cdr, arrival_ns))
            self._bytes += len(cdr)
            self._ready.notify()

    def pending(self) -> int:
        """Samples queued and not yet handed to their callback."""
        return len(self._items)

    def close(self) -> None:
        """Stops after the running callback; what is still queued is dropped (whoever closes
        has stopped listening)."""
        with self._ready:
            self._running = False
            self._ready.notify()
        self._thread.join()

    def _drop(self, target: Target, *, stale: bool, why: str) -> None:
        """Count a sample that is not handed on; say so at a subscription's first. Holds the lock."""
        self.dropped += 1
        if stale:
            target.stale += 1
        else:
            target.dropped += 1
        if (target.stale if stale else target.dropped) == 1:
            print(f"egorec: callbacks {why}: dropping {'stale ' if stale else ''}samples of {target.name} (counted)",
                  file=sys.stderr)

    def _run(self) -> None:
        while True:
            with self._ready:
                while not self._items and self._running:
                    self._ready.wait()
                if not self._running:
                    self._items.clear()
                    return
                target, cdr, arrival = self._items.popleft()
                self._bytes -= len(cdr)
                if target.closed:
                    continue
                if target.stale_ns is not None and time.time_ns() - arrival > target.stale_ns:
                    self._drop(target, stale=True, why=f"{target.stale_ns / 1e9:g} s behind")
                    continue
            try:
                target.callback(cdr, arrival)
            except Exception as exc:  # noqa: BLE001 - a bad callback must not stop the other topics
                target.errors += 1
                if target.errors == 1:
                    print(f"egorec: callback for {target.name} failed: {exc!r}", file=sys.stderr)
