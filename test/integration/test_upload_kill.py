"""`kill -9` of the uploader in the middle of a file, and again after the server stored an
episode but before it answered: after a restart every episode is on the server exactly once,
byte-identical to the local slice."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from helpers.polling import until
from helpers.upload import local_slice, make_task, members_of, upload_server

from egorec_ros.upload.queue import UPLOADING, UploadQueue


def start_upload(task: Path, url: str, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "egorec_ros.cli", "upload", str(task), "--server", url, *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def test_kill_9_mid_file_and_before_the_answer_then_restart(tmp_path: Path) -> None:
    root = tmp_path / "rec"
    task = make_task(root, "pour", [1, 2])
    with upload_server(tmp_path / "srv") as server:
        # 1: killed while the body of episode 1 is half sent (2 Mbit/s: ~4 s for its ~1 MB)
        proc = start_upload(task, server.url, "--limit-mbps", "2")
        try:
            assert until(lambda: any(n > 200_000 for n in server.inflight()))
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        assert until(lambda: not server.inflight())
        assert server.received() == []
        with UploadQueue(root) as queue:
            first = queue.find("pour", 1, server.url)
            assert first is not None and first.state == UPLOADING and first.known_sessions == []
            slice_sha = first.sha256
        # 2: the server stores episode 1 and never answers; killed while waiting for the answer
        server.faults("silent")
        proc = start_upload(task, server.url, "--timeout", "60")
        try:
            assert until(lambda: len(server.received()) == 1)
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        # 3: the restart finds episode 1 on the server (not sent again) and sends episode 2
        r = subprocess.run([sys.executable, "-m", "egorec_ros.cli", "upload", str(task), "--server", server.url],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        assert "episode 1 of pour: already on the server" in r.stderr
        received = server.received()
        assert sorted(s["episode_index"] for s in received) == ["0", "1"]          # each exactly once
        with UploadQueue(root) as queue:
            entries = {e.episode_index: e for e in queue.entries()}
        assert entries[1].sha256 == slice_sha                   # the slice built before the kill was the one sent
        for s in received:
            n = int(s["episode_index"]) + 1
            assert entries[n].session_id == s["id"]
            assert members_of(server.zip_of(s["id"])) == local_slice(task, n)
        assert not list((root / ".egorec-upload").glob("*"))     # no slice or temporary left behind
