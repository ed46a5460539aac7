"""The video size simulated devices are recorded at when none is given: the largest of
``SIZES`` whose encoders plus simulator this machine keeps up with (the capacity check).

``egorec demo``, ``egorec sim-devices --size auto``, the ``sim_devices`` node (``size:=auto``)
and ``record.launch.py sim:=true`` (without ``size:=``) all choose this way: a simulated
rig at sizes the machine cannot render and encode in real time records a backlog of late,
repeated frames, which shows the machine, not the recorder.

    python3 -m egorec_ros.cli.sim_size RIG [--codec C] [--depth mp4|mkv]

prints the chosen WxH on stdout (the launch file runs it on the venv's python) and on
stderr why a larger size was stepped down from.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from egorec_ros.cli import options, record_cmd

SIZES = ("640x480", "480x360", "320x240")
AUTO = "auto"   # the size value that asks for this choice


def largest_fitting(record_args_for: Callable[[str], argparse.Namespace],
                    ) -> tuple[argparse.Namespace, list[tuple[str, float]]]:
    """(the `egorec record --sim` arguments at the first of ``SIZES`` that fits this machine,
    or at the smallest; (size, load) of each size stepped down from)."""
    refused: list[tuple[str, float]] = []
    for size in SIZES:
        record_args = record_args_for(size)
        plan = record_cmd.plan_for(options.rig_from(record_args), record_args)
        if not plan.overloaded:
            break
        if size != SIZES[-1]:
            refused.append((size, plan.load))
    return record_args, refused


def choose(rig: str, codec: str = "h264", depth: str = "mp4") -> tuple[str, list[str]]:
    """("WxH", why it stepped down) for simulated devices of ``rig`` (name or file)."""
    def record_args(size: str) -> argparse.Namespace:
        return options.parse_subcommand(record_cmd, ["--rig", rig, "--sim", "--size", size, "--codec", codec,
                                                     "--depth", depth])
    chosen, refused = largest_fitting(record_args)
    width, height = chosen.size
    return f"{width}x{height}", [f"rig {rig} at {size}: the encoders and the simulator need {load:.2f}x this "
                                 "machine, more than it can do in real time; simulating smaller"
                                 for size, load in refused]


def main(argv: list[str] | None = None) -> int:
    from egorec_ros.errors import UserError

    parser = argparse.ArgumentParser(prog="python3 -m egorec_ros.cli.sim_size", description=__doc__.splitlines()[0])
    parser.add_argument("rig")
    parser.add_argument("--codec", default="h264")
    parser.add_argument("--depth", default="mp4", choices=("mp4", "mkv"))
    args = parser.parse_args(argv)
    try:
        size, why = choose(args.rig, args.codec, args.depth)
    except UserError as exc:
        print(f"egorec: {exc}", file=sys.stderr)
        return 1
    for line in why:
        print(line, file=sys.stderr)
    print(size)
    return 0


if __name__ == "__main__":
    sys.exit(main())
