"""One writer per task directory: an OS lock (flock) on ``meta/.writer.lock``.

The lock dies with the process (kill -9 included), so a crashed recorder never
leaves a stale lock behind; the file only carries who holds it, for the message."""
from __future__ import annotations

import fcntl
import json
import os
import socket
import time
from pathlib import Path

from egorec_ros.errors import UserError
from egorec_ros.layout.paths import LOCK


class TaskLockedError(UserError, RuntimeError):
    """Another process is writing this task directory."""


class TaskLock:
    def __init__(self, task_dir: Path) -> None:
        self.path = Path(task_dir) / LOCK
        self._fd: int | None = None

    def acquire(self) -> "TaskLock":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            raise TaskLockedError(
                f"task directory {self.path.parent.parent} is already being written by {holder}; "
                "only one writer per task directory: stop the other recorder/converter or write "
                "to another task") from None
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                                 "since": time.strftime("%Y-%m-%dT%H:%M:%S%z")}).encode())
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> "TaskLock":
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def _read_holder(fd: int) -> str:
    try:
        info = json.loads(os.pread(fd, 4096, 0) or b"{}")
        return f"pid {info.get('pid')} on {info.get('host')} since {info.get('since')}"
    except (OSError, ValueError):
        return "another process"
