"""Which episodes `egorec upload` sends: ``--episodes 1,3-5`` (1-based numbers, §1.3) or every
committed episode that has no entry for that server yet (``--all-new``, the default)."""
from __future__ import annotations

from collections.abc import Iterable

from egorec_ros.upload.errors import UploadError


def parse_episodes(text: str) -> list[int]:
    """"1,3-5" -> [1, 3, 4, 5]; a clear error for anything else."""
    out: set[int] = set()
    for part in text.replace(" ", "").split(","):
        lo, sep, hi = part.partition("-")
        try:
            a = int(lo)
            b = int(hi) if sep else a
        except ValueError:
            raise UploadError(f"--episodes {text!r}: {part!r} is not a number or a range like 3-5") from None
        if a < 1 or b < a:
            raise UploadError(f"--episodes {text!r}: {part!r} must be numbers from 1 up, low-high")
        out.update(range(a, b + 1))
    return sorted(out)


def new_episodes(committed: Iterable[int], queued: Iterable[int]) -> list[int]:
    """Committed episodes without a queue entry (whatever its state) for the server."""
    return sorted(set(committed) - set(queued))
