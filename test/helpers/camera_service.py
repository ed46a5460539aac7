"""The libuvc capture service side of the camera IPC: a Unix socket server sending 40-byte
headers packed by hand from the documented layout, then the JPEG."""
from __future__ import annotations

import os
import socket
import threading

import numpy as np

from helpers.drivers import wait_for


def frame(seq: int, data: bytes, ts: int, magic: int = 0x4B535146, fourcc: bytes = b"MJPG", version: int = 1) -> bytes:
    """Packed by hand from the documented layout, not with the driver's struct."""
    return (magic.to_bytes(4, "little") + version.to_bytes(2, "little") + (40).to_bytes(2, "little")
            + seq.to_bytes(4, "little") + (64).to_bytes(4, "little") + (48).to_bytes(4, "little")
            + fourcc + len(data).to_bytes(4, "little") + b"\0" * 4 + ts.to_bytes(8, "little") + data)


class Service:
    """The capture service side: listens, accepts one client at a time, sends what it is given."""

    def __init__(self, path) -> None:
        self.path = str(path)
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(self.path)
        self.server.listen(1)
        self.client: socket.socket | None = None
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        try:
            self.client, _ = self.server.accept()
        except OSError:
            pass

    def send(self, data: bytes, pieces: int = 1) -> None:
        wait_for(lambda: self.client is not None, "the driver to connect")
        for part in np.array_split(np.frombuffer(data, np.uint8), pieces):
            self.client.sendall(part.tobytes())

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
        self.server.close()
        os.unlink(self.path)
