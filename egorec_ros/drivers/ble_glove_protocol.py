"""The BLE glove's notification format, ROS-free.

A frame is 517 bytes: ``AA 55`` | 256 × u16 LE pressure (512 B, 16×16, firmware order)
| XOR of those 512 bytes | ``FB 03``. Notifications are smaller than a frame (the MTU),
so frames are reassembled across them and found by their start marker; a bad checksum or
trailer is counted and the reader resynchronises on the next ``AA 55``.
"""
from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np

from egorec_ros.drivers.sync import skip_to_marker

NOTIFY_UUID = "6e400003-b5a3-f393-e0a9-e50e24dcca9e"
START = b"\xaa\x55"
TRAILER = b"\xfb\x03"
BODY = 512
FRAME = len(START) + BODY + 1 + len(TRAILER)       # 517

BAD_XOR = "xor"
BAD_TRAILER = "trailer"
JUNK_BYTES = "junk_bytes"

_HAND = re.compile(r"(?:^|[\s_\-])([LR])$", re.IGNORECASE)


def is_glove_name(name: str | None) -> bool:
    """Advertised names of the gloves contain ``Matrix`` (``Matrix_L``, ``Matrix-R``...); the
    L/R ending says the hand (``hand_of``). Other BLE devices are not gloves."""
    return name is not None and "matrix" in name.lower()


def hand_of(name: str | None) -> str | None:
    """``left``/``right`` from an advertised name's L/R ending, None if it has none."""
    m = _HAND.search((name or "").strip())
    return None if m is None else ("left" if m.group(1).upper() == "L" else "right")


def encode_frame(pressure: np.ndarray) -> bytes:
    body = np.asarray(pressure, dtype="<u2").reshape(-1).tobytes()
    xor = int(np.bitwise_xor.reduce(np.frombuffer(body, np.uint8)))
    return START + body + bytes([xor]) + TRAILER


class FrameReader:
    """Notification bytes -> (first-chunk host time, pressure (16, 16) float32)."""

    def __init__(self, count_bad) -> None:
        self._buf = bytearray()
        self._bad = count_bad
        self._first_ns: int | None = None          # read time of the chunk that began the frame

    def feed(self, data: bytes, read_ns: int) -> Iterator[tuple[int, np.ndarray]]:
        buf = self._buf
        if self._first_ns is None or not buf:
            self._first_ns = read_ns
        buf += data
        while True:
            if not skip_to_marker(buf, START, self._bad, JUNK_BYTES):
                self._first_ns = None
                return
            if len(buf) < FRAME:
                return
            frame = bytes(buf[:FRAME])
            body = np.frombuffer(frame, np.uint8, BODY, len(START))
            reason = (BAD_TRAILER if frame[-2:] != TRAILER
                      else BAD_XOR if int(np.bitwise_xor.reduce(body)) != frame[len(START) + BODY] else None)
            if reason:
                self._bad(reason)
                del buf[:1]
                continue
            del buf[:FRAME]
            first, self._first_ns = self._first_ns, read_ns
            yield first, body.view("<u2").astype(np.float32).reshape(16, 16)
