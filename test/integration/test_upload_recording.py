"""Uploading while a recording runs leaves the recording's late and repeated counts as they are
without the upload: the same recording is made before, during and after an upload, and the one
during it has no more late or repeated samples on any stream than the worse of the two without
(on a quiet machine all three are 0; on a shared one the two without bound what the load alone does).

The upload is `egorec upload` of a 512 MiB episode at 400 Mbit/s in its own process (it lowers
itself below the recorder); the server stands for a remote machine and runs at niceness 19."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.upload import make_task, upload_server

from egorec_ros.schema.episode_row import read_episode_row
from egorec_ros.upload.slice import video_files

RECORD = ["record", "--sim", "--clean", "--rig", "uvc_pair", "--size", "320x240", "--seconds", "3"]


def problem_counts(out: Path) -> dict[str, tuple[int, int]]:
    row = read_episode_row(out / "uvc_pair" / "meta" / "episodes" / "chunk-000" / "episode-000.parquet")
    streams = row["drop_stats"]["streams"]
    return {sid: (c.get("late", 0), c.get("repeated", 0)) for sid, c in streams.items()}


def record(out: Path) -> dict[str, tuple[int, int]]:
    r = subprocess.run([sys.executable, "-m", "egorec_ros.cli", *RECORD, "--out", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr + r.stdout
    return problem_counts(out)


@pytest.mark.slow
def test_a_recording_is_not_disturbed_by_an_upload(tmp_path: Path) -> None:
    before = record(tmp_path / "before")
    root = tmp_path / "rec"
    task = make_task(root, "big", [1])
    with open(video_files(task, 1)["gripper_rgb"], "r+b") as f:
        f.truncate(512 << 20)
    with upload_server(tmp_path / "srv", discard=True) as server:
        os.setpriority(os.PRIO_PROCESS, server.proc.pid, 19)
        upload = subprocess.Popen([sys.executable, "-m", "egorec_ros.cli", "upload", str(task), "--server", server.url,
                                   "--limit-mbps", "400"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 30
            while not any(server.inflight()):
                assert time.monotonic() < deadline and upload.poll() is None, "the upload did not start"
                time.sleep(0.05)
            during = record(tmp_path / "during")
            assert server.inflight(), "the upload ended before the recording did: nothing was measured"
        finally:
            upload.kill()
            upload.wait(timeout=10)
    after = record(tmp_path / "after")
    print(f"late, repeated per stream: before {before}, during an upload {during}, after {after}")
    assert during.keys() == before.keys() == after.keys()
    for sid, (late, repeated) in during.items():
        assert late <= max(before[sid][0], after[sid][0]) and repeated <= max(before[sid][1], after[sid][1]), sid
