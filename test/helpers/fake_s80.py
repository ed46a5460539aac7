"""Stands in for the S80 vendor SDK process in the S80 driver tests: writes records of
the SDK pipe format to stdout at 50 fps. ``records()`` is imported by the tests to know
exactly which bytes were sent.

usage: drivers_fake_s80.py N_RECORDS DEPTH(0/1) CORRUPT(0/1) THEN(exit code | wait) [live]

Record k is stamped BASE_TS + k * 20 ms (what the tests predict exactly), or with ``live``
at the monotonic time it is written, like a camera stamping at capture: then a writer
slowed down by a loaded machine still stamps its frames when they are really taken.
"""
from __future__ import annotations

import sys
import time
from fractions import Fraction

import av
import numpy as np

from egorec_ros.drivers.s80_protocol import encode_record

BASE_TS = 5_000_000_000
PERIOD_NS = 20_000_000                   # 50 fps
IMU_PER_FRAME = 4                        # 200 Hz
SIZE = (64, 48)
GARBAGE_AFTER = 10                       # junk bytes between records 10 and 11
BROKEN = 20                              # record 20's left JPEG loses its end marker


def jpeg(k: int) -> bytes:
    ctx = av.CodecContext.create("mjpeg", "w")
    ctx.width, ctx.height, ctx.pix_fmt, ctx.time_base = SIZE[0], SIZE[1], "yuvj420p", Fraction(1, 50)
    pixels = np.full((SIZE[1], SIZE[0], 3), (k * 9) % 256, np.uint8)
    pixels[:, : k % SIZE[0]] = 255
    frame = av.VideoFrame.from_ndarray(pixels, format="rgb24").reformat(format="yuvj420p")
    return b"".join(bytes(p) for p in ctx.encode(frame) + ctx.encode(None))


def imu_rows(k: int) -> np.ndarray:
    ts = BASE_TS + k * PERIOD_NS + np.arange(IMU_PER_FRAME) * (PERIOD_NS // IMU_PER_FRAME)
    values = (np.arange(IMU_PER_FRAME * 6).reshape(IMU_PER_FRAME, 6) + k * 100) / 64.0
    return np.column_stack([ts, values])


def depth(k: int) -> np.ndarray:
    return (np.arange(SIZE[0] * SIZE[1], dtype=np.uint32).reshape(SIZE[1], SIZE[0]) * 7 + k * 300).astype(np.uint16)


def record(k: int, ts: int, prev_ts: int, with_depth: bool, left: bytes, right: bytes) -> bytes:
    """A live record: its IMU samples spread over (prev_ts, ts], as the IMU ran between the frames."""
    rows = imu_rows(k)
    rows[:, 0] = prev_ts + (np.arange(1, IMU_PER_FRAME + 1) * (ts - prev_ts)) // IMU_PER_FRAME
    return encode_record(ts, left, ts + 1000, right, rows, depth=(ts + 2000, depth(k)) if with_depth else None)


def records(n: int, with_depth: bool, corrupt: bool) -> list[bytes]:
    out = []
    for k in range(n):
        ts = BASE_TS + k * PERIOD_NS
        left, right = jpeg(k), jpeg(k + 1000)
        if corrupt and k == BROKEN:
            left = left[:-2] + b"\x00\x00"
        out.append(encode_record(ts, left, ts + 1000, right, imu_rows(k),
                                 depth=(ts + 2000, depth(k)) if with_depth else None))
        if corrupt and k == GARBAGE_AFTER:
            out.append(b"\x00\x00\x00\x05garbage\xff")
    return out


def main() -> None:
    n, with_depth, corrupt, then = int(sys.argv[1]), sys.argv[2] == "1", sys.argv[3] == "1", sys.argv[4]
    live = sys.argv[5:] == ["live"]
    out = sys.stdout.buffer
    prepared = [(jpeg(k), jpeg(k + 1000)) for k in range(n)] if live else records(n, with_depth, corrupt)
    start = time.monotonic()
    prev_ts = time.monotonic_ns() - PERIOD_NS
    for k, item in enumerate(prepared):           # (with CORRUPT, the junk is one more item)
        delay = start + k / 50 - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        if live:
            ts = time.monotonic_ns()
            out.write(record(k, ts, prev_ts, with_depth, *item))
            prev_ts = ts
        else:
            out.write(item)
        out.flush()
    if then == "wait":
        while True:
            time.sleep(1)
    sys.exit(int(then))


if __name__ == "__main__":
    main()
