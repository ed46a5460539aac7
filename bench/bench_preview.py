"""Cost of the preview topics (issue 21 §2): the recorder's CPU while recording with and without a
subscriber of every ~/preview/<stream> topic, same run, alternating windows (A B A B ...) so a
shared machine's load drifts into both alike.

    .venv/bin/python bench/bench_preview.py [--rig appendix_b] [--size 640x480] [--window 8] [--rounds 2]

The recorder and the simulated devices run as processes of their own on loopback DDS (as a user
runs them); the subscriber sits in this process and decodes nothing. CPU is user+sys of the
recorder process from /proc (seconds of CPU per second of wall time). Prints both, the ratio, the
previews received per second and `uptime` load before and after.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test"))     # helpers/, as pytest has them

from helpers.dds_recorder import RunningRecorder, dds_env_for, running_recorder  # noqa: E402

from egorec_ros.live.node import START  # noqa: E402
from egorec_ros.live.preview import COMPRESSED_IMAGE, PREVIEW_QOS  # noqa: E402
from egorec_ros.messages.typestores import ros2_typestore  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """user + sys CPU seconds of process ``pid`` (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def cpu_over(pid: int, seconds: float) -> float:
    c0, t0 = cpu_seconds(pid), time.monotonic()
    time.sleep(seconds)
    return (cpu_seconds(pid) - c0) / (time.monotonic() - t0)


def measure(rec: RunningRecorder, seconds: float) -> tuple[float, float]:
    """(recorder CPU s/s, rows built per second) over ``seconds``. On a starved machine the recorder
    gets fewer frames and builds fewer rows: CPU per row is the figure that compares fairly."""
    pid = rec.procs["recorder"].pid
    r0 = rec.watch.status.rows if rec.watch.status is not None else 0
    cpu = cpu_over(pid, seconds)
    r1 = rec.watch.status.rows if rec.watch.status is not None else 0
    return cpu, max(0, r1 - r0) / seconds


def start_episode(rec: RunningRecorder, instruction: str) -> None:
    store = ros2_typestore()
    req = store.serialize_cdr(store.types[f"{START}_Request"](task="", instruction=instruction), f"{START}_Request")
    rec.transport.call(f"/{rec.name}/start", START, bytes(req), 30.0)


@contextmanager
def recording(rig: str, size: str, name: str, domain_base: int) -> Iterator[RunningRecorder]:
    """A recorder + simulated devices recording one long episode until the block ends."""
    with tempfile.TemporaryDirectory(prefix="egorec-bench-") as tmp, \
            running_recorder(Path(tmp), dds_env_for(domain_base, 5), rig=rig, size=size, name=name) as rec:
        start_episode(rec, "bench")
        time.sleep(2.0)                 # the encoders are up
        yield rec


def preview_topics(rec: RunningRecorder, timeout: float = 20.0) -> list[str]:
    head, end = f"/{rec.name}/preview/", time.monotonic() + timeout
    while time.monotonic() < end:
        found = [t for t in rec.transport.topics() if t.startswith(head)]
        if found:
            time.sleep(1.0)
            return sorted(t for t in rec.transport.topics() if t.startswith(head))
        time.sleep(0.2)
    raise SystemExit(f"no preview topic under {head} within {timeout} s: {rec.log_text()}")


def summary(what: str, without: list[tuple[float, float]], with_: list[tuple[float, float]]) -> str:
    """Mean CPU s/s and CPU per row, without vs with, and their ratios."""
    a, b = (sum(c for c, _ in x) / len(x) for x in (without, with_))
    ra, rb = (sum(r for _, r in x) / len(x) for x in (without, with_))
    per_a, per_b = a / max(ra, 1e-9) * 1e3, b / max(rb, 1e-9) * 1e3
    return (f"recorder CPU without / with {what}: {a:.3f} / {b:.3f} CPU s/s (ratio {b / a:.3f}x); per row "
            f"{per_a:.2f} / {per_b:.2f} CPU ms (ratio {per_b / per_a:.3f}x; rows/s {ra:.1f} / {rb:.1f})")


def encode_cost(size: str, repeats: int = 30) -> tuple[float, float]:
    """(ms per RGB preview, ms per depth preview) from a ``size`` frame: the work the preview thread
    does per message, measured alone (the load-independent part of the figure)."""
    from egorec_ros.assembly.sample import Sample
    from egorec_ros.live.preview import Previews
    from egorec_ros.rig.load import load_rig

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
            t0 = time.perf_counter()
            for i in range(repeats):
                previews.message(stream, Sample(stream, i + 1, i + 1, frame))
            out.append((time.perf_counter() - t0) / repeats * 1e3)
    finally:
        previews.close()
    return out[0], out[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rig", default="appendix_b")
    ap.add_argument("--size", default="640x480")
    ap.add_argument("--window", type=float, default=8.0, help="seconds per measuring window")
    ap.add_argument("--rounds", type=int, default=2, help="A/B pairs")
    args = ap.parse_args()
    print(f"bench_preview: rig {args.rig} at {args.size}; {load()}", flush=True)
    rgb_ms, depth_ms = encode_cost(args.size)
    print(f"one preview from a {args.size} frame: RGB {rgb_ms:.2f} ms, depth {depth_ms:.2f} ms (320 px JPEG, "
          f"depth false-coloured); at 5 Hz a camera costs {rgb_ms * 5 / 10:.2f} % (RGB) / {depth_ms * 5 / 10:.2f} % "
          f"(depth) of one core; {load()}", flush=True)
    with recording(args.rig, args.size, "bench_prev", 95) as rec:
        topics = preview_topics(rec)
        got = [0]
        lock = threading.Lock()

        def on_preview(_cdr: bytes, _t: int) -> None:
            with lock:
                got[0] += 1
        without: list[tuple[float, float]] = []
        with_sub: list[tuple[float, float]] = []
        rates = []
        for r in range(args.rounds):
            without.append(measure(rec, args.window))
            subs = [rec.transport.subscribe(t, COMPRESSED_IMAGE, PREVIEW_QOS, on_preview) for t in topics]
            time.sleep(1.0)             # matched, first previews flowing
            n0 = got[0]
            with_sub.append(measure(rec, args.window))
            rates.append((got[0] - n0) / args.window)
            for s in subs:
                s.close()
            time.sleep(1.0)             # unmatched again
            print(f"  round {r + 1}: without {without[-1][0]:.3f} CPU s/s ({without[-1][1]:.1f} rows/s), with "
                  f"{with_sub[-1][0]:.3f} ({with_sub[-1][1]:.1f} rows/s); {rates[-1]:.1f} previews/s over "
                  f"{len(topics)} topics; {load()}", flush=True)
    print(summary("a preview subscriber on all %d topics" % len(topics), without, with_sub)
          + f"; previews {sum(rates) / len(rates):.1f}/s (<= 5 Hz x {len(topics)} cameras); {load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
