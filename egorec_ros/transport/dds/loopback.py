"""Environment that keeps DDS traffic on this machine (tests, benchmarks, demos)."""
from __future__ import annotations

from pathlib import Path

from egorec_ros import resources

LOOPBACK_XML = "cyclonedds_loopback.xml"


def config_file(name: str = LOOPBACK_XML) -> Path:
    """A shipped Cyclone config (package data, the source checkout's ``config/``, or a colcon
    install's ``share/egorec_ros/config``)."""
    return resources.config_file(name)


def loopback_env(domain: int) -> dict[str, str]:
    """Variables for a process whose DDS traffic stays on ``lo`` in a private domain.

    The Cyclone config pins both cyclonedds-python and rmw_cyclonedds_cpp to ``lo``.
    ROS_LOCALHOST_ONLY is forced off: with it, rmw_cyclonedds_cpp (Humble) prepends its own
    loopback interface to the config's and refuses to create the node ("lo: the same
    interface may not be selected twice"). Off is the empty string, not "0": Humble's rcl reads
    anything but "1" as off, and Jazzy's warns from every process that the variable is
    deprecated whenever it is set non-empty."""
    return {"CYCLONEDDS_URI": config_file().as_uri(), "ROS_DOMAIN_ID": str(domain), "ROS_LOCALHOST_ONLY": ""}
