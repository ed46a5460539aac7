"""Errors of bag I/O."""
from __future__ import annotations

from egorec_ros.errors import UserError


class BagError(UserError):
    """A bag that cannot be read: missing, truncated, corrupt, or an unreadable message."""
