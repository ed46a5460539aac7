"""The UMI gripper control board's text protocol (ESP32-S3, 115200 baud), ROS-free.

Lines end in ``\\r\\n``. The host sends ``?`` until the board answers a line starting
``STATE``; commands are answered by a known reply prefix (``COMMANDS``). STATE lines
carry ``ST`` (state), ``PCT`` (opening %), ``GRIP`` and ``RAW`` (the AS5048A angle) as
``KEY=value`` tokens (``:`` accepted too, separated by spaces or commas).

Grip latch: latched when ST ∈ {1, 2} and the larger finger normal force (from the
tactile source) is ≥ 300 mN; released after 3 consecutive readings with PCT < 20.
Gripper state = [pct, latched, max(fz_L, fz_R)].
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from egorec_ros.drivers.health import BadFrame

HANDSHAKE = "?"
STATE_PREFIX = "STATE"
COMMANDS = {"QF": "FAYS_SERIAL:", "C": "OK CONNECT", "I": "OK INIT", "F": "OK READY", "S": "OK START",
            "E": "OK ERROR", "R": "OK ASR", "G": "AS5048A"}
SERIAL_REPLY = COMMANDS["QF"]
LATCH_STATES = (1, 2)
LATCH_FZ_MN = 300.0
RELEASE_PCT = 20.0
RELEASE_READINGS = 3
PCT_RANGE = (-5.0, 105.0)          # a little slack around 0..100 for calibration wobble
MAX_LINE = 512

BAD_STATE = "state_malformed"
BAD_RANGE = "out_of_range"
BAD_LINE = "line_unknown"
BAD_REPLY = "unexpected_reply"
BAD_TEXT = "not_text"
BAD_LONG = "line_too_long"

_TOKEN = re.compile(r"([A-Za-z_]+)\s*[=:]\s*([-+0-9.eE]+)")


def encode(command: str) -> bytes:
    return f"{command}\r\n".encode("ascii")


@dataclass(frozen=True, slots=True)
class State:
    st: int
    pct: float
    grip: int
    raw: int


def parse_state(line: str) -> State:
    """A STATE line -> State; BadFrame(reason) when a field is missing or out of range."""
    fields = {k.upper(): v for k, v in _TOKEN.findall(line[len(STATE_PREFIX):])}
    try:
        st, pct = int(fields["ST"]), float(fields["PCT"])
        grip, raw = int(float(fields.get("GRIP", "0"))), int(float(fields.get("RAW", "0")))
    except (KeyError, ValueError) as exc:
        raise BadFrame(BAD_STATE, f"STATE line {line!r}: {exc}") from None
    if not math.isfinite(pct) or not PCT_RANGE[0] <= pct <= PCT_RANGE[1] or not 0 <= raw < 1 << 14:
        raise BadFrame(BAD_RANGE, f"STATE line {line!r}: PCT {pct} or RAW {raw} out of range")
    return State(st, pct, grip, raw)


class LineSplitter:
    """Bytes -> text lines; undecodable and endless lines are counted and dropped."""

    def __init__(self, count_bad) -> None:
        self._buf = bytearray()
        self._bad = count_bad

    def feed(self, data: bytes) -> list[str]:
        self._buf += data
        *lines, rest = self._buf.split(b"\n")
        self._buf = bytearray(rest)
        if len(self._buf) > MAX_LINE:
            self._bad(BAD_LONG)
            self._buf.clear()
        out = []
        for raw in lines:
            try:
                text = raw.decode("ascii").strip()
            except UnicodeDecodeError:
                self._bad(BAD_TEXT)
                continue
            if text:
                out.append(text)
        return out


class GripLatch:
    def __init__(self) -> None:
        self.latched = False
        self._low = 0

    def update(self, state: State, fz_max_mn: float) -> bool:
        """A reading that meets the latch condition (re)latches and restarts the release
        count; otherwise readings with PCT < 20 count towards the release."""
        if state.st in LATCH_STATES and fz_max_mn >= LATCH_FZ_MN:
            self.latched, self._low = True, 0
        elif state.pct < RELEASE_PCT:
            self._low += 1
            if self._low >= RELEASE_READINGS:
                self.latched = False
        else:
            self._low = 0
        return self.latched
