"""ReadAhead: a source iterated on a thread of its own, handed over in bounded batches."""
from __future__ import annotations

import threading
import traceback
from collections.abc import Iterator

import pytest

from egorec_ros.converter.reader_thread import ReadAhead


@pytest.mark.parametrize("n, batch, depth", [(0, 4, 1), (1, 4, 1), (10, 1, 1), (10, 3, 2), (100, 32, 4)])
def test_items_come_out_in_order_whatever_the_batching(n, batch, depth):
    with ReadAhead(lambda: range(n), batch=batch, depth=depth) as items:
        assert list(items) == list(range(n))
        assert list(items) == []            # exhausted stays exhausted


def _failing(good: int) -> Iterator[int]:
    yield from range(good)
    raise ValueError(f"chunk {good} is corrupt")


def test_an_error_of_the_source_comes_after_the_items_read_before_it_with_its_message():
    got: list[int] = []
    with ReadAhead(lambda: _failing(7), batch=3) as items, pytest.raises(ValueError) as err:
        for item in items:
            got.append(item)
    assert got == list(range(7))
    assert str(err.value) == "chunk 7 is corrupt"
    # the traceback still shows where the source raised, on the reader thread
    assert "_failing" in "".join(traceback.format_exception(err.value))


def test_the_cause_of_an_error_is_kept():
    def source() -> Iterator[int]:
        try:
            raise KeyError("inner")
        except KeyError as exc:
            raise RuntimeError("outer") from exc
        yield 0

    with ReadAhead(source) as items, pytest.raises(RuntimeError, match="outer") as err:
        next(items)
    assert isinstance(err.value.__cause__, KeyError)


def test_closing_early_stops_the_thread_and_closes_the_source_on_it():
    closed_on: list[str] = []
    started = threading.Event()

    def endless() -> Iterator[int]:
        try:
            n = 0
            while True:
                started.set()
                yield n
                n += 1
        finally:
            closed_on.append(threading.current_thread().name)

    items = ReadAhead(endless, batch=4, depth=2, name="reader-under-test")
    assert [next(items) for _ in range(10)] == list(range(10))
    started.wait(5)
    items.close()
    assert closed_on == ["reader-under-test"]       # closed on the reader, before close() returned
    assert not any(t.name == "reader-under-test" for t in threading.enumerate())
    with pytest.raises(StopIteration):
        next(items)
    items.close()                                    # twice is fine


def test_closing_before_the_first_item_stops_a_reader_blocked_on_a_full_queue():
    produced: list[int] = []

    def counting() -> Iterator[int]:
        for n in range(10_000):
            produced.append(n)
            yield n

    items = ReadAhead(counting, batch=2, depth=1, name="blocked-reader")
    while len(produced) < 4:            # one batch queued, one being filled: the reader now waits
        threading.Event().wait(0.01)
    items.close()
    assert not any(t.name == "blocked-reader" for t in threading.enumerate())
    assert len(produced) < 10           # it read ahead a bounded amount, then stopped


def test_the_queue_holds_at_most_depth_batches():
    produced: list[int] = []
    seen = threading.Event()

    def counting() -> Iterator[int]:
        for n in range(1000):
            produced.append(n)
            seen.set()
            yield n

    with ReadAhead(counting, batch=5, depth=2) as items:
        assert next(items) == 0
        for _ in range(50):             # let the reader run as far as it may
            threading.Event().wait(0.01)
        # consumed 1 batch; 2 queued; 1 being filled (the 5th item of which waits to be put)
        assert len(produced) <= 5 * (1 + 2 + 1)


def test_bad_sizes_are_refused():
    with pytest.raises(ValueError, match="batch and depth"):
        ReadAhead(lambda: [], batch=0)


def test_heavy_items_make_smaller_batches():
    """With ``weigh``, a batch is handed over once its items weigh ``batch_weight``: what the
    reader holds ahead is bounded in bytes, not only in items (raw camera images)."""
    produced: list[int] = []

    def images() -> Iterator[bytes]:
        for n in range(1000):
            produced.append(n)
            yield bytes(10)

    with ReadAhead(images, batch=32, depth=2, weigh=len, batch_weight=30) as items:
        assert next(items) == bytes(10)
        for _ in range(50):
            threading.Event().wait(0.01)
        assert len(produced) <= 3 * (1 + 2 + 1)      # batches of 3 items, not 32
        assert sum(1 for _ in items) == 999
