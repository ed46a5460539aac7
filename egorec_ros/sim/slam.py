"""SLAM trajectory points [t, x, y, z, qx, qy, qz, qw] (float64) from a device's motion.

``t`` is on the sensor clock: seconds since the SLAM epoch, never host time. Its
offset to the host stamp is a constant (the epoch) plus the host's stamping jitter,
which is exactly why the spec pairs points by ``*_ns`` and never by fitting ``t``.
"""
from __future__ import annotations

import numpy as np

from egorec_ros.rig.model import StreamSpec
from egorec_ros.sim.motion import Motion
from egorec_ros.sim.schedule import Output

LATENCY_MS = 25.0      # tracking time between the camera frame and the published pose
POINT_BYTES = 8 * 8


def epoch_offset_s(spec: StreamSpec, seed: int) -> float:
    """Sensor-clock time at the run start: ~0 when the epoch is the first frame, the time
    since ENTER was pressed (or since boot) otherwise."""
    epoch = spec.source.get("slam_spec", {}).get("time", {}).get("epoch", "first_frame")
    if epoch == "first_frame":
        return 0.0
    rng = np.random.default_rng([seed, 0x45504F4348])
    return float(rng.uniform(1.0, 20.0) if epoch == "enter_press" else rng.uniform(100.0, 3000.0))


def slam_output(spec: StreamSpec, motion: Motion, seed: int) -> Output:
    t0 = epoch_offset_s(spec, seed)

    def render(index: int, t_s: float, rng: np.random.Generator) -> np.ndarray:
        return np.concatenate([[t0 + t_s], motion.position(t_s), motion.quat(t_s)])

    return Output(spec.id, POINT_BYTES, render, latency_ms=LATENCY_MS)
