"""Simulated UMI gripper: RGB, finger forces, force matrices, state and SLAM.

One seeded grip cycle (open, close, squeeze, hold, release) drives all streams so
they agree: while squeezing, the fingers report force, the state says gripped,
and contact patches appear on the 250x250x3 force matrices. Outside contact a
matrix is all zeros (the sensor has a deadband): like real tactile data it is
mostly empty and compresses well, unlike white noise.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from egorec_ros.codecs.force_matrix import SHAPE as MATRIX_SHAPE
from egorec_ros.rig.model import Device, StreamSpec
from egorec_ros.sim.cameras import rgb_output, world
from egorec_ros.sim.plan import Plan, one_clock, streams_by_role
from egorec_ros.sim.schedule import Output, Render, Source
from egorec_ros.sim.slam import slam_output

MAX_GRIP_MN = 9000.0        # total squeeze at full grip
MATRIX_PEAK_MN = 400.0      # per taxel at the centre of a contact patch, at full grip
MATRIX_DEADBAND_MN = 2.0
MATRIX_NOISE_MN = 0.3       # taxel noise inside a contact (outside, the deadband hides it)
SIDES = ("left", "right")


class GripCycle:
    """Closure in [0, 1] and squeeze force (mN) over time."""

    def __init__(self, seed: int):
        rng = np.random.default_rng([seed, 0x47524950])
        self._w = 2.0 * np.pi * rng.uniform(0.1, 0.25)
        self._phase = rng.uniform(0.0, 2.0 * np.pi)

    def at(self, t_s: float) -> tuple[float, float]:
        s = float(np.sin(self._w * t_s + self._phase))
        closure = min(max(s + 0.3, 0.0), 1.0)               # fingers touch the object at s = 0.7
        return closure, MAX_GRIP_MN * min(max((s - 0.7) / 0.3, 0.0), 1.0)


class ContactPatches:
    """Two patches per pad wandering slowly; shear follows the patch motion.

    Rendered for the recorder's own process at 30 Hz per pad, so it must cost little: each
    Gaussian is the outer product of two 1-D profiles (2 x 157 exps, not 157²), and the taxel
    noise is a window of a noise bank drawn once per pad at a random offset per frame (one
    draw, not 74 k normals). 2.7 -> ~0.4 ms a contact frame (bench/bench_sim.py)."""

    NOISE_BANK = (2 * MATRIX_SHAPE[0], 2 * MATRIX_SHAPE[1], 3)

    def __init__(self, seed: int):
        rng = np.random.default_rng([seed, 0x5041544348])
        self._centre = rng.uniform(70.0, 180.0, (2, 2))
        self._sigma = rng.uniform(14.0, 26.0, 2)
        self._gain = rng.uniform(0.6, 1.0, 2)
        self._w = 2.0 * np.pi * rng.uniform(0.05, 0.2, (2, 2))
        self._phase = rng.uniform(0.0, 2.0 * np.pi, (2, 2))
        self._noise = (MATRIX_NOISE_MN * rng.standard_normal(self.NOISE_BANK, dtype=np.float32))

    def matrix(self, t_s: float, force_mn: float, rng: np.random.Generator) -> np.ndarray:
        out = np.zeros(MATRIX_SHAPE, dtype=np.float32)
        if force_mn <= 0.0:
            return out
        centre = self._centre + 25.0 * np.sin(self._w * t_s + self._phase)
        drift = 25.0 * self._w * np.cos(self._w * t_s + self._phase)          # taxels/s, drives shear
        offsets = rng.integers(0, MATRIX_SHAPE[0], 4)
        touched = []
        for i, ((cy, cx), sigma, gain, (vy, vx)) in enumerate(zip(centre, self._sigma, self._gain, drift)):
            r = int(3 * sigma)
            y0, y1 = max(0, int(cy) - r), min(MATRIX_SHAPE[0], int(cy) + r + 1)
            x0, x1 = max(0, int(cx) - r), min(MATRIX_SHAPE[1], int(cx) + r + 1)
            k = np.float32(-0.5 / sigma ** 2)
            gy = np.exp(k * (np.arange(y0, y1, dtype=np.float32) - np.float32(cy)) ** 2)
            gx = np.exp(k * (np.arange(x0, x1, dtype=np.float32) - np.float32(cx)) ** 2)
            bump = np.multiply.outer(gy, gx)
            fz = bump * np.float32(MATRIX_PEAK_MN * gain * force_mn / MAX_GRIP_MN)
            oy, ox = offsets[2 * i], offsets[2 * i + 1]
            noise = self._noise[oy:oy + y1 - y0, ox:ox + x1 - x0]
            inside = bump > 0.01
            view = out[y0:y1, x0:x1]
            for c, scale in enumerate((0.05 * vx / sigma, 0.05 * vy / sigma, 1.0)):
                channel = fz * np.float32(scale) if scale != 1.0 else fz
                channel += noise[..., c] * inside
                view[..., c] += channel
            touched.append((slice(y0, y1), slice(x0, x1)))
        for region in touched:                   # the deadband, only where a patch can be
            view = out[region]
            view[np.abs(view) < MATRIX_DEADBAND_MN] = 0.0
        return out


def gripper(device: Device, plan: Plan) -> list[Source]:
    roles = streams_by_role(device)
    seed = plan.seed_of(device.id)
    scene, motion = world(device, plan)
    cycle = GripCycle(seed)

    def finger_force(spec: StreamSpec) -> Render:
        side = SIDES.index(spec.role.split("_")[0])

        def render(index: int, t_s: float, rng: np.random.Generator) -> dict[str, np.ndarray]:
            squeeze = cycle.at(t_s)[1]
            shear = 0.08 * squeeze * np.sin(np.array([0.7, 1.1]) * t_s + side)
            force = np.array([shear[0], shear[1], 0.5 * squeeze * (0.98 + 0.04 * side)])
            return {"force": (force + rng.standard_normal(3) * 15.0).astype(np.float32)}
        return render

    def matrix(spec: StreamSpec) -> Render:
        pads = ContactPatches(plan.seed_of(spec.id))

        def render(index: int, t_s: float, rng: np.random.Generator) -> dict[str, np.ndarray]:
            return {"matrix": pads.matrix(t_s, cycle.at(t_s)[1], rng)}
        return render

    def state(spec: StreamSpec) -> Render:
        def render(index: int, t_s: float, rng: np.random.Generator) -> dict[str, np.ndarray]:
            closure, squeeze = cycle.at(t_s)
            fz = squeeze + 20.0 * float(rng.standard_normal()) if squeeze > 0 else 0.0
            return {"state": np.array([100.0 * (1.0 - closure), float(squeeze > 0), fz], dtype=np.float32)}
        return render

    def outputs(role_names: list[str], render_of: Callable[[StreamSpec], Render], nbytes: int) -> list[Output]:
        return [Output(roles[r].id, nbytes, render_of(roles[r])) for r in role_names if r in roles]

    clocks = [
        [rgb_output(device, roles["rgb"], plan, scene, motion, device_clock=True)],
        outputs([f"{s}_force" for s in SIDES], finger_force, 3 * 4),              # one packet, both fingers
        outputs([f"{s}_force_matrix" for s in SIDES], matrix, int(np.prod(MATRIX_SHAPE)) * 4),  # one pump
        outputs(["state"], state, 3 * 4),
        # the pose comes from the gripper's own stereo camera (not recorded), on its own clock
        [slam_output(roles["slam"], motion, seed)] if "slam" in roles else [],
    ]
    return [one_clock(device, plan, group) for group in clocks if group]
