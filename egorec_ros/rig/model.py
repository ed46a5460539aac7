"""The compiled rig: devices, their streams, and everything the writer declares.

A rig file (YAML, see ``load.py``) is compiled once into these frozen objects; the
recorder, the converter, simulated devices and the writer all read them, so a name
on disk is decided in exactly one place (``compile.py``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Mapping

from egorec_ros.qa.thresholds import QaThresholds
from egorec_ros.rig.kinds import StreamKind
from egorec_ros.rig.options import StreamOptions, parse_options
from egorec_ros.schema.columns import ColumnSpec
from egorec_ros.schema.declaration import VideoSpec


@dataclass(frozen=True)
class StreamSpec:
    """One input stream: a ROS topic (or simulated source) feeding one role of a device."""

    id: str                            # "<device>.<role>", the Sample.stream value
    device: str
    role: str
    kind: StreamKind
    topic: str | None = None
    slot: str | None = None            # VIDEO/DEPTH: image_key
    columns: Mapping[str, str] = field(default_factory=dict)
    # LATEST: payload field -> column; TRAJECTORY: {"points", "ns"}; IMU: {"ts", "samples"}
    ns_column: str | None = None       # LATEST: scalar capture-time column (forces, matrices)
    status: str | None = None          # id of the status.<id> column this stream keeps alive
    master: str | None = None          # DEPTH: master video slot
    source: Mapping[str, Any] = field(default_factory=dict)  # the rig file's stream options (checked)

    @cached_property
    def options(self) -> StreamOptions:
        """The typed view of ``source`` (``egorec_ros.rig.options``; checked at rig compile)."""
        return parse_options(self.kind, self.source)


@dataclass(frozen=True)
class Device:
    id: str
    kind: str
    key: str
    name: str
    role: str | None = None
    rig: int | None = None
    hand: str | None = None
    sensor: str | None = None          # gloves: left_glove / right_glove
    slots: tuple[str, ...] = ()        # every slot the device registers (§6.4)
    streams: tuple[StreamSpec, ...] = ()
    calibration: Mapping | None = None
    info_kind: str | None = None       # devices[].kind written to info.json


@dataclass(frozen=True)
class Rig:
    name: str
    fps: float
    devices: tuple[Device, ...]
    columns: tuple[ColumnSpec, ...]     # every column an episode of this rig can have, in order
    videos: tuple[VideoSpec, ...]
    master_slot: str | None             # its frame stamps give hardware_ns
    forensic_slot: str | None = None    # the D435 whose chain fills depth_ns/rgb_dup/... (§4.3)
    qa: QaThresholds = QaThresholds()    # the rig file's qa: block over the defaults

    @cached_property
    def streams(self) -> dict[str, StreamSpec]:
        return {s.id: s for d in self.devices for s in d.streams}
