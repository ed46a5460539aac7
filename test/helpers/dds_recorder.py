"""A recorder node over DDS in its own process with simulated devices in another, driven like a
user drives it (`egorec ctl`, its services, its ~/status and /diagnostics). For any test that needs
a live recorder (QA, lifecycle services, the console): ``with running_recorder(tmp_path, env) as rec:``.

Loopback only (``dds_env``): each test gets a domain id of its own so parallel runs do not meet."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from egorec_ros.live.diagnostics import DIAGNOSTIC_ARRAY
from egorec_ros.live.node import DELETE, LIST_EPISODES, START, STATUS, STOP
from egorec_ros.messages.typestores import ros2_typestore
from egorec_ros.transport.base import RECORDER
from egorec_ros.transport.dds import DdsTransport
from egorec_ros.transport.dds.loopback import loopback_env
from helpers.cli import egorec_ok
from helpers.dds_domains import domain_for

STORE = ros2_typestore()


def dds_env_for(module: str) -> dict:
    """os.environ pinned to loopback DDS in a domain of ``module``'s own (see helpers/dds_domains)."""
    return dict(os.environ, **loopback_env(domain_for(module)), PYTHONUNBUFFERED="1")


def egorec_bg(args: list[str], env: dict, log: Path) -> subprocess.Popen:
    """`egorec ARGS` in the background, output to ``log``."""
    return subprocess.Popen([sys.executable, "-m", "egorec_ros.cli", *args], env=env,
                            stdout=log.open("w"), stderr=subprocess.STDOUT)


class Watch:
    """The latest ~/status and every /diagnostics array a recorder publishes."""

    def __init__(self, transport: DdsTransport, name: str) -> None:
        self.status = None
        self.diagnostics: list[tuple[float, object]] = []
        self._lock = threading.Lock()
        transport.subscribe(f"/{name}/status", STATUS, RECORDER, self._on_status)
        transport.subscribe("/diagnostics", DIAGNOSTIC_ARRAY, RECORDER, self._on_diag)

    def _on_status(self, cdr, _t) -> None:
        self.status = STORE.deserialize_cdr(cdr, STATUS)

    def _on_diag(self, cdr, _t) -> None:
        with self._lock:
            self.diagnostics.append((time.monotonic(), STORE.deserialize_cdr(cdr, DIAGNOSTIC_ARRAY)))

    def wait(self, pred: Callable, timeout: float = 60.0) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.status is not None and pred(self.status):
                return True
            time.sleep(0.05)
        return False

    def first_array(self, pred: Callable, after: float, timeout: float = 5.0) -> float:
        """Arrival time of the first /diagnostics array after ``after`` that satisfies ``pred`` (it is
        published right after the status of the same second, so it may still be on its way)."""
        end = time.monotonic() + timeout
        while True:
            with self._lock:
                hit = next((t for t, arr in self.diagnostics if t > after and pred(arr)), None)
            if hit is not None or time.monotonic() > end:
                assert hit is not None, "no /diagnostics array reported it"
                return hit
            time.sleep(0.05)

    def first_diagnostic(self, pred: Callable, after: float, timeout: float = 5.0) -> tuple[float, object] | None:
        """(arrival, DiagnosticStatus) of the first status entry after ``after`` satisfying ``pred``."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self._lock:
                for t, arr in self.diagnostics:
                    hit = next((d for d in arr.status if pred(d)), None) if t > after else None
                    if hit is not None:
                        return t, hit
            time.sleep(0.05)
        return None


def streams_fresh(status) -> bool:
    return bool(status.streams) and all(0 <= s.last_sample_age_s < 0.5 for s in status.streams)


@dataclass
class RunningRecorder:
    out: Path                      # dataset root; the task is out / task
    task: str
    name: str
    env: dict
    transport: DdsTransport
    watch: Watch
    logs: Path
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)

    @property
    def task_dir(self) -> Path:
        return self.out / self.task

    def ctl(self, *args: str) -> str:
        """`egorec ctl ARGS --name NAME` that must succeed; its stdout."""
        return egorec_ok("ctl", *args, "--name", self.name, env=self.env, timeout=120)

    def call(self, service: str, srvtype: str, timeout: float = 60.0, **fields):
        """Call ``/<name>/<service>`` from this process; the decoded response."""
        req = STORE.serialize_cdr(STORE.types[f"{srvtype}_Request"](**fields), f"{srvtype}_Request")
        cdr = self.transport.call(f"/{self.name}/{service}", srvtype, bytes(req), timeout)
        return STORE.deserialize_cdr(cdr, f"{srvtype}_Response")

    def start(self, instruction: str = "", task: str = ""):
        reply = self.call("start", START, task=task, instruction=instruction)
        assert reply.success, reply.message
        return reply

    def stop(self):
        return self.call("stop", STOP, structure_needs_at_least_one_member=0)

    def delete(self, episode_index: int):
        return self.call("delete", DELETE, episode_index=episode_index)

    def list_episodes(self, task: str = "") -> list[dict]:
        reply = self.call("list_episodes", LIST_EPISODES, task=task)
        assert reply.success, reply.message
        return json.loads(reply.episodes_json)

    def log_text(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')}" for p in sorted(self.logs.glob("*.log")))

    def kill_devices(self) -> None:
        proc = self.procs.pop("devices", None)
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)


@contextmanager
def running_recorder(tmp_path: Path, env: dict, *, rig: str = "uvc_pair", size: str = "320x240",
                     name: str = "rec_qa", task: str = "t", device_args: tuple[str, ...] = ("--clean",),
                     recorder_args: tuple[str, ...] = ()) -> Iterator[RunningRecorder]:
    """`egorec sim-devices` and `egorec recorder` running (streams fresh on ~/status) until the
    block ends; then the recorder gets SIGTERM (commits a running episode) and both are reaped."""
    logs = tmp_path / "logs"
    logs.mkdir(exist_ok=True)
    out = tmp_path / "out"
    procs = {"devices": egorec_bg(["sim-devices", "--rig", rig, "--size", size, *device_args], env,
                                  logs / "devices.log"),
             "recorder": egorec_bg(["recorder", "--rig", rig, "--size", size, "--out", str(out), "--task", task,
                                    "--name", name, *recorder_args], env, logs / "recorder.log")}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)           # this process's DdsTransport on the same loopback domain
    try:
        with DdsTransport() as transport:
            rec = RunningRecorder(out, task, name, env, transport, Watch(transport, name), logs, procs)
            assert rec.watch.wait(streams_fresh), rec.log_text()
            yield rec
            recorder = procs["recorder"]
            recorder.terminate()
            assert recorder.wait(timeout=120) == 0, rec.log_text()
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
