"""Cost of the console (issue 21): the recorder's CPU while recording with the console and two
headless browser clients open on its live page vs without, same run, alternating windows; and the
preview latency, frame stamp (the device's capture time) -> the JPEG shown in the page, p50/p99.

    .venv/bin/python bench/bench_console.py [--rig appendix_b] [--size 640x480] [--window 10] [--rounds 2]

Needs chromium + chromium-driver (scripts/browser_deps.sh), launched without CAP_SYS_NICE. The
recorder, simulated devices and the console are processes of their own on loopback DDS. Target:
recorder CPU with the console <= 1.05x without, and the recording keeps real time. Prints per
window the CPU of every process (recorder, devices, console, each chromium's browser / GPU /
renderer / utility processes, chromedriver) and rows/s (flagged when not real time); `uptime`
load with every figure (shared helpers: ab_windows.py).
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from ab_windows import Processes, Window, ab_args, load, mean_breakdown, measure, preview_topics, recording, summary  # noqa: E402
from helpers.browser import browser_or_skip, console_process, wait_for  # noqa: E402

from egorec_ros.live.preview import COMPRESSED_IMAGE, PREVIEW_QOS  # noqa: E402
from egorec_ros.messages.typestores import ros2_typestore  # noqa: E402
from egorec_ros.rig.load import load_rig  # noqa: E402


def main() -> int:
    args = ab_args(__doc__ or "", window=10.0)
    print(f"bench_console: rig {args.rig} at {args.size}; {load()}", flush=True)
    fps = load_rig(args.rig).fps
    without: list[Window] = []
    with_console: list[Window] = []
    latencies: list[float] = []
    page: list[tuple[float, float, float]] = []      # per with-window: previews shown/s, events/s, chromium CPU s/s (both)
    on_dds: list[float] = []          # the same previews at a DDS subscriber: the recorder's (and the devices') part
    store = ros2_typestore()

    def on_preview(cdr: bytes, arrival_ns: int) -> None:
        stamp = store.deserialize_cdr(cdr, COMPRESSED_IMAGE).header.stamp
        on_dds.append((arrival_ns - stamp.sec * 1_000_000_000 - stamp.nanosec) / 1e6)
    with tempfile.TemporaryDirectory(prefix="egorec-bench-console-") as tmp, \
            recording(args.rig, args.size, "bench_cons", "bench_console") as rec:
        topics = preview_topics(rec)
        base = {"devices": rec.procs["devices"].pid, "bench": os.getpid()}
        for r in range(args.rounds):
            without.append(measure(rec, args.window, Processes(dict(base)), fps))
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
                procs = Processes({**base, "console": console.pid},
                                  {f"chromium{i + 1}": b.service.process.pid for i, b in enumerate(browsers)})
                counts = "return [window.egorec.latencies.length, window.egorec.snapshots]"
                t0, before = time.monotonic(), [b.execute_script(counts) for b in browsers]
                with_console.append(measure(rec, args.window, procs, fps))
                after, t1 = [b.execute_script(counts) for b in browsers], time.monotonic()
                for sub in subs:
                    sub.close()
                for b in browsers:
                    latencies += b.execute_script("return window.egorec.latencies")
                shown = sum(a[0] - b[0] for a, b in zip(after, before)) / (t1 - t0)     # counted over t0..t1
                events = sum(a[1] - b[1] for a, b in zip(after, before)) / (t1 - t0)
                page_cpu = sum(v for k, v in with_console[-1].cpu.items() if k.startswith("chromium"))
                page.append((shown, events, page_cpu))
            finally:
                for b in browsers:
                    b.quit()
                console.terminate()
                console.wait(timeout=20)
            time.sleep(2.0)
            shown, events, page_cpu = page[-1]
            print(f"  round {r + 1}: without:                    {without[-1].line()}\n"
                  f"           with console + 2 browsers: {with_console[-1].line()}; {load()}\n"
                  f"           the two pages: {shown:.1f} previews shown/s, {events:.1f} events/s; chromium "
                  f"{page_cpu * 1e3 / max(shown, 1e-9):.1f} CPU ms per preview shown", flush=True)
    lat = np.asarray(latencies)
    print(f"CPU s/s per process, mean: without: {mean_breakdown(without)}\n"
          f"  with console + 2 browsers: {mean_breakdown(with_console)}")
    print(summary("the console and two browsers", without, with_console) + f"; target <= 1.05x; {load()}")
    shown, events, page_cpu = (sum(x[i] for x in page) / len(page) for i in range(3))
    print(f"the two pages: {shown:.1f} previews shown/s, {events:.1f} events/s, chromium {page_cpu:.3f} CPU s/s "
          f"= {page_cpu * 1e3 / max(shown, 1e-9):.1f} CPU ms per preview shown (less load-sensitive than s/s)")
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
