"""Ctrl-C ends `egorec console` while a page has its live events open (it hung until SIGKILL: the
server waited for the event stream, which never ends by itself)."""
from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import httpx
from helpers.browser import console_process
from helpers.dds_domains import domain_for

from egorec_ros.transport.dds.loopback import loopback_env


def test_ctrl_c_ends_the_console_with_a_page_listening(tmp_path: Path) -> None:
    env = dict(os.environ, **loopback_env(domain_for(__name__)), PYTHONUNBUFFERED="1")
    log = tmp_path / "console.log"
    console, url = console_process(["--name", "rec_nobody", "--out", str(tmp_path / "out")], env, log)
    events: list[str] = []

    def listen() -> None:
        base, token = url.split("?token=")
        try:
            with httpx.stream("GET", base.rstrip("/") + "/events", headers={"X-Egorec-Token": token},
                              timeout=httpx.Timeout(10, read=30)) as response:
                for line in response.iter_lines():
                    if line.startswith("data:"):
                        events.append(line)
        except httpx.HTTPError:
            pass                      # the server closed the stream: what is expected at the end
    page = threading.Thread(target=listen, daemon=True)
    page.start()
    try:
        deadline = time.monotonic() + 30
        while not events:
            assert time.monotonic() < deadline and console.poll() is None, log.read_text()
            time.sleep(0.05)
        console.send_signal(signal.SIGINT)
        started = time.monotonic()
        rc = console.wait(timeout=15)
        took = time.monotonic() - started
    finally:
        if console.poll() is None:
            console.kill()
            console.wait(timeout=10)
    page.join(timeout=10)
    text = log.read_text()
    assert took < 5, f"the console took {took:.1f} s to stop"
    assert "Traceback" not in text, text
    assert rc in (0, -signal.SIGINT, 128 + signal.SIGINT, 1), (rc, text)
    assert not page.is_alive(), "the page's event stream was not ended"


