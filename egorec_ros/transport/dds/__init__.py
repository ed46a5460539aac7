"""Cyclone DDS transport (no ROS needed); see ``egorec_ros.transport``."""
from egorec_ros.transport.dds.transport import DdsTransport, dds_qos

__all__ = ["DdsTransport", "dds_qos"]
