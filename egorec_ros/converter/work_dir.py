"""The private folder a conversion run stages its episodes in: ``ROOT/.egorec-convert-<id>/``.

Beside the task dir (same filesystem, so adopting a staged episode is a rename), hidden
(readers and the validator ignore dot-folders), and removed when the run ends, also on
failure or Ctrl-C. The driver holds an OS lock on it while it runs; a folder left by a
run that was killed (no lock holder) is removed by the next run in the same ROOT.

It also proves that workers see the driver's filesystem: a probe file holds a random
token which every job checks before writing (Ray workers on other machines need ROOT
on a shared filesystem).
"""
from __future__ import annotations

import fcntl
import os
import secrets
import shutil
import socket
from pathlib import Path
from types import TracebackType

from egorec_ros.converter.failures import SharedFilesystemError

PREFIX = ".egorec-convert-"
PROBE = "probe"
LOCK = "lock"


class WorkDir:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).resolve()        # absolute: workers may run in another directory
        self.root.mkdir(parents=True, exist_ok=True)
        remove_stale(self.root)
        self.token = secrets.token_hex(8)
        self.path = self.root / f"{PREFIX}{os.getpid()}-{self.token}"
        # locked before it is visible in the folder, so no other run can take it for stale
        lock = self.root / f".egorec-lock-{self.token}"
        self._lock: int | None = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        self.path.mkdir()
        os.rename(lock, self.path / LOCK)
        (self.path / PROBE).write_text(self.token)

    @property
    def probe(self) -> tuple[str, str]:
        return str(self.path / PROBE), self.token

    def job_dir(self, order: int) -> str:
        return str(self.path / f"job-{order:06d}")

    def remove(self) -> None:
        if self._lock is not None:
            shutil.rmtree(self.path, ignore_errors=True)
            os.close(self._lock)
            self._lock = None

    def __enter__(self) -> WorkDir:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.remove()


def remove_stale(root: Path) -> list[Path]:
    """Remove work folders of runs that no longer hold their lock (killed runs)."""
    removed = []
    for folder in root.glob(f"{PREFIX}*"):
        try:
            fd = os.open(folder / LOCK, os.O_RDWR)
        except OSError:
            continue            # being created right now, or not ours
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            continue            # a live run
        finally:
            os.close(fd)
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed


def check_shared(probe: str, token: str) -> None:
    """Raise SharedFilesystemError unless this process sees the driver's probe file."""
    try:
        seen = Path(probe).read_text()
    except OSError:
        seen = None
    if seen != token:
        raise SharedFilesystemError(
            f"worker on {socket.gethostname()} cannot see {Path(probe).parent} (written by the driver): workers "
            "stage episodes under the output ROOT, so with a Ray cluster ROOT must be on a filesystem shared "
            "by the driver and every worker node (NFS, ...); pass such a path to --out")
