"""Simulated teleop arm: measured joint positions (state) and commanded ones (action).

The command leads the measurement by a little, as a position controller would; both
are smooth sums of sines, seeded per device."""
from __future__ import annotations

import numpy as np

from egorec_ros.rig.model import Device, StreamSpec
from egorec_ros.sim.plan import Plan, one_clock
from egorec_ros.sim.schedule import Output, Render, Source

COMMAND_LEAD_S = 0.08


def joint_state(device: Device, plan: Plan) -> list[Source]:
    rng = np.random.default_rng([plan.seed_of(device.id), 0x4A4F494E54])
    dims = {int(s.source["dim"]) for s in device.streams}
    dim = max(dims)
    amplitude, w, phase = rng.uniform(0.2, 1.0, dim), 2 * np.pi * rng.uniform(0.05, 0.3, dim), rng.uniform(0, 6.3, dim)

    def render_of(spec: StreamSpec) -> Render:
        n, lead, name = int(spec.source["dim"]), COMMAND_LEAD_S if spec.role == "action" else 0.0, \
            next(iter(spec.columns))

        def render(index: int, t_s: float, noise: np.random.Generator) -> dict[str, np.ndarray]:
            q = amplitude[:n] * np.sin(w[:n] * (t_s + lead) + phase[:n])
            return {name: (q + 1e-3 * noise.standard_normal(n)).astype(np.float32)}
        return render

    return [one_clock(device, plan, [Output(s.id, 4 * int(s.source["dim"]), render_of(s))]) for s in device.streams]
