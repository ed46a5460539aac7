"""UMI gripper control board driver core: serial text lines -> ``egorec_ros/msg/GripperState``.

Session: open the port (exclusive), send ``?`` until a STATE line comes, ask ``QF`` for
the board's serial (its identity, checked against the rig key), then publish one
GripperState per STATE line: [PCT, grip latch, max finger fz from the tactile source].
The board has no clock of its own: a line is stamped at its read minus its transfer
time at 115200 baud. ``command()`` sends any of the board's commands and returns its reply.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import numpy as np

from egorec_ros.messages.payloads.forces import gripper_state_message
from egorec_ros.drivers import clock
from egorec_ros.drivers.gripper_protocol import (COMMANDS, HANDSHAKE, SERIAL_REPLY, STATE_PREFIX, BAD_LINE,
                                                 BAD_REPLY, GripLatch, LineSplitter, encode, parse_state)
from egorec_ros.drivers.health import BadFrame, Health
from egorec_ros.drivers.publish import Publish, header, store
from egorec_ros.drivers.reconnect import DeviceLoop, Driver
from egorec_ros.drivers.serial_link import open_serial, read_some
from egorec_ros.drivers.tactile import TactileForces
from egorec_ros.errors import UserError

BAUDRATE = 115200
NS_PER_BYTE = 10 * 1_000_000_000 // BAUDRATE        # 8N1: 10 bits a byte
HANDSHAKE_EVERY_S = 0.2
HANDSHAKE_TIMEOUT_S = 5.0
IDENTIFY_TIMEOUT_S = 2.0
REPLY_TIMEOUT_S = 1.0
KEY_PREFIX = "gripper:"


class NoReply(UserError, TimeoutError):
    """The port opened but the board did not answer (an OSError: the loop retries)."""


@dataclass(frozen=True)
class GripperConfig:
    port: str
    key: str                  # gripper:<serial>, as in the rig ("" = accept any board)
    state_topic: str
    frame_id: str = ""


class _Pending:
    def __init__(self, prefix: str) -> None:
        self.prefix, self.reply, self.done = prefix, "", threading.Event()


class Gripper(Driver):
    def __init__(self, config: GripperConfig, publish: Publish, tactile: TactileForces | None = None,
                 on_status=None) -> None:
        self.config, self._publish = config, publish
        self.tactile = tactile
        self.health = Health(config.key or config.port, on_status)
        self.loop = DeviceLoop(config.key or config.port, self._session, self.health)
        self.serial = ""                      # read from the board (QF)
        self.latch = GripLatch()
        self._port = None
        self._write_lock = threading.Lock()
        self._pending: _Pending | None = None

    def command(self, name: str, timeout: float = REPLY_TIMEOUT_S) -> str:
        """Send a board command (``COMMANDS``) and return its reply line; TimeoutError if none."""
        if name not in COMMANDS:
            raise ValueError(f"unknown gripper command {name!r}; known: {', '.join(COMMANDS)}")
        pending = _Pending(COMMANDS[name])
        self._pending = pending
        self._write(encode(name))
        if not pending.done.wait(timeout):
            self._pending = None
            raise TimeoutError(f"gripper {self.config.port}: no {COMMANDS[name]!r} reply to {name} in {timeout} s")
        return pending.reply

    # ---- session (reader thread) --------------------------------------------------------

    def _session(self, loop: DeviceLoop) -> None:
        with open_serial(self.config.port, BAUDRATE) as port:
            self._port = port
            try:
                lines = LineSplitter(self.health.drop)
                self._until(port, lines, loop, STATE_PREFIX, HANDSHAKE, HANDSHAKE_EVERY_S, HANDSHAKE_TIMEOUT_S)
                reply = self._until(port, lines, loop, SERIAL_REPLY, "QF", IDENTIFY_TIMEOUT_S, IDENTIFY_TIMEOUT_S)
                if loop.stopping:
                    return
                self._check_identity(reply)
                self.latch = GripLatch()
                loop.opened(f"{self.config.port}: board {KEY_PREFIX}{self.serial}")
                while not loop.stopping:
                    data = read_some(port)
                    read_ns = clock.now_ns()
                    for line in lines.feed(data):
                        self.line(line, read_ns)
            finally:
                self._port = None

    def _until(self, port, lines: LineSplitter, loop: DeviceLoop, prefix: str, ask: str, every_s: float,
               timeout_s: float) -> str:
        """Send ``ask`` every ``every_s`` until a line starting with ``prefix`` comes (other
        lines are ignored: the board may be streaming); NoReply after ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        next_ask = 0.0
        while not loop.stopping:
            now = time.monotonic()
            if now > deadline:
                raise NoReply(f"{self.config.port}: no {prefix!r} line in answer to {ask!r} within {timeout_s} s")
            if now >= next_ask:
                self._write(encode(ask))
                next_ask = now + every_s
            for line in lines.feed(read_some(port)):
                if line.startswith(prefix):
                    return line
        return ""

    def _check_identity(self, reply: str) -> None:
        """The board's serial (QF) must be the rig's key: another board is reported, not used."""
        self.serial = reply[len(SERIAL_REPLY):].strip()
        key = KEY_PREFIX + self.serial
        if self.config.key and key != self.config.key:
            raise ConnectionError(f"{self.config.port} is board {key}, the rig names {self.config.key}; "
                                  "not used (fix the rig key or the port)")

    def line(self, line: str, read_ns: int) -> None:
        """One line as read at ``read_ns``: a pending command's reply, or a STATE to publish."""
        pending = self._pending
        if pending is not None and line.startswith(pending.prefix):
            pending.reply = line
            self._pending = None
            pending.done.set()
            return
        if not line.startswith(STATE_PREFIX):
            known_reply = any(line.startswith(r) for r in COMMANDS.values())
            self.health.drop(BAD_REPLY if known_reply else BAD_LINE)
            return
        try:
            state = parse_state(line)
        except BadFrame as exc:
            self.health.drop(exc.reason)
            return
        fz = self.tactile.fz_max_mn() if self.tactile is not None else 0.0
        latched = self.latch.update(state, fz)
        stamp = read_ns - (len(line) + 2) * NS_PER_BYTE
        payload = {"state": np.array([state.pct, float(latched), fz], dtype=np.float32)}
        self._publish(self.config.state_topic, gripper_state_message(store(), payload, header(stamp, self.config.frame_id)))
        self.health.sent()

    def _write(self, data: bytes) -> None:
        port = self._port
        if port is None:
            raise ConnectionError(f"gripper {self.config.port} is not connected")
        with self._write_lock:
            port.write(data)
