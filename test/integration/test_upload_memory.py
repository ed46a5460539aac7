"""Memory stays flat uploading a big episode: the slice is copied and sent in 1 MiB pieces.

The issue asks for a 2 GB episode; this test sends a 1 GiB one (a sparse video file: what is
measured is the copy into the zip and the streamed POST, not the codec) and a 64 MiB one, and
requires the same small bound for both: peak RSS growth and tracemalloc's peak do not grow with
the size (16x more data, same footprint), so 2 GB needs no more. 1 GiB keeps the test under
a minute on a loaded 2-core machine (it writes the zip to disk once, the server only hashes)."""
from __future__ import annotations

import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
from helpers.upload_memory import upload_big

MiB = 1 << 20
RSS_BOUND = 24 * MiB          # growth of the resident set over the run, for any size
TRACED_BOUND = 6 * MiB        # Python allocations alive at once (a few 1 MiB pieces)


@pytest.mark.slow
def test_memory_stays_flat_for_a_big_episode(tmp_path: Path) -> None:
    t = time.monotonic()
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:   # a fresh process
        small_rss, small_traced = pool.submit(upload_big, tmp_path, 64 * MiB).result(timeout=300)
        big_rss, big_traced = pool.submit(upload_big, tmp_path, 1024 * MiB).result(timeout=300)
    print(f"64 MiB: RSS +{small_rss / MiB:.1f} MiB, traced peak {small_traced / MiB:.1f} MiB; "
          f"1 GiB: RSS +{big_rss / MiB:.1f} MiB, traced peak {big_traced / MiB:.1f} MiB; {time.monotonic() - t:.1f} s")
    assert big_traced < TRACED_BOUND and small_traced < TRACED_BOUND
    assert big_rss < RSS_BOUND and small_rss < RSS_BOUND
