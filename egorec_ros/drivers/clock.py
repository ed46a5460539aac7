"""Host stamps: Unix-epoch nanoseconds read from the monotonic clock.

The offset between ``CLOCK_MONOTONIC`` and Unix time is measured once per process,
so an NTP step during a recording cannot make stamps jump or go backwards, and every
driver of the process stamps on the same clock.
"""
from __future__ import annotations

import time
from functools import lru_cache

_PROBES = 9


def measure_offset_ns() -> int:
    """Unix minus monotonic, from the tightest of a few back-to-back reads."""
    return min((_probe() for _ in range(_PROBES)), key=lambda probe: probe[0])[1]


def _probe() -> tuple[int, int]:
    """(width of the read, its offset)."""
    m0 = time.monotonic_ns()
    u = time.time_ns()
    m1 = time.monotonic_ns()
    return m1 - m0, u - (m0 + m1) // 2


@lru_cache(maxsize=1)
def offset_ns() -> int:
    """The process-wide monotonic -> Unix offset (measured at first use)."""
    return measure_offset_ns()


def unix_ns(monotonic_ns: int) -> int:
    """A monotonic reading as a host stamp."""
    return monotonic_ns + offset_ns()


def now_ns() -> int:
    """The host stamp of now."""
    return time.monotonic_ns() + offset_ns()


class DeviceClock:
    """Maps a device's free-running counter to host stamps.

    Each reading is received some transfer delay after the device stamped it; the smallest
    observed (host read − device time) is the delay-free offset, so a stamp is the device
    time plus that offset: jitter of USB/serial reads does not reach the stamps. The offset
    may rise by ``drift_ppm`` of elapsed time (the two crystals drift apart), a stamp is
    never later than its read, and stamps strictly increase (when a faster read lowers the
    offset, stamps wait for the device time to catch up instead of stepping back). ``wrap`` is the counter's modulus (u32 µs: 2**32).
    """

    def __init__(self, tick_ns: int, wrap: int | None = None, drift_ppm: float = 200.0) -> None:
        self.tick_ns = tick_ns
        self.wrap = wrap
        self.drift = drift_ppm * 1e-6
        self.reset()

    def reset(self) -> None:
        """Forget the device (reconnect: it may have rebooted and restarted its counter)."""
        self._last_raw: int | None = None
        self._unwrapped = 0
        self._offset: int | None = None
        self._offset_at = 0
        self._last_stamp = 0

    def device_ns(self, raw: int) -> int:
        """The counter unwrapped, in ns since the device's counter origin."""
        if self._last_raw is not None and self.wrap is not None:
            half = self.wrap // 2
            self._unwrapped += (raw - self._last_raw + half) % self.wrap - half    # signed: may step back
        else:
            self._unwrapped = raw
        self._last_raw = raw
        return self._unwrapped * self.tick_ns

    def stamp(self, raw: int, read_host_ns: int) -> tuple[int, int]:
        """(host stamp at capture, device time in ns) of a reading received at ``read_host_ns``."""
        dev = self.device_ns(raw)
        seen = read_host_ns - dev
        if self._offset is None:
            self._offset, self._offset_at = seen, dev
        else:
            allowed = self._offset + int((dev - self._offset_at) * self.drift)
            if seen <= allowed:
                self._offset, self._offset_at = seen, dev
            else:
                self._offset, self._offset_at = allowed, dev
        stamp = max(min(dev + self._offset, read_host_ns), self._last_stamp + 1)
        self._last_stamp = stamp
        return stamp, dev
