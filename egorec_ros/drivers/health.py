"""What a driver tells about itself: status ok/disconnected, frames published, bad
frames counted per reason, reconnects."""
from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

OK = "ok"
DISCONNECTED = "disconnected"


class BadFrame(ValueError):
    """Bytes that do not make a valid frame; ``reason`` is the Health.bad counter it goes to."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(detail or reason)
        self.reason = reason


@dataclass
class Health:
    """Thread-safe counters of one driver; ``on_status`` hears every status change."""

    device: str
    on_status: Callable[[str, str], object] | None = None     # (status, detail)
    status: str = DISCONNECTED
    detail: str = "not opened yet"
    published: int = 0
    reconnects: int = 0
    bad: Counter = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _opened_once: bool = False

    def connected(self, detail: str = "") -> None:
        with self._lock:
            if self._opened_once:
                self.reconnects += 1
            self._opened_once = True
        self._set(OK, detail)

    def disconnected(self, detail: str) -> None:
        self._set(DISCONNECTED, detail)

    def drop(self, reason: str, n: int = 1) -> None:
        """Count ``n`` bad frames (or bytes skipped while resynchronising) of ``reason``."""
        with self._lock:
            self.bad[reason] += n

    def sent(self, n: int = 1) -> None:
        with self._lock:
            self.published += n

    def snapshot(self) -> dict:
        with self._lock:
            return {"device": self.device, "status": self.status, "detail": self.detail,
                    "published": self.published, "reconnects": self.reconnects, "bad": dict(self.bad)}

    def _set(self, status: str, detail: str) -> None:
        with self._lock:
            changed = status != self.status
            self.status, self.detail = status, detail
        if changed and self.on_status is not None:
            self.on_status(status, detail)
