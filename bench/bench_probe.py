"""The start-up encoder probe of `egorec record` (egorec_ros/codecs/capacity.py): how long it
takes, and how its fps compare with a longer steady encode of the same settings, measured in
the same run (so the ratio holds on a loaded machine too).

    .venv/bin/python bench/bench_probe.py
"""
from __future__ import annotations

import os
import time

from egorec_ros.codecs import capacity
from egorec_ros.codecs.capacity import StreamNeed, plan_encoding, probe_size, stream_settings
from egorec_ros.codecs.video import VideoCodec
from egorec_ros.rig.load import load_rig
from egorec_ros.rig.resize import with_video_sizes

LONG_FRAMES = 60


def main() -> None:
    print(f"load average at start: {os.getloadavg()}")
    for size in (None, (640, 480)):
        rig = load_rig("appendix_b") if size is None else with_video_sizes(load_rig("appendix_b"), size)
        needs = [StreamNeed(v.key, v.kind, v.width, v.height, v.fps or rig.fps) for v in rig.videos]
        for codec, depth in (("h264", "mp4"), ("h264", "mkv"), ("hevc", "mkv")):
            capacity._CACHE.clear()
            started = time.perf_counter()
            plan = plan_encoding(needs, VideoCodec(codec), depth)
            first = time.perf_counter() - started
            started = time.perf_counter()
            plan_encoding(needs, VideoCodec(codec), depth)
            cached = time.perf_counter() - started
            label = "real sizes" if size is None else f"{size[0]}x{size[1]}"
            print(f"appendix_b {label:10s} {codec}/{depth}: probe {first:.2f} s (cached {cached * 1e3:.1f} ms), "
                  f"load estimate {plan.load:.2f}")
            for need in {(n.kind, n.width, n.height): n for n in needs}.values():
                settings = stream_settings(need, plan.codec, depth)
                w, h = probe_size(need.width, need.height)
                short = capacity.probe(settings, w, h).fps * w * h / (need.width * need.height)
                steady = capacity._probe(settings, need.width, need.height, LONG_FRAMES, 60.0).fps
                print(f"    {need.key:14s} {settings.encoder:8s} {need.width}x{need.height}: probe {short:6.1f} fps, "
                      f"{LONG_FRAMES}-frame encode {steady:6.1f} fps, probe/steady {short / steady:.2f}")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
