"""`egorec convert` benchmark: throughput against a bare lower bound, and peak memory.

    .venv/bin/python bench/bench_convert.py [--quick] [--bags DIR]

Bags: the spec's Appendix B rig simulated (egorec_ros.sim, default flaws), written as
rosbag2 mcap with zstd chunk compression; colour cameras as sensor_msgs/CompressedImage
JPEG (raw 1280x960 RGB would make a 60 s bag 30 GB), depth as raw 16UC1 Image, force
matrices, IMU, SLAM, gloves as published. Writing the bags is setup, not timed; with
--bags DIR they are kept and reused.

Throughput: wall time of converting one bag (serial; each run a process of its own)
against a lower bound measured in the same run: reading every message of the bag, decoding the image
payloads (PyAV mjpeg / numpy) and encoding the same frames with bare PyAV, with the
writer's encoder settings (codecs.video.encoder_settings, codecs.depth), one thread per
stream as the converter has. That bound does nothing else: no deserialising of the other
messages, no rows, no parquet, no force-matrix coding. On a bag with force matrices that
leaves out work the layout mandates (§4.6: four list<int16> columns of 187 500 values a
row, zstd), so a second bound ("+ data") also deserialises every message of the rig's
topics and writes the converter's own data table (read back from its parquet, row
groups cycled) with one plain pq.write_table call on one more thread, with the least
work that writes that file (bench_record.BOUND_PARQUET). Runs interleave; medians of N
(default 3).

Memory: peak RSS of `egorec convert` (a child process: its VmHWM, and VmRSS sampled
over the run) for a short and a 4x longer bag of the same rig; flat means the
long bag needs no more memory than the short one.

--shape teleop: the bag shape of issue 13 instead (3 x 640x480 cameras at 30 Hz, joint states
at 100 Hz, joint commands at 30 Hz, IMU at 200 Hz: no depth, no force matrices), ``both``: each.

Default (~5 min on 2 cores, plus writing the bags the first time): throughput on a 60 s
bag at 640x480 (--raw: raw Image cameras too), memory for 15 s and 60 s bags at 320x240. --full: the rig's
real sizes too, memory for 60 s and 240 s bags. The machine may be shared: wall times
are noisy, CPU seconds less so; both ratios are printed.
"""
from __future__ import annotations

import argparse
import json
import os
import queue
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from egorec_ros.allocator import keep_frame_buffers
from egorec_ros.codecs.depth import code_frame, hevc_depth_settings
from egorec_ros.codecs.video import VideoCodec, add_video_stream, encoder_settings
from egorec_ros.bags.bagfile import open_bag
from egorec_ros.bags.bagwrite import write_bag
from egorec_ros.converter.convert_run import convert_bags
from egorec_ros.converter.episode_job import ConvertSettings
from egorec_ros.messages.payloads.images import COMPRESSED_IMAGE
from egorec_ros.recorder.replay import GIL_SWITCH_S
from egorec_ros.rig.kinds import StreamKind
from egorec_ros.rig.load import load_rig
from egorec_ros.rig.model import Rig
from egorec_ros.rig.resize import with_video_sizes
from egorec_ros.sim.replay import simulate

from bench_record import BOUND_GROUPS, plain_parquet
from thread_cpu import ROLES, ThreadCpu

FPS = Fraction(30)
START_NS = 1_767_225_600_000_000_000
QUEUE_FRAMES = 64


# issue 13's bag shape: 3 cameras, joints 100 Hz, command 30 Hz, IMU 200 Hz (the s80m's)
TELEOP_RIG = """\
name: teleop3
fps: 30
devices:
  head:
    kind: s80m
    key: "s80m:bench-head"
    streams:
      left: {topic: /head/left/image_raw, width: 640, height: 480}
      imu: {topic: /head/imu}
  wrist_l: {kind: uvc, key: "uvc:bench-wrist-l", streams: {rgb: {topic: /wrist_l/image_raw, width: 640, height: 480}}}
  wrist_r: {kind: uvc, key: "uvc:bench-wrist-r", streams: {rgb: {topic: /wrist_r/image_raw, width: 640, height: 480}}}
  arm:
    kind: joint_state
    key: "joint_state:bench-arm"
    streams:
      state: {topic: /arm/joint_states, dim: 7, fps: 100}
      action: {topic: /teleop/joint_command, dim: 7, fps: 30}
"""


def _size(text: str) -> tuple[int, int]:
    w, h = (int(v) for v in text.split("x"))
    return w, h


def teleop_rig(folder: Path) -> Rig:
    path = folder / "teleop3.yaml"
    path.write_text(TELEOP_RIG)
    return load_rig(path)


def rig_at(size: tuple[int, int] | None) -> Rig:
    rig = load_rig("appendix_b")
    return with_video_sizes(rig, size) if size else rig


def make_bag(folder: Path, rig: Rig, seconds: float, label: str, *, raw: bool = False) -> Path:
    """``raw``: colour cameras as sensor_msgs/Image rgb8 instead of JPEG CompressedImage."""
    path = folder / f"{rig.name}_{label}_{seconds:g}s{'_raw' if raw else ''}"
    if path.exists():
        return path
    jpeg = {} if raw else {s.id: COMPRESSED_IMAGE for s in rig.streams.values() if s.kind is StreamKind.VIDEO}
    t = time.perf_counter()
    write_bag(path, simulate(rig, seconds, seed=1, start_ns=START_NS), rig.streams.values(), storage="rosbag2/mcap",
              compression="storage", msgtypes=jpeg)
    size = sum(p.stat().st_size for p in path.iterdir()) / 1e6
    print(f"  (setup: wrote {path.name}, {size:.0f} MB, in {time.perf_counter() - t:.0f} s)", flush=True)
    return path


# ---- lower bound ------------------------------------------------------------------------

def _encode_stream(frames: queue.Queue, path: Path, width: int, height: int, depth: bool) -> None:
    """Decode and encode one stream's frames with bare PyAV, as they come."""
    settings = hevc_depth_settings() if depth else encoder_settings(VideoCodec())
    container = av.open(str(path), "w")
    stream = add_video_stream(container, settings, width, height, FPS)
    jpeg = av.CodecContext.create("mjpeg", "r")
    n = 0
    while (msg := frames.get()) is not None:
        if depth:
            pixels = np.frombuffer(msg.data, np.uint16).reshape(height, width)   # 16UC1, step = 2 * width
            vf = code_frame(pixels)
        else:
            # from_numpy_buffer (no copy), as the converter's writers (codecs.video.check_frame)
            if hasattr(msg, "format"):         # CompressedImage (JPEG)
                (decoded,) = jpeg.decode(av.Packet(bytes(msg.data)))
                vf = av.VideoFrame.from_numpy_buffer(decoded.to_ndarray(format="rgb24"), format="rgb24")
            else:                                # Image rgb8, step = 3 * width
                vf = av.VideoFrame.from_numpy_buffer(np.frombuffer(msg.data, np.uint8).reshape(height, width, 3),
                                                     format="rgb24")
        vf.pts = n
        for packet in stream.encode(vf):
            container.mux(packet)
        n += 1
    for packet in stream.encode(None):
        container.mux(packet)
    container.close()


def lower_bound(bag_path: Path, rig: Rig, out: Path, data: tuple[list[pa.Table], int] | None = None) -> float:
    """Seconds to read the bag, decode its images and encode them again, nothing else (with
    the converter's GIL switch interval, so the encoder threads get the same chances).
    ``data`` (row groups of the converter's data table, rows): also deserialise every message
    of the rig and write that many rows of data parquet on one more thread."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(GIL_SWITCH_S)
    try:
        return _lower_bound(bag_path, rig, out, data)
    finally:
        sys.setswitchinterval(previous)


def _lower_bound(bag_path: Path, rig: Rig, out: Path, data: tuple[list[pa.Table], int] | None) -> float:
    streams = {s.topic: s for s in rig.streams.values() if s.kind in (StreamKind.VIDEO, StreamKind.DEPTH)}
    topics = {s.topic for s in rig.streams.values()} if data else set()
    out.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    queues = {topic: queue.Queue(QUEUE_FRAMES) for topic in streams}
    # named as the converter's threads are, so bench.thread_cpu puts their CPU in the same roles
    threads = [threading.Thread(target=_encode_stream, args=(queues[topic], out / f"{s.slot}.mp4",
                                                              int(s.source["width"]), int(s.source["height"]),
                                                              s.kind is StreamKind.DEPTH), name=f"encoder-{s.slot}")
               for topic, s in streams.items()]
    if data:
        threads.append(threading.Thread(target=plain_parquet, args=(out / "data.parquet", *data), name="rows"))
    for thread in threads:
        thread.start()
    with open_bag(bag_path) as bag:
        for raw in bag.messages():
            q = queues.get(raw.topic)
            if q is not None:
                q.put(bag.decode(raw))
            elif raw.topic in topics:
                bag.decode(raw)
    for q in queues.values():
        q.put(None)
    for thread in threads:
        thread.join()
    return time.perf_counter() - t


def _data_file(out: Path) -> pq.ParquetFile:
    (path,) = out.glob("**/data/chunk-*/episode-*.parquet")
    return pq.ParquetFile(path)


def data_groups(out: Path) -> list[pa.Table]:
    """The first row groups of a conversion's data parquet (its only episode)."""
    source = _data_file(out)
    return [source.read_row_group(i) for i in range(min(BOUND_GROUPS, source.num_row_groups))]


def rows_of(out: Path) -> int:
    return _data_file(out).metadata.num_rows


def converter(bag_path: Path, rig: Rig, out: Path) -> tuple[float, int]:
    """(seconds, rows) of `egorec convert` in this process, serial."""
    t = time.perf_counter()
    result = convert_bags([bag_path], ConvertSettings(rig, "bench"), out=out, progress=False)
    took = time.perf_counter() - t
    if result.failures:
        raise RuntimeError(result.failures)
    return took, sum(o.rows for b in result.bags for _, o in b.episodes)


def _cpu() -> float:
    """CPU seconds (user + system) of this process and all its threads."""
    t = os.times()
    return t.user + t.system


def _faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def _switches() -> int:
    """Context switches of this process's threads so far (voluntary: waits for a lock, a queue,
    the GIL, I/O; involuntary: preempted)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_nvcsw + usage.ru_nivcsw


def _steal_s() -> float:
    """CPU seconds the hypervisor gave to others (all CPUs; /proc/stat), 0 where unknown."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()
        return int(fields[8]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def warm_page_cache(bag: Path) -> None:
    """Read the bag's files once, so no run reads them from the disk (the kernel may have
    evicted part of a multi-GB bag since the last run; the runs would differ by it)."""
    for path in bag.iterdir():
        with path.open("rb", buffering=0) as f:
            while f.read(1 << 24):
                pass


def throughput(label: str, rig_args: list[str], bag: Path, scratch: Path, repeats: int) -> None:
    """Median wall and CPU time of each over interleaved runs, with the load average and the
    minor page faults and the CPU time the hypervisor took away (stolen) during each run. The bag is
    read into the page cache before each run. Each run is a process of its own (``run_one``), as
    `egorec convert` is: no run inherits another's heap, threads or initialised codecs (in one
    process, a bound measured right after a conversion ran faster than in a process of its own). The machine may be shared: the CPU ratio
    (the child and its threads, os.times) is what a busy machine disturbs least; its split by
    thread role (bench/thread_cpu.py) shows where the converter spends more than a bound. The
    "+ data" bound needs the converter's table, so the first run converts first."""
    names = ("convert", "bound", "+ data")
    walls: dict[str, list[float]] = {n: [] for n in names}
    cpus: dict[str, list[float]] = {n: [] for n in names}
    faults: dict[str, list[int]] = {n: [] for n in names}
    switches: dict[str, list[int]] = {n: [] for n in names}
    steals: dict[str, list[float]] = {n: [] for n in names}
    roles: dict[str, dict[str, list[float]]] = {n: {r: [] for r in ROLES} for n in names}
    rows = 0
    for i in range(repeats):
        for name in names if i % 2 == 0 else names[::-1]:
            out = scratch / f"{name.replace(' ', '').replace('+', 'data')}{i}"
            data = ["--data-from", str(scratch / "convert0")] if name == "+ data" else []
            warm_page_cache(bag)
            steal = _steal_s()
            run = _child(["--run", name, "--bag", str(bag), "--out", str(out), *rig_args, *data])
            walls[name].append(run["wall"])
            cpus[name].append(run["cpu"])
            faults[name].append(run["faults"])
            switches[name].append(run["switches"])
            steals[name].append(_steal_s() - steal)
            for role in ROLES:
                roles[name][role].append(run["threads"][role])
            rows = run.get("rows", rows)
        print(f"    run {i + 1}: " + "   ".join(f"{n} {walls[n][-1]:5.1f} s ({cpus[n][-1]:.2f} s CPU, "
                                                 f"{faults[n][-1] / 1e3:.0f} k faults, "
                                                 f"{switches[n][-1] / 1e3:.0f} k switches, {steals[n][-1]:.1f} s stolen)"
                                                 for n in names)
              + f"   load {os.getloadavg()[0]:.1f}", flush=True)
    wall = {n: statistics.median(walls[n]) for n in names}
    cpu = {n: statistics.median(cpus[n]) for n in names}
    print(f"  {label}: {rows} rows; median of {repeats}: convert {wall['convert']:.1f} s "
          f"({rows / wall['convert']:.1f} rows/s), {cpu['convert'] / rows * 1e3:.1f} ms CPU a row; minor faults "
          + " vs ".join(f"{statistics.median(faults[n]) / 1e3:.0f} k" for n in names)
          + f" (load {os.getloadavg()})", flush=True)
    for bound, what in (("bound", "read + decode + encode"), ("+ data", "+ deserialise all + data parquet")):
        print(f"    / lower bound ({what}) {wall[bound]:.1f} s, {cpu[bound] / rows * 1e3:.1f} ms CPU a row: "
              f"wall ratio {wall['convert'] / wall[bound]:.2f}, CPU ratio {cpu['convert'] / cpu[bound]:.2f} "
              "(target <= 1.10)", flush=True)
    # where the CPU goes (bench.thread_cpu): the bounds read on their main thread, the converter
    # reads on "reader" and maps samples and builds rows on "main"; medians per role
    print("    CPU seconds by thread (median): " + "   ".join(
        f"{n}: total {cpu[n]:.2f} = " + " + ".join(f"{r} {statistics.median(roles[n][r]):.2f}" for r in ROLES)
        for n in names), flush=True)
    for bound in ("bound", "+ data"):
        print(f"    convert - {bound}: {cpu['convert'] - cpu[bound]:+.2f} s CPU = " + ", ".join(
            f"{r} {statistics.median(roles['convert'][r]) - statistics.median(roles[bound][r]):+.2f}" for r in ROLES),
            flush=True)


def _child(args: list[str]) -> dict:
    done = subprocess.run([sys.executable, __file__, *args], stdout=subprocess.PIPE, text=True)
    if done.returncode:
        raise SystemExit(f"bench_convert: the {args[1]!r} run failed (exit status {done.returncode}); "
                         "its error is printed above")
    return json.loads(done.stdout.splitlines()[-1])


def run_one(name: str, bag: Path, rig: Rig, out: Path, data_from: Path | None) -> dict:
    """One timed run in this (fresh) process: its wall and CPU seconds, minor faults, rows."""
    data = (data_groups(data_from), rows_of(data_from)) if data_from else None
    with ThreadCpu() as threads:
        cpu, flt, sw, t = _cpu(), _faults(), _switches(), time.perf_counter()
        if name == "convert":
            rows = converter(bag, rig, out)[1]
        else:
            lower_bound(bag, rig, out, data)
        result = {"wall": time.perf_counter() - t, "cpu": _cpu() - cpu, "faults": _faults() - flt,
                  "switches": _switches() - sw}
    result["threads"] = threads.by_role()
    return {**result, "rows": rows} if name == "convert" else result


# ---- memory ---------------------------------------------------------------------------------

def peak_memory(bag: Path, rig_args: list[str], out: Path) -> tuple[float, list[float], float]:
    """(peak RSS MiB, VmRSS MiB at 10 %, 20 %, ... 100 % of the run, seconds) of `egorec convert`.

    The peak is the child's VmHWM, read until it exits (its rusage ru_maxrss is no good here:
    Linux carries the parent's high-water mark over fork and exec)."""
    child = subprocess.Popen([sys.executable, "-m", "egorec_ros.cli", "convert", str(bag), *rig_args,
                              "--task", "bench", "--out", str(out)], stdout=subprocess.DEVNULL)
    rss: list[float] = []
    peak = 0.0
    status = Path(f"/proc/{child.pid}/status")
    t = time.perf_counter()
    while child.poll() is None:
        try:
            fields = dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line)
            rss.append(int(fields["VmRSS"].split()[0]) / 1024)
            peak = max(peak, int(fields["VmHWM"].split()[0]) / 1024)
        except (OSError, KeyError, ValueError):
            pass           # between fork and exec, or exiting
        time.sleep(0.1)
    took = time.perf_counter() - t
    if child.returncode:
        raise RuntimeError(f"egorec convert failed with exit status {child.returncode}")
    deciles = [rss[min(len(rss) - 1, len(rss) * k // 10)] for k in range(1, 11)] if rss else []
    return peak, deciles, took


def main() -> None:
    keep_frame_buffers()   # the lower bounds run under the malloc policy the writer sets (allocator.py)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a 10 s bag; memory: 10 and 40 s (~3 min)")
    parser.add_argument("--full", action="store_true",
                        help="the rig's real video sizes too, memory: 60 and 240 s (30+ min; use --bags)")
    parser.add_argument("--seconds", type=float, default=60.0, help="throughput bag length (default 60)")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved runs; medians are printed")
    parser.add_argument("--shape", choices=("appendix_b", "teleop", "both"), default="appendix_b",
                        help="the throughput bag's rig: Appendix B, issue 13's teleop shape, or each")
    parser.add_argument("--raw", action="store_true", help="also a bag with raw sensor_msgs/Image colour cameras")
    parser.add_argument("--real-sizes", action="store_true",
                        help="also the rig's real video sizes (1280x800 stereo, 1280x960 grippers)")
    parser.add_argument("--memory", type=float, nargs=2, default=(15.0, 60.0), metavar=("SHORT_S", "LONG_S"))
    parser.add_argument("--memory-size", default="320x240", help="video size of the memory bags")
    parser.add_argument("--bags", type=Path, help="keep the bags in this folder and reuse them")
    parser.add_argument("--memory-only", action="store_true", help="skip the throughput runs")
    parser.add_argument("--throughput-only", action="store_true", help="skip the memory runs")
    # one timed run in a child process (throughput): what, on which bag and rig, where
    parser.add_argument("--run", choices=("convert", "bound", "+ data"), help=argparse.SUPPRESS)
    parser.add_argument("--bag", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--rig-file", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--size", help=argparse.SUPPRESS)
    parser.add_argument("--data-from", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run:
        rig = load_rig(args.rig_file) if args.rig_file else rig_at(_size(args.size) if args.size else None)
        print(json.dumps(run_one(args.run, args.bag, rig, args.out, args.data_from)))
        return
    if args.quick:
        args.seconds, args.memory = 10.0, (10.0, 40.0)
    if args.full:
        args.real_sizes, args.memory = True, (60.0, 240.0)
    with tempfile.TemporaryDirectory(prefix="bench_convert_") as tmp:
        bags = args.bags or Path(tmp) / "bags"
        bags.mkdir(parents=True, exist_ok=True)
        cases = [("640x480", (640, 480))] + ([("real sizes", None)] if args.real_sizes else [])
        if args.memory_only:
            cases = []
        else:
            print(f"## throughput: {args.seconds:g} s bags, serial, median of {args.repeats} interleaved "
                  f"runs ({os.cpu_count()} CPUs, load {os.getloadavg()})", flush=True)
        rigs = [r for r in ("teleop", "appendix_b") if args.shape in (r, "both")]
        for (label, size), shape in [(case, r) for r in rigs for case in cases]:
            rig = teleop_rig(bags) if shape == "teleop" else rig_at(size)
            rig_args = (["--rig-file", str(bags / "teleop3.yaml")] if shape == "teleop"
                        else ["--size", f"{size[0]}x{size[1]}"] if size else [])
            if shape == "teleop" and size is None:
                continue               # the teleop shape has one size
            for raw in (False, True) if args.raw else (False,):
                bag = make_bag(bags, rig, args.seconds, label.replace(" ", "_"), raw=raw)
                throughput(f"{rig.name} {label} {'raw Image' if raw else 'JPEG'}", rig_args, bag,
                           Path(tmp) / f"{rig.name}_{label.replace(' ', '_')}{'_raw' if raw else ''}", args.repeats)
        if args.throughput_only:
            return
        w, h = _size(args.memory_size)
        print(f"\n## peak memory of `egorec convert` (Appendix B at {w}x{h}, serial)", flush=True)
        rig = rig_at((w, h))
        for seconds in args.memory:
            bag = make_bag(bags, rig, seconds, f"{w}x{h}")
            peak, deciles, took = peak_memory(bag, ["--rig", "appendix_b", "--size", f"{w}x{h}"],
                                              Path(tmp) / f"mem{seconds:g}")
            print(f"  {seconds:5g} s bag: peak RSS {peak:6.0f} MiB in {took:.0f} s; RSS over the run (MiB): "
                  + " ".join(f"{v:.0f}" for v in deciles), flush=True)


if __name__ == "__main__":
    main()
