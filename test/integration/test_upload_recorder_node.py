"""`egorec recorder --upload-server`: every committed episode goes to the server by itself,
an aborted one never does, and the queue shows in ~/status and /diagnostics. Loopback DDS."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.cli import egorec_ok
from helpers.upload import local_slice, members_of, upload_server

from egorec_ros.live.diagnostics import DIAGNOSTIC_ARRAY, OK
from egorec_ros.live.node import STATUS
from egorec_ros.messages.typestores import ros2_typestore
from egorec_ros.transport.base import RECORDER
from egorec_ros.transport.dds import DdsTransport
from egorec_ros.transport.dds.loopback import loopback_env
from helpers.dds_domains import domain_for

RIG, SIZE, NAME = "uvc_pair", "320x240", "rec_up22"
STORE = ros2_typestore()


@pytest.fixture
def dds_env(monkeypatch):
    env = loopback_env(domain_for(__name__))
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return dict(os.environ, PYTHONUNBUFFERED="1")


def wait_for(what, timeout_s: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if what():
            return True
        time.sleep(0.05)
    return False


def test_the_recorder_uploads_committed_episodes_only(tmp_path: Path, dds_env) -> None:
    out = tmp_path / "out"
    with upload_server(tmp_path / "srv") as server:
        procs = [subprocess.Popen([sys.executable, "-m", "egorec_ros.cli", *args], env=dds_env,
                                  stdout=(tmp_path / f"{name}.log").open("w"), stderr=subprocess.STDOUT)
                 for name, args in (
                     ("pub", ["sim-devices", "--rig", RIG, "--size", SIZE, "--clean"]),
                     ("rec", ["recorder", "--rig", RIG, "--size", SIZE, "--out", str(out), "--task", "t",
                              "--name", NAME, "--upload-server", server.url]))]
        log = tmp_path / "rec.log"
        try:
            statuses: list = []
            diags: list = []
            with DdsTransport() as transport:
                transport.subscribe(f"/{NAME}/status", STATUS, RECORDER,
                                    lambda cdr, _t: statuses.append(STORE.deserialize_cdr(cdr, STATUS)))
                transport.subscribe("/diagnostics", DIAGNOSTIC_ARRAY, RECORDER,
                                    lambda cdr, _t: diags.append(STORE.deserialize_cdr(cdr, DIAGNOSTIC_ARRAY)))
                assert wait_for(lambda: statuses and statuses[-1].streams
                                and all(0 <= s.last_sample_age_s < 0.5 for s in statuses[-1].streams)), log.read_text()

                def ctl(*args: str) -> str:
                    return egorec_ok("ctl", *args, "--name", NAME, env=dds_env, timeout=120)

                assert "episode_index 1" in ctl("start")
                assert wait_for(lambda: statuses[-1].rows > 15)
                assert "rows committed" in ctl("stop")
                assert "episode_index 2" in ctl("start")
                assert wait_for(lambda: statuses[-1].rows > 15)
                assert "discarded" in ctl("abort")                    # never uploaded
                assert wait_for(lambda: len(server.received()) == 1, 30), log.read_text()
                assert wait_for(lambda: "0 waiting, 1 done, 0 failed" in statuses[-1].upload, 10), statuses[-1].upload
                assert (statuses[-1].upload_pending, statuses[-1].upload_failed) == (0, 0)
                upload_diag = [d for arr in diags[-3:] for d in arr.status if d.name.endswith(": upload")]
                assert upload_diag and upload_diag[-1].level == OK
            procs[1].send_signal(signal.SIGTERM)
            assert procs[1].wait(timeout=60) == 0, log.read_text()
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        (received,) = server.received()                            # episode 1, once; the aborted one never
        assert (received["name"], received["episode_index"]) == ("t", "0")
        assert members_of(server.zip_of(received["id"])) == local_slice(out / "t", 1)
