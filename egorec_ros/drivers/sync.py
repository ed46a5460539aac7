"""Finding the next frame in a byte stream after junk or a bad frame: drop (and count)
everything before the frame's start marker."""
from __future__ import annotations

from collections.abc import Callable


def skip_to_marker(buf: bytearray, marker: bytes, count_bad: Callable[[str, int], object], reason: str) -> bool:
    """Delete the bytes before ``marker`` from ``buf``, counting them under ``reason``.

    True when ``buf`` now starts with the marker; False when it holds no marker (then only
    a byte that may begin one is kept, for the next read to complete)."""
    start = buf.find(marker)
    if start < 0:
        keep = 1 if buf[-1:] == marker[:1] else 0
        if len(buf) - keep:
            count_bad(reason, len(buf) - keep)
            del buf[:len(buf) - keep]
        return False
    if start:
        count_bad(reason, start)
        del buf[:start]
    return True
