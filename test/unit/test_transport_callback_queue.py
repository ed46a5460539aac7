"""CallbackQueue: order kept while a callback is slow, a byte bound with counted drops, closed
subscriptions skipped, a failing callback counted without stopping the others."""
from __future__ import annotations

import threading
import time

from egorec_ros.transport.callback_queue import CallbackQueue, Target


def _wait(pred, timeout=10.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end and not pred():
        time.sleep(0.01)
    return pred()


def test_bounded_in_order_skips_closed_and_survives_errors():
    release, got = threading.Event(), []

    def slow(cdr, arrival):
        release.wait(30)
        got.append((cdr, arrival))

    def bad(_cdr, _arrival):
        raise ValueError("boom")

    queue = CallbackQueue(max_bytes=10)
    a, b, c = (Target("/a", slow, stale_ns=None), Target("/b", bad, stale_ns=None),
               Target("/c", lambda cdr, t: got.append((cdr, t)), stale_ns=None))   # arrivals 1, 2, ...: never stale
    try:
        queue.put(a, b"first", 1)
        assert _wait(lambda: queue.pending() == 0)          # taken by the thread, blocked in slow()
        queue.put(b, b"x", 2)
        queue.put(c, b"0123456789", 3)                      # 11 bytes queued: over the bound
        queue.put(c, b"dropped", 4)
        queue.put(a, b"dropped too", 5)
        assert (a.dropped, c.dropped, queue.dropped, queue.pending()) == (1, 1, 2, 2)
        release.set()
        assert _wait(lambda: queue.pending() == 0 and len(got) == 2)
        assert got == [(b"first", 1), (b"0123456789", 3)] and b.errors == 1
        c.closed = True
        queue.put(c, b"z", 6)
        queue.put(a, b"last", 7)
        assert _wait(lambda: len(got) == 3)
        assert got[-1] == (b"last", 7)
    finally:
        release.set()
        queue.close()


def test_stale_samples_are_dropped_and_counted_except_where_they_never_go_stale():
    release, got = threading.Event(), []

    def slow(cdr, _arrival):
        release.wait(30)
        got.append(cdr)

    queue = CallbackQueue()
    topic = Target("/topic", slow, stale_ns=200_000_000)
    request = Target("/service", lambda cdr, t: got.append(cdr), stale_ns=None)
    try:
        queue.put(topic, b"first", time.time_ns())
        assert _wait(lambda: queue.pending() == 0)          # blocked in slow()
        queue.put(topic, b"old", time.time_ns())
        queue.put(request, b"request", time.time_ns())
        queue.put(topic, b"fresh", time.time_ns() + 10_000_000_000)   # arrival stamped in the future
        time.sleep(0.3)                                     # "old" and "request" waited > 200 ms
        release.set()
        assert _wait(lambda: len(got) == 3)
        assert got == [b"first", b"request", b"fresh"] and topic.stale == queue.dropped == 1
    finally:
        release.set()
        queue.close()
