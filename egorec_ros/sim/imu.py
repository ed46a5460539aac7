"""A stereo camera's IMU: 200 Hz [ax, ay, az, gx, gy, gz] (m/s^2, rad/s, float32), body frame.

Real SDKs deliver IMU samples in packets, not one by one: ``BURST`` samples, each
with its own capture stamp, arrive together. That is what makes "IMU samples in
(t_{i-1}, t_i]" windows interesting for the assembler.
"""
from __future__ import annotations

import numpy as np

from egorec_ros.rig.model import Device, StreamSpec
from egorec_ros.sim.motion import GRAVITY, Motion, quat_conj, quat_rotate
from egorec_ros.sim.plan import Plan, one_clock
from egorec_ros.sim.schedule import Output, Source

BURST = 10
NOISE_SD = np.array([0.02, 0.02, 0.02, 0.002, 0.002, 0.002])   # white noise per sample
BIAS = np.array([0.05, 0.05, 0.05, 0.003, 0.003, 0.003])       # constant bias bound per axis


def imu_source(device: Device, spec: StreamSpec, motion: Motion, plan: Plan) -> Source:
    bias = np.random.default_rng([plan.seed_of(device.id), 0x494D55]).uniform(-1.0, 1.0, 6) * BIAS

    def render(index: int, t_s: float, rng: np.random.Generator) -> np.ndarray:
        specific_force = quat_rotate(quat_conj(motion.quat(t_s)), motion.acceleration(t_s) + GRAVITY)
        reading = np.concatenate([specific_force, motion.angular_velocity(t_s)])
        return (reading + bias + rng.standard_normal(6) * NOISE_SD).astype(np.float32)

    return one_clock(device, plan, [Output(spec.id, 24, render, device_clock=True)], burst=BURST)
