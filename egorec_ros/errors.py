"""The one base of errors a user can fix.

A ``UserError`` is a bad input or a state of the disk that the user can change:
a bad rig, a bad bag, a bad or locked task dir, leftover staging, a full disk.
Its message says what is wrong, where, and what to do. The CLI prints it as
``egorec: <message>`` without a traceback and exits with status 1 (argparse's
own usage errors exit with 2). Any other exception is a bug and keeps its traceback.
"""
from __future__ import annotations


class UserError(Exception):
    """An error the user can fix; its message is complete without a traceback."""
