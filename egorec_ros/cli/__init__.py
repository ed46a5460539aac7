"""The `egorec` command: one entry point, a module per subcommand."""
from __future__ import annotations

import argparse
import sys

from egorec_ros.cli import (convert_cmd, ctl_cmd, demo_cmd, inspect_cmd, record_cmd, recorder_cmd, recover_cmd,
                            sim_devices_cmd, validate_cmd)
from egorec_ros.version import __version__

SUBCOMMANDS = [demo_cmd, record_cmd, convert_cmd, validate_cmd, inspect_cmd, recover_cmd, sim_devices_cmd, recorder_cmd,
               ctl_cmd]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="egorec", description="Record, convert, check and read "
                                     "pooled_episodes_v1 robot-learning datasets.")
    parser.add_argument("--version", action="version", version=f"egorec {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in SUBCOMMANDS:
        module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
