"""The `egorec` command: one entry point, a module per subcommand.

Subcommand modules are imported to build the parser, so they import only argparse-level
things at module level; numpy, pyarrow, PyAV and the bag reader are imported inside ``run``
(``egorec --help`` stays fast).

Exit status: 0 done; 1 the command ran and something failed (findings, failed bags) or a
``UserError`` stopped it (printed as ``egorec: <message>``, no traceback: bad rig, bad bag,
bad or locked task dir, leftover staging, disk full); 2 the command line itself is wrong
(argparse); 130 interrupted. Any other exception is a bug and keeps its traceback.
"""
from __future__ import annotations

import argparse
import errno
import importlib
import sys

from egorec_ros.errors import UserError
from egorec_ros.version import __version__

# name -> module with add_parser(sub) and run(args); order is the order of `egorec --help`
SUBCOMMANDS = {
    "demo": "egorec_ros.cli.demo_cmd",
    "record": "egorec_ros.cli.record_cmd",
    "convert": "egorec_ros.cli.convert_cmd",
    "validate": "egorec_ros.cli.validate_cmd",
    "inspect": "egorec_ros.cli.inspect_cmd",
    "recover": "egorec_ros.cli.recover_cmd",
    "delete": "egorec_ros.cli.delete_cmd",
    "export": "egorec_ros.cli.export_cmd",
    "devices": "egorec_ros.cli.devices_cmd",
    "sim-devices": "egorec_ros.cli.sim_devices_cmd",
    "drivers": "egorec_ros.cli.drivers_cmd",
    "recorder": "egorec_ros.cli.recorder_cmd",
    "ctl": "egorec_ros.cli.ctl_cmd",
    "console": "egorec_ros.cli.console_cmd",
    "upload": "egorec_ros.cli.upload_cmd",
}
_DISK_FULL = (errno.ENOSPC, errno.EDQUOT)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="egorec", description="Record, convert, check and read "
                                     "pooled_episodes_v1 robot-learning datasets.")
    parser.add_argument("--version", action="version", version=f"egorec {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in SUBCOMMANDS.values():
        importlib.import_module(module).add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except UserError as exc:
        print(f"egorec: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        if exc.errno not in _DISK_FULL:
            raise
        print(f"egorec: the disk is full ({exc.filename or exc}); free space or write to another disk, then "
              "run `egorec recover` on the task dir if an episode was being written", file=sys.stderr)
        return 1
