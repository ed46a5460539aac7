"""egorec record --rig RIG [--sim] --episodes N --seconds S --out ROOT

Without --sim the samples come from the rig's topics over DDS (cyclonedds, no ROS
needed; ROS_DOMAIN_ID and CYCLONEDDS_URI apply), e.g. from `egorec sim-devices` or
real ROS 2 driver nodes."""
from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from egorec_ros.cli import options

if TYPE_CHECKING:
    from egorec_ros.cli.interrupts import Interrupts
    from egorec_ros.codecs.capacity import EncodingPlan
    from egorec_ros.recorder.disk import DiskGuard
    from egorec_ros.recorder.session import Recorder
    from egorec_ros.rig.model import Rig

INTERRUPTED = 130   # exit status after Ctrl-C, as a shell reports SIGINT


def add_parser(sub) -> None:
    p = sub.add_parser("record", help="record episodes from the rig's ROS topics over DDS (no ROS needed), "
                                      "or from in-process simulated devices with --sim")
    options.add_rig_options(p)
    p.add_argument("--sim", action="store_true", help="record from simulated devices, in real time, no ROS needed")
    p.add_argument("--episodes", type=options.positive_int, default=1)
    p.add_argument("--seconds", type=options.positive_seconds, default=10.0,
                   help="length of each episode: exactly seconds x fps rows, however loaded the machine")
    p.add_argument("--gap", type=float, default=1.0, help="pause between episodes (s)")
    p.add_argument("--out", default="egorec_data", help="dataset root; episodes go to ROOT/TASK")
    p.add_argument("--task", help="task name (default: the rig name)")
    p.add_argument("--seed", type=int, default=0, help="simulation seed")
    p.add_argument("--clean", action="store_true", help="simulate without jitter, drops or stalls")
    p.add_argument("--allow-missing-video", action="store_true",
                   help="keep an episode that lost its master stream or every video stream (by default it is "
                        "discarded, its number recycled, and the command fails)")
    p.add_argument("--min-free-mb", type=float, default=64.0,
                   help="free disk space always kept; recording stops (episode committed) before going below it "
                        "plus what the rest of the episode needs")
    p.add_argument("--bag", help="without --sim: also write every received message to this new rosbag2 (mcap) "
                                 "folder; each episode prints the --range that converts it back")
    p.add_argument("--wait", type=float, default=10.0,
                   help="without --sim: seconds to wait for every stream's first message before recording")
    options.add_recording_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from egorec_ros.cli.interrupts import Interrupts

    with Interrupts() as ctrl:   # a full disk or a missing encoder is a UserError: `egorec: <message>`, exit 1
        return _record(args, ctrl)


def _record(args, ctrl: Interrupts) -> int:
    from egorec_ros.assembly.assembler import AssemblyConfig
    from egorec_ros.codecs.capacity import advice
    from egorec_ros.recorder.disk import DiskGuard
    from egorec_ros.recorder.session import Recorder
    from egorec_ros.rig.declare import declaration
    from egorec_ros.store import TaskWriter
    from egorec_ros.store.metadata import check_cameras

    config = AssemblyConfig(**options.given(latency_ms=args.latency_ms))
    rig = options.rig_from(args)
    print("egorec record: checking the encoders (Ctrl-C: finish and commit the current episode; "
          "twice: discard it)", file=sys.stderr, flush=True)
    task_dir = Path(args.out) / (args.task or rig.name)
    rows = max(1, round(args.seconds * rig.fps))
    plan = plan_for(rig, args)
    sim_share = plan.per_stream.get(SIMULATOR, 0.0)
    print(f"encoders: {plan.notes[0] if plan.notes else 'no video'}; they need {plan.load - sim_share:.2f}x "
          "this machine", file=sys.stderr)
    if SIMULATOR in plan.per_stream:
        print(f"{plan.notes[-1]}; with the encoders {plan.load:.2f}x", file=sys.stderr)
    if plan.overloaded:
        print(f"WARNING: {advice(plan)}", file=sys.stderr)
    if ctrl.count:
        print("interrupted before recording; nothing was recorded", file=sys.stderr)
        return INTERRUPTED
    failed = stopped_for_disk = False
    with TaskWriter(task_dir, codec=plan.codec, depth_container=args.depth) as writer:
        # before any device starts: a size change is refused up front, not at the first episode
        check_cameras(writer.paths, declaration(rig))
        guard = DiskGuard(task_dir, min_free=int(args.min_free_mb * 2**20))
        guard.check_start()
        recorder = Recorder(rig, writer, config=config,
                            allow_missing_video=args.allow_missing_video)
        try:
            with _source(rig, recorder, args, ctrl):
                for n in range(args.episodes):
                    if ctrl.count:
                        print(f"Ctrl-C before episode {n + 1}: it and any further ones are not recorded",
                              file=sys.stderr)
                        break
                    outcome = _record_one(recorder, n, rows, args, ctrl, guard)
                    failed |= outcome == "failed"
                    if outcome in ("failed", "disk"):
                        stopped_for_disk = outcome == "disk"
                        break
                    if n + 1 < args.episodes:
                        _pause(args.gap, ctrl)
        finally:
            recorder.close()
    print(f"task directory: {task_dir}")
    if stopped_for_disk:
        print(f"recording stopped early: the disk holding {task_dir} is almost full; free space or use --out",
              file=sys.stderr)
        return 1
    if ctrl.count:
        print(f"recording interrupted (Ctrl-C); `egorec validate {task_dir}` checks what was committed",
              file=sys.stderr)
        return INTERRUPTED
    return 1 if failed else 0


def plan_for(rig: Rig, args) -> EncodingPlan:
    """What the rig's encoders need of this machine with the codec and depth container asked for;
    with ``--sim`` (or ``sim=True``) also what rendering the simulated devices costs, as they
    share the machine (in this process or beside it)."""
    from egorec_ros.codecs.capacity import StreamNeed, plan_encoding

    plan = plan_encoding([StreamNeed(v.key, v.kind, v.width, v.height, v.fps or rig.fps) for v in rig.videos],
                         options.codec_from(args), args.depth)
    return with_simulator(plan, rig) if getattr(args, "sim", False) else plan


def with_simulator(plan: EncodingPlan, rig: Rig) -> EncodingPlan:
    """``plan`` with the simulated devices' rendering counted in its load."""
    import dataclasses

    from egorec_ros.sim.cost import machine_share, render_seconds_per_second

    per_second = render_seconds_per_second(rig)
    share = machine_share(sum(per_second.values()))
    worst = max(per_second, key=per_second.__getitem__) if per_second else "-"
    note = (f"simulated devices: rendering takes ~{100 * sum(per_second.values()):.0f} % of a core "
            f"({share:.2f}x the machine; most: {worst})")
    return dataclasses.replace(plan, load=plan.load + share, per_stream={**plan.per_stream, SIMULATOR: share},
                               notes=plan.notes + (note,))


SIMULATOR = "simulated devices"   # the plan's per_stream key for what the simulator costs


def _pause(seconds: float, ctrl: Interrupts) -> None:
    until = time.monotonic() + seconds
    while not ctrl.count and time.monotonic() < until:
        time.sleep(0.05)


@contextlib.contextmanager
def _source(rig, recorder: Recorder, args, ctrl: Interrupts) -> Iterator[None]:
    """Simulated devices in this process, or the rig's topics over DDS."""
    from egorec_ros.sim.flaws import CLEAN, DEFAULT
    from egorec_ros.sim.live import LiveRig

    if args.sim:
        from egorec_ros.cli.sim_devices_cmd import behind_line

        with LiveRig(rig, recorder.on_sample, seed=args.seed, flaws=CLEAN if args.clean else DEFAULT) as sim:
            _pause(0.5, ctrl)  # let every device deliver once before the first episode
            yield
        if sim.behind:
            print(f"simulated devices {behind_line(dict(sim.behind))}", file=sys.stderr)
        return
    from egorec_ros.live.dds_source import dds_input, wait_for_streams
    with dds_input(rig, recorder, bag=args.bag) as live:
        print(f"subscribed over DDS to {len(live.topics)} topics of rig {rig.name}", file=sys.stderr)
        silent = wait_for_streams(live, [s.id for s in rig.streams.values() if s.topic], args.wait)
        if silent:
            print(f"still silent after {args.wait:.0f} s (recording anyway): {', '.join(silent)}", file=sys.stderr)
        yield


def _record_one(recorder: Recorder, n: int, rows: int, args, ctrl: Interrupts, guard: DiskGuard) -> str:
    """One episode; returns "ok", "interrupted", "aborted", "failed" or "disk"."""
    from egorec_ros.cli.progress import ProgressLine, describe_status
    from egorec_ros.recorder.disk import mib
    from egorec_ros.recorder.session import DrainStalledError

    line = ProgressLine()
    recorder.start_episode(task=args.task, rows=rows)
    started, handled, why = time.monotonic(), 0, "ok"
    while True:
        try:
            if recorder.wait_episode(0.1):
                break
        except DrainStalledError as exc:
            line.done()
            print(f"episode {n + 1}: {exc}; discarding it", file=sys.stderr)
            recorder.request_abort()
            recorder.wait_episode(10.0)
            return "failed"
        number = recorder.last_episode["number"]
        if ctrl.count > handled:
            handled = ctrl.count
            line.done()
            if handled == 1:
                recorder.request_stop()
                why = "interrupted"
                print(f"Ctrl-C: finishing episode {number} and committing it; no further episodes "
                      "(Ctrl-C again to discard it)", file=sys.stderr, flush=True)
            elif handled == 2:
                recorder.request_abort()
                why = "aborted"
                print(f"Ctrl-C again: discarding episode {number} (its number is recycled)", file=sys.stderr,
                      flush=True)
        if why == "ok" and guard.low(recorder.last_episode.get("folder")):
            recorder.request_stop()
            why = "disk"
            line.done()
            print(f"disk almost full ({mib(guard.free)} free; finishing the episode at {mib(int(guard.rate))}/s "
                  f"and committing it needs up to {mib(guard.needed)}): stopping episode {number} now and "
                  "committing it; no further episodes",
                  file=sys.stderr, flush=True)
        status = recorder.status()
        free = f"  free {mib(status.free_bytes)}" if status.free_bytes is not None else ""
        line.show(f"episode {n + 1}/{args.episodes} {time.monotonic() - started:5.1f} s {status.stage}  "
                  + describe_status(status, time.monotonic() - started) + free)
    line.done()
    return _summarise(recorder, n, why, args.bag)


def _summarise(recorder: Recorder, n: int, why: str, bag: str | None) -> str:
    from egorec_ros.assembly.counts import judged, problems
    from egorec_ros.qa.verdict import summary_lines
    from egorec_ros.recorder.coverage import coverage
    from egorec_ros.recorder.no_rows import no_rows_reason
    from egorec_ros.recorder.overload import episode_warnings

    last = recorder.last_episode
    try:
        result, report = recorder.outcome()
    except Exception as exc:   # MissingVideoError, a failed commit: the message says what and what to do
        print(f"episode {n + 1} FAILED: {exc}", file=sys.stderr)
        return "failed"
    if last["aborted"] or report is None:   # no report: discarded before it stopped
        print(f"episode {last['number']} discarded: nothing of it was written, its number is recycled",
              file=sys.stderr)
        return why
    if result is None:
        reason = no_rows_reason(recorder.rig, report.streams, last.get("stamp_lag"), last.get("latency_ns", 0))
        print(f"episode {n + 1}: no row was built ({reason}); nothing written")
        return "failed"
    drops = {sid: p for sid, c in report.streams.items() if (p := problems(c))}
    print(f"episode {result.number.index}: {result.rows} rows, committed in {result.commit_seconds:.2f} s"
          + (" (stopped early by Ctrl-C)" if why == "interrupted" else "")
          + (" (stopped early: disk almost full)" if why == "disk" else "")
          + (f"; left out (silent): {', '.join(report.missing_streams)}" if report.missing_streams else ""))
    if why == "aborted":
        print("    (the second Ctrl-C came when the episode was already being committed)", file=sys.stderr)
    went = coverage(report, recorder.rig, last.get("stamp_lag", {}), last.get("done_ns"), result.commit_seconds,
                    last.get("latency_ns"))
    print(f"    {went}")
    for sid in drops:
        print(f"    {sid}: {judged(report.streams[sid])}")
    for line in summary_lines(result.qa):
        print(f"    {line}")
    for warning in episode_warnings(report.streams, result.rows, last["peak_backlog"]):
        print(f"    WARNING: {warning}")
    if bag:
        print(f"    in the bag: egorec convert {bag} --range-origin epoch "
              f"--range {_seconds(report.start_ns)} {_seconds(report.stop_ns)}")
    return "interrupted" if why == "aborted" else why


def _seconds(ns: int) -> str:
    """Exact decimal seconds of an epoch ns stamp (a float has only ~16 digits)."""
    return f"{ns // 10**9}.{ns % 10**9:09d}"
