"""Background output work runs at a lower CPU priority than the work that feeds it (issue 13).

Encoding is throughput work: frames wait in a queue, and no one minds when a given frame
is encoded. Reading a bag and building rows is what everything else waits for: while
the encoders hold both cores, the reader and the row builder wait for a core, the
encoders' queues run dry and a core idles later. Converting 60 s of three raw 640x480
cameras on 2 cores (medians of 4, one session): 16.3 s with equal priorities, 14.8 s with
the encoders at niceness +5, against 14.2 s for the bare lower bound (read + decode +
encode, bench/bench_convert.py). A live recording gains the same way: the tick thread,
the subscriptions and the device drivers come before the encoders.

A thread's niceness is inherited by the threads it starts, so an encoder opened on a
lowered thread has its codec's worker threads (x264 frame threads, the look-ahead)
lowered too. Linux only (elsewhere a thread id is not a ``setpriority`` target): a no-op
there. Raising niceness needs no privilege; nothing here lowers it again.
"""
from __future__ import annotations

import os
import sys
import threading

BACKGROUND_NICENESS = 5   # +5: the scheduler gives a nice-0 thread ~3x the CPU share of these


def lower_this_thread(niceness: int = BACKGROUND_NICENESS) -> bool:
    """Add ``niceness`` to the calling thread's own (the kernel caps it at 19); False where
    that cannot be done (not Linux, ``setpriority`` refused)."""
    if not sys.platform.startswith("linux") or niceness <= 0:
        return False
    tid = threading.get_native_id()
    try:
        os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + niceness)
    except OSError:          # a sandbox without setpriority: run at the priority we have
        return False
    return True


def idle_io_for_thread(tid: int | None = None) -> str:
    """Put thread ``tid`` (default: the calling one) in the idle I/O class: the block layer
    serves its reads and writes when no other class waits, so a recording's writes go first.
    Both schedulers that know classes bound the wait (BFQ serves an idle queue after 200 ms
    without service, mq-deadline ages it after 10 s), so a lock held by that thread (the upload
    queue's SQLite file) is not held forever; with no scheduler (``none``, common for NVMe) the
    class changes nothing. A thread's niceness already maps to a best-effort level (nice +10 ->
    level 6 of 0..7), which only BFQ honours. Returns '' when done, else why not: the caller
    reports it and runs at the I/O priority it has (no privilege is needed, but psutil may be
    missing or the platform not Linux)."""
    if not sys.platform.startswith("linux"):
        return "I/O classes are set on Linux only"
    tid = threading.get_native_id() if tid is None else tid
    try:
        import psutil
    except ImportError:
        return "psutil is not installed (pip install psutil)"
    try:
        psutil.Process(tid).ionice(psutil.IOPRIO_CLASS_IDLE)
    except (psutil.Error, OSError) as exc:
        return f"ioprio_set on thread {tid} failed: {exc}"
    return ""
