"""Transport settings a user gives (``--qos``, ``ROS_DOMAIN_ID``) that cannot be used."""
from __future__ import annotations

from egorec_ros.errors import UserError


class TransportConfigError(UserError, ValueError):
    """A QoS profile, a stream given a QoS, or a domain id that does not exist; the message names it."""
