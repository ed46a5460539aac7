"""The USB glove's wire format (STM32 CDC, 0483:5740, 115200 baud), ROS-free.

Frame: ``A5 5A`` | fw major, minor, patch (≥ 1.2.2) | type (1 status text, 2 IMU, 3 ADC
matrix) | seq u32 LE | device µs u32 LE | payload length u16 LE (≤ 1100) | flags u16 LE
(bit i: IMU i present) — 18 bytes — then the payload, then CRC16-CCITT-FALSE (poly 0x1021,
init 0xFFFF) of header + payload, little-endian.

IMU payload: 128 B = 16 sensors × (w, x, y, z) int16 LE Q14 (÷ 16384), stored x, y, z, w;
a quaternion is valid when its present bit is set and 0.25 < |q|² < 2.25.
ADC payload: 524 B = rows u8 (16), cols u8 (16), bits u8 (12), order u8, seq u32 LE,
scan µs u32 LE, 256 × u16 LE (each < 4096).
"""
from __future__ import annotations

import binascii
import struct
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from egorec_ros.drivers.health import BadFrame
from egorec_ros.drivers.sync import skip_to_marker

MAGIC = b"\xa5\x5a"
HEADER = struct.Struct("<2s3BBIIHH")
HEADER_SIZE = HEADER.size                      # 18
CRC_SIZE = 2
MAX_PAYLOAD = 1100
MIN_FIRMWARE = (1, 2, 2)
TYPE_STATUS, TYPE_IMU, TYPE_ADC = 1, 2, 3
IMU_PAYLOAD = 128
ADC_HEAD = struct.Struct("<BBBBII")
ADC_PAYLOAD = ADC_HEAD.size + 256 * 2          # 524
ROWS = COLS = 16
ADC_BITS = 12
Q14 = 16384.0
SENSORS = 16
VALID_NORM2 = (0.25, 2.25)
PAYLOAD_SIZES = {TYPE_IMU: IMU_PAYLOAD, TYPE_ADC: ADC_PAYLOAD}

# bad-frame reasons (Health.bad keys)
BAD_CRC = "crc"
BAD_LENGTH = "length"
BAD_TYPE = "type"
BAD_FIRMWARE = "firmware"
BAD_ADC_SHAPE = "adc_shape"
BAD_ADC_RANGE = "adc_range"
JUNK_BYTES = "junk_bytes"                      # bytes skipped while looking for A5 5A


def crc16_ccitt_false(data: bytes | bytearray | memoryview) -> int:
    """CRC16-CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no xorout) — C speed."""
    return binascii.crc_hqx(data, 0xFFFF)


@dataclass(frozen=True, slots=True)
class Frame:
    firmware: tuple[int, int, int]
    type: int
    seq: int
    device_us: int
    flags: int
    payload: bytes


@dataclass(frozen=True, slots=True)
class ImuReading:
    quat_xyzw: np.ndarray        # (16, 4) float32
    valid: np.ndarray            # (16,) float32 0/1


@dataclass(frozen=True, slots=True)
class AdcReading:
    matrix: np.ndarray           # (16, 16) float32 raw 12-bit counts, firmware order
    order: int
    scan_seq: int
    scan_us: int


def encode_frame(ftype: int, seq: int, device_us: int, payload: bytes, flags: int = 0,
                 firmware: tuple[int, int, int] = MIN_FIRMWARE) -> bytes:
    """A frame as the glove sends it (simulated devices, tests, benchmarks)."""
    head = HEADER.pack(MAGIC, *firmware, ftype, seq & 0xFFFFFFFF, device_us & 0xFFFFFFFF, len(payload), flags)
    body = head + payload
    return body + struct.pack("<H", crc16_ccitt_false(body))


def encode_imu(quat_wxyz: np.ndarray) -> bytes:
    """(16, 4) w, x, y, z floats -> the 128-byte Q14 payload."""
    q = np.clip(np.rint(np.asarray(quat_wxyz, dtype=np.float64) * Q14), -32768, 32767)
    return q.astype("<i2").tobytes()


def encode_adc(matrix: np.ndarray, scan_seq: int = 0, scan_us: int = 0, order: int = 0) -> bytes:
    return ADC_HEAD.pack(ROWS, COLS, ADC_BITS, order, scan_seq, scan_us) + \
        np.asarray(matrix, dtype="<u2").reshape(-1).tobytes()


def decode_imu(frame: Frame) -> ImuReading:
    raw = np.frombuffer(frame.payload, dtype="<i2").reshape(SENSORS, 4)
    q = raw.astype(np.float32) / np.float32(Q14)
    xyzw = q[:, [1, 2, 3, 0]]
    norm2 = np.einsum("ij,ij->i", q, q)
    present = ((frame.flags >> np.arange(SENSORS)) & 1).astype(bool)
    valid = present & (norm2 > VALID_NORM2[0]) & (norm2 < VALID_NORM2[1])
    return ImuReading(np.ascontiguousarray(xyzw), valid.astype(np.float32))


def decode_adc(frame: Frame) -> AdcReading:
    rows, cols, bits, order, scan_seq, scan_us = ADC_HEAD.unpack_from(frame.payload)
    if (rows, cols, bits) != (ROWS, COLS, ADC_BITS):
        raise BadFrame(BAD_ADC_SHAPE, f"ADC frame {frame.seq}: rows={rows} cols={cols} bits={bits}, "
                                        f"expected {ROWS}x{COLS} {ADC_BITS}-bit")
    counts = np.frombuffer(frame.payload, dtype="<u2", offset=ADC_HEAD.size)
    if int(counts.max()) >= 1 << ADC_BITS:
        raise BadFrame(BAD_ADC_RANGE, f"ADC frame {frame.seq}: value {int(counts.max())} is not {ADC_BITS}-bit")
    return AdcReading(counts.astype(np.float32).reshape(ROWS, COLS), order, scan_seq, scan_us)


class FrameReader:
    """Bytes in any chunking -> whole, CRC-checked frames; bad ones counted by reason.

    After a bad header or CRC it resynchronises on the next ``A5 5A`` (one byte further
    on, so a magic inside a corrupt frame is tried too)."""

    def __init__(self, count_bad) -> None:
        self._buf = bytearray()
        self._bad = count_bad          # callable(reason, n=1)

    def feed(self, data: bytes) -> Iterator[Frame]:
        self._buf += data
        buf = self._buf
        while skip_to_marker(buf, MAGIC, self._bad, JUNK_BYTES):
            if len(buf) < HEADER_SIZE:
                return
            _, major, minor, patch, ftype, seq, dev_us, length, flags = HEADER.unpack_from(buf)
            reason = self._header_problem((major, minor, patch), ftype, length)
            if reason:
                self._bad(reason)
                del buf[:1]
                continue
            end = HEADER_SIZE + length + CRC_SIZE
            if len(buf) < end:
                return
            crc = buf[end - 2] | buf[end - 1] << 8
            if crc16_ccitt_false(memoryview(buf)[:end - 2]) != crc:
                self._bad(BAD_CRC)
                del buf[:1]
                continue
            payload = bytes(buf[HEADER_SIZE:end - 2])
            del buf[:end]
            yield Frame((major, minor, patch), ftype, seq, dev_us, flags, payload)

    @staticmethod
    def _header_problem(firmware: tuple[int, int, int], ftype: int, length: int) -> str | None:
        if firmware < MIN_FIRMWARE:
            return BAD_FIRMWARE
        if ftype not in (TYPE_STATUS, TYPE_IMU, TYPE_ADC):
            return BAD_TYPE
        if length > MAX_PAYLOAD or PAYLOAD_SIZES.get(ftype, length) != length:
            return BAD_LENGTH
        return None
