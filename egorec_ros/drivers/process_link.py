"""A vendor/helper process as a device: started by the driver session, its stdout read
as the device's bytes; the process exiting is an unplug (the reconnect loop starts it
again), stopping the driver terminates it."""
from __future__ import annotations

import subprocess
import threading
from collections.abc import Sequence

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
