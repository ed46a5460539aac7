"""Read ahead on a thread of its own: the bag's messages come in batches through a
bounded queue while the caller's thread assembles rows.

Why: converting a bag, one thread reads (file I/O, chunk decompression, CDR
deserialisation) and assembles; the encoder threads wait for it. Reading on another
thread overlaps what releases the GIL there (file reads, zstd/lz4 decompression,
checksums, copies of large buffers) with the assembly. Only the reading moves: counting,
mapping and stamping stay with the consumer, so what is counted is what was consumed,
whatever the reader had fetched ahead when the consumer stopped.

Lifetime: ``close`` (or leaving ``with``) stops the thread and closes the source iterator
on it before returning, so the bag can be closed right after. An exception of the
source is re-raised in the consumer, after the items read before it, as the same object
(its message, traceback and ``__cause__`` intact). Memory: at most ``depth`` batches wait
in the queue, plus the one being filled and the one being consumed; a batch is handed over
at ``batch`` items or, with ``weigh``, once its items weigh ``batch_weight`` (bytes: a few
raw camera images are a batch, not 32 of them).
"""
from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from types import TracebackType
from typing import Generic, TypeVar

T = TypeVar("T")

BATCH = 32           # items a queue entry carries (one put/get per batch, not per message)
BATCH_WEIGHT = 1 << 19   # ... or fewer, once they weigh this much (with ``weigh``): a raw image is a batch
DEPTH = 1            # batches waiting at most: reading stays one batch ahead, so the memory in flight
                     # (and its peak, whatever the threads' timing) is a few images at most
_POLL_S = 0.1        # how often a blocked reader looks whether it was stopped


class _End:
    """The source is exhausted (``error`` None) or raised ``error``."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException | None = None) -> None:
        self.error = error


class ReadAhead(Generic[T]):
    """Iterate ``source()`` on a daemon thread; iterate this object on the consumer's.

    ``source`` is called on the reader thread (a generator made there is also closed there)."""

    def __init__(self, source: Callable[[], Iterable[T]], *, batch: int = BATCH, depth: int = DEPTH,
                 weigh: Callable[[T], int] | None = None, batch_weight: int = BATCH_WEIGHT,
                 name: str = "egorec-reader") -> None:
        if batch < 1 or depth < 1:
            raise ValueError(f"batch and depth must be >= 1, got {batch} and {depth}")
        self._source, self._batch = source, batch
        self._weigh, self._batch_weight = weigh, batch_weight
        self._queue: queue.Queue[list[T] | _End] = queue.Queue(depth)
        self._stop = threading.Event()
        self._items: Iterator[T] = iter(())
        self._done = False
        self._thread = threading.Thread(target=self._read, name=name, daemon=True)
        self._thread.start()

    # ---- consumer side ------------------------------------------------------------------------

    def __iter__(self) -> Iterator[T]:
        return self

    def __next__(self) -> T:
        while True:
            item = next(self._items, _End)
            if item is not _End:
                return item            # type: ignore[return-value]
            if self._done:
                raise StopIteration
            got = self._queue.get()
            if isinstance(got, _End):
                self._done = True
                self._thread.join()
                if got.error is not None:
                    raise got.error
                raise StopIteration
            self._items = iter(got)

    def close(self) -> None:
        """Stop the reader and wait for it (its source is closed on it); idempotent."""
        self._done, self._items = True, iter(())
        self._stop.set()
        while self._thread.is_alive():
            try:                                # unblock a reader waiting for room
                while True:
                    self._queue.get_nowait()
            except queue.Empty:
                pass
            self._thread.join(_POLL_S)

    def __enter__(self) -> ReadAhead[T]:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # ---- reader side --------------------------------------------------------------------------

    def _read(self) -> None:
        end = _End()
        items: Iterable[T] = ()
        batch: list[T] = []
        weight = 0
        try:
            items = self._source()
            for item in items:
                batch.append(item)
                if self._weigh is not None:
                    weight += self._weigh(item)
                if len(batch) >= self._batch or weight >= self._batch_weight:
                    if not self._put(batch):
                        return
                    batch, weight = [], 0
        except BaseException as exc:          # handed to the consumer, raised there
            end = _End(exc)
        finally:
            close = getattr(items, "close", None)
            if close is not None:
                close()
        if batch and not self._put(batch):      # what was read before the end (or the error) first
            return
        self._put(end)

    def _put(self, entry: list[T] | _End) -> bool:
        """Queue ``entry``, waiting for room; False once the consumer has stopped us."""
        while not self._stop.is_set():
            try:
                self._queue.put(entry, timeout=_POLL_S)
                return True
            except queue.Full:
                continue
        return False
