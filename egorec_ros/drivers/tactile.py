"""Finger forces of a UMI gripper. They come from a separate tactile-camera process,
so this is a pluggable source: whatever reads that process (a pipe, a socket, a ROS
topic bridge) calls ``TactileForces.reading``; it publishes WrenchStamped (N) and our
ForceMatrix (mN) and tells the gripper the finger normal forces for the grip latch."""
from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from egorec_ros.messages.payloads.forces import force_matrix_message, wrench_message
from egorec_ros.drivers import clock
from egorec_ros.drivers.health import Health
from egorec_ros.drivers.publish import Publish, header, store

SIDES = ("left", "right")
MATRIX_SHAPE = (250, 250, 3)
BAD_FORCE = "force_not_finite"
BAD_MATRIX = "matrix_shape"


@dataclass(frozen=True)
class TactileTopics:
    left_force: str | None = None
    right_force: str | None = None
    left_force_matrix: str | None = None
    right_force_matrix: str | None = None


class TactileForces:
    """Latest normal force per finger + publishing. Thread-safe: sources may call from any thread."""

    def __init__(self, topics: TactileTopics, publish: Publish, health: Health | None = None,
                 frame_id: str = "") -> None:
        self.topics, self._publish, self.frame_id = topics, publish, frame_id
        self.health = health or Health("tactile")
        self._fz = {side: 0.0 for side in SIDES}
        self._lock = threading.Lock()
        self.listeners: list[Callable[[float], object]] = []

    def fz_max_mn(self) -> float:
        with self._lock:
            return max(self._fz.values())

    def reading(self, side: str, force_mn: np.ndarray, matrix_mn: np.ndarray | None = None,
                stamp_ns: int | None = None) -> None:
        """One reading of finger ``side``: force (fx, fy, fz) in mN, optional (250, 250, 3) matrix in mN."""
        if side not in SIDES:
            raise ValueError(f"tactile side {side!r} is not one of {SIDES}")
        stamp = clock.now_ns() if stamp_ns is None else stamp_ns
        force = np.asarray(force_mn, dtype=np.float32).reshape(3)
        if not np.all(np.isfinite(force)):
            self.health.drop(BAD_FORCE)
            return
        with self._lock:
            self._fz[side] = float(force[2])
        topic = getattr(self.topics, f"{side}_force")
        if topic:
            self._publish(topic, wrench_message(store(), {"force": force}, header(stamp, self.frame_id)))
            self.health.sent()
        if matrix_mn is not None:
            self._matrix(side, np.asarray(matrix_mn, dtype=np.float32), stamp)

    def _matrix(self, side: str, matrix: np.ndarray, stamp: int) -> None:
        if matrix.shape != MATRIX_SHAPE or not np.all(np.isfinite(matrix)):
            self.health.drop(BAD_MATRIX)
            return
        topic = getattr(self.topics, f"{side}_force_matrix")
        if topic:
            self._publish(topic, force_matrix_message(store(), {"matrix": matrix}, header(stamp, self.frame_id)))
            self.health.sent()
