"""egorec export FORMAT ...: one sub-subcommand per exporter, each defined by
``egorec_ros.export.<name>.cli`` (``add_parser(sub)`` + ``run``, heavy imports inside run)."""
from __future__ import annotations

import importlib

EXPORTERS = ("lerobot",)   # egorec_ros/export/<name>/cli.py


def add_parser(sub) -> None:
    p = sub.add_parser("export", help="export a task directory to another dataset format")
    formats = p.add_subparsers(dest="format", required=True, metavar="FORMAT")
    for name in EXPORTERS:
        importlib.import_module(f"egorec_ros.export.{name}.cli").add_parser(formats)
