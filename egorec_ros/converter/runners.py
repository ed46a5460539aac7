"""Where episode jobs run: in the driver (serial) or in local worker processes (``--jobs N``).

Every runner takes jobs with ``submit`` and hands outcomes back one by one with
``outcome(order)``, in the order the driver asks for them (run order), reporting the
messages read meanwhile through ``on_progress(order, n)``. ``close`` stops whatever
still runs; workers only ever write into the run's private work folder, so stopping
them hard (Ctrl-C, a failure without --keep-going) leaves nothing in the task dir.

Local workers are spawned (not forked: the driver holds locks, threads and open bags)
and ignore Ctrl-C, which the driver handles by killing them. A worker that dies (out
of memory, a crash in a codec) fails the episodes in flight with a clear error instead
of hanging the run (``concurrent.futures`` notices; ``multiprocessing.Pool`` would not). ``ray_runner.py``
has the same interface over a Ray cluster.
"""
from __future__ import annotations

import multiprocessing
import queue
import signal
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures import TimeoutError as FuturesTimeout
from concurrent.futures.process import BrokenProcessPool
from typing import Protocol

from egorec_ros.converter.episode_job import ConvertSettings, EpisodeJob, EpisodeOutcome, convert_episode

OnProgress = Callable[[int, int, int], object]     # (job order, messages read since last call, bag time)
POLL_S = 0.1
PROGRESS_EVERY_S = 0.25


class Runner(Protocol):
    def submit(self, job: EpisodeJob) -> None: ...

    def outcome(self, order: int) -> EpisodeOutcome: ...

    def close(self) -> None: ...


class SerialRunner:
    """Runs each job in the driver when its outcome is asked for (memory: one episode at a time)."""

    def __init__(self, settings: ConvertSettings, on_progress: OnProgress) -> None:
        self._settings, self._on_progress = settings, on_progress
        self._jobs: dict[int, EpisodeJob] = {}

    def submit(self, job: EpisodeJob) -> None:
        self._jobs[job.order] = job

    def outcome(self, order: int) -> EpisodeOutcome:
        return convert_episode(self._jobs.pop(order), self._settings,
                               lambda n, log_ns: self._on_progress(order, n, log_ns))

    def close(self) -> None:
        self._jobs.clear()


class QueueProgress:
    """A worker's progress callback: message counts sent to the driver at most every 0.25 s."""

    def __init__(self, events, order: int) -> None:
        self._events, self._order = events, order
        self._pending, self._last = 0, time.monotonic()

    def __call__(self, n: int, log_ns: int) -> None:
        self._pending += n
        now = time.monotonic()
        if now - self._last >= PROGRESS_EVERY_S:
            self._events.put((self._order, self._pending, log_ns))
            self._pending, self._last = 0, now


def drain(events, on_progress: OnProgress, empty: type[Exception] = queue.Empty) -> None:
    while True:
        try:
            order, n, log_ns = events.get_nowait()
        except empty:
            return
        on_progress(order, n, log_ns)


_events = None      # the progress queue of a worker process, set by its initializer


def _init_worker(events) -> None:
    global _events
    signal.signal(signal.SIGINT, signal.SIG_IGN)       # the driver decides what Ctrl-C stops
    _events = events


def _run_in_worker(job: EpisodeJob, settings: ConvertSettings) -> EpisodeOutcome:
    return convert_episode(job, settings, QueueProgress(_events, job.order))


class ProcessRunner:
    def __init__(self, settings: ConvertSettings, workers: int, on_progress: OnProgress) -> None:
        ctx = multiprocessing.get_context("spawn")
        self._settings, self._on_progress = settings, on_progress
        self._events = ctx.Queue()
        self._pool = ProcessPoolExecutor(workers, mp_context=ctx, initializer=_init_worker, initargs=(self._events,))
        self._pending: dict[int, tuple[EpisodeJob, Future]] = {}

    def submit(self, job: EpisodeJob) -> None:
        self._pending[job.order] = (job, self._pool.submit(_run_in_worker, job, self._settings))

    def outcome(self, order: int) -> EpisodeOutcome:
        job, future = self._pending.pop(order)
        try:
            while True:
                try:
                    return future.result(timeout=POLL_S)
                except FuturesTimeout:
                    drain(self._events, self._on_progress)
        except BrokenProcessPool as exc:     # a worker was killed (out of memory?) or crashed
            return EpisodeOutcome(job.order, job.bag, job.window, error=(
                f"{job.bag}: a worker process died while episodes were being converted ({exc}); this episode "
                f"({job.window.reason}) is lost with it. Run again, with fewer --jobs if memory is short"))
        finally:
            drain(self._events, self._on_progress)

    def close(self) -> None:
        """Stop the workers at once (their jobs' outcomes are no longer wanted)."""
        workers = list((getattr(self._pool, "_processes", None) or {}).values())    # the pool's own processes
        self._pool.shutdown(wait=False, cancel_futures=True)
        for process in workers:
            process.kill()
            process.join()
        self._events.close()
        self._events.join_thread()
