"""egorec demo --out ROOT: record a few episodes of the spec's Appendix B rig from simulated
devices, validate them and summarise them — the whole pipeline on built-in defaults."""
from __future__ import annotations

from pathlib import Path

from egorec_ros.cli import inspect_cmd, options, record_cmd, validate_cmd


def add_parser(sub) -> None:
    p = sub.add_parser("demo", help="record 3 simulated Appendix B episodes, validate and summarise them")
    p.add_argument("--out", default="egorec_data", help="dataset root (default ./egorec_data)")
    p.add_argument("--episodes", type=int, default=3)
    p.add_argument("--seconds", type=float, default=5.0)
    p.set_defaults(run=run)


def run(args) -> int:
    task = "demo_appendix_b"
    record_args = options.parse_subcommand(record_cmd, [
        "--rig", "appendix_b", "--sim", "--episodes", str(args.episodes), "--seconds", str(args.seconds),
        "--out", args.out, "--task", task, "--size", "640x480", "--depth", "mkv"])
    status = record_cmd.run(record_args)
    if status:
        return status
    task_dir = str(Path(args.out) / task)
    print(f"\n$ egorec validate {task_dir}")
    status = validate_cmd.run(options.parse_subcommand(validate_cmd, [task_dir]))
    print(f"\n$ egorec inspect {task_dir}")
    report = str(Path(args.out) / f"{task}_report.html")
    inspect_cmd.run(options.parse_subcommand(inspect_cmd, [task_dir, "--html", report]))
    print(f"\nopen {report} to see first frames, drops per stream, trajectories and forces")
    return status
