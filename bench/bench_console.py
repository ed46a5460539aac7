"""Cost of the console (issue 21): the recorder's CPU while recording with the console and two
headless browser clients open on its live page vs without, same run, alternating windows; and the
preview latency, frame stamp (the device's capture time) -> the JPEG shown in the page, p50/p99.

    .venv/bin/python bench/bench_console.py [--rig appendix_b] [--size 640x480] [--window 10] [--rounds 2]

Needs chromium + chromium-driver (scripts/browser_deps.sh), launched without CAP_SYS_NICE. The
recorder, simulated devices and the console are processes of their own on loopback DDS. Target:
recorder CPU with the console <= 1.05x without. `uptime` load printed with every figure.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test"))     # helpers/, as pytest has them

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from bench_preview import load, measure, preview_topics, recording, summary  # noqa: E402
from helpers.browser import browser_or_skip, console_process, wait_for  # noqa: E402

from egorec_ros.live.preview import COMPRESSED_IMAGE, PREVIEW_QOS  # noqa: E402
from egorec_ros.messages.typestores import ros2_typestore  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rig", default="appendix_b")
    ap.add_argument("--size", default="640x480")
    ap.add_argument("--window", type=float, default=10.0, help="seconds per measuring window")
    ap.add_argument("--rounds", type=int, default=2, help="A/B pairs")
    args = ap.parse_args()
    print(f"bench_console: rig {args.rig} at {args.size}; {load()}", flush=True)
    without: list[tuple[float, float]] = []
    with_console: list[tuple[float, float]] = []
    latencies: list[float] = []
    on_dds: list[float] = []          # the same previews at a DDS subscriber: the recorder's (and the devices') part
    store = ros2_typestore()

    def on_preview(cdr: bytes, arrival_ns: int) -> None:
        stamp = store.deserialize_cdr(cdr, COMPRESSED_IMAGE).header.stamp
        on_dds.append((arrival_ns - stamp.sec * 1_000_000_000 - stamp.nanosec) / 1e6)
    with tempfile.TemporaryDirectory(prefix="egorec-bench-console-") as tmp, \
            recording(args.rig, args.size, "bench_cons", 100 - 5) as rec:
        topics = preview_topics(rec)
        for r in range(args.rounds):
            without.append(measure(rec, args.window))
            console, url = console_process(["--name", rec.name, "--out", str(rec.out)], rec.env,
                                           Path(tmp) / f"console-{r}.log")
            browsers = []
            try:
                for i in range(2):
                    profile = Path(tmp) / f"b{r}{i}"
                    profile.mkdir()
                    browsers.append(browser_or_skip(profile, 1280, 900))
                    browsers[-1].get(url)
                for b in browsers:
                    wait_for(lambda b=b: b.execute_script("return window.egorec.latencies.length") > 5, 60,
                             "previews shown in the page")
                    b.execute_script("window.egorec.latencies.length = 0")
                # the console subscribes the previews anyway: one more reader costs the recorder little
                subs = [rec.transport.subscribe(t, COMPRESSED_IMAGE, PREVIEW_QOS, on_preview) for t in topics]
                with_console.append(measure(rec, args.window))
                for sub in subs:
                    sub.close()
                for b in browsers:
                    latencies += b.execute_script("return window.egorec.latencies")
            finally:
                for b in browsers:
                    b.quit()
                console.terminate()
                console.wait(timeout=20)
            time.sleep(2.0)
            print(f"  round {r + 1}: recorder without {without[-1][0]:.3f} CPU s/s ({without[-1][1]:.1f} rows/s), "
                  f"with console + 2 browsers {with_console[-1][0]:.3f} ({with_console[-1][1]:.1f} rows/s); {load()}",
                  flush=True)
    lat = np.asarray(latencies)
    print(summary("the console and two browsers", without, with_console) + f"; target <= 1.05x; {load()}")
    if len(lat):
        print(f"preview latency frame stamp -> shown: p50 {np.percentile(lat, 50):.0f} ms, "
              f"p99 {np.percentile(lat, 99):.0f} ms over {len(lat)} previews")
    if on_dds:
        print(f"  of which frame stamp -> preview at a DDS subscriber (devices + recorder): p50 "
              f"{np.percentile(on_dds, 50):.0f} ms, p99 {np.percentile(on_dds, 99):.0f} ms over {len(on_dds)}")
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except pytest.skip.Exception as exc:      # no browser here: say why
        print(f"bench_console: cannot run: {exc}")
        raise SystemExit(1) from None
