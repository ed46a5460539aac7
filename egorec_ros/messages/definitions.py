"""Our .msg and .srv files -> rosbags type definitions (``egorec_ros/msg/<Name>``,
``egorec_ros/srv/<Name>_Request`` / ``_Response``).

The .msg files stay the single source of truth; ``egorec_ros.resources`` finds them
(package data, the source checkout, or a colcon install's share/egorec_ros/msg).
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from rosbags.typesys import get_types_from_msg

from egorec_ros import resources

PACKAGE = resources.PACKAGE
NAMES = ("GloveFrame", "HandPose", "ForceMatrix", "GripperState", "SlamPose", "StreamStatus", "RecorderStatus")
SRV_NAMES = ("Start", "Stop", "Delete", "ListEpisodes")
SRV_SEPARATOR = "\n---"


def type_name(name: str, kind: str = "msg") -> str:
    """ROS 2 type name of one of our messages, e.g. ``egorec_ros/msg/SlamPose``."""
    return f"{PACKAGE}/{kind}/{name}"


@lru_cache(maxsize=1)
def custom_types() -> dict:
    """Parsed definitions of all our messages, ready for ``Typestore.register``."""
    folder = resources.msg_dir(NAMES)
    types: dict = {}
    for name in NAMES:
        types.update(get_types_from_msg((folder / f"{name}.msg").read_text(encoding="utf-8"), type_name(name)))
    for name in SRV_NAMES:
        types.update(service_types(resources.srv_dir(SRV_NAMES) / f"{name}.srv", type_name(name, "srv")))
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
