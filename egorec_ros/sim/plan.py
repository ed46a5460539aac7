"""What a simulation run was asked for: seed, flaws and video sizes, resolved per device/stream."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, TypeGuard, Union

import numpy as np

from egorec_ros.rig.kinds import DEVICE_KINDS, StreamKind
from egorec_ros.rig.model import Device, Rig, StreamSpec
from egorec_ros.sim.flaws import DEFAULT, Flaws, FlawsChoice, check_flaw_keys, flaws_for
from egorec_ros.sim.schedule import Output, Source, stable_id

# (width, height) for every video/depth stream, or per slot name / stream id ("*" = the rest)
Sizes = Union[None, tuple[int, int], Mapping[str, tuple[int, int]]]


@dataclass(frozen=True)
class Plan:
    seed: int = 0
    flaws: FlawsChoice = DEFAULT
    sizes: Sizes = None

    def check(self, rig: Rig) -> None:
        """Refuse keys that name nothing in the rig and sizes a 4:2:0 encoder cannot take."""
        check_flaw_keys(self.flaws, rig)
        if self.sizes is None:
            return
        wanted = list(self.sizes.items()) if isinstance(self.sizes, Mapping) else [("*", self.sizes)]
        pictures = {k for s in rig.streams.values() if s.kind in (StreamKind.VIDEO, StreamKind.DEPTH)
                    for k in (s.id, s.slot) if k is not None}
        for key, size in wanted:
            if key != "*" and key not in pictures:
                raise ValueError(f"sizes: {key!r} is not a video/depth slot or stream of rig {rig.name!r}; "
                                 f"known: {', '.join(sorted(pictures))}")
            if not (_is_size(size) and size[0] > 0 and size[1] > 0 and size[0] % 2 == 0 and size[1] % 2 == 0):
                raise ValueError(f"sizes[{key!r}] = {size!r}: give (width, height) as positive even integers")

    def flaws_of(self, device: Device, streams: tuple[str, ...]) -> Flaws:
        return flaws_for(self.flaws, device.id, streams)

    def size(self, spec: StreamSpec) -> tuple[int, int]:
        if _is_size(self.sizes):
            return int(self.sizes[0]), int(self.sizes[1])
        if isinstance(self.sizes, Mapping):
            for key in (spec.id, spec.slot, "*"):
                if key is not None and key in self.sizes:
                    w, h = self.sizes[key]
                    return int(w), int(h)
        return int(spec.source["width"]), int(spec.source["height"])

    def seed_of(self, name: str) -> int:
        """A seed for one device's world (scene, motion), independent of the other devices."""
        return int(np.random.SeedSequence([self.seed, stable_id(name)]).generate_state(1)[0])


def rate_hz(device: Device, spec: StreamSpec) -> float:
    """The rig's fps for the stream if it gives one, else the role's nominal rate."""
    return float(spec.source.get("fps") or DEVICE_KINDS[device.kind][spec.role].rate_hz)


def streams_by_role(device: Device) -> dict[str, StreamSpec]:
    return {s.role: s for s in device.streams}


def one_clock(device: Device, plan: Plan, outputs: list[Output], *, sensor_hz: float | None = None,
              burst: int = 1) -> Source:
    """Outputs sampled together: the rate of the first stream, flaws looked up by all of them."""
    ids = tuple(o.stream for o in outputs)
    first = next(s for s in device.streams if s.id == ids[0])
    return Source(device.id, tuple(outputs), rate_hz(device, first), plan.flaws_of(device, ids),
                  sensor_hz=sensor_hz, burst=burst)


def _is_size(value: object) -> TypeGuard[tuple[int, int]]:
    return (isinstance(value, (tuple, list)) and len(value) == 2
            and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value))
