"""UVC camera driver core: V4L2 through PyAV -> sensor_msgs/CompressedImage (MJPEG
packets passed through untouched: decoded only if a row needs them) or sensor_msgs/Image
(YUYV passed through as ``yuv422_yuy2``; other raw formats converted to rgb8).

Stamps: the packet time when it is on the host clock (V4L2 buffers carry monotonic or
realtime capture times), else the read time. A video file can stand in for the device
(``pace=True`` plays it at its frame rate; its end is an unplug, so it plays again).
"""
from __future__ import annotations

import time
from typing import Any
from collections.abc import Mapping
from dataclasses import dataclass, field

import av
import numpy as np

from egorec_ros.messages.payloads.images import COMPRESSED_IMAGE, IMAGE, image_message
from egorec_ros.drivers import clock
from egorec_ros.drivers.health import Health
from egorec_ros.drivers.publish import Publish, header, store
from egorec_ros.drivers.reconnect import DeviceLoop, Driver

TIMEOUT_S = (5.0, 2.0)                      # open, read: a camera silent for 2 s is unplugged and reopened
HOST_CLOCK_WINDOW_NS = 10_000_000_000       # a packet time this close to a host clock is on it
PASS_THROUGH = {"mjpeg": "jpeg"}
YUYV = {"yuyv422": "yuv422_yuy2"}
BAD_DECODE = "decode_error"


@dataclass(frozen=True)
class UvcConfig:
    source: str                                   # /dev/video0, /dev/v4l/by-id/..., or a video file
    topic: str
    input_format: str | None = "video4linux2"     # None: let FFmpeg guess (files)
    options: Mapping[str, str] = field(default_factory=dict)   # e.g. input_format=mjpeg, video_size=1280x960, framerate=30
    pace: bool = False                            # play a file at its frame rate
    key: str = ""
    frame_id: str = ""


def packet_host_ns(pts_ns: int | None, read_ns: int, read_mono_ns: int) -> int:
    """The packet time if it is a Unix or monotonic capture time, else the read time."""
    if pts_ns is None:
        return read_ns
    if abs(pts_ns - read_ns) < HOST_CLOCK_WINDOW_NS:
        return min(pts_ns, read_ns)
    if abs(pts_ns - read_mono_ns) < HOST_CLOCK_WINDOW_NS:
        return min(clock.unix_ns(pts_ns), read_ns)
    return read_ns


class Uvc(Driver):
    def __init__(self, config: UvcConfig, publish: Publish, on_status=None) -> None:
        self.config, self._publish = config, publish
        self.health = Health(config.key or config.source, on_status)
        self.loop = DeviceLoop(config.key or config.source, self._session, self.health)
        self.codec: str | None = None

    def _session(self, loop: DeviceLoop) -> None:
        cfg = self.config
        with av.open(cfg.source, format=cfg.input_format, options=dict(cfg.options), timeout=TIMEOUT_S) as container:
            stream = container.streams.video[0]
            self.codec = stream.codec_context.name
            loop.opened(f"{cfg.source}: {self.codec} {stream.codec_context.width}x{stream.codec_context.height}")
            started, first_pts = 0.0, None
            for packet in container.demux(stream):
                if loop.stopping:
                    return
                if packet.size == 0:               # the end of a file: flush the decoder
                    if self.codec not in PASS_THROUGH:
                        self._packet(packet, clock.now_ns())
                    continue
                pts_s = float(packet.pts * packet.time_base) if packet.pts is not None else None
                if cfg.pace and pts_s is not None:
                    if first_pts is None:
                        first_pts, started = pts_s, time.monotonic()
                    delay = started + (pts_s - first_pts) - time.monotonic()
                    if delay > 0 and loop.wait(delay):
                        return
                mono = time.monotonic_ns()
                stamp = packet_host_ns(None if pts_s is None else int(round(pts_s * 1e9)), clock.unix_ns(mono), mono)
                self._packet(packet, stamp)
            raise EOFError(f"{cfg.source}: end of stream")

    def _packet(self, packet: av.Packet, stamp: int) -> None:
        cfg, types = self.config, store().types
        msg: Any
        if self.codec in PASS_THROUGH:
            msg = types[COMPRESSED_IMAGE](header=header(stamp, cfg.frame_id), format=PASS_THROUGH[self.codec],
                                          data=np.frombuffer(bytes(packet), np.uint8))
            self._send(msg)
            return
        try:
            frames = packet.decode()
        except av.FFmpegError:
            self.health.drop(BAD_DECODE)
            return
        for frame in frames:
            if frame.format.name in YUYV:
                data = np.frombuffer(bytes(frame.planes[0]), np.uint8)
                line = frame.planes[0].line_size
                msg = types[IMAGE](header=header(stamp, cfg.frame_id), height=frame.height, width=frame.width,
                                   encoding=YUYV[frame.format.name], is_bigendian=0, step=line, data=data)
            else:
                msg = image_message(store(), frame.to_ndarray(format="rgb24"), header(stamp, cfg.frame_id))
            self._send(msg)

    def _send(self, msg: object) -> None:
        self._publish(self.config.topic, msg)
        self.health.sent()
