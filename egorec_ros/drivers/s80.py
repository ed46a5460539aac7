"""S80M/S80C stereo (+ IMU, optional depth) driver core: the vendor SDK process's pipe
-> CompressedImage left/right (JPEG passed through: decoded only if a row needs it),
sensor_msgs/Imu per IMU sample, sensor_msgs/Image 16UC1 depth in mm.

The SDK delivers 50 fps; frames are decimated to the rig's 30 fps by clock buckets of
the frame time. The IMU samples of a dropped frame are carried into the next published
one, so no IMU sample is lost or published twice (samples whose time does not advance
are counted and dropped). Device times (u64 ns, ``ts_tick_ns`` to change the unit) are
mapped to host stamps by ``DeviceClock``.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from egorec_ros.messages.payloads.images import COMPRESSED_IMAGE, image_message
from egorec_ros.messages.payloads.imu import imu_message
from egorec_ros.drivers import clock
from egorec_ros.drivers.decimate import Decimator
from egorec_ros.drivers.health import Health
from egorec_ros.drivers.process_link import ProcessDriver
from egorec_ros.drivers.publish import Publish, header, store
from egorec_ros.drivers.reconnect import DeviceLoop
from egorec_ros.drivers.s80_protocol import Record, RecordReader

READ_CHUNK = 1 << 20
IMU_NOT_INCREASING = "imu_not_increasing"


@dataclass(frozen=True)
class S80Topics:
    left: str
    right: str | None = None
    imu: str | None = None
    depth: str | None = None


@dataclass(frozen=True)
class S80Config:
    command: Sequence[str]            # the vendor SDK program and its arguments
    topics: S80Topics
    fps: float = 30.0                 # the rig's fps
    with_depth: bool = False          # the SDK writes the depth block
    ts_tick_ns: int = 1
    frame_id: str = "s80"
    name: str = "s80"


class S80Decoder:
    """Pipe bytes -> published messages (no I/O: the benchmark drives it directly)."""

    def __init__(self, config: S80Config, health: Health, publish: Publish) -> None:
        self.config, self.health, self._publish = config, health, publish
        self.kept = self.dropped = 0
        self.reset()

    def reset(self) -> None:
        self._reader = RecordReader(self.health.drop, self.config.with_depth)
        self._clock = clock.DeviceClock(self.config.ts_tick_ns)
        self._decimator = Decimator(self.config.fps)
        self._imu: list[np.ndarray] = []
        self._last_imu_ts = -1

    def feed(self, data: bytes, read_ns: int) -> None:
        for record in self._reader.feed(data):
            self._record(record, read_ns)

    def _record(self, r: Record, read_ns: int) -> None:
        stamp, dev = self._clock.stamp(r.left_ts, read_ns)
        self._take_imu(r.imu)
        if not self._decimator.keep(dev):
            self.dropped += 1               # decimated (with its depth), not a fault: not in health.bad
            return
        self.kept += 1
        t, fid = self.config.topics, self.config.frame_id
        types = store().types
        self._send(t.left, types[COMPRESSED_IMAGE](header=header(stamp, fid), format="jpeg",
                                                   data=np.frombuffer(r.left, np.uint8)))
        if t.right:
            right_stamp = stamp + (r.right_ts - r.left_ts) * self.config.ts_tick_ns
            self._send(t.right, types[COMPRESSED_IMAGE](header=header(right_stamp, fid), format="jpeg",
                                                        data=np.frombuffer(r.right, np.uint8)))
        depth = r.depth_mm() if t.depth else None
        if t.depth and depth is not None:
            depth_stamp = stamp + (r.depth_ts - r.left_ts) * self.config.ts_tick_ns
            self._send(t.depth, image_message(store(), depth, header(depth_stamp, fid)))
        self._flush_imu(stamp, r.left_ts)

    def _take_imu(self, imu: np.ndarray) -> None:
        if not len(imu):
            return
        ts = imu["ts"].astype(np.int64)
        fresh = ts > np.maximum.accumulate(np.concatenate(([self._last_imu_ts], ts[:-1])))
        if not fresh.all():
            self.health.drop(IMU_NOT_INCREASING, int((~fresh).sum()))
        if fresh.any():
            self._imu.append(imu[fresh])
            self._last_imu_ts = int(ts[fresh][-1])

    def _flush_imu(self, frame_stamp: int, frame_ts: int) -> None:
        if not self._imu or not self.config.topics.imu:
            self._imu.clear()
            return
        rows = np.concatenate(self._imu)
        self._imu.clear()
        stamps = frame_stamp + (rows["ts"].astype(np.int64) - frame_ts) * self.config.ts_tick_ns
        values = rows["v"].astype(np.float64)
        payloads = values[:, [3, 4, 5, 0, 1, 2]]            # (gyro, acc) -> [ax, ay, az, gx, gy, gz]
        for stamp, payload in zip(stamps.tolist(), payloads):
            self._send(self.config.topics.imu, imu_message(store(), payload, header(stamp, self.config.frame_id)))

    def _send(self, topic: str, msg: object) -> None:
        self._publish(topic, msg)
        self.health.sent()


class S80(ProcessDriver[S80Decoder]):
    def __init__(self, config: S80Config, publish: Publish, on_status=None) -> None:
        super().__init__(config.command, config.name, on_status)
        self.config = config
        self.decoder = S80Decoder(config, self.health, publish)

    def pump(self, stdout, loop: DeviceLoop) -> None:
        while not loop.stopping:
            data = stdout.read(READ_CHUNK)
            if not data:
                return
            self.decoder.feed(data, clock.now_ns())
