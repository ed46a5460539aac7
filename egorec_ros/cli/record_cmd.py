"""egorec record --rig RIG [--sim] --episodes N --seconds S --out ROOT

Without --sim the samples come from the rig's topics over DDS (cyclonedds, no ROS
needed; ROS_DOMAIN_ID and CYCLONEDDS_URI apply), e.g. from `egorec sim-devices` or
real ROS 2 driver nodes."""
from __future__ import annotations

import contextlib
import signal
import sys
import time
from pathlib import Path

from egorec_ros.assembly.assembler import AssemblyConfig
from egorec_ros.assembly.counts import problems
from egorec_ros.cli import options
from egorec_ros.cli.progress import ProgressLine, describe_status
from egorec_ros.recorder.session import Recorder
from egorec_ros.sim.flaws import CLEAN, DEFAULT
from egorec_ros.sim.live import LiveRig
from egorec_ros.store import TaskWriter


def add_parser(sub) -> None:
    p = sub.add_parser("record", help="record episodes from the rig's ROS topics over DDS (no ROS needed), "
                                      "or from in-process simulated devices with --sim")
    options.add_rig_options(p)
    p.add_argument("--sim", action="store_true", help="record from simulated devices, in real time, no ROS needed")
    p.add_argument("--episodes", type=int, default=1)
    p.add_argument("--seconds", type=float, default=10.0, help="length of each episode")
    p.add_argument("--gap", type=float, default=1.0, help="pause between episodes (s)")
    p.add_argument("--out", default="egorec_data", help="dataset root; episodes go to ROOT/TASK")
    p.add_argument("--task", help="task name (default: the rig name)")
    p.add_argument("--seed", type=int, default=0, help="simulation seed")
    p.add_argument("--clean", action="store_true", help="simulate without jitter, drops or stalls")
    p.add_argument("--bag", help="without --sim: also write every received message to this new rosbag2 (mcap) "
                                 "folder; each episode prints the --range that converts it back")
    p.add_argument("--wait", type=float, default=10.0,
                   help="without --sim: seconds to wait for every stream's first message before recording")
    options.add_recording_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    rig = options.rig_from(args)
    task_dir = Path(args.out) / (args.task or rig.name)
    if not args.sim:   # launch and systemd stop with SIGTERM: commit the running episode as Ctrl-C does
        signal.signal(signal.SIGTERM, signal.default_int_handler)
    with TaskWriter(task_dir, codec=options.codec_from(args), depth_container=args.depth) as writer:
        recorder = Recorder(rig, writer, config=AssemblyConfig(latency_ms=args.latency_ms))
        try:
            with _source(rig, recorder, args):
                for n in range(args.episodes):
                    _record_one(recorder, n, args)
                    if n + 1 < args.episodes:
                        time.sleep(args.gap)
        finally:
            recorder.close()
    print(f"task directory: {task_dir}")
    return 0


@contextlib.contextmanager
def _source(rig, recorder: Recorder, args):
    """Simulated devices in this process, or the rig's topics over DDS."""
    if args.sim:
        with LiveRig(rig, recorder.on_sample, seed=args.seed, flaws=CLEAN if args.clean else DEFAULT):
            time.sleep(0.5)  # let every device deliver once before the first episode
            yield
        return
    from egorec_ros.recorder.dds_source import dds_input, wait_for_streams
    with dds_input(rig, recorder, bag=args.bag) as live:
        print(f"subscribed over DDS to {len(live.topics)} topics of rig {rig.name}", file=sys.stderr)
        silent = wait_for_streams(live, [s.id for s in rig.streams.values() if s.topic], args.wait)
        if silent:
            print(f"still silent after {args.wait:.0f} s (recording anyway): {', '.join(silent)}", file=sys.stderr)
        yield


def _record_one(recorder: Recorder, n: int, args) -> None:
    line = ProgressLine()
    recorder.start_episode(task=args.task)
    started = time.monotonic()
    while (elapsed := time.monotonic() - started) < args.seconds:
        line.show(f"episode {n + 1}/{args.episodes} {elapsed:5.1f}/{args.seconds:.0f} s  "
                  + describe_status(recorder.status(), elapsed))
        time.sleep(min(0.5, max(0.0, args.seconds - elapsed)))
    line.show(f"episode {n + 1}/{args.episodes} stopping: waiting {args.latency_ms:.0f} ms for late samples, "
              "then committing")
    result, report = recorder.stop_episode()
    line.done()
    if result is None:
        print(f"episode {n + 1}: no row was built (no video stream delivered); nothing written")
        return
    drops = {sid: p for sid, c in report.streams.items() if (p := problems(c))}
    print(f"episode {result.number.index}: {result.rows} rows, committed in {result.commit_seconds:.2f} s"
          + (f"; left out (silent): {', '.join(report.missing_streams)}" if report.missing_streams else ""))
    for sid, c in drops.items():
        print(f"    {sid}: " + ", ".join(f"{k} {v}" for k, v in c.items()))
    if args.bag:
        print(f"    in the bag: egorec convert {args.bag} --range-origin epoch "
              f"--range {report.start_ns / 1e9:.9f} {report.stop_ns / 1e9:.9f}")
