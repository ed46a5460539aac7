"""The reconnect loop every driver runs on its own thread: open the device, read
until it fails, status ``disconnected``, wait (0.2 s doubling to 2 s, reset once a
session opened), try again; ``stop()`` ends it promptly."""
from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from egorec_ros.drivers.health import Health

FIRST_DELAY_S = 0.2
MAX_DELAY_S = 2.0


@dataclass
class Backoff:
    first: float = FIRST_DELAY_S
    limit: float = MAX_DELAY_S
    _next: float = FIRST_DELAY_S

    def __post_init__(self) -> None:
        self._next = self.first

    def next(self) -> float:
        delay = self._next
        self._next = min(self._next * 2, self.limit)
        return delay

    def reset(self) -> None:
        self._next = self.first


class DeviceLoop:
    """Runs ``session(loop)`` again and again on a thread until stopped.

    A session opens the device, calls ``loop.opened()`` and reads until ``loop.stopping``
    or an error. ``OSError`` (unplug, pipe closed, EOF reported as ``EOFError``) and the
    driver's own ``errors`` mean ``disconnected``; anything else is a bug, and is also
    reported as ``disconnected`` (with its type) rather than killing the thread.
    """

    def __init__(self, name: str, session: Callable[["DeviceLoop"], None], health: Health,
                 backoff: Backoff | None = None) -> None:
        self.name = name
        self.health = health
        self._session = session
        self._backoff = backoff or Backoff()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.delays: list[float] = []          # waits taken, for reports and tests

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def opened(self, detail: str = "") -> None:
        self._backoff.reset()
        self.health.connected(detail)

    def wait(self, seconds: float) -> bool:
        """Sleep unless stopped; True when stopped."""
        return self._stop.wait(seconds)

    def start(self) -> "DeviceLoop":
        self._thread = threading.Thread(target=self.run, name=f"driver-{self.name}", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0, interrupt: Callable[[], object] | None = None) -> None:
        """Stop and join; ``interrupt`` unblocks a session stuck in a read (kill the process,
        close the socket) once the stop flag is set, so nothing is reopened after it."""
        self._stop.set()
        if interrupt is not None:
            interrupt()
        if self._thread is not None:
            self._thread.join(timeout)

    def run(self) -> None:
        while not self._stop.is_set():
            try:
                self._session(self)
                if self._stop.is_set():
                    break
                detail = "device closed the connection"
            except (OSError, EOFError) as exc:
                detail = f"{type(exc).__name__}: {exc}"
            except Exception as exc:   # noqa: BLE001 - a driver thread must survive to reconnect
                detail = f"unexpected {type(exc).__name__}: {exc}"
            self.health.disconnected(detail)
            delay = self._backoff.next()
            self.delays.append(delay)
            if self._stop.wait(delay):
                break
        self.health.disconnected("stopped")


class Driver:
    """start()/stop() of a driver whose device ``self.loop`` reads on its thread."""

    loop: DeviceLoop

    def start(self):
        self.loop.start()
        return self

    def stop(self) -> None:
        self.loop.stop(interrupt=self._interrupt)

    def _interrupt(self) -> None:
        """Unblock a session stuck in a read; by default reads time out by themselves."""
