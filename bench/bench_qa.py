"""Cost of the episode QA verdict (egorec_ros.qa).

    .venv/bin/python bench/bench_qa.py [--seconds 60] [--size 320x240]

1. At commit: a ``--seconds`` Appendix B episode (simulated devices, default flaws) is replayed
   through the real pipeline (assembler -> writer -> libx264) into a temporary task; the verdict's
   own time (measured inside the commit) is printed with
   the commit time of the same episode (from end() to committed, QA included) and their ratio.
   (EpisodeResult.qa_seconds: the row itself holds no timing, so converting a bag twice still gives
   identical files.)
   The verdict reads only the QA columns and the per-frame figures, so its cost does not depend
   on the picture size: ``--size`` only makes the replay faster. Bound: 0.3 s for 60 s.
   Then the verdict is recomputed on the committed episode (best of 5, frames' figures of the
   same length) to show the figure without the commit's disk traffic around it.
2. Per frame, on the encoder threads: ``frame_figures`` (mean luma and hash of a 1/16 subsample)
   on a full-size 1280x960 frame, as a ratio to encoding that frame with libx264 (the baseline,
   measured in the same run on the same frames).
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from egorec_ros.codecs.frame_stats import FrameSeries, frame_figures
from egorec_ros.codecs.video import open_video_writer
from egorec_ros.dataset.task import Task
from egorec_ros.qa.episode import episode_verdict
from egorec_ros.qa.thresholds import QaThresholds
from egorec_ros.recorder.replay import record_samples
from egorec_ros.rig.load import load_rig
from egorec_ros.rig.resize import parse_size, with_video_sizes
from egorec_ros.sim.replay import DEFAULT_START_NS, simulate
from egorec_ros.store import TaskWriter

BOUND_S = 0.3


def commit_figures(seconds: float, size: str) -> None:
    rig = with_video_sizes(load_rig("appendix_b"), parse_size(size))
    with tempfile.TemporaryDirectory() as tmp:
        task = Path(tmp) / "task"
        t = time.perf_counter()
        with TaskWriter(task) as writer:
            result, _ = record_samples(writer, rig, simulate(rig, seconds + 0.5, seed=1, start_ns=DEFAULT_START_NS),
                                       start_ns=DEFAULT_START_NS, stop_ns=DEFAULT_START_NS + int(seconds * 1e9))
        assert result is not None and result.qa is not None
        qa_s = result.qa_seconds
        print(f"episode: {result.rows} rows ({seconds:g} s Appendix B at {size}), replayed in "
              f"{time.perf_counter() - t:.1f} s; verdict {result.qa['verdict']} ({len(result.qa['reasons'])} reasons)")
        print(f"  at commit: QA {qa_s:.3f} s, commit {result.commit_seconds:.3f} s (QA included): "
              f"QA / commit = {qa_s / result.commit_seconds:.2f}; bound {BOUND_S} s: "
              f"{'ok' if qa_s <= BOUND_S * seconds / 60 else 'OVER'}")
        n = result.rows
        rng = np.random.default_rng(0)
        frames = {k: (kind, FrameSeries(rng.uniform(40, 200, n).astype(np.float32),
                                        rng.integers(0, 2**32, n, dtype=np.uint32), np.zeros(n, bool)))
                  for k, kind in (("gripper_rgb", "rgb"), ("gripper_2_rgb", "rgb"), ("stereo_left", "rgb"),
                                  ("stereo_right", "rgb"), ("stereo_depth", "depth"))}
        feature_stats = Task(task).episodes[0].row["stats"]
        times = []
        for _ in range(5):
            t = time.perf_counter()
            episode_verdict(result.data_path, rig.fps, result.drop_stats, frames, QaThresholds(), feature_stats)
            times.append(time.perf_counter() - t)
        print(f"  recomputed on the committed episode: best {min(times):.3f} s, median {sorted(times)[2]:.3f} s "
              f"(= {min(times) / result.commit_seconds:.2f} of the commit)")


def per_frame_figures(width: int = 1280, height: int = 960, count: int = 30) -> None:
    rng = np.random.default_rng(0)
    frames = [rng.integers(0, 255, (height, width, 3), dtype=np.uint8) for _ in range(4)]
    with tempfile.TemporaryDirectory() as tmp:
        writer = open_video_writer(Path(tmp) / "v.mp4", width, height, 30.0)
        t = time.perf_counter()
        for i in range(count):
            writer.write(frames[i % 4])
        writer.close()
        encode = (time.perf_counter() - t) / count
    t = time.perf_counter()
    for i in range(count * 10):
        frame_figures(frames[i % 4])
    figures = (time.perf_counter() - t) / (count * 10)
    print(f"per frame at {width}x{height}: figures {1e6 * figures:.0f} µs, libx264 encode {1e3 * encode:.1f} ms "
          f"(baseline): figures / encode = {figures / encode:.4f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--size", default="320x240", help="picture size of the replayed episode (QA does not depend on it)")
    args = p.parse_args()
    print(f"load: {os.getloadavg()[0]:.1f} (1 min) on {os.cpu_count()} cores")
    commit_figures(args.seconds, args.size)
    per_frame_figures()


if __name__ == "__main__":
    main()
