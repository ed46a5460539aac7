"""Recording capacity and a real-time run: assembler + episode writer + encoders.

    .venv/bin/python bench/bench_record.py [--seconds S] [--realtime-seconds S] [--skip-realtime]

1. Capacity. Simulated samples of a rig are fed as fast as possible through
   ``record_samples`` (assembler, writer, one background encoder per stream, commit) and
   rows/s is measured from the first sample to the committed episode. The lower bound,
   measured in the same run on exactly the frames the writer received (repeats included),
   is encoding them with plain PyAV loops: same encoder settings (``encoder_settings``,
   ``hevc_depth_settings``), same muxer options, no assembler, no writer. Two variants:
   serial (one stream after the other) and one thread per stream (what the writer does);
   the ratio is taken against the faster of the two, the tighter lower bound. The
   pipeline also writes the data parquet, which plain PyAV does not: Appendix B's four
   250x250x3 force matrices per row are most of it, so the pipeline is also timed with
   the force-matrix samples left out ("video only") to show where the difference goes.
   That bound leaves out work the layout mandates (the data parquet: §4.6's list<int16>
   force matrices, zstd), so a second bound adds it: a thread per stream plus one thread
   writing the pipeline's own data table (read back from its parquet, so the same
   columns and values; row groups cycled from the first ``BOUND_GROUPS`` to keep memory
   small) with one plain ``pq.write_table`` call: zstd (DESIGN), nothing optional (no
   dictionary, no statistics), big write batches; fixed here, independent of the
   recorder's own ``parquet_options``, so the bound cannot move with the recorder.
   CPU seconds of the process (all threads) are printed beside the wall clock: on a
   shared machine they are steadier.
   Pictures are rendered before timing (the simulator's moving scene, 30 distinct frames
   per stream, then cycled), so neither side pays for rendering. The machine may be
   shared: the runs alternate and each figure is the best of ``--repeats`` (use 3 on a
   busy machine).
2. Which rigs fit real time on this machine: capacity of every built-in rig at 640x480
   and at its real resolutions (depth as HEVC .mp4, and as FFV1 .mkv where the rig has
   depth). A rig fits when it records faster than it is filmed and needs at most
   ``FIT_CORES`` of the cores at 30 rows/s (the rest is for drivers, ROS and the OS);
   CPU per row is less disturbed by other load than rows/s, so both are printed.
3. Real time: Appendix B at 640x480 into the live ``Recorder`` for ``--realtime-seconds``:
   late samples, repeated frames, rows built late (tick jitter: clock - (t_i + D) when
   row i is built), encoder backlog, CPU use. The samples are the simulated devices'
   (same schedule, pre-rendered pictures) delivered in real time by one player thread,
   as a recorder receives them from drivers running in other processes. With
   ``--live-devices`` the simulated devices render in real time instead, in threads of
   this process: then they also take CPU and the GIL from the recorder (their own cost
   is printed). The machine's load is printed before and after: on a shared machine,
   other load starves the delivering threads, which then deliver late.
"""
from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

import av
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from egorec_ros.allocator import keep_frame_buffers
from egorec_ros.assembly.assembler import Assembler, AssemblyReport
from egorec_ros.assembly.sample import Sample
from egorec_ros.codecs.depth import code_frame, hevc_depth_settings
from egorec_ros.codecs.video import VideoCodec, encoder_settings
from egorec_ros.recorder.replay import record_samples
from egorec_ros.recorder.session import Recorder
from egorec_ros.rig.kinds import StreamKind
from egorec_ros.rig.load import load_rig
from egorec_ros.rig.model import Rig
from egorec_ros.rig.resize import with_video_sizes
from egorec_ros.sim.flaws import DEFAULT
from egorec_ros.sim.live import LiveRig

from bench_video import bare_pyav
from egorec_ros.sim.replay import DEFAULT_START_NS, simulate
from egorec_ros.store import TaskWriter

RIGS = ("uvc_pair", "d435_single", "gripper_single", "appendix_b")
POOL = 30            # distinct rendered pictures per stream (one second), cycled
MATRIX_POOL = 32     # distinct force matrices per stream, cycled (an hour of them would not fit in memory)
BOUND_GROUPS = 4     # distinct row groups of the pipeline's data table the parquet bound cycles
BOUND_PARQUET = {"compression": "zstd", "use_dictionary": False, "write_statistics": False,
                 "write_batch_size": 1 << 16}   # the least work that writes the layout's data parquet
FIT_CORES = 0.8      # share of the cores a rig may need at 30 rows/s to count as fitting real time
VGA = (640, 480)
FPS = Fraction(30)


# ---- samples with pre-rendered pictures -----------------------------------------------------

def pictures(rig: Rig) -> dict[str, list[np.ndarray]]:
    """POOL rendered pictures per video/depth stream at the rig's sizes."""
    wanted = {s.id for s in rig.streams.values() if s.kind in (StreamKind.VIDEO, StreamKind.DEPTH)}
    pool: dict[str, list[np.ndarray]] = {sid: [] for sid in wanted}
    for s in simulate(rig, 3.0, seed=2):
        if s.stream in pool and len(pool[s.stream]) < POOL:
            pool[s.stream].append(s.payload)
        if all(len(v) == POOL for v in pool.values()):
            break
    return pool


def pooled_samples(rig: Rig, seconds: float) -> list[Sample]:
    """The rig's samples over ``seconds`` (scheduled with tiny pictures, cheap to simulate),
    each picture replaced by one of the pool's real-size ones, force matrices cycled."""
    pool: dict[str, list] = pictures(rig)
    count: dict[str, int] = {}
    out = []
    for s in simulate(with_video_sizes(rig, (64, 48)), seconds + 0.5, seed=1, flaws=DEFAULT):
        payload = s.payload
        if s.stream in pool or (isinstance(payload, dict) and "matrix" in payload):
            k = count.get(s.stream, 0)
            count[s.stream] = k + 1
            cycle = pool.setdefault(s.stream, [])
            if s.stream.endswith("force_matrix") and len(cycle) < MATRIX_POOL:
                cycle.append(payload)
            payload = cycle[k % len(cycle)]
        out.append(Sample(s.stream, s.stamp_ns, s.arrival_ns, payload, s.raw_stamp_ns))
    return out


class Player:
    """Delivers scheduled samples in real time from one thread, moved to the host clock:
    what a recorder receives from drivers that run in other processes."""

    def __init__(self, samples: list[Sample], on_sample, clock=time.time_ns) -> None:
        self._samples, self._on_sample, self._clock = samples, on_sample, clock
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="player", daemon=True)
        self.max_lag_ns = 0

    def moved(self) -> list[Sample]:
        """The samples on the host clock, with their scheduled arrival (once started)."""
        return [Sample(s.stream, s.stamp_ns + self.shift_ns, s.arrival_ns + self.shift_ns, s.payload,
                       s.raw_stamp_ns + self.shift_ns if s.raw_stamp_ns else 0) for s in self._samples]

    def __enter__(self) -> Player:
        self.shift_ns = self._clock() - DEFAULT_START_NS
        self._mono0 = time.monotonic_ns()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        shift = self.shift_ns
        for s in self._samples:
            due = self._mono0 + s.arrival_ns - DEFAULT_START_NS
            ahead = due - time.monotonic_ns()
            if (ahead > 0 and self._stop.wait(ahead / 1e9)) or self._stop.is_set():
                return
            self.max_lag_ns = max(self.max_lag_ns, time.monotonic_ns() - due)
            self._on_sample(Sample(s.stream, s.stamp_ns + shift, s.arrival_ns + shift, s.payload,
                                   s.raw_stamp_ns + shift if s.raw_stamp_ns else 0))


class KeepFrames:
    """AssemblyOutput keeping, per recorded stream, the frame of every row."""

    def __init__(self) -> None:
        self.frames: dict[str, list[Any]] = {}

    def begin(self, video_keys: list[str]) -> None:
        self.frames = {k: [] for k in video_keys}

    def row(self, values: dict[str, Any], frames: dict[str, Any]) -> None:
        for k, f in frames.items():
            self.frames[k].append(f)


def assemble(rig: Rig, samples: list[Sample], start_ns: int, stop_ns: int) -> tuple[KeepFrames, AssemblyReport]:
    """Replay mode, no writer: the frames each row takes, and the counts."""
    out = KeepFrames()
    assembler = Assembler(rig, out, start_ns=start_ns)
    for s in samples:
        if s.arrival_ns > stop_ns + assembler.latency_ns:
            break
        assembler.push(s)
    return out, assembler.finish(stop_ns)


def frames_written(rig: Rig, samples: list[Sample], stop_ns: int) -> dict[str, list[np.ndarray]]:
    return assemble(rig, samples, DEFAULT_START_NS, stop_ns)[0].frames


# ---- the plain PyAV lower bound -------------------------------------------------------------

def plain_pyav(path: Path, frames: list[np.ndarray], depth: bool, codec: VideoCodec) -> None:
    """One stream, encoded and muxed by a bare PyAV loop with the writer's settings (the
    loop bench_video.py times against our writer)."""
    settings = hevc_depth_settings(codec.threads) if depth else encoder_settings(codec)
    height, width = frames[0].shape[:2]
    to_frame = code_frame if depth else (lambda f: av.VideoFrame.from_ndarray(f, format="rgb24"))
    bare_pyav(path, settings, width, height, frames, to_frame)


def plain_parquet(path: Path, groups: list[pa.Table], rows: int) -> None:
    """``rows`` rows of ``groups`` (cycled) written by one plain pq.write_table call."""
    parts, k = [], 0
    while rows > 0:
        part = groups[k % len(groups)].slice(0, rows)
        parts.append(part)
        rows, k = rows - part.num_rows, k + 1
    pq.write_table(pa.concat_tables(parts), path, row_group_size=groups[0].num_rows, **BOUND_PARQUET)


def pyav_seconds(tmp: Path, rig: Rig, frames: dict[str, list[np.ndarray]], threaded: bool,
                 data: list[pa.Table] | None = None) -> tuple[float, float]:
    """(wall, CPU) seconds of the plain PyAV loops; with ``data`` (row groups of the data
    table) one more thread writes the data parquet."""
    depth = {s.slot for s in rig.streams.values() if s.kind is StreamKind.DEPTH}
    codec = VideoCodec()
    jobs: list[tuple[Any, tuple]] = [(plain_pyav, (tmp / f"plain_{key}.mp4", f, key in depth, codec))
                                     for key, f in frames.items()]
    if data is not None:
        jobs.append((plain_parquet, (tmp / "plain.parquet", data, len(next(iter(frames.values()))))))
    t, cpu = time.perf_counter(), time.process_time()
    if threaded:
        threads = [threading.Thread(target=fn, args=args) for fn, args in jobs]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    else:
        for fn, args in jobs:
            fn(*args)
    return time.perf_counter() - t, time.process_time() - cpu


def pipeline_seconds(tmp: Path, rig: Rig, samples: list[Sample], stop_ns: int,
                     depth_container: str = "mp4", keep: list[pa.Table] | None = None) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, rows) from the first sample to the committed episode;
    ``keep`` receives the first BOUND_GROUPS row groups of the data parquet (after timing)."""
    with tempfile.TemporaryDirectory(dir=tmp) as run, TaskWriter(Path(run) / "task",
                                                                 depth_container=depth_container) as writer:
        t, cpu = time.perf_counter(), time.process_time()
        result, _ = record_samples(writer, rig, samples, start_ns=DEFAULT_START_NS, stop_ns=stop_ns)
        took = time.perf_counter() - t, time.process_time() - cpu, result.rows
        if keep is not None and not keep:
            data = pq.ParquetFile(result.data_path)
            keep.extend(data.read_row_group(i) for i in range(min(BOUND_GROUPS, data.num_row_groups)))
        return took


# ---- reports --------------------------------------------------------------------------------

def fits_real_time(rig: Rig, seconds: float, label: str, repeats: int, depth_container: str = "mp4") -> bool:
    """Print the pipeline's capacity and CPU need; True if the rig fits real time here."""
    samples = pooled_samples(rig, seconds)
    stop = DEFAULT_START_NS + int(seconds * 1e9)
    with tempfile.TemporaryDirectory() as tmp:
        runs = [pipeline_seconds(Path(tmp), rig, samples, stop, depth_container) for _ in range(repeats)]
    took, cpu, rows = min(runs)
    cores = cpu / rows * float(FPS)
    fits = rows / took >= float(FPS) and cores <= FIT_CORES * os.cpu_count()
    print(f"  {label:36} {rows / took:6.1f} rows/s   CPU {cpu / rows * 1e3:6.1f} ms per row = {cores:4.2f} cores "
          f"at 30 rows/s   {'fits' if fits else 'does NOT fit'}", flush=True)
    return fits


def against_plain_pyav(rig: Rig, seconds: float, label: str, repeats: int) -> None:
    """The pipeline, with and without force matrices, against plain PyAV on the same frames."""
    samples = pooled_samples(rig, seconds)
    video_only = [s for s in samples if not s.stream.endswith("force_matrix")]
    stop = DEFAULT_START_NS + int(seconds * 1e9)
    frames = frames_written(rig, samples, stop)
    rows = len(next(iter(frames.values())))
    best: dict[str, float] = {}
    cpu: dict[str, float] = {}
    data: list[pa.Table] = []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(repeats):
            for name, run in [("pipeline", lambda: pipeline_seconds(Path(tmp), rig, samples, stop, keep=data)[:2]),
                              ("video only", lambda: pipeline_seconds(Path(tmp), rig, video_only, stop)[:2]),
                              ("serial", lambda: pyav_seconds(Path(tmp), rig, frames, threaded=False)),
                              ("threads", lambda: pyav_seconds(Path(tmp), rig, frames, threaded=True)),
                              ("threads+parquet", lambda: pyav_seconds(Path(tmp), rig, frames, True, data))]:
                wall, seconds = run()
                best[name] = min(best.get(name, float("inf")), wall)
                cpu[name] = min(cpu.get(name, float("inf")), seconds)
    bound = min(best["serial"], best["threads"])
    print(f"  {label}: {rows} rows (load average {os.getloadavg()[0]:.1f})")
    print(f"    plain PyAV    serial {rows / best['serial']:6.1f} rows/s   a thread per stream "
          f"{rows / best['threads']:6.1f} rows/s   lower bound = the {'serial' if bound == best['serial'] else 'threaded'}"
          f"   CPU {cpu['threads'] / rows * 1e3:.1f} ms per row")
    print(f"    + data parquet {rows / best['threads+parquet']:5.1f} rows/s   CPU "
          f"{cpu['threads+parquet'] / rows * 1e3:.1f} ms per row (threads + one plain pq.write_table)")
    for name in ("pipeline", "video only"):
        print(f"    {name:13} {rows / best[name]:6.1f} rows/s   CPU {cpu[name] / rows * 1e3:.1f} ms per row   "
              f"/ encode-only bound: wall {best[name] / bound:.2f} CPU {cpu[name] / cpu['threads']:.2f}"
              + ("" if name == "video only" else f"   / bound with parquet: wall {best[name] / best['threads+parquet']:.2f}"
                 f" CPU {cpu[name] / cpu['threads+parquet']:.2f}   (target <= 1.15)"), flush=True)


def realtime(rig: Rig, seconds: float, depth_container: str, live_devices: bool) -> None:
    samples = None if live_devices else pooled_samples(rig, seconds + 2.0)
    with tempfile.TemporaryDirectory() as tmp, TaskWriter(Path(tmp) / "task", depth_container=depth_container) as writer:
        recorder = Recorder(rig, writer)
        backlog = 0
        devices = (LiveRig(rig, recorder.on_sample, seed=3, flaws=DEFAULT) if live_devices
                   else Player(samples, recorder.on_sample))
        try:
            with devices as live:
                time.sleep(0.5)
                cpu0, t0 = os.times(), time.monotonic()
                recorder.start_episode()
                while time.monotonic() - t0 < seconds:
                    time.sleep(0.25)
                    status = recorder.status()
                    backlog = max([backlog, *(v for k, v in status.backlog.items() if k != "rows")])
                stop_at = time.monotonic()
                result, report = recorder.stop_episode(timeout_s=900.0)   # an overloaded run drains its backlog
                cpu1, t1 = os.times(), time.monotonic()
                device_lag_ms = live.max_lag_ns / 1e6
        finally:
            recorder.close()
    cpu = (cpu1.user + cpu1.system - cpu0.user - cpu0.system) / (t1 - t0)
    counts = report.streams
    videos = [s.id for s in rig.streams.values() if s.kind in (StreamKind.VIDEO, StreamKind.DEPTH)]
    late = sum(c.get("late", 0) for c in counts.values())
    delayed = sum(c.get("delayed", 0) for c in counts.values())
    restamped = sum(c.get("restamped", 0) for c in counts.values())
    received = sum(c.get("received", 0) for c in counts.values())
    lag_ms = (report.finalize_lag_ns - int(recorder.config.finalize_margin_ms * 1e6)) / 1e6
    print(f"{result.rows} rows in {seconds:g} s; committed {t1 - stop_at:.2f} s after stop "
          f"(D = {recorder.config.latency_ms:g} ms, then {result.commit_seconds:.2f} s to commit)")
    print(f"late samples: {late} of {received} ({late / received:.3%}); delayed into a later row: {delayed}; "
          f"handed over after their row was built: {restamped}")
    if not live_devices:   # the simulated transport's own spikes: the same schedule in replay mode
        flaws = assemble(rig, devices.moved(), report.start_ns, report.stop_ns)[1].streams
        print(f"  of which the simulated transport's spikes (replay of the schedule): "
              f"{sum(c.get('late', 0) for c in flaws.values())} late; repeated frames in replay: "
              + ", ".join(f"{v} {flaws[v].get('repeated', 0)}" for v in videos))
    worst = sorted(((c.get("late", 0), sid) for sid, c in counts.items() if c.get("late")), reverse=True)[:6]
    if worst:
        print("  late by stream: " + ", ".join(f"{sid} {n}" for n, sid in worst))
    print("repeated frames: " + ", ".join(f"{v} {counts[v].get('repeated', 0)}" for v in videos)
          + "; skipped: " + ", ".join(f"{v} {counts[v].get('skipped', 0)}" for v in videos))
    print(f"rows built after t_i + D + margin by: p50 {np.percentile(lag_ms, 50):.1f} ms, "
          f"p99 {np.percentile(lag_ms, 99):.1f} ms, max {lag_ms.max():.1f} ms")
    print(f"CPU {cpu:.2f} cores of {os.cpu_count()}; max encoder backlog {backlog} frames; "
          f"worst delivery lag {device_lag_ms:.1f} ms; load average after {os.getloadavg()[0]:.1f}")


def device_cost(rig: Rig, seconds: float = 3.0) -> float:
    """Cores the simulated devices alone need to render ``rig`` in real time."""
    t = time.process_time()
    sum(1 for _ in simulate(rig, seconds, seed=3))
    return (time.process_time() - t) / seconds


def main() -> None:
    keep_frame_buffers()   # the lower bounds run under the malloc policy the writer sets (allocator.py)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="recorded seconds per capacity run")
    parser.add_argument("--realtime-seconds", type=float, default=60.0)
    parser.add_argument("--skip-realtime", action="store_true")
    parser.add_argument("--repeats", type=int, default=1, help="best of this many runs per figure")
    parser.add_argument("--depth", choices=("mp4", "mkv"), default="mp4",
                        help="depth container of the real-time run (mp4: HEVC 12-bit, mkv: FFV1)")
    parser.add_argument("--live-devices", action="store_true",
                        help="real-time run: simulated devices render live in this process")
    parser.add_argument("--capacity-only", action="store_true",
                        help="only section 1 at 640x480 (the issue-13 figure)")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"## 1. capacity of Appendix B against plain PyAV, as fast as possible ({args.seconds:g} s of "
          f"recording, h264 crf 23 veryfast + HEVC 12-bit depth, 2 threads per encoder)")
    appendix_b = load_rig("appendix_b")
    against_plain_pyav(with_video_sizes(appendix_b, VGA), args.seconds, "appendix_b 640x480", args.repeats)
    if args.capacity_only:
        return
    against_plain_pyav(appendix_b, args.seconds, "appendix_b real sizes", args.repeats)
    print(f"\n## 2. which rigs fit real time on {os.cpu_count()} cores ({args.seconds:g} s each; fits = at least "
          f"30 rows/s and at most {FIT_CORES:.0%} of the cores)")
    for name in RIGS:
        rig = load_rig(name)
        has_depth = any(s.kind is StreamKind.DEPTH for s in rig.streams.values())
        for size, sized in (("640x480", with_video_sizes(rig, VGA)), ("real", rig)):
            for container in ("mp4", "mkv") if has_depth else ("mp4",):
                label = f"{name} {size}" + (f" depth .{container}" if has_depth else "")
                fits_real_time(sized, args.seconds, label, args.repeats, container)
    if args.skip_realtime:
        return
    rig = with_video_sizes(appendix_b, VGA)
    source = (f"live simulated devices (alone they need {device_cost(rig):.2f} cores)" if args.live_devices
              else "simulated samples played in real time")
    print(f"\n## 3. real time: Appendix B at 640x480, depth .{args.depth}, {source}, {args.realtime_seconds:g} s "
          f"(load average {os.getloadavg()[0]:.1f})")
    realtime(rig, args.realtime_seconds, args.depth, args.live_devices)


if __name__ == "__main__":
    main()
