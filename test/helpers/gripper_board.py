"""A simulated UMI gripper control board on the far side of a pty: it answers the handshake
and each command with the documented reply; tests write its STATE lines."""
from __future__ import annotations

import os
import select
import threading

from helpers.drivers import PtyDevice

SERIAL = "CC:BA:97:25:B4:44"
KEY = f"gripper:{SERIAL}"
REPLIES = {"QF": f"FAYS_SERIAL:{SERIAL}", "C": "OK CONNECT", "I": "OK INIT", "F": "OK READY", "S": "OK START",
           "E": "OK ERROR", "R": "OK ASR", "G": "AS5048A 12345"}


class SimBoard:
    """The ESP32 side: answers '?' with a STATE line and each command with its reply."""

    def __init__(self, device: PtyDevice, serial: str = SERIAL) -> None:
        self.device, self.serial = device, serial
        self.received: list[str] = []
        self.thread = threading.Thread(target=self._run, args=(device.master,), daemon=True)
        self.thread.start()

    def _run(self, fd: int) -> None:
        buf = b""
        while True:
            try:
                if not select.select([fd], [], [], 0.05)[0]:
                    continue
                buf += os.read(fd, 256)
            except OSError:
                return                       # unplugged
            *lines, buf = buf.split(b"\r\n")
            for line in (x.decode() for x in lines):
                self.received.append(line)
                if line == "?":
                    reply = "STATE ST=0 PCT=100.0 GRIP=0 RAW=0"
                else:
                    reply = REPLIES[line].replace(SERIAL, self.serial)
                try:
                    os.write(fd, reply.encode() + b"\r\n")
                except OSError:
                    return
