"""Video codec benchmark: what our writer costs over bare PyAV, what depth costs, and what
the GOP costs a training loader. Prints figures; nothing is asserted.

    python bench/bench_video.py [--quick]

Frames are rendered before timing (egorec_ros.sim: a panning textured wall with moving
objects and sensor grain; depth with holes and stereo noise), never random noise. The
machine may be shared, so each figure is the best of a few runs; ours and bare runs
alternate so a busy moment hits both.
"""
from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Callable
from fractions import Fraction
from functools import partial
from pathlib import Path

import av
import numpy as np

from egorec_ros.codecs.depth import (code_frame, ffv1_depth_settings, hevc_depth_settings, mm_frame,
                                     open_depth_writer)
from egorec_ros.codecs.encoder_thread import BackgroundEncoder
from egorec_ros.codecs.probe import MUXERS, iter_frames, read_frame, trim_video
from egorec_ros.codecs.video import (FRAGMENTED_MP4, INCREMENTAL_MKV, EncoderSettings, VideoCodec, VideoFileWriter,
                                     add_video_stream, encoder_settings, open_video_writer)
from egorec_ros.sim.depth import DepthCanvas
from egorec_ros.sim.scene import RgbCanvas, Scene

FPS = Fraction(30)
GOPS = (15, 30, 60)


def rgb_frames(width: int, height: int, n: int) -> list[np.ndarray]:
    """A textured wall panning back and forth behind moving balls and boxes, with grain."""
    canvas = RgbCanvas(Scene(5), width, height, 0.7 * width)
    rng = np.random.default_rng(5)
    return [canvas.paint(i / 30, np.array([0.08 * np.sin(i / 40), 0.02 * np.sin(i / 25)]), rng) for i in range(n)]


def depth_frames(width: int, height: int, n: int) -> list[np.ndarray]:
    """Simulated depth (wall, objects, occlusion shadows, speckle) plus stereo noise ~ z^2."""
    canvas = DepthCanvas(Scene(6, wall_m=3.5), width, height, 0.7 * width, 0.05, holes=True)
    rng = np.random.default_rng(6)
    out = []
    for i in range(n):
        d = canvas.paint(i / 30, np.array([0.05 * np.sin(i / 30), 0.0]), rng).astype(np.float32)
        d *= 1 + rng.standard_normal(d.shape, dtype=np.float32) * np.float32(1e-6) * d
        out.append(np.rint(d).astype(np.uint16))
    return out


def bare_pyav(path: Path, settings: EncoderSettings, width: int, height: int, frames: list[np.ndarray],
              to_frame: Callable[[np.ndarray], av.VideoFrame]) -> float:
    """The same stream settings and muxer options as our writer, in a plain loop."""
    fmt = MUXERS[path.suffix.lstrip(".")]
    container = av.open(str(path), "w", format=fmt, options=FRAGMENTED_MP4 if fmt == "mp4" else INCREMENTAL_MKV)
    stream = add_video_stream(container, settings, width, height, FPS)
    stream.codec_context.open()
    t = time.perf_counter()
    for i, f in enumerate(frames):
        vf = to_frame(f)
        vf.pts = i
        for packet in stream.encode(vf):
            container.mux(packet)
    for packet in stream.encode(None):
        container.mux(packet)
    container.close()
    return time.perf_counter() - t


def ours(writer: VideoFileWriter, frames: list[np.ndarray]) -> tuple[float, float, float]:
    """Seconds from first submit to close() returning (file final), CPU seconds, slowest submit."""
    encoder = BackgroundEncoder(lambda: writer, name="bench")
    slowest = 0.0
    t, cpu = time.perf_counter(), time.process_time()
    for f in frames:
        s = time.perf_counter()
        encoder.submit(f)
        slowest = max(slowest, time.perf_counter() - s)
    encoder.close()
    return time.perf_counter() - t, time.process_time() - cpu, slowest


def compare(label: str, path: Path, open_writer: Callable[[Path], VideoFileWriter], settings: EncoderSettings,
            frames: list[np.ndarray], to_frame: Callable[[np.ndarray], av.VideoFrame], repeats: int) -> None:
    height, width = frames[0].shape[:2]
    bare_t, ours_t, cpu_t, slowest = [], [], [], 0.0
    bare_pyav(path.with_stem("warmup"), settings, width, height, frames[:8], to_frame)  # page cache, CPU clock
    for _ in range(repeats):
        bare_t.append(bare_pyav(path.with_stem("bare"), settings, width, height, frames, to_frame))
        took, cpu, slow = ours(open_writer(path), frames)
        ours_t.append(took)
        cpu_t.append(cpu)
        slowest = max(slowest, slow)
    n = len(frames)
    print(f"  {label:22s} bare {n / min(bare_t):6.1f} fps   ours {n / min(ours_t):6.1f} fps   "
          f"overhead x{min(ours_t) / min(bare_t):.2f}   CPU {min(cpu_t) / n * 1e3:5.1f} ms/frame   "
          f"{path.stat().st_size / n / 1e3:6.1f} KB/frame   slowest submit {slowest * 1e3:.2f} ms", flush=True)


def bench_rgb(tmp: Path, quick: bool) -> None:
    print("RGB, 2 encoder threads each: our VideoFileWriter + BackgroundEncoder vs a bare PyAV loop")
    for width, height, n in [(640, 480, 60 if quick else 150), (1280, 800, 30 if quick else 90)]:
        frames = rgb_frames(width, height, n)
        for name in ["h264", "hevc", "av1"]:
            codec = VideoCodec(name)
            compare(f"{name} {width}x{height}", tmp / f"{name}.mp4",
                    lambda p, w=width, h=height, c=codec: open_video_writer(p, w, h, FPS, c),
                    encoder_settings(codec), frames, lambda f: av.VideoFrame.from_ndarray(f, format="rgb24"),
                    1 if quick else 3)


def bench_depth(tmp: Path, quick: bool) -> None:
    print("Depth with holes and stereo noise: HEVC 12-bit log code (.mp4), FFV1 mm (.mkv)")
    for width, height in [(848, 480), (1280, 800)]:
        frames = depth_frames(width, height, 15 if quick else 45)
        for ext, settings, to_frame in [("mp4", hevc_depth_settings(), code_frame),
                                        ("mkv", ffv1_depth_settings(), mm_frame)]:
            compare(f"{settings.encoder} {width}x{height}", tmp / f"depth.{ext}",
                    lambda p, w=width, h=height, e=ext: open_depth_writer(p, w, h, FPS, e), settings, frames,
                    to_frame, 1 if quick else 2)


def bench_gop(tmp: Path, quick: bool) -> None:
    n = 150 if quick else 300
    frames = rgb_frames(640, 480, n)
    print(f"Random access by GOP (h264 640x480, {n} frames, read_frame opens the file each call)")
    rng = random.Random(0)
    picks = rng.sample(range(n), 20 if quick else 60)
    for gop in GOPS:
        writer = open_video_writer(tmp / f"gop{gop}.mp4", 640, 480, FPS, VideoCodec(gop=gop))
        for f in frames:
            writer.write(f)
        writer.close()
        t = time.perf_counter()
        count = sum(1 for _ in iter_frames(writer.path))
        seq = (time.perf_counter() - t) / count
        rand = min(_timed_reads(writer.path, picks) for _ in range(2))
        t = time.perf_counter()
        trim_video(writer.path, writer.path, n)
        remux = time.perf_counter() - t
        print(f"  gop {gop:3d}: {writer.path.stat().st_size / 1e6:5.2f} MB   read_frame {rand * 1e3:5.1f} ms   "
              f"sequential {seq * 1e3:4.2f} ms/frame   finalising remux {remux / n * 1e6:4.0f} us/frame", flush=True)


def _timed_reads(path: Path, picks: list[int]) -> float:
    t = time.perf_counter()
    for i in picks:
        read_frame(path, i)
    return (time.perf_counter() - t) / len(picks)


def bench_gil(tmp: Path, quick: bool) -> None:
    n = 60 if quick else 150
    frames = rgb_frames(640, 480, n)
    print("GIL: h264 640x480 encoders with 1 thread each, run side by side in one process")
    for k in (1, 2):
        encoders = [BackgroundEncoder(partial(open_video_writer, tmp / f"gil{j}.mp4", 640, 480, FPS, VideoCodec(threads=1)),
                                      name=f"gil{j}") for j in range(k)]
        wall, cpu = time.perf_counter(), time.process_time()
        for f in frames:
            for e in encoders:
                e.submit(f)
        for e in encoders:      # each has been encoding in its own thread all along
            e.close()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        print(f"  {k} encoder(s): {k * n / wall:6.1f} frames/s in total, {cpu / wall:.2f} cores busy", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer frames and one run per figure")
    args = parser.parse_args()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        bench_rgb(tmp, args.quick)
        bench_depth(tmp, args.quick)
        bench_gop(tmp, args.quick)
        bench_gil(tmp, args.quick)
    print(f"total {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
