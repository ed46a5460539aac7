"""Compiled rig -> the writer's ``Declaration`` (devices §6.4, calibration keys §6.5)."""
from __future__ import annotations

import dataclasses
import re

from egorec_ros.rig.model import Device, Rig
from egorec_ros.schema.declaration import Declaration


def declaration(rig: Rig) -> Declaration:
    return Declaration(
        fps=rig.fps,
        columns=rig.columns,
        videos=rig.videos,
        devices=tuple(device_entry(d) for d in rig.devices),
        device_names={slot: d.name for d in rig.devices for slot in d.slots},
        sensors=tuple(d.sensor for d in rig.devices if d.sensor),
        calibration=calibration_plan(rig.devices),
        qa=dataclasses.asdict(rig.qa),
    )


def device_entry(d: Device) -> dict:
    """Compact device entry {key, kind, name, slots} plus the additive 【提案】 fields:
    gloves keep ``sensor_column``; grippers get ``sensor_columns`` and ``rig`` (§6.4)."""
    if d.sensor:
        slots = [d.sensor] if d.info_kind in ("ble_glove", "usb_glove") else []
        return {"key": d.key, "kind": d.info_kind or "data_ble", "name": d.name, "slots": slots,
                "sensor_column": d.sensor}
    entry: dict[str, object] = {"key": d.key, "kind": d.kind, "name": d.name, "slots": list(d.slots)}
    if d.kind == "gripper":  # every observation column the gripper writes, its _ns columns included
        entry["sensor_columns"] = sorted({c for s in d.streams for c in (*s.columns.values(), s.ns_column)
                                          if c and c.startswith("observation.")})
        entry["rig"] = d.rig
    return entry


def calibration_plan(devices: tuple[Device, ...]) -> dict:
    """§6.5: the first device with a calibration is ``head_stereo``; the others are
    ``<first slot without _N>_calibration``."""
    plan: dict = {}
    for d in devices:
        if not d.calibration:
            continue
        key = "head_stereo" if not plan else re.sub(r"_\d+$", "", d.slots[0]) + "_calibration"
        plan[key] = dict(d.calibration)
    return plan
