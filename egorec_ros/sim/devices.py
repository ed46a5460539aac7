"""Device kind -> the sources that simulate it."""
from __future__ import annotations

from typing import Callable

from egorec_ros.rig.kinds import DEVICE_KINDS
from egorec_ros.rig.model import Device, Rig
from egorec_ros.sim import cameras, glove, gripper, joints
from egorec_ros.sim.plan import Plan
from egorec_ros.sim.schedule import Source

BUILDERS: dict[str, Callable[[Device, Plan], list[Source]]] = {
    "uvc": cameras.uvc,
    "d435": cameras.d435,
    "s80m": cameras.s80m,
    "gripper": gripper.gripper,
    "usb_glove": glove.glove,
    "ble_glove": glove.glove,
    "joint_state": joints.joint_state,
}
assert set(BUILDERS) == set(DEVICE_KINDS), "every device kind needs a simulator"


def device_sources(device: Device, plan: Plan) -> list[Source]:
    return BUILDERS[device.kind](device, plan)


def rig_sources(rig: Rig, plan: Plan) -> dict[str, list[Source]]:
    """Sources per device id, after checking the plan against the rig."""
    plan.check(rig)
    return {d.id: device_sources(d, plan) for d in rig.devices}
