"""Smooth seeded 6-DoF motion, and the few quaternion operations it needs (XYZW).

One ``Motion`` per device drives everything that should agree: the camera pan,
the IMU (its derivatives), the SLAM trajectory, a glove's hand orientation.
Sums of a few sinusoids are smooth, bounded and have exact derivatives.
"""
from __future__ import annotations

import numpy as np

GRAVITY = np.array([0.0, 0.0, 9.80665])


def quat_from_rotvec(rotvec: np.ndarray) -> np.ndarray:
    """(..., 3) rotation vectors -> (..., 4) unit quaternions XYZW."""
    angle = np.linalg.norm(rotvec, axis=-1, keepdims=True)
    half = 0.5 * angle
    scale = np.where(angle > 1e-12, np.sin(half) / np.maximum(angle, 1e-12), 0.5)
    return np.concatenate([rotvec * scale, np.cos(half)], axis=-1)


def quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product of XYZW quaternions, broadcasting."""
    ax, ay, az, aw = np.moveaxis(a, -1, 0)
    bx, by, bz, bw = np.moveaxis(b, -1, 0)
    return np.stack([aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw,
                     aw * bw - ax * bx - ay * by - az * bz], axis=-1)


def quat_conj(q: np.ndarray) -> np.ndarray:
    return q * np.array([-1.0, -1.0, -1.0, 1.0])


def quat_rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate vectors v (..., 3) by unit quaternions q (..., 4)."""
    qv = np.concatenate([v, np.zeros(v.shape[:-1] + (1,))], axis=-1)
    return quat_mul(quat_mul(q, qv), quat_conj(q))[..., :3]


class Motion:
    """Position (m, world, z up) and orientation of a device over time (s)."""

    def __init__(self, seed: int, *, reach_m: float = 0.15, turn_rad: float = 0.08, terms: int = 3):
        rng = np.random.default_rng([seed, 0x6D6F74])
        self._origin = rng.uniform(-1.0, 1.0, 3)
        # per axis: `terms` sinusoids; amplitudes fall with frequency, like a person moving
        freq = rng.uniform(0.08, 0.6, (2, 3, terms))
        amp = rng.uniform(0.5, 1.0, (2, 3, terms)) / (1.0 + 2.0 * freq) / terms
        amp[0] *= reach_m
        amp[1] *= turn_rad
        self._w = 2.0 * np.pi * freq
        self._amp = amp
        self._phase = rng.uniform(0.0, 2.0 * np.pi, (2, 3, terms))

    def _wave(self, which: int, t: np.ndarray | float, derivative: int = 0) -> np.ndarray:
        t = np.asarray(t, dtype=np.float64)[..., None, None]
        arg = self._w[which] * t + self._phase[which]
        wave = (np.sin, np.cos, lambda x: -np.sin(x))[derivative](arg)
        return (self._amp[which] * self._w[which] ** derivative * wave).sum(axis=-1)

    def position(self, t: np.ndarray | float) -> np.ndarray:
        return self._origin + self._wave(0, t)

    def acceleration(self, t: np.ndarray | float) -> np.ndarray:
        return self._wave(0, t, derivative=2)

    def rotvec(self, t: np.ndarray | float) -> np.ndarray:
        return self._wave(1, t)

    def quat(self, t: np.ndarray | float) -> np.ndarray:
        return quat_from_rotvec(self.rotvec(t))

    def angular_velocity(self, t: np.ndarray | float, h: float = 1e-4) -> np.ndarray:
        """Body-frame rad/s from the relative rotation over +-h (central difference)."""
        t = np.asarray(t, dtype=np.float64)
        rel = quat_mul(quat_conj(self.quat(t - h)), self.quat(t + h))
        rel = rel * np.sign(rel[..., 3:4] + 1e-300)
        return rel[..., :3] / h  # rel ~ [w*h, 1] for a rotation of w*2h
