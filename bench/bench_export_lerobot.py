"""`egorec export lerobot` speed, --video copy vs --video reencode, against bare baselines
measured in the same run.

    .venv/bin/python bench/bench_export_lerobot.py [--seconds 60] [--size 640x480] [--task DIR]

Setup (not timed): one episode of the spec's Appendix B rig from simulated devices
(FFV1 depth to save setup time; the export is asked for the RGB cameras only, as the
baselines: FFV1 depth would be transcoded to LeRobot's depth video), kept in bench/out/.
Timed: the export both ways, and as baselines
* copy: reading every data column the export reads + copying the camera MP4s (shutil);
* reencode: a bare PyAV transcode of the same MP4s with LeRobot's settings (libsvtav1,
  yuv420p, g=2, crf=30, preset 12).
Both export modes also decode up to 40 keyframes per camera file for the image stats.
The machine may be shared: os.getloadavg() is printed; compare the ratios (CPU ones are
the steadier under load), not seconds.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path

import av

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test"))
os.environ.setdefault("SVT_LOG", "1")   # SVT-AV1: errors only

from egorec_ros.dataset import open_task  # noqa: E402
from egorec_ros.export.lerobot.export import export_lerobot  # noqa: E402
from egorec_ros.export.lerobot.videos import LEROBOT_ENCODER  # noqa: E402

OUT = Path(__file__).resolve().parent / "out"


def make_task(seconds: float, size: tuple[int, int]) -> Path:
    from helpers.convert import START_NS
    from egorec_ros.recorder.replay import record_samples
    from egorec_ros.rig.load import load_rig
    from egorec_ros.rig.resize import with_video_sizes
    from egorec_ros.sim.replay import simulate
    from egorec_ros.store import TaskWriter

    root = OUT / f"lerobot_src_{int(seconds)}s_{size[0]}x{size[1]}"
    if (root / "meta" / "info.json").exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    rig = with_video_sizes(load_rig("appendix_b"), {"*": size})
    t = time.perf_counter()
    with TaskWriter(root, task_name="bench", depth_container="mkv") as writer:
        record_samples(writer, rig, simulate(rig, seconds + 0.5, seed=7, start_ns=START_NS),
                       start_ns=START_NS, stop_ns=START_NS + int(seconds * 1e9))
    print(f"setup: recorded {seconds:.0f} s in {time.perf_counter() - t:.0f} s -> {root}")
    return root


def camera_files(task_dir: Path) -> list[Path]:
    task = open_task(task_dir)
    return [ep.video_path(k) for ep in task for k in ep.video_keys if k in task.info.get("cameras", {})]


def baseline_copy(task_dir: Path, dst: Path) -> float:
    t = time.perf_counter()
    for ep in open_task(task_dir):
        ep.read([c for c in ep.columns if not c.endswith("_force_matrix")])
    for i, f in enumerate(camera_files(task_dir)):
        shutil.copyfile(f, dst / f"{i}.mp4")
    return time.perf_counter() - t


def baseline_reencode(task_dir: Path, dst: Path) -> float:
    t = time.perf_counter()
    for i, f in enumerate(camera_files(task_dir)):
        with av.open(str(f)) as src, av.open(str(dst / f"{i}.mp4"), "w") as out:
            s = None
            for n, frame in enumerate(src.decode(video=0)):
                if s is None:
                    s = out.add_stream(LEROBOT_ENCODER["codec"], rate=30, options=LEROBOT_ENCODER["options"])
                    s.width, s.height, s.pix_fmt = frame.width, frame.height, "yuv420p"
                    s.time_base = Fraction(1, 30)
                img = frame.reformat(format="yuv420p")
                img.pts, img.time_base = n, Fraction(1, 30)
                out.mux(s.encode(img))
            out.mux(s.encode(None))
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--size", default="640x480")
    ap.add_argument("--task", help="an existing task dir instead of recording one")
    args = ap.parse_args()
    size = tuple(int(v) for v in args.size.split("x"))
    task_dir = Path(args.task) if args.task else make_task(args.seconds, size)
    task = open_task(task_dir)
    rows = sum(len(ep) for ep in task)
    cams = len(camera_files(task_dir))
    print(f"task: {task_dir} ({rows} rows = {rows / task.fps:.0f} s, {cams} camera files); "
          f"loadavg before: {os.getloadavg()}")
    with tempfile.TemporaryDirectory(dir=OUT) as tmp:
        tmp = Path(tmp)
        for mode, baseline in (("copy", baseline_copy), ("reencode", baseline_reencode)):
            (tmp / f"base_{mode}").mkdir()
            c0 = time.process_time()
            t_base = baseline(task_dir, tmp / f"base_{mode}")
            cpu_base = time.process_time() - c0
            c0 = time.process_time()
            s = export_lerobot(task_dir, tmp / mode, video=mode, cameras=list(task.info["cameras"]))
            cpu = time.process_time() - c0
            print(f"--video {mode:<8}: export {s.seconds:7.2f} s wall ({cpu:6.1f} s CPU), "
                  f"{rows / s.seconds:7.0f} rows/s = {rows / task.fps / s.seconds:6.2f}x real time; "
                  f"baseline {t_base:7.2f} s ({cpu_base:6.1f} s CPU) -> export/baseline wall "
                  f"{s.seconds / t_base:5.2f}, CPU {cpu / cpu_base:5.2f}")
    print(f"loadavg after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
