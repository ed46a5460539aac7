"""Memory stays flat uploading a big episode: the slice is copied and sent in 1 MiB pieces.

The issue asks for a 2 GB episode; this test sends a 1 GiB one (a sparse video file: what is
measured is the copy into the zip and the streamed POST, not the codec) and a 64 MiB one, and
requires the same small bound for both: peak RSS growth and tracemalloc's peak do not grow with
the size (16x more data, same footprint), so 2 GB needs no more. 1 GiB keeps the test under
a minute on a loaded 2-core machine (it writes the zip to disk once, the server only hashes)."""
from __future__ import annotations

import threading
import time
import tracemalloc
from pathlib import Path

import pytest
from helpers.upload import make_task, upload_server

from egorec_ros.upload.queue import DONE
from egorec_ros.upload.slice import video_files
from egorec_ros.upload.uploader import Uploader, UploadSettings

MiB = 1 << 20
RSS_BOUND = 24 * MiB          # growth of the resident set over the run, for any size
TRACED_BOUND = 6 * MiB        # Python allocations alive at once (a few 1 MiB pieces)


def rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def upload_big(tmp_path: Path, size: int) -> tuple[int, int]:
    root = tmp_path / f"rec{size}"
    task = make_task(root, "big", [1])
    video = video_files(task, 1)["gripper_rgb"]
    with open(video, "r+b") as f:                 # the real file, grown to `size` (sparse: no disk time)
        f.truncate(size)
    with upload_server(tmp_path / f"srv{size}", discard=True) as server:
        up = Uploader(root, UploadSettings(server=server.url, backoff_s=0.05))
        try:
            up.enqueue("big", 1)
            up.connect()
            peak, stop = [rss()], threading.Event()

            def sample() -> None:
                while not stop.wait(0.01):
                    peak[0] = max(peak[0], rss())
            sampler = threading.Thread(target=sample)
            base = rss()
            sampler.start()
            tracemalloc.start()
            try:
                (entry,) = up.run()
                _, traced = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
                stop.set()
                sampler.join()
        finally:
            up.close()
        assert entry.state == DONE
        (record,) = server.received()
        assert (record["size"], record["sha256"]) == (entry.size, entry.sha256)     # the bytes of the slice
        assert entry.size > size
    return peak[0] - base, traced


@pytest.mark.slow
def test_memory_stays_flat_for_a_big_episode(tmp_path: Path) -> None:
    t = time.monotonic()
    small_rss, small_traced = upload_big(tmp_path, 64 * MiB)
    big_rss, big_traced = upload_big(tmp_path, 1024 * MiB)
    print(f"64 MiB: RSS +{small_rss / MiB:.1f} MiB, traced peak {small_traced / MiB:.1f} MiB; "
          f"1 GiB: RSS +{big_rss / MiB:.1f} MiB, traced peak {big_traced / MiB:.1f} MiB; {time.monotonic() - t:.1f} s")
    assert big_traced < TRACED_BOUND and small_traced < TRACED_BOUND
    assert big_rss < RSS_BOUND and small_rss < RSS_BOUND
