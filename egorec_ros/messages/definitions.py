"""Our .msg files -> rosbags type definitions (``egorec_ros/msg/<Name>``).

The .msg files stay the single source of truth: they are found in the source
checkout, in an installed ``share/egorec_ros/msg`` (pip data files or a colcon
install, which installs them there) or under ``$AMENT_PREFIX_PATH``.
"""
from __future__ import annotations

import os
import sys
from functools import lru_cache
from pathlib import Path

from rosbags.typesys import get_types_from_msg

PACKAGE = "egorec_ros"
NAMES = ("GloveFrame", "HandPose", "ForceMatrix", "GripperState", "SlamPose")


def type_name(name: str) -> str:
    """ROS 2 type name of one of our messages, e.g. ``egorec_ros/msg/SlamPose``."""
    return f"{PACKAGE}/msg/{name}"


def msg_dirs() -> list[Path]:
    """Where the .msg files may be, most specific first."""
    dirs = [Path(__file__).resolve().parents[2] / "msg",
            Path(sys.prefix) / "share" / PACKAGE / "msg"]
    for prefix in filter(None, os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep)):
        dirs.append(Path(prefix) / "share" / PACKAGE / "msg")
    return dirs


def msg_dir() -> Path:
    for d in msg_dirs():
        if all((d / f"{n}.msg").is_file() for n in NAMES):
            return d
    raise FileNotFoundError(
        f"the {PACKAGE} message definitions ({', '.join(n + '.msg' for n in NAMES)}) were not found in "
        f"{', '.join(str(d) for d in msg_dirs())}; install the package with its share/{PACKAGE}/msg files")


@lru_cache(maxsize=1)
def custom_types() -> dict:
    """Parsed definitions of all our messages, ready for ``Typestore.register``."""
    folder = msg_dir()
    types: dict = {}
    for name in NAMES:
        types.update(get_types_from_msg((folder / f"{name}.msg").read_text(encoding="utf-8"), type_name(name)))
    return types
