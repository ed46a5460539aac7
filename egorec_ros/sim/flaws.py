"""What goes wrong on real devices, as seeded knobs.

Recorder bugs hide in timing: late frames, holes, drifting clocks, a camera that
stops, a glove that reconnects. Each simulated source draws its imperfections
from one ``Flaws``; ``CLEAN`` switches them all off so tests can check exact
schedules, ``DEFAULT`` is a mildly imperfect device, ``incidents`` scripts the
big events (a drifting camera, a stalled camera, a glove disconnect) on a rig.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Mapping, Union

from egorec_ros.rig.kinds import GLOVE_KINDS, StreamKind
from egorec_ros.rig.model import Device, Rig


@dataclass(frozen=True)
class Flaws:
    """Imperfections of one source (a clock-driven producer of one or more streams)."""

    jitter_ms: float = 0.4            # sd of the host capture stamp around the true capture time
    delay_ms: float = 2.0             # transport: base delay capture -> recorder
    delay_per_mb_ms: float = 1.5      # transport: extra per MB of payload (big frames arrive later)
    delay_jitter_ms: float = 1.0      # transport: mean of an exponential extra delay
    spike_prob: float = 0.002         # chance per delivery of a late spike (USB/driver hiccup)
    spike_ms: tuple[float, float] = (100.0, 300.0)
    drop_prob: float = 0.002          # chance per delivery and stream that a sample is lost
    rate_scale: float = 1.0           # real rate / nominal, e.g. 30.84 / 30 for a fast camera clock
    outages: tuple[tuple[float, float], ...] = ()  # (start_s, duration_s): stall / disconnect
    clock_offset_ms: float = 2000.0   # device clock: offset drawn in +-this vs the host clock
    clock_drift_ppm: float = 30.0     # device clock: rate error drawn in +-this
    depth_holes: bool = True          # speckle holes and occlusion shadows in depth maps
    invalid_prob: float = 0.002       # glove IMU: chance per sensor and frame of imu_valid = 0

    def __post_init__(self) -> None:
        for name in ("jitter_ms", "delay_ms", "delay_per_mb_ms", "delay_jitter_ms",
                     "clock_offset_ms", "clock_drift_ppm"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"Flaws.{name} must be a finite number >= 0, got {value!r}")
        for name in ("spike_prob", "drop_prob", "invalid_prob"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"Flaws.{name} is a probability in [0, 1], got {getattr(self, name)!r}")
        lo, hi = self.spike_ms
        if not 0 <= lo <= hi:
            raise ValueError(f"Flaws.spike_ms must be (low, high) with 0 <= low <= high, got {self.spike_ms!r}")
        if not (math.isfinite(self.rate_scale) and 0.5 <= self.rate_scale <= 2.0):
            raise ValueError(f"Flaws.rate_scale is real rate / nominal rate (0.5..2), got {self.rate_scale!r}")
        for window in self.outages:
            if len(window) != 2 or window[1] <= 0 or window[0] < 0:
                raise ValueError(f"Flaws.outages holds (start_s >= 0, duration_s > 0) pairs, got {window!r}")

    def in_outage(self, t_s: float) -> bool:
        return any(start <= t_s < start + length for start, length in self.outages)


CLEAN = Flaws(jitter_ms=0.0, delay_ms=0.0, delay_per_mb_ms=0.0, delay_jitter_ms=0.0, spike_prob=0.0,
              drop_prob=0.0, clock_offset_ms=0.0, clock_drift_ppm=0.0, depth_holes=False, invalid_prob=0.0)
DEFAULT = Flaws()

# One Flaws for every source, or a mapping keyed by device id or stream id ("*" = the rest).
FlawsChoice = Union[Flaws, Mapping[str, Flaws]]


def flaws_for(choice: FlawsChoice, device: str, streams: tuple[str, ...]) -> Flaws:
    """A stream-id key wins over the device key, which wins over "*" (then ``DEFAULT``).

    A source emitting several streams (stereo left/right/depth) uses the first key found
    among its streams, so ``{"ego.left": ...}`` reaches the whole stereo frame set."""
    if isinstance(choice, Flaws):
        return choice
    for key in (*streams, device, "*"):
        if key in choice:
            return choice[key]
    return DEFAULT


def check_flaw_keys(choice: FlawsChoice, rig: Rig) -> None:
    if isinstance(choice, Flaws):
        return
    for key, value in choice.items():
        if not isinstance(value, Flaws):
            raise ValueError(f"flaws[{key!r}] is a {type(value).__name__}; give a Flaws (e.g. "
                             f"dataclasses.replace(DEFAULT, drop_prob=0.01))")
    known = {d.id for d in rig.devices} | set(rig.streams) | {"*"}
    unknown = sorted(set(choice) - known)
    if unknown:
        raise ValueError(f"flaws for unknown devices/streams {unknown} in rig {rig.name!r}; "
                         f"use a device id or stream id of: {', '.join(sorted(known))}")


def incidents(rig: Rig, seconds: float, base: Flaws = DEFAULT) -> dict[str, Flaws]:
    """Script the big events on a rig, keyed by device id.

    The first camera runs at 30.84 fps instead of 30; the second camera (the first if
    there is only one) stalls for up to 2 s at 40 % of the run; the first glove
    disconnects for up to 1.5 s at 60 % of the run."""
    out: dict[str, Flaws] = {}
    cameras = [d for d in rig.devices if _has_video(d)]
    gloves = [d for d in rig.devices if d.kind in GLOVE_KINDS]
    if cameras:
        out[cameras[0].id] = replace(base, rate_scale=30.84 / 30.0)
        stalled = cameras[1] if len(cameras) > 1 else cameras[0]
        out[stalled.id] = replace(out.get(stalled.id, base),
                                  outages=((0.4 * seconds, min(2.0, 0.2 * seconds)),))
    if gloves:
        out[gloves[0].id] = replace(base, outages=((0.6 * seconds, min(1.5, 0.15 * seconds)),))
    return out


def _has_video(device: Device) -> bool:
    return any(s.kind is StreamKind.VIDEO for s in device.streams)
