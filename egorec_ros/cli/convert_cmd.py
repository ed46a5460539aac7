"""egorec convert BAG [BAG ...] [--from-list FILE] --rig RIG --task NAME --out ROOT
egorec convert --suggest-rig BAG [-o RIG.yaml]

Exit status: 0 all converted; 1 a bag or episode failed and the run stopped (nothing after it
converted); 2 a usage error (nothing converted); 3 with --keep-going: the bags listed under
"failure(s)" failed, every other bag was converted (run again to retry only those)."""
from __future__ import annotations

import sys
from pathlib import Path

from typing import TYPE_CHECKING

from egorec_ros.cli import options

if TYPE_CHECKING:
    from egorec_ros.converter.convert_run import RunResult
    from egorec_ros.converter.episode_job import EpisodeOutcome


def add_parser(sub) -> None:
    p = sub.add_parser("convert", help="convert rosbag2 / ROS 1 bags into episodes of a task directory",
                       description="Each bag becomes one episode (or several, with --gap, --range or --marker) "
                                   "of ROOT/TASK. Episodes are numbered in bag order whatever --jobs/--ray.")
    p.add_argument("bags", nargs="*", metavar="BAG",
                   help="rosbag2 folder, .mcap / .db3 file, or ROS 1 .bag; a quoted glob pattern expands to the bags "
                        "it matches")
    p.add_argument("--from-list", action="append", default=[], metavar="FILE",
                   help="also convert the bags listed in FILE, one a line (blank lines and # comments skipped; "
                        "relative paths are relative to FILE's folder); repeatable. Running the same farm again "
                        "converts only the bag windows not yet in the task (each episode records its source)")
    options.add_rig_options(p, required=False)  # not needed with --suggest-rig
    p.add_argument("--task", help="task name: episodes go to ROOT/TASK (required unless --suggest-rig)")
    p.add_argument("--out", default="egorec_data", help="dataset root (default ./egorec_data)")
    p.add_argument("--suggest-rig", action="store_true",
                   help="write a starting rig file from the bag's topics instead of converting")
    p.add_argument("-o", "--output", help="with --suggest-rig: the rig file to write (default: print it)")

    cut = p.add_argument_group("episodes (default: one per bag)").add_mutually_exclusive_group()
    cut.add_argument("--gap", type=float, metavar="SECONDS",
                     help="start a new episode after this long without a message on the rig's topics")
    cut.add_argument("--range", type=options.seconds, nargs=2, action="append", metavar=("START", "END"), dest="ranges",
                     help="an episode from START to END seconds (repeat for several)")
    cut.add_argument("--marker", metavar="TOPIC",
                     help="episodes from a std_msgs/Bool recording flag or std_msgs/String start/stop events")
    p.add_argument("--range-origin", choices=("bag", "epoch"), default="bag",
                   help="--range seconds from the bag's first message (bag) or Unix time (epoch)")
    p.add_argument("--start-words", default="start", help="--marker String values that start an episode (comma list)")
    p.add_argument("--stop-words", default="stop", help="--marker String values that stop an episode (comma list)")

    clocks = p.add_argument_group("clocks")
    clocks.add_argument("--allow-mixed-clocks", action="store_true",
                        help="convert even when streams of an episode are stamped by different clocks (reported)")
    clocks.add_argument("--clock-tolerance", type=float, metavar="SECONDS",
                        help="stamp offsets within this of each other are one clock")
    clocks.add_argument("--latency-ms", type=float,
                        help="latency budget D: a frame received later than this after its stamp is late")

    p.add_argument("--max-gap", type=float, metavar="SECONDS",
                   help="end an episode where its master camera has no frame for longer than this (default "
                        "10 s) instead of filling the silence with repeated frames")
    p.add_argument("--bad-frames", type=int, default=0, metavar="N",
                   help="invalid images tolerated per stream and episode, each replaced by the previous frame "
                        "and counted (default 0: an invalid image stops the episode)")
    p.add_argument("--jobs", type=int, default=1, metavar="N", help="convert in N local worker processes")
    p.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                   help="run the episodes as Ray tasks: on the cluster at ADDRESS, or on a local Ray instance; "
                        "ROOT must be on a filesystem shared with the workers")
    p.add_argument("--keep-going", action="store_true",
                   help="convert the other bags when one fails; the failed bags are listed with their reasons "
                        "(exit status 3)")
    options.add_codec_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    if args.suggest_rig:
        return _suggest(args)
    if not args.rig or not args.task:
        print("egorec convert: --rig and --task are required (or use --suggest-rig BAG to write a rig)",
              file=sys.stderr)
        return 2
    from egorec_ros.assembly.assembler import AssemblyConfig
    from egorec_ros.converter.bag_list import expand_bags
    from egorec_ros.converter.bag_plan import SplitRule
    from egorec_ros.converter.clocks import ClockPolicy
    from egorec_ros.converter.convert_run import Parallelism, convert_bags
    from egorec_ros.converter.episode_job import ConvertSettings
    from egorec_ros.errors import UserError

    # options left out keep the defaults of ClockPolicy / AssemblyConfig (not restated here)
    policy = ClockPolicy(allow_mixed=args.allow_mixed_clocks, allow_option="--allow-mixed-clocks",
                         **options.given(tolerance_s=args.clock_tolerance))
    assembly = AssemblyConfig(**options.given(latency_ms=args.latency_ms))
    try:
        settings = ConvertSettings(
            rig=options.rig_from(args), task=args.task, codec=options.codec_from(args), depth_container=args.depth,
            policy=policy, assembly=assembly, bad_frames=args.bad_frames, **options.given(max_gap_s=args.max_gap))
        rule = SplitRule(gap_s=args.gap, ranges=tuple(map(tuple, args.ranges or ())), range_origin=args.range_origin,
                         marker=args.marker, start_words=_words(args.start_words), stop_words=_words(args.stop_words))
        bags = expand_bags(args.bags, args.from_list)
        if not bags:
            print("egorec convert: no bag given (BAG arguments or --from-list FILE)", file=sys.stderr)
            return 2
        result = convert_bags(bags, settings, out=args.out, rule=rule, keep_going=args.keep_going,
                              parallel=Parallelism(jobs=args.jobs, ray=args.ray is not None,
                                                   ray_address=args.ray or None),
                              on_episode=_announce)
    except UserError as exc:             # anything else is a bug and keeps its traceback
        print(f"egorec convert: {exc}", file=sys.stderr)
        return 2
    _summarise(result)
    if result.failures:
        return 3 if args.keep_going else 1
    return 0


def _words(text: str) -> tuple[str, ...]:
    return tuple(w for w in (part.strip() for part in text.split(",")) if w)


def _announce(number: int, outcome: EpisodeOutcome) -> None:
    from tqdm import tqdm

    tqdm.write(f"episode {number}: {outcome.rows} rows from {Path(outcome.bag).name} ({outcome.window.reason})")


def _summarise(result: RunResult) -> None:
    print()
    for bag in result.bags:
        print("\n".join(bag.lines()))
    failures = result.failures
    if result.farm:
        print(result.farm)
    if result.episodes:
        print(f"\n{result.episodes} episode(s) written to {result.task_dir}")
    else:
        print("\nno episode written" + ("" if result.task_dir.exists() else f"; {result.task_dir} was not created"))
    if failures:
        print(f"{len(failures)} failure(s):", file=sys.stderr)
        for f in failures:
            print(f"  - {f}", file=sys.stderr)
    if result.stopped:
        print(f"stopped: {result.stopped}", file=sys.stderr)


def _suggest(args) -> int:
    from egorec_ros.bags.bagfile import open_bag
    from egorec_ros.bags.errors import BagError
    from egorec_ros.converter.suggest import suggest_rig

    if len(args.bags) != 1 or args.from_list:
        print("egorec convert --suggest-rig takes one bag", file=sys.stderr)
        return 2
    try:
        with open_bag(args.bags[0]) as bag:
            suggestion = suggest_rig(bag)
    except BagError as exc:
        print(f"egorec convert: {exc}", file=sys.stderr)
        return 1
    if args.output:
        target = Path(args.output)
        if target.exists():
            print(f"egorec convert: {target} exists; remove it or choose another -o", file=sys.stderr)
            return 2
        target.write_text(suggestion.text, encoding="utf-8")
        print(f"rig written to {target}", file=sys.stderr)
    else:
        print(suggestion.text, end="")
    for line in suggestion.todo:
        print(f"TODO: {line}", file=sys.stderr)
    for line in suggestion.notes:
        print(f"note: {line}", file=sys.stderr)
    return 0
