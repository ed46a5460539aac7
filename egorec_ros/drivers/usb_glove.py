"""USB data glove driver core: serial bytes -> ``egorec_ros/msg/GloveFrame``.

One GloveFrame per ADC matrix frame (~60 Hz), carrying the newest IMU frame of the
same glove when it is at most ``IMU_MAX_AGE_NS`` older on the glove's clock (else the
IMU fields stay empty, which the recorder reads as "no IMU in this sample"). Stamps:
the glove's µs counter mapped to the host clock (``DeviceClock``), so USB read jitter
does not reach them.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass


from egorec_ros.messages.payloads.gloves import glove_message
from egorec_ros.drivers import clock
from egorec_ros.drivers.glove_seats import GloveSeats
from egorec_ros.drivers.health import BadFrame, Health
from egorec_ros.drivers.publish import Publish, header, store
from egorec_ros.drivers.reconnect import DeviceLoop, Driver
from egorec_ros.drivers.serial_link import open_serial, read_some, usb_serial_number
from egorec_ros.drivers.usb_glove_protocol import (TYPE_IMU, TYPE_STATUS, Frame,
                                                   FrameReader, ImuReading, decode_adc, decode_imu)

log = logging.getLogger(__name__)

VID_PID = (0x0483, 0x5740)
BAUDRATE = 115200
IMU_MAX_AGE_NS = 100_000_000
KEY_PREFIX = "usbglove:"
SEQ_GAP = "seq_gap"                 # frames the glove numbered but we never received


@dataclass(frozen=True)
class UsbGloveConfig:
    port: str                       # /dev/serial/by-id/... or any path pyserial opens
    key: str                        # usbglove:<serial number>, as in the rig
    topic: str                      # the rig's pressure stream topic
    frame_id: str = ""


class UsbGloveDecoder:
    """Bytes as read -> published GloveFrames (no I/O: the benchmark drives it directly)."""

    def __init__(self, topic: str, health: Health, publish: Publish, frame_id: str = "") -> None:
        self.topic, self.frame_id = topic, frame_id
        self.health, self._publish = health, publish
        self.device_status = ""
        self.reset()

    def reset(self) -> None:
        self._reader = FrameReader(self.health.drop)
        self._clock = clock.DeviceClock(tick_ns=1000, wrap=1 << 32)
        self._imu: tuple[int, ImuReading] | None = None
        self._last_seq: dict[int, int] = {}

    def feed(self, data: bytes, read_ns: int) -> None:
        """``read_ns``: host stamp of the read that delivered ``data``."""
        for frame in self._reader.feed(data):
            self._frame(frame, read_ns)

    def _frame(self, frame: Frame, read_ns: int) -> None:
        stamp, dev_ns = self._clock.stamp(frame.device_us, read_ns)
        self._count_gap(frame)
        if frame.type == TYPE_STATUS:
            self.device_status = frame.payload.decode("utf-8", "replace").strip()
            log.info("glove %s: %s", self.topic, self.device_status)
            return
        try:
            if frame.type == TYPE_IMU:
                self._imu = (dev_ns, decode_imu(frame))
                return
            adc = decode_adc(frame)          # the frame reader lets only STATUS, IMU and ADC frames through
        except BadFrame as exc:
            self.health.drop(exc.reason)
            return
        imu = self._imu[1] if self._imu and 0 <= dev_ns - self._imu[0] <= IMU_MAX_AGE_NS else None
        payload = {"pressure": adc.matrix}
        if imu is not None:
            payload.update(imu_quat=imu.quat_xyzw, imu_valid=imu.valid)
        self._publish(self.topic, glove_message(store(), payload, header(stamp, self.frame_id)))
        self.health.sent()

    def _count_gap(self, frame: Frame) -> None:
        last = self._last_seq.get(frame.type)
        if last is not None:
            gap = (frame.seq - last - 1) & 0xFFFFFFFF
            if 0 < gap < 1 << 31:
                self.health.drop(SEQ_GAP, gap)
        self._last_seq[frame.type] = frame.seq


class UsbGlove(Driver):
    """One USB glove: its seat (left/right) claimed at creation — a third glove raises
    GloveRefused here — then read, decoded and published on a thread with reconnects."""

    def __init__(self, config: UsbGloveConfig, publish: Publish, seats: GloveSeats, on_status=None) -> None:
        self.config = config
        self.sensor = seats.claim(config.key)
        self._seats = seats
        self.health = Health(config.key, on_status)
        self.decoder = UsbGloveDecoder(config.topic, self.health, publish, config.frame_id)
        self.loop = DeviceLoop(config.key, self._session, self.health)

    def stop(self) -> None:
        super().stop()
        self._seats.release(self.config.key)

    def _session(self, loop: DeviceLoop) -> None:
        serial = usb_serial_number(self.config.port)
        if serial is not None and f"{KEY_PREFIX}{serial}" != self.config.key:
            raise ConnectionError(f"{self.config.port} is glove {KEY_PREFIX}{serial}, the rig names "
                                  f"{self.config.key} here; not used (fix the rig key or the port)")
        with open_serial(self.config.port, BAUDRATE) as port:
            self.decoder.reset()
            loop.opened(f"{self.config.port} as {self.sensor}")
            while not loop.stopping:
                data = read_some(port)
                if data:
                    self.decoder.feed(data, clock.now_ns())
