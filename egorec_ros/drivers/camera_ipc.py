"""Camera IPC driver core (the libuvc capture service): Unix stream socket ->
sensor_msgs/CompressedImage (the JPEG passed through, decoded only if a row needs it).

Each frame: a 40-byte header ``<IHHIIIII4xQ`` — magic 0x4B535146 ("FQSK" on the wire,
"KSQF" as a number), version 1, header size, seq, width, height, fourcc ``MJPG``,
payload size, 4 pad bytes, timestamp_ns (the service's capture stamp: Unix ns, or
monotonic ns, which is mapped to Unix) — then ``size`` bytes of JPEG. After a bad header
the reader resynchronises on the next magic.
"""
from __future__ import annotations

import socket
import struct
from dataclasses import dataclass

import numpy as np

from egorec_ros.messages.payloads.images import COMPRESSED_IMAGE
from egorec_ros.drivers import clock
from egorec_ros.drivers.health import Health
from egorec_ros.drivers.publish import Publish, header, store
from egorec_ros.drivers.reconnect import DeviceLoop, Driver

HEADER = struct.Struct("<IHHIIIII4xQ")
MAGIC = 0x4B535146
MAGIC_BYTES = struct.pack("<I", MAGIC)
VERSION = 1
FOURCC_MJPG = int.from_bytes(b"MJPG", "little")
MAX_FRAME = 32 << 20
MAX_SIDE = 8192
UNIX_NS_MIN = 10**18
READ_CHUNK = 1 << 20
POLL_S = 0.1

BAD_MAGIC = "magic"
BAD_VERSION = "version"
BAD_HEADER_SIZE = "header_size"
BAD_FOURCC = "fourcc"
BAD_SIZE = "size"
BAD_JPEG = "jpeg_marker"
RESYNC_BYTES = "resync_bytes"
SEQ_GAP = "seq_gap"


def encode_frame(seq: int, width: int, height: int, jpeg: bytes, timestamp_ns: int,
                 fourcc: int = FOURCC_MJPG, magic: int = MAGIC, version: int = VERSION) -> bytes:
    """A frame as the service sends it (simulated devices, tests, benchmarks)."""
    return HEADER.pack(magic, version, HEADER.size, seq, width, height, fourcc, len(jpeg), timestamp_ns) + jpeg


@dataclass(frozen=True)
class CameraIpcConfig:
    socket_path: str
    topic: str
    key: str = ""
    frame_id: str = ""


class CameraIpcDecoder:
    def __init__(self, topic: str, health: Health, publish: Publish, frame_id: str = "") -> None:
        self.topic, self.frame_id, self.health, self._publish = topic, frame_id, health, publish
        self.reset()

    def reset(self) -> None:
        self._buf = bytearray()
        self._seq: int | None = None
        self.size: tuple[int, int] | None = None
        self._hunting = False      # searching for the next magic: one junk run counts once, however it is read

    def feed(self, data: bytes, read_ns: int) -> None:
        buf = self._buf
        buf += data
        while len(buf) >= HEADER.size:
            magic, version, hsize, seq, w, h, fourcc, size, ts = HEADER.unpack_from(buf)
            reason = (BAD_MAGIC if magic != MAGIC else BAD_VERSION if version != VERSION
                      else BAD_HEADER_SIZE if hsize < HEADER.size else None)
            if reason is None:
                self._note_seq(seq)
                reason = (BAD_FOURCC if fourcc != FOURCC_MJPG
                          else BAD_SIZE if not (4 <= size <= MAX_FRAME and 0 < w <= MAX_SIDE and 0 < h <= MAX_SIDE)
                          else None)
            if reason:
                if not (reason == BAD_MAGIC and self._hunting):
                    self.health.drop(reason)
                self._resync()
                continue
            end = hsize + size
            if len(buf) < end:
                return
            jpeg = bytes(buf[hsize:end])
            del buf[:end]
            if jpeg[:2] != b"\xff\xd8" or jpeg[-2:] != b"\xff\xd9":
                self.health.drop(BAD_JPEG)
                continue
            self._frame(seq, w, h, jpeg, ts, read_ns)

    def _note_seq(self, seq: int) -> None:
        """Count frames the service numbered whose header never reached us."""
        if self._seq is not None:
            gap = (seq - self._seq - 1) & 0xFFFFFFFF
            if 0 < gap < 1 << 31:
                self.health.drop(SEQ_GAP, gap)
        self._seq = seq

    def _frame(self, seq: int, w: int, h: int, jpeg: bytes, ts: int, read_ns: int) -> None:
        self.size = (w, h)
        stamp = ts if ts >= UNIX_NS_MIN else clock.unix_ns(ts)
        msg = store().types[COMPRESSED_IMAGE](header=header(min(stamp, read_ns), self.frame_id), format="jpeg",
                                             data=np.frombuffer(jpeg, np.uint8))
        self._publish(self.topic, msg)
        self.health.sent()

    def _resync(self) -> None:
        at = self._buf.find(MAGIC_BYTES, 1)
        skip = at if at > 0 else max(len(self._buf) - 3, 1)
        self._hunting = at <= 0
        self.health.drop(RESYNC_BYTES, skip)
        del self._buf[:skip]


class CameraIpc(Driver):
    def __init__(self, config: CameraIpcConfig, publish: Publish, on_status=None) -> None:
        self.config = config
        self.health = Health(config.key or config.socket_path, on_status)
        self.decoder = CameraIpcDecoder(config.topic, self.health, publish, config.frame_id)
        self.loop = DeviceLoop(config.key or config.socket_path, self._session, self.health)

    def _session(self, loop: DeviceLoop) -> None:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(self.config.socket_path)
            sock.settimeout(POLL_S)
            self.decoder.reset()
            loop.opened(self.config.socket_path)
            while not loop.stopping:
                try:
                    data = sock.recv(READ_CHUNK)
                except TimeoutError:
                    continue
                if not data:
                    raise EOFError(f"{self.config.socket_path}: the capture service closed the socket")
                self.decoder.feed(data, clock.now_ns())
