"""The S80M/S80C vendor SDK pipe format (big-endian), ROS-free.

One record per camera frame pair:
``[u32 len][u64 ts][JPEG]`` left, the same for right, ``[u32 n]`` + n × ``(u64 ts,
6 × f64 gyro x, y, z, acc x, y, z)``, and when the SDK runs with depth ``[u32 dlen]`` +
``(u64 ts, u32 w, u32 h, w·h × u16 mm)`` (dlen 0: no depth in this record). The pipe
has no magic: after a bad record the reader resynchronises on the next position where
a plausible length, a timestamp and a JPEG start marker line up.
"""
from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from egorec_ros.drivers.health import BadFrame

U32 = struct.Struct(">I")
IMAGE_HEAD = struct.Struct(">IQ")             # len, ts
DEPTH_HEAD = struct.Struct(">QII")            # ts, w, h
IMU_DTYPE = np.dtype([("ts", ">u8"), ("v", ">f8", (6,))])
JPEG_SOI, JPEG_EOI = b"\xff\xd8", b"\xff\xd9"
MAX_JPEG = 16 << 20
MAX_IMU = 1000
MAX_DEPTH_SIDE = 4096

BAD_JPEG_LENGTH = "jpeg_length"
BAD_JPEG_MARKER = "jpeg_marker"
BAD_IMU_COUNT = "imu_count"
BAD_DEPTH_SIZE = "depth_size"
RESYNC_BYTES = "resync_bytes"


@dataclass(frozen=True, slots=True)
class Record:
    left_ts: int
    left: bytes
    right_ts: int
    right: bytes
    imu: np.ndarray               # structured IMU_DTYPE (n,)
    depth_ts: int = 0
    depth_shape: tuple[int, int] | None = None     # (h, w) when the record has depth
    depth_be: bytes = b""                         # big-endian u16 mm, converted only if the frame is kept

    def depth_mm(self) -> np.ndarray | None:
        """(h, w) uint16 mm in native order, or None."""
        if self.depth_shape is None:
            return None
        return np.frombuffer(self.depth_be, ">u2").reshape(self.depth_shape).astype(np.uint16)


class _Incomplete(Exception):
    pass


def encode_record(left_ts: int, left: bytes, right_ts: int, right: bytes, imu: np.ndarray,
                  depth: tuple[int, np.ndarray] | None = None, with_depth: bool = False) -> bytes:
    """A record as the SDK writes it (simulated devices, tests, benchmarks).
    ``imu``: (n, 7) [ts, gx, gy, gz, ax, ay, az]."""
    imu = np.asarray(imu, dtype=np.float64).reshape(-1, 7)
    rows = np.zeros(len(imu), IMU_DTYPE)
    rows["ts"], rows["v"] = imu[:, 0].astype(np.uint64), imu[:, 1:]
    out = [IMAGE_HEAD.pack(len(left), left_ts), left, IMAGE_HEAD.pack(len(right), right_ts), right,
           U32.pack(len(imu)), rows.tobytes()]
    if with_depth or depth is not None:
        if depth is None:
            out.append(U32.pack(0))
        else:
            ts, mm = depth
            body = DEPTH_HEAD.pack(ts, mm.shape[1], mm.shape[0]) + np.asarray(mm, ">u2").tobytes()
            out += [U32.pack(len(body)), body]
    return b"".join(out)


class RecordReader:
    """Pipe bytes in any chunking -> records; bad ones counted by reason, then resync."""

    def __init__(self, count_bad, with_depth: bool) -> None:
        self._buf = bytearray()
        self._bad = count_bad
        self.with_depth = with_depth

    def feed(self, data: bytes) -> Iterator[Record]:
        self._buf += data
        while self._buf:
            bad = None
            try:
                with memoryview(self._buf) as view:
                    record, used = self._parse(view)
            except _Incomplete:
                return
            except BadFrame as exc:
                bad = exc.reason
            if bad is not None:            # outside the handler: its traceback holds the buffer view
                self._bad(bad)
                self._resync()
                continue
            del self._buf[:used]
            yield record

    def _parse(self, buf: memoryview) -> tuple[Record, int]:
        left_ts, left, pos = self._jpeg(buf, 0)
        right_ts, right, pos = self._jpeg(buf, pos)
        n = self._u32(buf, pos)
        if n > MAX_IMU:
            raise BadFrame(BAD_IMU_COUNT)
        pos += 4
        end = pos + n * IMU_DTYPE.itemsize
        self._need(buf, end)
        imu = np.frombuffer(buf[pos:end], IMU_DTYPE).copy()
        pos = end
        depth_ts, depth_shape, depth_be = 0, None, b""
        if self.with_depth:
            dlen = self._u32(buf, pos)
            pos += 4
            if dlen:
                if dlen < DEPTH_HEAD.size:
                    raise BadFrame(BAD_DEPTH_SIZE)
                self._need(buf, pos + DEPTH_HEAD.size)
                depth_ts, w, h = DEPTH_HEAD.unpack_from(buf, pos)
                if not (0 < w <= MAX_DEPTH_SIDE and 0 < h <= MAX_DEPTH_SIDE) or dlen != DEPTH_HEAD.size + 2 * w * h:
                    raise BadFrame(BAD_DEPTH_SIZE)
                self._need(buf, pos + dlen)
                px = pos + DEPTH_HEAD.size
                depth_shape, depth_be = (h, w), bytes(buf[px:pos + dlen])
                pos += dlen
        return Record(left_ts, left, right_ts, right, imu, depth_ts, depth_shape, depth_be), pos

    def _jpeg(self, buf: memoryview, pos: int) -> tuple[int, bytes, int]:
        self._need(buf, pos + IMAGE_HEAD.size)
        length, ts = IMAGE_HEAD.unpack_from(buf, pos)
        if not 4 <= length <= MAX_JPEG:
            raise BadFrame(BAD_JPEG_LENGTH)
        start = pos + IMAGE_HEAD.size
        self._need(buf, start + 2)
        if buf[start:start + 2] != JPEG_SOI:
            raise BadFrame(BAD_JPEG_MARKER)
        end = start + length
        self._need(buf, end)
        if buf[end - 2:end] != JPEG_EOI:
            raise BadFrame(BAD_JPEG_MARKER)
        return ts, bytes(buf[start:end]), end

    @staticmethod
    def _need(buf: memoryview, end: int) -> None:
        if len(buf) < end:
            raise _Incomplete

    def _u32(self, buf: memoryview, pos: int) -> int:
        self._need(buf, pos + 4)
        return U32.unpack_from(buf, pos)[0]

    def _resync(self) -> None:
        """Drop bytes up to the next [len][ts] followed by a JPEG start marker."""
        buf = self._buf
        at = 1
        while True:
            soi = buf.find(JPEG_SOI, at + IMAGE_HEAD.size)
            if soi < 0:
                skip = max(len(buf) - IMAGE_HEAD.size - 1, 1)
                break
            start = soi - IMAGE_HEAD.size
            if 4 <= U32.unpack_from(buf, start)[0] <= MAX_JPEG:
                skip = start
                break
            at = start + 1
        self._bad(RESYNC_BYTES, skip)
        del buf[:skip]
