"""`egorec recorder --upload-server`: every committed episode goes to the server by itself,
an aborted one never does, and the queue shows in ~/status and /diagnostics; with
`--upload-delete-after` the recorder deletes what the server confirmed, its numbers never
reused. Loopback DDS."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from helpers.cli import egorec_ok
from helpers.polling import until
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


@contextmanager
def recorder_and_devices(tmp_path: Path, out: Path, env: dict, *upload: str) -> Iterator[list[subprocess.Popen]]:
    """Simulated devices and `egorec recorder ... UPLOAD` in their own processes; killed if still alive."""
    procs = [subprocess.Popen([sys.executable, "-m", "egorec_ros.cli", *args], env=env,
                              stdout=(tmp_path / f"{name}.log").open("w"), stderr=subprocess.STDOUT)
             for name, args in (
                 ("pub", ["sim-devices", "--rig", RIG, "--size", SIZE, "--clean"]),
                 ("rec", ["recorder", "--rig", RIG, "--size", SIZE, "--out", str(out), "--task", "t",
                          "--name", NAME, *upload]))]
    try:
        yield procs
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


def streams_flowing(statuses: list) -> bool:
    return bool(statuses and statuses[-1].streams and all(0 <= s.last_sample_age_s < 0.5 for s in statuses[-1].streams))


def ctl(env: dict, *args: str) -> str:
    return egorec_ok("ctl", *args, "--name", NAME, env=env, timeout=120)


def test_the_recorder_uploads_committed_episodes_only(tmp_path: Path, dds_env) -> None:
    out = tmp_path / "out"
    log = tmp_path / "rec.log"
    with upload_server(tmp_path / "srv") as server, \
            recorder_and_devices(tmp_path, out, dds_env, "--upload-server", server.url) as procs:
        statuses: list = []
        diags: list = []
        with DdsTransport() as transport:
            transport.subscribe(f"/{NAME}/status", STATUS, RECORDER,
                                lambda cdr, _t: statuses.append(STORE.deserialize_cdr(cdr, STATUS)))
            transport.subscribe("/diagnostics", DIAGNOSTIC_ARRAY, RECORDER,
                                lambda cdr, _t: diags.append(STORE.deserialize_cdr(cdr, DIAGNOSTIC_ARRAY)))
            assert until(lambda: streams_flowing(statuses), 60), log.read_text()
            assert "episode_index 1" in ctl(dds_env, "start")
            assert until(lambda: statuses[-1].rows > 15, 60)
            assert "rows committed" in ctl(dds_env, "stop")
            assert "episode_index 2" in ctl(dds_env, "start")
            assert until(lambda: statuses[-1].rows > 15, 60)
            assert "discarded" in ctl(dds_env, "abort")                    # never uploaded
            assert until(lambda: len(server.received()) == 1, 30), log.read_text()
            assert until(lambda: "0 waiting, 1 done, 0 failed" in statuses[-1].upload, 10), statuses[-1].upload
            assert (statuses[-1].upload_pending, statuses[-1].upload_failed) == (0, 0)
            upload_diag = [d for arr in diags[-3:] for d in arr.status if d.name.endswith(": upload")]
            assert upload_diag and upload_diag[-1].level == OK
            # per episode (the console's Episodes column) and the queue's sums on ~/status
            (sent,) = server.received()
            listed = json.loads(ctl(dds_env, "list", "--json"))
            assert [e["upload"] for e in listed["episodes"]] == [
                {"state": "done", "attempts": 1, "last_error": "", "session_id": sent["id"], "size": sent["size"]}]
            assert f"[upload done · session {sent['id']}]" in ctl(dds_env, "list")     # the terminal's list too
            last = statuses[-1]
            assert (last.upload_server, last.upload_done, last.upload_done_bytes, last.upload_uploading,
                    last.upload_episode_index) == (server.url, 1, sent["size"], 0, 0)
        procs[1].send_signal(signal.SIGTERM)
        assert procs[1].wait(timeout=60) == 0, log.read_text()
        (received,) = server.received()                            # episode 1, once; the aborted one never
        assert (received["name"], received["episode_index"]) == ("t", "0")
        assert members_of(server.zip_of(received["id"])) == local_slice(out / "t", 1)   # kept (no --upload-delete-after)


def test_the_recorder_deletes_what_the_server_confirmed(tmp_path: Path, dds_env) -> None:
    """Episode 1 is deleted while episode 2 records into the same task (through the recorder's
    writer, which holds the task); both reach the server first; the next number is 3."""
    out = tmp_path / "out"
    log = tmp_path / "rec.log"
    task = out / "t"

    def data_file(f: int) -> Path:
        return task / "data" / "chunk-000" / f"episode-{f:03d}.parquet"

    with upload_server(tmp_path / "srv") as server, \
            recorder_and_devices(tmp_path, out, dds_env, "--upload-server", server.url,
                                 "--upload-delete-after") as procs:
        statuses: list = []
        with DdsTransport() as transport:
            transport.subscribe(f"/{NAME}/status", STATUS, RECORDER,
                                lambda cdr, _t: statuses.append(STORE.deserialize_cdr(cdr, STATUS)))
            assert until(lambda: streams_flowing(statuses), 60), log.read_text()
            server.faults("slow:2", "slow:2")     # answers 2 s after storing: the local copy is read before it goes
            assert "episode_index 1" in ctl(dds_env, "start")
            assert until(lambda: statuses[-1].rows > 15, 60)
            assert "rows committed" in ctl(dds_env, "stop")
            first = local_slice(task, 1)          # what the server must receive before the copy here goes
            assert "episode_index 2" in ctl(dds_env, "start")
            assert until(lambda: not data_file(0).exists(), 30), log.read_text()
            assert len(server.received()) == 1
            assert until(lambda: (statuses[-1].state, statuses[-1].episode_index) == ("recording", 2), 10)
            assert until(lambda: statuses[-1].rows > 15, 60)
            assert "rows committed" in ctl(dds_env, "stop")
            second = local_slice(task, 2)
            assert until(lambda: not data_file(1).exists(), 30), log.read_text()
            assert "episode_index 3" in ctl(dds_env, "start")             # numbers are never reused
            assert "discarded" in ctl(dds_env, "abort")
        procs[1].send_signal(signal.SIGTERM)
        assert procs[1].wait(timeout=60) == 0, log.read_text()
        received = server.received()
    assert [(r["name"], r["episode_index"]) for r in received] == [("t", "0"), ("t", "1")]
    for r, local in zip(received, (first, second)):
        assert members_of(server.zip_of(r["id"])) == local                 # byte-identical, then deleted here
    assert not list(task.glob("data/**/*.parquet")) and not list(task.glob("videos/**/episode-*"))
    assert not list(task.glob("meta/episodes/**/*.parquet"))
    assert json.loads((task / "meta" / "info.json").read_text())["total_episodes"] == 2     # §1.3: kept
    text = log.read_text()
    assert text.count("deleted locally, the server has it") == 2 and "not deleted" not in text, text
