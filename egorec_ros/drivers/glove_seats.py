"""Which glove writes which column (left_glove / right_glove), shared by the USB and
BLE glove drivers of one recorder: only two seats exist, so a third glove is refused
(the reference collector once mapped it onto left_glove and two gloves overwrote each
other, §4.5/§5.2). A glove the rig does not name is refused and reported too."""
from __future__ import annotations

import threading
from collections.abc import Mapping

from egorec_ros.errors import UserError

SEATS = ("left_glove", "right_glove")


class GloveRefused(UserError, RuntimeError):
    """A glove that cannot be given a column; the message says which and what to do."""


class GloveSeats:
    def __init__(self, bindings: Mapping[str, str] | None = None, *, allow_unnamed: bool = False) -> None:
        """``bindings``: device key -> sensor (from the rig); ``allow_unnamed``: give free
        seats to gloves the rig does not name (device discovery, not recording)."""
        for key, sensor in (bindings or {}).items():
            if sensor not in SEATS:
                raise ValueError(f"glove {key}: sensor {sensor!r} is not one of {', '.join(SEATS)}")
        self._bindings = dict(bindings or {})
        self._allow_unnamed = allow_unnamed
        self._taken: dict[str, str] = {}         # sensor -> key
        self._lock = threading.Lock()

    @classmethod
    def from_rig(cls, rig) -> "GloveSeats":
        return cls({d.key: d.sensor for d in rig.devices if d.sensor in SEATS})

    def claim(self, key: str) -> str:
        """The seat of glove ``key``; GloveRefused when none is free or the rig does not name it."""
        with self._lock:
            held = next((s for s, k in self._taken.items() if k == key), None)
            if held:
                return held
            sensor = self._bindings.get(key)
            if sensor is None:
                if not self._allow_unnamed:
                    raise GloveRefused(f"glove {key} is not in the rig (it names {self._named()}); "
                                       "add it to the rig or unplug it")
                sensor = next((s for s in SEATS if s not in self._taken), None)
            if sensor is None or sensor in self._taken:
                raise GloveRefused(f"glove {key} refused: {' and '.join(f'{s} ({k})' for s, k in self._taken.items())} "
                                   "are taken and only two glove columns exist; unplug one glove")
            self._taken[sensor] = key
            return sensor

    def release(self, key: str) -> None:
        with self._lock:
            for sensor in [s for s, k in self._taken.items() if k == key]:
                del self._taken[sensor]

    def _named(self) -> str:
        return ", ".join(f"{k} as {s}" for k, s in self._bindings.items()) or "no gloves"
