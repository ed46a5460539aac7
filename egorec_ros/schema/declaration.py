"""What an episode is declared with before its first row: the writer's whole input
besides the rows and frames. A rig compiles into one (``egorec_ros.rig.declare``);
tests and the converter may build one directly.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from egorec_ros.schema.columns import ColumnSpec


@dataclass(frozen=True)
class VideoSpec:
    """One recorded video stream (an image_key / slot, §4)."""

    key: str
    kind: str                  # "rgb" or "depth"
    width: int
    height: int
    fps: float | None = None   # None: the task fps
    master: str | None = None  # depth: the RGB slot it follows (§4.8)


@dataclass(frozen=True)
class Declaration:
    fps: float
    columns: tuple[ColumnSpec, ...]             # every column the episode may have, in order
    videos: tuple[VideoSpec, ...] = ()
    devices: tuple[Mapping, ...] = ()           # compact device entries (§6.4)
    device_names: Mapping[str, str] = field(default_factory=dict)
    sensors: tuple[str, ...] = ()               # glove sensor columns (§6.4)
    calibration: Mapping[str, Mapping] = field(default_factory=dict)  # keyed per §6.5
    qa: Mapping[str, float] = field(default_factory=dict)  # QA thresholds (the rig's qa: block, egorec_ros.qa)

    def column(self, name: str) -> ColumnSpec:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(f"column {name!r} is not declared for this episode")

    @property
    def slam_specs(self) -> dict[str, dict]:
        """§7.2: trajectory column -> its frame/time/owner declaration."""
        return {c.name: dict(c.extra["slam_spec"]) for c in self.columns if "slam_spec" in c.extra}


def declaration_to_json(decl: Declaration) -> dict:
    """Serialisable form, kept in a staged episode so recovery can finish it alone."""
    return {
        "fps": decl.fps,
        "columns": [c.to_json() for c in decl.columns],
        "videos": [vars(v) for v in decl.videos],
        "devices": [dict(d) for d in decl.devices],
        "device_names": dict(decl.device_names),
        "sensors": list(decl.sensors),
        "calibration": {k: dict(v) for k, v in decl.calibration.items()},
        "qa": dict(decl.qa),
    }


def declaration_from_json(doc: dict) -> Declaration:
    return Declaration(
        fps=float(doc["fps"]),
        columns=tuple(ColumnSpec.from_json(c) for c in doc["columns"]),
        videos=tuple(VideoSpec(**v) for v in doc["videos"]),
        devices=tuple(doc["devices"]),
        device_names=doc["device_names"],
        sensors=tuple(doc["sensors"]),
        calibration=doc["calibration"],
        qa=doc.get("qa", {}),
    )
