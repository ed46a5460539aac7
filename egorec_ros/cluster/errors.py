"""Why work could not run on the cluster; each message names the node and what to do."""
from __future__ import annotations

from egorec_ros.errors import UserError


class ClusterError(UserError, RuntimeError):
    """Ray is missing, the cluster cannot be joined, or a node cannot see a path it needs."""
