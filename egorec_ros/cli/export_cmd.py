"""egorec export FORMAT …: one module per format under egorec_ros/export/<format>/cli.py,
each with ``add_parser(formats)`` (heavy imports inside its run); adding a format is one
more entry in EXPORTERS."""
from __future__ import annotations

import importlib

EXPORTERS = ("egosmith", "lerobot")


def add_parser(sub) -> None:
    p = sub.add_parser("export", help="export a task directory for training (EgoSmith shards, LeRobot v3)")
    formats = p.add_subparsers(dest="format", required=True, metavar="FORMAT")
    for name in EXPORTERS:
        importlib.import_module(f"egorec_ros.export.{name}.cli").add_parser(formats)
