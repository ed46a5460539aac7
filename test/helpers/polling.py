"""Polling for a condition another thread or process makes true (a subscriber matched, a file uploaded)."""
from __future__ import annotations

import time
from typing import Callable


def until(what: Callable[[], object], timeout_s: float = 20.0, poll_s: float = 0.05) -> bool:
    """Whether ``what()`` became true within ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if what():
            return True
        time.sleep(poll_s)
    return bool(what())
