"""USB glove frames packed by hand from the documented layout (A5 5A, 18-byte header, a bitwise
CRC16-CCITT-FALSE), independently of the driver's own packing: the tests' expected bytes."""
from __future__ import annotations

import struct

import numpy as np


def crc_bitwise(data: bytes) -> int:
    """CRC16-CCITT-FALSE the slow, obvious way (poly 0x1021, init 0xFFFF)."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def frame(ftype: int, seq: int, us: int, payload: bytes, flags: int = 0, fw=(1, 2, 2), crc_xor: int = 0,
          length: int | None = None) -> bytes:
    head = b"\xa5\x5a" + bytes(fw) + bytes([ftype]) + struct.pack("<IIHH", seq, us,
                                                                   len(payload) if length is None else length, flags)
    return head + payload + struct.pack("<H", crc_bitwise(head + payload) ^ crc_xor)


def imu_payload(q_wxyz: np.ndarray) -> bytes:
    return np.asarray(q_wxyz, dtype="<i2").tobytes()


def adc_payload(counts: np.ndarray, scan_seq: int = 7, scan_us: int = 1234) -> bytes:
    return bytes([16, 16, 12, 0]) + struct.pack("<II", scan_seq, scan_us) + np.asarray(counts, "<u2").tobytes()
