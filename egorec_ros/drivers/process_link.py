"""A vendor/helper process as a device: started by the driver session, its stdout read
as the device's bytes; the process exiting is an unplug (the reconnect loop starts it
again), stopping the driver terminates it."""
from __future__ import annotations

import subprocess
import threading
from collections.abc import Sequence
from typing import IO, Generic, Protocol, TypeVar

from egorec_ros.drivers.health import Health
from egorec_ros.drivers.reconnect import DeviceLoop, Driver

TERMINATE_WAIT_S = 2.0


class ProcessLink:
    def __init__(self, command: Sequence[str], name: str) -> None:
        self.command, self.name = list(command), name
        self._proc: subprocess.Popen | None = None
        self._lock = threading.Lock()

    def start(self) -> subprocess.Popen:
        """Raises OSError when the program cannot be started (the loop retries)."""
        proc = subprocess.Popen(self.command, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, bufsize=0)
        with self._lock:
            self._proc = proc
        return proc

    def ended(self, proc: subprocess.Popen) -> EOFError:
        code = proc.wait()
        return EOFError(f"{self.name}: process {self.command[0]} ended (exit code {code})")

    def terminate(self) -> None:
        with self._lock:
            proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(TERMINATE_WAIT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Resettable(Protocol):
    def reset(self) -> None: ...


D = TypeVar("D", bound=Resettable)


class ProcessDriver(Driver, Generic[D]):
    """A driver whose device is a process: each session starts it and ``pump``s its stdout
    into ``self.decoder`` (which has ``reset()``); the process ending is an unplug."""

    decoder: D

    def __init__(self, command: Sequence[str], name: str, on_status=None) -> None:
        self.health = Health(name, on_status)
        self.process = ProcessLink(command, name)
        self.loop = DeviceLoop(name, self._session, self.health)

    def pump(self, stdout: IO[bytes], loop: DeviceLoop) -> None:
        raise NotImplementedError

    def _interrupt(self) -> None:
        self.process.terminate()

    def _session(self, loop: DeviceLoop) -> None:
        proc = self.process.start()
        try:
            if loop.stopping:               # stop() ran while the process was starting: it found none to end
                return
            self.decoder.reset()
            loop.opened(f"{self.process.command[0]} pid {proc.pid}")
            assert proc.stdout is not None          # ProcessLink.start: stdout=PIPE
            self.pump(proc.stdout, loop)
            if not loop.stopping:
                raise self.process.ended(proc)
        finally:
            self.process.terminate()
