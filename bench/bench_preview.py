"""Cost of the preview topics (issue 21 §2): the recorder's CPU while recording with and without a
subscriber of every ~/preview/<stream> topic, same run, alternating windows (A B A B ...) so a
shared machine's load drifts into both alike.

    .venv/bin/python bench/bench_preview.py [--rig appendix_b] [--size 640x480] [--window 8] [--rounds 2]

The recorder and the simulated devices run as processes of their own on loopback DDS (as a user
runs them); the subscriber sits in this process and decodes nothing. CPU is user+sys of each
process from /proc (seconds of CPU per second of wall time: recorder, devices, this process), with
rows/s per window (flagged when the recorder did not keep real time), the ratio, the previews
received per second and `uptime` load before and after (shared helpers: ab_windows.py).
"""
from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ab_windows import Processes, Window, ab_args, load, mean_breakdown, measure, preview_topics, recording, summary  # noqa: E402

from egorec_ros.live.preview import COMPRESSED_IMAGE, PREVIEW_QOS  # noqa: E402
from egorec_ros.rig.load import load_rig  # noqa: E402


def encode_cost(size: str, repeats: int = 30) -> tuple[float, float]:
    """(CPU ms per RGB preview, CPU ms per depth preview) from a ``size`` frame: the work the preview
    thread does per message, measured alone (the load-independent part of the figure)."""
    from egorec_ros.assembly.sample import Sample
    from egorec_ros.live.preview import Previews

    class _NoTransport:
        def publisher(self, *_a):
            return self

    w, h = (int(x) for x in size.split("x"))
    rng = np.random.default_rng(0)
    rgb = rng.integers(0, 255, (h, w, 3), np.uint8)
    depth = rng.integers(300, 4000, (h, w), np.uint16)
    previews = Previews(load_rig("d435_single"), _NoTransport(), "/b")   # type: ignore[arg-type]
    out = []
    try:
        for stream, frame in (("head.rgb", rgb), ("head.depth", depth)):
            t0 = time.process_time()          # CPU time: on a shared machine wall time measures the others
            for i in range(repeats):
                previews.message(stream, Sample(stream, i + 1, i + 1, frame))
            out.append((time.process_time() - t0) / repeats * 1e3)
    finally:
        previews.close()
    return out[0], out[1]


def main() -> int:
    args = ab_args(__doc__ or "", window=8.0)
    print(f"bench_preview: rig {args.rig} at {args.size}; {load()}", flush=True)
    rgb_ms, depth_ms = encode_cost(args.size)
    print(f"one preview from a {args.size} frame: RGB {rgb_ms:.2f} CPU ms, depth {depth_ms:.2f} CPU ms (320 px JPEG, "
          f"depth false-coloured); at 5 Hz a camera costs {rgb_ms * 5 / 10:.2f} % (RGB) / {depth_ms * 5 / 10:.2f} % "
          f"(depth) of one core; {load()}", flush=True)
    fps = load_rig(args.rig).fps
    with recording(args.rig, args.size, "bench_prev", "bench_preview") as rec:
        topics = preview_topics(rec)
        got = [0]
        lock = threading.Lock()

        def on_preview(_cdr: bytes, _t: int) -> None:
            with lock:
                got[0] += 1
        procs = Processes({"devices": rec.procs["devices"].pid, "bench": os.getpid()})
        without: list[Window] = []
        with_sub: list[Window] = []
        rates = []
        for r in range(args.rounds):
            without.append(measure(rec, args.window, procs, fps))
            subs = [rec.transport.subscribe(t, COMPRESSED_IMAGE, PREVIEW_QOS, on_preview) for t in topics]
            time.sleep(1.0)             # matched, first previews flowing
            n0 = got[0]
            with_sub.append(measure(rec, args.window, procs, fps))
            rates.append((got[0] - n0) / args.window)
            for s in subs:
                s.close()
            time.sleep(1.0)             # unmatched again
            print(f"  round {r + 1}: without: {without[-1].line()}\n           with:    {with_sub[-1].line()}; "
                  f"{rates[-1]:.1f} previews/s over {len(topics)} topics; {load()}", flush=True)
    print(f"CPU s/s per process, mean: without: {mean_breakdown(without)}\n  with: {mean_breakdown(with_sub)}")
    print(summary("a preview subscriber on all %d topics" % len(topics), without, with_sub)
          + f"; previews {sum(rates) / len(rates):.1f}/s (<= 5 Hz x {len(topics)} cameras); {load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
