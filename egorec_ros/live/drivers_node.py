"""The drivers node, on any transport: runs the driver cores of a rig's devices and publishes
their messages on the rig's topics, and their health on ``/diagnostics`` (1 Hz).

What runs comes from ``driver_plan.plan``: a device that is not plugged in (or not placed)
is reported and the others run; a plugged device the rig does not name is reported and not
used; a driver that cannot start (a glove without a seat, a rig that would make the recorder
subscribe the wrong type) is reported the same way. Status changes and new bad frames are
logged when they happen. ``close()`` stops every driver (ends SDK / SLAM processes).

``egorec drivers`` runs it over DDS; ``ros2 run egorec_ros drivers`` over rclpy.
"""
from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from egorec_ros.drivers.glove_seats import GloveRefused, GloveSeats
from egorec_ros.live.diagnostics import DIAGNOSTIC_ARRAY, DIAGNOSTICS_TOPIC, diagnostic_array
from egorec_ros.live.driver_diagnostics import bad_frames, driver_status, not_in_rig, not_running
from egorec_ros.live.driver_plan import Plan, Start
from egorec_ros.live.driver_publish import TransportPublish
from egorec_ros.live.driver_start import build
from egorec_ros.rig.compile import RigError
from egorec_ros.rig.model import Rig
from egorec_ros.transport.base import DEFAULT, Transport

DEFAULT_NAME = "egorec_drivers"


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class DriversNode:
    def __init__(self, rig: Rig, transport: Transport, plan: Plan, *, name: str = DEFAULT_NAME,
                 period_s: float = 1.0, log: Callable[[str], None] = _stderr) -> None:
        self.rig, self.plan, self.name, self.log = rig, plan, name.strip("/"), log
        self.publish = TransportPublish(transport)
        self.failed: list[tuple[str, str]] = list(plan.missing)
        self.drivers: dict[str, tuple[Start, Any]] = {}
        seats = GloveSeats.from_rig(rig)
        for start in plan.starts:
            try:
                driver = build(rig, start, self.publish, seats, self._on_status(start.name))
            except (RigError, GloveRefused) as exc:
                self.failed.append((start.name, str(exc)))
                continue
            self.drivers[start.name] = (start, driver)
        self._diag = transport.publisher(DIAGNOSTICS_TOPIC, DIAGNOSTIC_ARRAY, DEFAULT)
        self._period_s = period_s
        self._bad_seen: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._report_loop, name="egorec-drivers-diag", daemon=True)

    def start(self) -> DriversNode:
        for line in self.summary():
            self.log(line)
        for _, driver in self.drivers.values():
            driver.start()
        self._thread.start()
        return self

    def summary(self) -> list[str]:
        lines = [f"rig {self.rig.name}: {len(self.drivers)} drivers"]
        lines += [f"  {name}: {start.what} on {_where(start)}" for name, (start, _) in self.drivers.items()]
        lines += [f"  {name}: NOT RUNNING: {why}" for name, why in self.failed]
        lines += [f"  {dev}: driven by {who}" for dev, who in self.plan.upstream]
        lines += [f"  {f.key} at {f.where}: plugged in, NOT IN THE RIG: not used" for f in self.plan.unused]
        return lines

    def report(self) -> None:
        """Publish the diagnostics now (the loop does it every period); log new bad frames."""
        statuses = []
        for name, (start, driver) in self.drivers.items():
            snap = driver.health.snapshot()
            total = sum(snap["bad"].values())
            new_bad = total - self._bad_seen.get(name, 0)
            self._bad_seen[name] = total
            if new_bad:
                self.log(f"{name}: {new_bad} bad frames ({bad_frames(snap['bad'])} in all)")
            statuses.append(driver_status(self.name, name, snap, _where(start), new_bad))
        statuses += [not_running(self.name, name, why) for name, why in self.failed]
        statuses += [not_in_rig(self.name, found) for found in self.plan.unused]
        self._diag.publish(diagnostic_array(time.time_ns(), self.name, statuses))

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        for _, driver in self.drivers.values():
            driver.stop()
        for name, (_, driver) in self.drivers.items():
            snap = driver.health.snapshot()
            self.log(f"{name}: {snap['published']} published, {snap['reconnects']} reconnects, "
                     f"bad frames: {bad_frames(snap['bad']) or 'none'}")

    def _on_status(self, name: str) -> Callable[[str, str], None]:
        return lambda status, detail: self.log(f"{name}: {status} ({detail})")

    def _report_loop(self) -> None:
        while not self._stop.wait(self._period_s):
            try:
                self.report()
            except Exception as exc:  # noqa: BLE001 - diagnostics must never stop the drivers
                self.log(f"diagnostics: {exc!r}")


def _where(start: Start) -> str:
    return start.where if isinstance(start.where, str) else " ".join(start.where)
