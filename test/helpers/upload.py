"""What the upload tests share: the test server (upload_server.py) in its own process, and task
folders with real episodes (the Tiny declaration: real parquet, real H.264 and 12-bit HEVC)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
import zipfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from helpers.store import Tiny, tiny_declaration

from egorec_ros.store import TaskWriter
from egorec_ros.upload.slice import slice_members

SERVER = Path(__file__).with_name("upload_server.py")


class Server:
    def __init__(self, proc: subprocess.Popen, port: int, store: Path) -> None:
        self.proc, self.port, self.store = proc, port, store
        self.url = f"http://127.0.0.1:{port}"

    def _call(self, path: str, data: object | None = None) -> dict:
        body = None if data is None else json.dumps(data).encode()
        req = urllib.request.Request(self.url + path, data=body, method="POST" if body is not None else "GET")
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read())

    def faults(self, *faults: str) -> None:
        self._call("/_faults", list(faults))

    def received(self) -> list[dict]:
        return self._call("/_received")["sessions"]

    def logins(self) -> int:
        return self._call("/_received")["logins"]

    def inflight(self) -> list[int]:
        return self._call("/_inflight")["inflight"]

    def zip_of(self, session_id: str) -> Path:
        return self.store / f"{session_id}.zip"


@contextmanager
def upload_server(store: Path, *, user: str | None = None, password: str | None = None,
                  projects: list[dict] | None = None, discard: bool = False) -> Iterator[Server]:
    cmd = [sys.executable, str(SERVER), "--store", str(store), "--projects", json.dumps(projects or [])]
    if user:
        cmd += ["--user", user, "--password", password or ""]
    if discard:
        cmd.append("--discard")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        line = ""
        while not line.startswith("PORT ") and time.monotonic() < deadline:
            line = proc.stdout.readline() if proc.stdout else ""
            if not line and proc.poll() is not None:
                raise RuntimeError(f"upload server exited with {proc.returncode}")
        if not line.startswith("PORT "):
            raise RuntimeError("upload server did not start in 20 s")
        yield Server(proc, int(line.split()[1]), store)
    finally:
        proc.kill()
        proc.wait(timeout=10)


def make_task(root: Path, name: str, numbers: list[int], rows: int = 4) -> Path:
    """A task folder with real Tiny episodes under the given 1-based numbers."""
    tiny = Tiny(tiny_declaration())
    task = root / name
    with TaskWriter(task) as writer:
        for n in numbers:
            episode = writer.begin(tiny.decl, number=n)
            for i in range(rows):
                episode.append(tiny.row(i + n), tiny.frames(i + n))
            episode.end()
    return task


def members_of(zip_path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(zip_path) as zf:
        return {info.filename: zf.read(info) for info in zf.infolist()}


def local_slice(task: Path, episode_index: int) -> dict[str, bytes]:
    return {m.arcname: m.path.read_bytes() for m in slice_members(task, episode_index)}


def egorec(*args: str, env: dict | None = None, timeout: float = 60.0) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "egorec_ros.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})

