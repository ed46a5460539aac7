"""What bounding a kill -9's loss to 0.5 s costs (issue 24 item 10), each figure against the
old setting measured in the same run:

    .venv/bin/python bench/bench_crash_loss.py [--seconds S] [--repeats N]

1. Journal cadence: Appendix B at 640x480 through the recording pipeline (assembler,
   writer, encoders, commit) with rows journaled every 0.2 s (``JOURNAL_SECONDS``) against
   a row group (2 s) at a time, as before. Parquet row groups are the same in both.
2. MP4 fragments: 300 frames 640x480 h264 written with a fragment per frame against one
   per keyframe: CPU, and the size of the fragmented file as it is while recording (the
   remux at close gives both the same final file).
3. x264 look-ahead 5 (``video.LOOKAHEAD``) against veryfast's 10: encoder delay in frames,
   file size, PSNR and CPU on 150 simulated 640x480 camera frames.
The machine may be shared: runs alternate, each figure is the best of ``--repeats``.
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time
from fractions import Fraction
from pathlib import Path

import av
import numpy as np

from egorec_ros.allocator import keep_frame_buffers
from egorec_ros.codecs import video
from egorec_ros.codecs.video import VideoCodec, encoder_settings
from egorec_ros.rig.load import load_rig
from egorec_ros.rig.resize import with_video_sizes
from egorec_ros.sim.flaws import CLEAN
from egorec_ros.sim.replay import DEFAULT_START_NS, simulate
from egorec_ros.store import episode_writer

from bench_record import pipeline_seconds, pooled_samples

OLD_FRAGMENTS = {"movflags": "frag_keyframe+empty_moov+default_base_moof", "flush_packets": "1"}


def journal_cadence(seconds: float, repeats: int) -> None:
    rig = with_video_sizes(load_rig("appendix_b"), (640, 480))
    samples = pooled_samples(rig, seconds)
    stop = DEFAULT_START_NS + int(seconds * 1e9)
    new = episode_writer.JOURNAL_SECONDS
    best: dict[float, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(repeats):
            for cadence in (episode_writer.FLUSH_ROWS / rig.fps, new):
                episode_writer.JOURNAL_SECONDS = cadence
                wall, cpu, rows = pipeline_seconds(Path(tmp), rig, samples, stop)
                old = best.get(cadence, (float("inf"), float("inf")))
                best[cadence] = (min(old[0], wall), min(old[1], cpu))
    episode_writer.JOURNAL_SECONDS = new
    (old_wall, old_cpu), (new_wall, new_cpu) = best[episode_writer.FLUSH_ROWS / rig.fps], best[new]
    print(f"  journal every {episode_writer.FLUSH_ROWS} rows: wall {old_wall:.2f} s, CPU {old_cpu:.2f} s ({rows} rows)")
    print(f"  journal every {new:g} s:   wall {new_wall:.2f} s, CPU {new_cpu:.2f} s   "
          f"ratio wall {new_wall / old_wall:.3f}, CPU {new_cpu / old_cpu:.3f}")


def _frames(n: int) -> list[np.ndarray]:
    rig = load_rig("uvc_pair")
    return [s.payload for s in simulate(rig, n / 30 + 1, sizes=(640, 480), flaws=CLEAN)
            if s.stream == "cam0.rgb"][:n]


def fragments(frames: list[np.ndarray], repeats: int) -> None:
    new = video.FRAGMENTED_MP4
    settings = encoder_settings(VideoCodec())
    best: dict[str, tuple[float, int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(repeats):
            for name, options in (("per keyframe", OLD_FRAGMENTS), ("per frame", new)):
                path = Path(tmp) / f"{name.replace(' ', '_')}.mp4"
                cpu = time.process_time()
                with av.open(str(path), "w", format="mp4", options=options) as out:
                    stream = video.add_video_stream(out, settings, 640, 480, Fraction(30))
                    for i, a in enumerate(frames):
                        vf = av.VideoFrame.from_ndarray(a, format="rgb24")
                        vf.pts = i
                        for p in stream.encode(vf):
                            out.mux(p)
                    for p in stream.encode(None):
                        out.mux(p)
                took = time.process_time() - cpu
                best[name] = (min(best.get(name, (float("inf"), 0))[0], took), path.stat().st_size)
    (old_cpu, old_size), (new_cpu, new_size) = best["per keyframe"], best["per frame"]
    print(f"  fragment per keyframe: CPU {old_cpu:.2f} s, file while recording {old_size / 1e6:.3f} MB")
    print(f"  fragment per frame:    CPU {new_cpu:.2f} s, file while recording {new_size / 1e6:.3f} MB   "
          f"ratio CPU {new_cpu / old_cpu:.3f}, size {new_size / old_size:.3f} "
          f"(+{(new_size - old_size) / len(frames):.0f} bytes a frame)")


def lookahead(frames: list[np.ndarray], repeats: int) -> None:
    def yuv(a: np.ndarray) -> np.ndarray:
        return av.VideoFrame.from_ndarray(a, format="rgb24").reformat(format="yuv420p").to_ndarray()
    reference = [yuv(a).astype(np.float64) for a in frames]
    figures = {}
    for _ in range(repeats):
        for frames_ahead in (10, video.LOOKAHEAD):
            s = encoder_settings(VideoCodec())
            ctx = av.CodecContext.create(s.encoder, "w")
            ctx.width, ctx.height, ctx.pix_fmt = 640, 480, s.pix_fmt
            ctx.time_base, ctx.framerate = Fraction(1, 30), Fraction(30)
            ctx.options = {**s.options, "x264-params": f"rc-lookahead={frames_ahead}"}
            ctx.thread_count, ctx.thread_type = s.thread_count, s.thread_type
            ctx.open()
            packets, delay, cpu = [], 0, time.process_time()
            for i, a in enumerate(frames):
                vf = av.VideoFrame.from_ndarray(a, format="rgb24")
                vf.pts = i
                packets += ctx.encode(vf)
                delay = i + 1 - len(packets)
            packets += ctx.encode(None)
            took = time.process_time() - cpu
            decoder = av.CodecContext.create("h264", "r")
            decoded = [f for p in packets for f in decoder.decode(p)] + list(decoder.decode(None))
            mse = np.mean([np.mean((d.to_ndarray() - r) ** 2) for d, r in zip(decoded, reference)])
            old = figures.get(frames_ahead)
            figures[frames_ahead] = (delay, sum(p.size for p in packets), 10 * np.log10(255 ** 2 / mse),
                                     min(took, old[3]) if old else took)
    for frames_ahead, (delay, size, psnr, cpu) in figures.items():
        print(f"  rc-lookahead {frames_ahead:2d}: delay {delay:2d} frames, {size / 1e6:.3f} MB, PSNR {psnr:.2f} dB, "
              f"CPU {cpu:.2f} s")
    (_, old_size, old_psnr, old_cpu), (_, new_size, new_psnr, new_cpu) = figures[10], figures[video.LOOKAHEAD]
    print(f"  ratio size {new_size / old_size:.3f}, CPU {new_cpu / old_cpu:.3f}, PSNR {new_psnr - old_psnr:+.2f} dB")


def main() -> None:
    keep_frame_buffers()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"## 1. journal cadence, Appendix B 640x480, {args.seconds:g} s recorded")
    journal_cadence(args.seconds, args.repeats)
    frames = _frames(300)
    print("## 2. MP4 fragments, 300 frames 640x480 h264")
    fragments(frames, args.repeats)
    print("## 3. x264 look-ahead, 150 frames 640x480")
    lookahead(frames[:150], args.repeats)


if __name__ == "__main__":
    main()
