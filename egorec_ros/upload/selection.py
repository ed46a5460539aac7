"""Which episodes `egorec upload` sends: ``--episodes 1,3-5`` (1-based numbers, §1.3) or every
committed episode that has no entry for that server yet (``--all-new``, the default)."""
from __future__ import annotations

from collections.abc import Iterable

from egorec_ros.layout.numbering import parse_episode_list
from egorec_ros.upload.errors import UploadError


def parse_episodes(text: str) -> list[int]:
    """``--episodes`` ("1,3-5" -> [1, 3, 4, 5]); a one-line UploadError naming the bad part."""
    try:
        return parse_episode_list(text)
    except ValueError as exc:
        raise UploadError(f"--episodes: {exc}") from None


def new_episodes(committed: Iterable[int], queued: Iterable[int]) -> list[int]:
    """Committed episodes without a queue entry (whatever its state) for the server."""
    return sorted(set(committed) - set(queued))
