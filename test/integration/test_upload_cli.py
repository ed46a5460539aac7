"""`egorec upload` as a user meets it: the login cookie, a wrong password, an ambiguous project,
an unreachable server, a 4xx, a full disk, a readable credentials file: one line each, never a
traceback or the password; --status per episode; --precompress."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import av
import pytest
from helpers.upload import egorec, make_task, members_of, upload_server

SECRET = "s3cret-Pa55"
PROJECTS = [{"id": "p1", "name": "kitchen", "workflow_names": ["pick_cup"]},
            {"id": "p2", "name": "lab", "workflow_names": ["pick_cup"]},
            {"id": "p3", "name": "lab", "workflow_names": []}]


@pytest.fixture(scope="module")
def task_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("recordings")
    make_task(root, "pick_cup", [1, 2])
    return root


@pytest.fixture
def root(task_root: Path, tmp_path: Path) -> Path:
    shutil.copytree(task_root, tmp_path / "rec")
    return tmp_path / "rec"


def one_line_error(result) -> str:
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("egorec: ")
    return last


def test_login_cookie_and_all_new(root: Path, tmp_path: Path) -> None:
    with upload_server(tmp_path / "srv", user="ana", password=SECRET, projects=PROJECTS) as server:
        r = egorec("upload", str(root / "pick_cup"), "--server", server.url, "--user", "ana", "--project", "kitchen",
                   env={"EGOREC_UPLOAD_PASSWORD": SECRET})
        assert r.returncode == 0, r.stderr
        assert SECRET not in r.stderr + r.stdout
        assert server.logins() == 1                     # one login; the cookie carried every other request
        got = sorted((s["episode_index"], s["project_id"]) for s in server.received())
        assert got == [("0", "p1"), ("1", "p1")]
        # --all-new again: nothing new, nothing sent twice
        r = egorec("upload", str(root / "pick_cup"), "--all-new", "--server", server.url, "--user", "ana",
                   env={"EGOREC_UPLOAD_PASSWORD": SECRET})
        assert r.returncode == 0 and "nothing to upload" in r.stderr
        assert len(server.received()) == 2
        status = egorec("upload", str(root / "pick_cup"), "--status")
        assert status.returncode == 0
        lines = [ln for ln in status.stdout.splitlines() if "episode" in ln and "done" in ln]
        assert len(lines) == 2 and "0 waiting, 2 done, 0 failed" in status.stdout


def test_wrong_password_and_missing_login(root: Path, tmp_path: Path) -> None:
    with upload_server(tmp_path / "srv", user="ana", password=SECRET) as server:
        r = egorec("upload", str(root / "pick_cup"), "--server", server.url, "--user", "ana",
                   env={"EGOREC_UPLOAD_PASSWORD": "wrong-one"})
        line = one_line_error(r)
        assert "wrong user name or password" in line and "wrong-one" not in r.stderr
        r = egorec("upload", str(root / "pick_cup"), "--server", server.url, env={"EGOREC_UPLOAD_PASSWORD": ""})
        assert "wants a login" in one_line_error(r) or "refused access" in one_line_error(r)
        assert server.received() == []
    # the episodes stay queued
    status = egorec("upload", str(root / "pick_cup"), "--status")
    assert "2 waiting" in status.stdout


def test_credentials_file_must_be_private(root: Path, tmp_path: Path) -> None:
    creds = tmp_path / "creds.json"
    creds.write_text(json.dumps({"user": "ana", "password": SECRET}))
    creds.chmod(0o644)
    with upload_server(tmp_path / "srv", user="ana", password=SECRET) as server:
        r = egorec("upload", str(root / "pick_cup"), "--server", server.url, "--credentials", str(creds))
        assert "chmod 600" in one_line_error(r) and SECRET not in r.stderr
        creds.chmod(0o600)
        r = egorec("upload", str(root / "pick_cup"), "--server", server.url, "--credentials", str(creds))
        assert r.returncode == 0, r.stderr
        assert SECRET not in r.stderr + r.stdout
        assert len(server.received()) == 2


def test_ambiguous_project(root: Path, tmp_path: Path) -> None:
    with upload_server(tmp_path / "srv", projects=PROJECTS) as server:
        r = egorec("upload", str(root / "pick_cup"), "--server", server.url)       # the server cannot tell: 409
        line = one_line_error(r)
        assert "which project" in line and "kitchen, lab" in line and "--project" in line
        r = egorec("upload", str(root / "pick_cup"), "--server", server.url, "--project", "lab")   # two named lab
        assert "2 projects" in one_line_error(r)
        r = egorec("upload", str(root / "pick_cup"), "--server", server.url, "--project", "nope")
        assert "no project 'nope'" in one_line_error(r)
        assert server.received() == []
        r = egorec("upload", str(root / "pick_cup"), "--server", server.url, "--project", "p2")
        assert r.returncode == 0, r.stderr
        assert sorted(s["project_id"] for s in server.received()) == ["p2", "p2"]


def test_unreachable_server_and_bad_episodes(root: Path, tmp_path: Path) -> None:
    r = egorec("upload", str(root / "pick_cup"), "--server", "http://127.0.0.1:9")
    line = one_line_error(r)
    assert "cannot reach the upload server http://127.0.0.1:9" in line and "stay queued" in line
    r = egorec("upload", str(root / "pick_cup"), "--episodes", "2,7-8", "--server", "http://127.0.0.1:9")
    assert "no episode 7, 8" in one_line_error(r)
    r = egorec("upload", str(root / "pick_cup"), "--episodes", "x", "--server", "http://127.0.0.1:9")
    assert "--episodes" in one_line_error(r)


def test_a_4xx_fails_the_episode_without_retrying(root: Path, tmp_path: Path) -> None:
    with upload_server(tmp_path / "srv") as server:
        server.faults("413")
        r = egorec("upload", str(root / "pick_cup"), "--server", server.url)
        assert r.returncode == 1 and "Traceback" not in r.stderr
        assert "HTTP 413 file too large for this project" in r.stderr and "will not be repeated" in r.stderr
        assert "not sent: 1 (failed" in r.stderr
        assert len(server.received()) == 1                   # episode 2 went; episode 1 was not retried
        status = egorec("upload", str(root / "pick_cup"), "--status")
        assert "1 waiting" not in status.stdout and "0 waiting, 1 done, 1 failed" in status.stdout


def test_a_full_disk_is_one_line(root: Path, tmp_path: Path) -> None:
    """The slice is built on a 1 MB tmpfs-like limit: a file system that is full (RLIMIT_FSIZE
    cannot fake ENOSPC, so a loop-free check: the free-space test before writing)."""
    with upload_server(tmp_path / "srv") as server:
        code = ("import shutil, sys\nfrom collections import namedtuple\nU = namedtuple('U', 'total used free')\n"
                "shutil.disk_usage = lambda p: U(10**9, 10**9 - 1000, 1000)\n"
                "from egorec_ros.cli import main\nsys.exit(main(sys.argv[1:]))\n")
        import subprocess
        import sys
        r = subprocess.run([sys.executable, "-c", code, "upload", str(root / "pick_cup"), "--server", server.url],
                           capture_output=True, text=True, timeout=60)
        line = one_line_error(r)
        assert "no room to build the upload slice" in line and "free space" in line
        assert server.received() == []


def test_precompress_reencodes_rgb_only(root: Path, tmp_path: Path) -> None:
    with upload_server(tmp_path / "srv") as server:
        r = egorec("upload", str(root / "pick_cup"), "--episodes", "1", "--server", server.url, "--precompress")
        assert r.returncode == 0, r.stderr
        (record,) = server.received()
        got = members_of(server.zip_of(record["id"]))
        local = root / "pick_cup"
        rgb, depth = "videos/chunk-000/gripper_rgb/episode-000.mp4", "videos/chunk-000/gripper_depth/episode-000.mp4"
        assert got[depth] == (local / depth).read_bytes()                    # 12-bit HEVC depth untouched
        assert got["data/chunk-000/episode-000.parquet"] == (local / "data/chunk-000/episode-000.parquet").read_bytes()
        out = tmp_path / "rgb.mp4"
        out.write_bytes(got[rgb])
        with av.open(str(out)) as c, av.open(str(local / rgb)) as orig:
            assert c.streams.video[0].codec_context.name == "hevc"
            assert orig.streams.video[0].codec_context.name == "h264"          # the local file stays as recorded
            assert c.streams.video[0].frames == orig.streams.video[0].frames == 4


def test_delete_after_removes_the_sent_episode_and_old_temporaries_are_swept(root: Path, tmp_path: Path) -> None:
    import os
    import time

    stale = root / ".egorec-upload" / "000099-gone-episode-000001.zip"
    stale.parent.mkdir()
    stale.write_bytes(b"left by a crash")
    os.utime(stale, (time.time() - 2 * 86400,) * 2)
    fresh = stale.with_name("000098-other-episode-000001.zip")
    fresh.write_bytes(b"another uploader's, just built")
    with upload_server(tmp_path / "srv") as server:
        r = egorec("upload", str(root / "pick_cup"), "--episodes", "2", "--server", server.url, "--delete-after")
        assert r.returncode == 0, r.stderr
        assert "deleted locally" in r.stderr
        (record,) = server.received()
        assert record["episode_index"] == "1"
    assert not (root / "pick_cup" / "data/chunk-000/episode-001.parquet").exists()
    assert not (root / "pick_cup" / "videos/chunk-000/gripper_rgb/episode-001.mp4").exists()
    assert (root / "pick_cup" / "data/chunk-000/episode-000.parquet").exists()
    assert not stale.exists() and fresh.exists()
