"""Environment that keeps DDS traffic on this machine (tests, benchmarks, demos)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

LOOPBACK_XML = "cyclonedds_loopback.xml"


def config_file(name: str = LOOPBACK_XML) -> Path:
    """A shipped Cyclone config: the source checkout's ``config/`` or an installed ``share/egorec_ros/config``."""
    candidates = [Path(__file__).resolve().parents[3] / "config" / name,
                  Path(sys.prefix) / "share" / "egorec_ros" / "config" / name]
    for prefix in filter(None, os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep)):
        candidates.append(Path(prefix) / "share" / "egorec_ros" / "config" / name)
    for path in candidates:
        if path.is_file():
            return path
    raise FileNotFoundError(f"Cyclone config {name} not found in {', '.join(map(str, candidates))}")


def loopback_env(domain: int) -> dict[str, str]:
    """Variables for a process whose DDS traffic stays on ``lo`` in a private domain."""
    return {"CYCLONEDDS_URI": config_file().as_uri(), "ROS_DOMAIN_ID": str(domain), "ROS_LOCALHOST_ONLY": "1"}
