"""The bags of a farm: arguments (paths or glob patterns) and ``--from-list FILE`` files.

A list file holds one bag a line; blank lines and lines starting with ``#`` are skipped, and a relative
path is relative to the list file's folder (a list travels with its bags). A pattern
(``*``, ``?``, ``[``) that is not itself an existing path expands in sorted order; one that
matches nothing is an error, as is a list file that cannot be read: a farm run that
silently converts fewer bags than meant would look complete.
"""
from __future__ import annotations

import glob
from collections.abc import Sequence
from pathlib import Path

from egorec_ros.errors import UserError


class BagListError(UserError, ValueError):
    """A --from-list file cannot be read, or a pattern matches no bag."""


def expand_bags(args: Sequence[str], lists: Sequence[str] = ()) -> list[str]:
    bags: list[str] = []
    for arg in args:
        bags += _expanded(arg, "argument")
    for name in lists:
        try:
            text = Path(name).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise BagListError(f"--from-list {name}: cannot be read ({exc})") from None
        base = Path(name).parent
        for number, line in enumerate(text.splitlines(), 1):
            entry = "" if line.lstrip().startswith("#") else line.strip()     # a path may hold a '#'

            if entry:
                bags += _expanded(str(base / entry), f"{name} line {number}")
    return bags


def _expanded(arg: str, where: str) -> list[str]:
    if not glob.has_magic(arg) or Path(arg).exists():
        return [arg]
    found = sorted(glob.glob(arg))
    if not found:
        raise BagListError(f"{where}: the pattern {arg} matches no file or folder; check the path (quote the "
                           "pattern so the shell does not expand it differently)")
    return found
