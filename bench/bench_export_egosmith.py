"""`egorec export egosmith` benchmark: frames/s against a bare lower bound, --jobs, peak RSS.

    .venv/bin/python bench/bench_export_egosmith.py [--seconds 60] [--size 640x400] [--task DIR]

Task: the spec's Appendix B rig from simulated devices (gloves with world-frame hand
keypoints, ego SLAM), two episodes of seconds/2 each, recorded through the real pipeline
(setup, not timed; with --task DIR it is kept and reused). Stereo/depth at --size, the
gripper cameras at 320x240 (they are not exported), depth as lossless FFV1.

Lower bound, measured in the same run: decode the head video of every episode (PyAV, the
reader's iter_frames) and JPEG-encode each frame at quality 95 (Pillow, the exporter's
encoder) — nothing else: no parquet, no poses, no tar. Export: `export()` in this process,
depth off, --jobs 1; then --jobs 2 (by episode). Best of --repeat runs; CPU seconds printed
too (the machine is shared). Peak RSS of `egorec export egosmith` in a child process for
one and for both episodes (flat = does not grow with the task length).

Also: why Pillow and not PyAV's mjpeg for "quality 95": size and PSNR of both on one frame.
"""
from __future__ import annotations

import argparse
import io
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import av
import numpy as np

from egorec_ros.codecs.probe import iter_frames
from egorec_ros.dataset import open_task
from egorec_ros.export.egosmith import jpeg
from egorec_ros.export.egosmith.run import export
from egorec_ros.recorder.replay import record_samples
from egorec_ros.rig.load import load_rig
from egorec_ros.rig.resize import with_video_sizes
from egorec_ros.sim.replay import simulate
from egorec_ros.store import TaskWriter

START_NS = 1_767_225_600_000_000_000


def make_task(root: Path, seconds: float, size: tuple[int, int]) -> Path:
    if (root / "meta" / "info.json").exists():
        return root
    sizes = {"stereo_left": size, "stereo_right": size, "stereo_depth": size, "*": (320, 240)}
    rig = with_video_sizes(load_rig("appendix_b"), sizes)
    t = time.perf_counter()
    with TaskWriter(root, task_name="pick up the cup", depth_container="mkv") as writer:
        for seed in (1, 2):
            start = START_NS + seed * 10**12
            record_samples(writer, rig, simulate(rig, seconds / 2 + 0.5, seed=seed, start_ns=start),
                           start_ns=start, stop_ns=start + int(seconds / 2 * 1e9))
    print(f"  (setup: recorded {root} in {time.perf_counter() - t:.0f} s)", flush=True)
    return root


def timed(fn) -> tuple[float, float]:
    w, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w, time.process_time() - c


def lower_bound(task: Path) -> int:
    n = 0
    for ep in open_task(task):
        for frame in iter_frames(ep.video_path("stereo_left")):
            jpeg.encode(frame)
            n += 1
    return n


def peak_rss_mib(task: Path, out: Path, episodes: str) -> float:
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss over fork+exec, so a child of this (big)
    # process would report the parent's peak
    code = ("import re, sys; from egorec_ros.cli import main; rc = main(sys.argv[1:]); "
            "print(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1), file=sys.stderr); "
            "sys.exit(rc)")
    r = subprocess.run([sys.executable, "-c", code, "export", "egosmith", str(task), "--out", str(out),
                        "--dataset-name", "bench", "--episodes", episodes],
                       capture_output=True, text=True, check=True)
    return int(r.stderr.strip().splitlines()[-1]) / 1024


def jpeg_choice(task: Path) -> None:
    """Pillow quality 95 vs PyAV mjpeg at qscale 1 and 2: quantisation tables, size, PSNR."""
    from PIL import Image
    frame = next(iter_frames(next(iter(open_task(task))).video_path("stereo_left")))

    def show(label: str, data: bytes) -> None:
        back = jpeg.decode(data).astype(np.float64)
        tables = {k: list(v)[:6] for k, v in Image.open(io.BytesIO(data)).quantization.items()}
        print(f"  {label}: {len(data) / 1024:.0f} KiB, {10 * np.log10(255.0 ** 2 / np.mean((back - frame) ** 2)):.1f} dB,"
              f" quantisation tables (first 6, zigzag) {tables}")

    show("Pillow quality 95   ", jpeg.encode(frame))
    for q in (1, 2):
        ctx = av.CodecContext.create("mjpeg", "w")
        ctx.width, ctx.height, ctx.pix_fmt, ctx.time_base = frame.shape[1], frame.shape[0], "yuvj420p", 1
        ctx.qmin = ctx.qmax = q
        vf = av.VideoFrame.from_ndarray(frame, format="rgb24").reformat(format="yuvj420p")
        show(f"PyAV mjpeg qscale {q}", b"".join(bytes(p) for p in [*ctx.encode(vf), *ctx.encode(None)]))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--size", default="640x400")
    ap.add_argument("--task", type=Path)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    size = tuple(int(v) for v in args.size.split("x"))
    print(f"load average {os.getloadavg()}, {os.cpu_count()} cpus")
    with tempfile.TemporaryDirectory() as tmp:
        task = make_task(args.task or Path(tmp) / "task", args.seconds, size)  # type: ignore[arg-type]
        rows = sum(len(ep) for ep in open_task(task))
        print(f"task: 2 episodes, {rows} rows, head video {args.size}")
        print("JPEG encoder choice (one head frame):")
        jpeg_choice(task)
        best: dict[str, tuple[float, float]] = {}
        for _ in range(args.repeat):
            for name, fn in (("bound", lambda: lower_bound(task)),
                             ("export j1", lambda: export(task, Path(tmp) / "o1", name="bench")),
                             ("export j2", lambda: export(task, Path(tmp) / "o2", name="bench", jobs=2))):
                for d in ("o1", "o2"):
                    shutil.rmtree(Path(tmp) / d, ignore_errors=True)
                wall, cpu = timed(fn)
                if name not in best or wall < best[name][0]:
                    best[name] = (wall, cpu)
        samples = rows - 2
        b = best["bound"]
        print(f"lower bound (decode head video + JPEG q95): {rows / b[0]:.0f} frames/s (cpu {b[1]:.1f} s)")
        for name in ("export j1", "export j2"):
            w, c = best[name]
            print(f"{name}: {samples / w:.0f} samples/s, wall {w:.1f} s, cpu (this process) {c:.1f} s, "
                  f"export/bound = {w / b[0]:.2f} (target <= 1.3)")
        one = peak_rss_mib(task, Path(tmp) / "m1", "1")
        both = peak_rss_mib(task, Path(tmp) / "m2", "1,2")
        print(f"peak RSS of egorec export egosmith: one episode {one:.0f} MiB, both {both:.0f} MiB")
        print(f"load average at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()
