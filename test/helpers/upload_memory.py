"""The memory test's measured run (test_upload_memory.py), in a module a spawned process can import:
the figures are of an uploader alone, not of a pytest process that earlier tests left threads and
arenas in (the full suite once grew that process's RSS by 178 MiB during the 1 GiB run)."""
from __future__ import annotations

import threading
import tracemalloc
from pathlib import Path

from helpers.upload import make_task, upload_server

from egorec_ros.upload.queue import DONE
from egorec_ros.upload.slice import video_files
from egorec_ros.upload.uploader import Uploader, UploadSettings


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
