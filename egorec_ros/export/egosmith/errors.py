"""Errors of the export a user can fix (what, where, what to do); the CLI prints them without traceback."""
from __future__ import annotations

from egorec_ros.errors import UserError


class ExportRefused(UserError, ValueError):
    """The task cannot be exported as asked; nothing was written."""
