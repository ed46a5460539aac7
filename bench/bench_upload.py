"""Upload throughput against curl, same file, same local server, same run.

    .venv/bin/python bench/bench_upload.py [--mib 512] [--rounds 3]

A single-episode slice of ``--mib`` MiB (a real Tiny episode whose RGB video is grown sparse
to the size) is POSTed to the test server (test/helpers/upload_server.py, in its own process,
parsing the multipart body as it streams and hashing the file part; --discard: it keeps no copy)
by ``curl -F`` and by egorec's client (``ServerClient.upload``: httpx, 1 MiB pieces, exact
Content-Length), alternating, ``--rounds`` times each. Printed: medians of MB/s, egorec / curl
(the issue wants >= 0.9), and CPU seconds per GB of each sender (the server excluded); also
building the slice (copy into a stored zip + sha256), per GB. Note `uptime` with the figures.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test"))

from helpers.upload import make_task, upload_server  # noqa: E402

from egorec_ros.upload.body import MultipartFile  # noqa: E402
from egorec_ros.upload.client import ServerClient  # noqa: E402
from egorec_ros.upload.slice import slice_members, video_files, write_slice  # noqa: E402


def cpu_self() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def cpu_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mib", type=int, default=512)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} (1/5/15 min), "
          f"{os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        task = make_task(tmp / "rec", "bench", [1])
        with open(video_files(task, 1)["gripper_rgb"], "r+b") as f:
            f.truncate(args.mib << 20)
        t0, c0 = time.perf_counter(), cpu_self()
        size, _ = write_slice(slice_members(task, 1), tmp / "slice.zip")
        build_s, build_cpu = time.perf_counter() - t0, cpu_self() - c0
        gb = size / 1e9
        print(f"slice {size / 1e6:.0f} MB: built in {build_s:.2f} s ({size / 1e6 / build_s:.0f} MB/s), "
              f"CPU {build_cpu / gb:.2f} s/GB (copy into the zip + sha256)")
        fields = {"name": "bench", "project_id": "", "episode_index": "0"}
        ours: list[tuple[float, float]] = []
        curl: list[tuple[float, float]] = []
        with upload_server(tmp / "srv", discard=True) as server, ServerClient(server.url) as client:
            url = server.url + "/api/v1/session/upload"
            for _ in range(args.rounds):
                t0, c0 = time.perf_counter(), cpu_children()
                subprocess.run(["curl", "-sS", "-f", "-o", "/dev/null", "-F", "name=bench", "-F", "project_id=",
                                "-F", "episode_index=0", "-F", f"file=@{tmp / 'slice.zip'};type=application/zip",
                                url], check=True, timeout=600)
                curl.append((time.perf_counter() - t0, cpu_children() - c0))
                t0, c0 = time.perf_counter(), cpu_self()
                client.upload(MultipartFile(fields, tmp / "slice.zip", "bench.zip"), "the bench slice")
                ours.append((time.perf_counter() - t0, cpu_self() - c0))
            assert len(server.received()) == 2 * args.rounds
    for name, runs in (("curl", curl), ("egorec", ours)):
        secs = statistics.median(s for s, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        print(f"{name:>7}: {size / 1e6 / secs:7.0f} MB/s (median of {len(runs)}: "
              f"{', '.join(f'{s:.2f}' for s, _ in runs)} s), CPU {cpu / gb:.2f} s/GB")
    ratio = statistics.median(s for s, _ in curl) / statistics.median(s for s, _ in ours)
    print(f"egorec / curl throughput: {ratio:.2f}x (want >= 0.9)")
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
