"""Our .msg and .srv files -> rosbags type definitions (``egorec_ros/msg/<Name>``,
``egorec_ros/srv/<Name>_Request`` / ``_Response``).

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
NAMES = ("GloveFrame", "HandPose", "ForceMatrix", "GripperState", "SlamPose", "StreamStatus", "RecorderStatus")
SRV_NAMES = ("Start", "Stop")
SRV_SEPARATOR = "\n---"


def type_name(name: str, kind: str = "msg") -> str:
    """ROS 2 type name of one of our messages, e.g. ``egorec_ros/msg/SlamPose``."""
    return f"{PACKAGE}/{kind}/{name}"


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
    for name in SRV_NAMES:
        types.update(service_types(folder.parent / "srv" / f"{name}.srv", type_name(name, "srv")))
    return types


def service_types(path: Path, name: str) -> dict:
    """A .srv file -> ``<name>_Request`` and ``<name>_Response`` definitions. An empty half gets
    the member rosidl gives empty structures (``uint8 structure_needs_at_least_one_member``)."""
    if not path.is_file():
        raise FileNotFoundError(f"service definition {path} is missing; install the package with its srv files")
    request, sep, response = ("\n" + path.read_text(encoding="utf-8")).partition(SRV_SEPARATOR)
    if not sep:
        raise ValueError(f"{path}: a .srv file needs a '---' line between request and response")
    types: dict = {}
    for half, text in (("Request", request), ("Response", response)):
        fields = [ln for ln in text.splitlines() if ln.split("#", 1)[0].strip()]
        body = text if fields else "uint8 structure_needs_at_least_one_member"
        # rosbags files every parsed type under pkg/msg/: parse there, keep it under pkg/srv/
        parsed = get_types_from_msg(body, f"{name}_{half}".replace("/srv/", "/msg/"))
        types.update({key.replace("/msg/", "/srv/", 1): value for key, value in parsed.items()})
    return types
