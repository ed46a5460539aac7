"""egorec demo --out ROOT: record a few episodes of the spec's Appendix B rig from simulated
devices, validate them and summarise them — the whole pipeline on built-in defaults."""
from __future__ import annotations

import argparse
from pathlib import Path

from egorec_ros.cli import inspect_cmd, options, record_cmd, sim_size, validate_cmd

TASK = "demo_appendix_b"
SIZES = sim_size.SIZES   # the demo records at the first one this machine encodes (and simulates) in real time


def add_parser(sub) -> None:
    p = sub.add_parser("demo", help="record 3 simulated Appendix B episodes, validate and summarise them")
    p.add_argument("--out", default="egorec_data", help="dataset root (default ./egorec_data)")
    p.add_argument("--episodes", type=options.positive_int, default=3)
    p.add_argument("--seconds", type=options.positive_seconds, default=5.0)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    status = record_cmd.run(demo_record_args(args))
    if status:
        return status
    task_dir = str(Path(args.out) / TASK)
    print(f"\n$ egorec validate {task_dir}")
    status = validate_cmd.run(options.parse_subcommand(validate_cmd, [task_dir]))
    print(f"\n$ egorec inspect {task_dir}")
    report = str(Path(args.out) / f"{TASK}_report.html")
    inspect_cmd.run(options.parse_subcommand(inspect_cmd, [task_dir, "--html", report]))
    print(f"\nopen {report} to see first frames, drops per stream, trajectories and forces")
    return status


def demo_record_args(args: argparse.Namespace) -> argparse.Namespace:
    """`egorec record` arguments of the demo, at the largest of ``SIZES`` whose encoding (and
    simulation) this machine keeps up with: a demo full of repeated frames would show the
    machine, not the tool."""
    def record_args(size: str) -> argparse.Namespace:
        return options.parse_subcommand(record_cmd, [
            "--rig", "appendix_b", "--sim", "--episodes", str(args.episodes), "--seconds", str(args.seconds),
            "--out", args.out, "--task", TASK, "--size", size, "--depth", "mkv"])
    chosen, refused = sim_size.largest_fitting(record_args)
    for size, load in refused:
        print(f"egorec demo: this machine's encoders cannot keep up with Appendix B at {size} "
              f"(they need {load:.2f}x the machine); the demo records smaller "
              f"(`egorec record --rig appendix_b --sim --size {size}` records that size anyway)")
    return chosen
