"""Helpers of the `egorec convert` tests: simulated Appendix B bags, the CLI as a real
subprocess, and comparisons of task directories. (No tests here.)"""
from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from pathlib import Path

import av
import numpy as np
import pyarrow.parquet as pq

from egorec_ros.assembly.sample import Sample
from egorec_ros.bags.bagwrite import write_bag
from egorec_ros.rig.load import load_rig
from egorec_ros.rig.model import Rig
from egorec_ros.rig.resize import with_video_sizes
from egorec_ros.sim.flaws import CLEAN
from egorec_ros.sim.replay import simulate
from helpers.cli import egorec

START_NS = 1_800_000_000_000_000_000
SIZE = (320, 240)
# what the CLI is told to get the same rig as ``small_rig()``
RIG_ARGS = ["--rig", "appendix_b", "--size", f"{SIZE[0]}x{SIZE[1]}"]
LOCK = "meta/.writer.lock"


def small_rig() -> Rig:
    return with_video_sizes(load_rig("appendix_b"), SIZE)


def sim_samples(rig: Rig, seconds: float, *, seed: int = 0, start_ns: int = START_NS) -> list[Sample]:
    """Clean simulated samples; ``raw_stamp_ns`` cleared, as a bag header carries one stamp only."""
    return [Sample(s.stream, s.stamp_ns, s.arrival_ns, s.payload)
            for s in simulate(rig, seconds, seed=seed, start_ns=start_ns, flaws=CLEAN)]


def sim_bag(path: Path, seconds: float, *, seed: int = 0, start_ns: int = START_NS, storage: str = "rosbag2/mcap",
            compression: str | None = None, markers=None, rig: Rig | None = None) -> Path:
    rig = rig or small_rig()
    return write_bag(path, sim_samples(rig, seconds, seed=seed, start_ns=start_ns), rig.streams.values(),
                     storage=storage, compression=compression, markers=markers)


def convert(bags: Sequence[Path], out: Path, *extra: str, task: str = "conv", rig_args: Sequence[str] = RIG_ARGS,
            expect: int | None = 0) -> subprocess.CompletedProcess:
    done = egorec("convert", *bags, *rig_args, "--task", task, "--out", out, *extra)
    if expect is not None:
        assert done.returncode == expect, f"exit {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    return done


def data_table(task_dir: Path, episode: int = 1):
    k = episode - 1
    return pq.read_table(task_dir / f"data/chunk-{k // 1000:03d}/episode-{k % 1000:03d}.parquet")


def task_files(task_dir: Path) -> dict[str, bytes]:
    """Every file of a task dir but the videos (see ``assert_same_videos``) by relative path;
    info.json without its creation time, and the lock file (the writer's pid) left out."""
    out = {}
    for p in sorted(task_dir.rglob("*")):
        rel = p.relative_to(task_dir).as_posix()
        if not p.is_file() or rel == LOCK or rel.startswith("videos/"):
            continue
        if rel == "meta/info.json":
            info = json.loads(p.read_text())
            info.pop("created_at")
            out[rel] = json.dumps(info, sort_keys=True).encode()
        else:
            out[rel] = p.read_bytes()
    return out


def assert_same_videos(a: Path, b: Path) -> int:
    """The same video files, frame for frame; returns how many are byte-identical.

    Both sides encode identical frames with identical settings, and most files come out
    byte-identical. Not all: under CPU contention PyAV's H.264 path (rgb24 -> yuv420p inside
    the encoder, then libx264) now and then codes a few 4x4 blocks at the bottom-right corner
    differently (seen in ~5-25 % of short episodes on a loaded 2-core machine; the same frames
    converted to yuv420p by us before encoding never differed). Such a frame is still the same
    picture (PSNR > 60 dB), while two neighbouring frames of the simulation differ at 20-30 dB:
    the 50 dB bound tells a wrong frame from an encoder's rounding."""
    names = sorted(p.relative_to(a).as_posix() for p in a.rglob("videos/**/*") if p.is_file())
    assert names and names == sorted(p.relative_to(b).as_posix() for p in b.rglob("videos/**/*") if p.is_file())
    identical = 0
    for name in names:
        x, y = (a / name).read_bytes(), (b / name).read_bytes()
        if x == y:
            identical += 1
            continue
        fx, fy = list(_decoded(a / name)), list(_decoded(b / name))
        assert len(fx) == len(fy), f"{name}: {len(fx)} vs {len(fy)} frames"
        for i, (u, v) in enumerate(zip(fx, fy)):
            mse = np.mean((u.astype(np.float64) - v) ** 2)
            assert mse == 0 or 10 * np.log10(255.0 ** 2 / mse) > 50, f"{name}: frame {i} is another picture"
    return identical


def _decoded(path: Path):
    with av.open(str(path)) as container:
        for frame in container.decode(video=0):
            yield frame.to_ndarray()


def hidden_entries(folder: Path) -> list[str]:
    """Dot-entries that are not part of a committed dataset (staging, work folders)."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))
