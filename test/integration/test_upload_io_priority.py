"""The recorder's upload thread runs in the idle I/O class (besides its CPU niceness), read back
from the kernel for that thread alone; where the class cannot be set the thread says so once
and uploads anyway."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import psutil
import pytest
from helpers.polling import until
from helpers.upload import local_slice, make_task, members_of, upload_server

from egorec_ros.thread_priority import idle_io_for_thread
from egorec_ros.upload.background import UPLOAD_NICENESS, BackgroundUploader
from egorec_ros.upload.uploader import UploadSettings

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread I/O classes are Linux's")


def io_class(tid: int) -> int:
    return psutil.Process(tid).ionice().ioclass


def test_the_upload_thread_is_in_the_idle_io_class(tmp_path: Path) -> None:
    mine = threading.get_native_id()
    my_class, my_nice = io_class(mine), os.getpriority(os.PRIO_PROCESS, mine)
    make_task(tmp_path / "rec", "t", [1])
    logged: list[str] = []
    with upload_server(tmp_path / "srv") as server:
        up = BackgroundUploader(tmp_path / "rec", UploadSettings(server=server.url), None, logged.append)
        try:
            assert until(lambda: up.thread_id is not None and io_class(up.thread_id) == psutil.IOPRIO_CLASS_IDLE), \
                (up.thread_id, logged)
            tid = up.thread_id
            assert os.getpriority(os.PRIO_PROCESS, tid) == min(19, my_nice + UPLOAD_NICENESS)
            if shutil.which("ionice"):          # util-linux reads ioprio_get itself: the kernel's own answer
                assert subprocess.run(["ionice", "-p", str(tid)], capture_output=True, text=True,
                                      timeout=10).stdout.strip() == "idle"
            up.enqueue("t", 1)
            assert until(lambda: len(server.received()) == 1), logged
        finally:
            up.close()
        assert members_of(server.zip_of(server.received()[0]["id"])) == local_slice(tmp_path / "rec" / "t", 1)
    assert (io_class(mine), os.getpriority(os.PRIO_PROCESS, mine)) == (my_class, my_nice)   # the recorder's own
    assert not any("I/O priority" in m for m in logged), logged


def test_an_io_class_that_cannot_be_set_is_reported_and_the_upload_goes_on(tmp_path: Path, monkeypatch) -> None:
    nobody = int(Path("/proc/sys/kernel/pid_max").read_text()) + 1          # no thread can have this id
    assert f"thread {nobody} failed" in idle_io_for_thread(nobody)           # the refusal, in words, no exception
    monkeypatch.setitem(sys.modules, "psutil", None)         # a robot PC without psutil: import fails
    assert "psutil is not installed" in idle_io_for_thread()
    make_task(tmp_path / "rec", "t", [1])
    logged: list[str] = []
    with upload_server(tmp_path / "srv") as server:
        up = BackgroundUploader(tmp_path / "rec", UploadSettings(server=server.url), None, logged.append)
        try:
            up.enqueue("t", 1)
            assert until(lambda: len(server.received()) == 1), logged
        finally:
            up.close()
    notes = [m for m in logged if "I/O priority not lowered" in m]
    assert len(notes) == 1 and "psutil is not installed" in notes[0], logged
    assert any("uploaded (session" in m for m in logged), logged
