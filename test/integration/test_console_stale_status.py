"""The console never drops a Start or Stop silently because of a stale ~/status, and shows the
upload queue and each episode's upload state.

A status the recorder published just before an action can reach the console after the action's
answer (topics and services are separate DDS channels). The answers to start/stop/abort carry
the recorder's clock (``stamp_ns``); the page lets a status stamped earlier not undo the
answer's state. Here the other side is a scripted recorder in this process speaking the real
services and ~/status over loopback DDS: after each answer it delivers the status from before
the action, and keeps it the newest one (republished, so the console stays connected) until the
next call. Before the fix the stale "recording" disabled Start (and a stale "idle" Stop), so the
press never reached the recorder. Also: Start pressed while a stop commits is queued and sent
after it; the Episodes list shows pending / uploading % / done with the session id / failed with
its error and attempts, and "no upload" for a recorder without an upload server; the health table
follows the recorder's streams when they change (a recorder restarted with another rig). The console
runs in its own process, the page in headless chromium."""
from __future__ import annotations

import json
import os
import threading
import time

import pytest
from helpers.browser import browser_or_skip, console_process, wait_for
from helpers.dds_domains import domain_for

from egorec_ros.live.node import DELETE, LIST_EPISODES, START, STATUS, STOP
from egorec_ros.messages.decode import deserialize
from egorec_ros.messages.payloads.stamps import header_message
from egorec_ros.messages.typestores import ros2_typestore
from egorec_ros.transport.base import DEFAULT
from egorec_ros.transport.dds import DdsTransport
from egorec_ros.transport.dds.loopback import loopback_env

pytestmark = pytest.mark.timeout(120)
STORE = ros2_typestore()
NAME = "rec_stale"
SERVER = "http://upload.example:8000"
UPLOADS = {1: {"state": "done", "attempts": 1, "last_error": "", "session_id": "s-17", "size": 2_000_000},
           2: {"state": "failed", "attempts": 5, "last_error": "the server answered 500", "session_id": "", "size": 10},
           3: {"state": "uploading", "attempts": 1, "last_error": "", "session_id": "", "size": 4_000_000,
               "sent": 1_000_000},
           4: {"state": "pending", "attempts": 1, "last_error": "connection reset", "session_id": "", "size": 10,
               "retry_in_s": 7.2},
           5: {"state": "not queued"}}


class ScriptedRecorder:
    """start/stop/abort/list_episodes/delete and ~/status of a recorder named NAME, scripted."""

    def __init__(self, transport: DdsTransport) -> None:
        self.calls: list[str] = []
        self.state, self.episode, self.upload = "idle", 0, True
        self.streams: list[str] = []          # the rig's input streams, as ~/status lists them
        self.stop_takes_s = 0.0
        self._stale: bytes | None = None      # while set: the status republished instead of a fresh one
        self._stale_until = 0.0
        self.stale_stamps: list[int] = []
        self._lock = threading.Lock()
        prefix = f"/{NAME}"
        self._handles = [transport.serve(f"{prefix}/start", START, self._start),
                         transport.serve(f"{prefix}/stop", STOP, lambda r: self._stop("stop")),
                         transport.serve(f"{prefix}/abort", STOP, lambda r: self._stop("abort")),
                         transport.serve(f"{prefix}/list_episodes", LIST_EPISODES, self._list),
                         transport.serve(f"{prefix}/delete", DELETE, self._delete)]
        self._pub = transport.publisher(f"{prefix}/status", STATUS, DEFAULT)
        self._running = True
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def status(self, state: str, stamp_ns: int) -> bytes:
        up = self.upload
        msg = STORE.types[STATUS](
            header=header_message(STORE, stamp_ns, NAME), state=state, task="t",
            episode_index=self.episode if state == "recording" else 0, rows=0, encoder_backlog=0,
            encoder_backlog_key="", free_disk_gb=100.0, streams=[STORE.types["egorec_ros/msg/StreamStatus"](
                stream=name, topic=f"/{name}", rate_hz=30.0, last_sample_age_s=0.0, received=1, invalid=0, dropped=0,
                late=0) for name in self.streams], last_episode_index=0, last_verdict="",
            last_reasons=[], alarms=[], upload_pending=2 if up else 0, upload_failed=1 if up else 0,
            upload="2 waiting, 1 done, 1 failed" if up else "", stage=state, overload="", udp_drops=0,
            callback_drops=0, upload_server=SERVER if up else "", upload_uploading=1 if up else 0,
            upload_done=1 if up else 0, upload_done_bytes=2_000_000 if up else 0, upload_task="t" if up else "",
            upload_episode_index=3 if up else 0, upload_sent_bytes=3_000_000 if up else 0,
            upload_size_bytes=4_000_000 if up else 0, upload_rate_bytes_s=1.5e6 if up else 0.0)
        return bytes(STORE.serialize_cdr(msg, STATUS))

    def _loop(self) -> None:
        while self._running:
            with self._lock:
                stale = self._stale if time.monotonic() < self._stale_until else None
                cdr = stale or self.status(self.state, time.time_ns())
            self._pub.publish(cdr)
            time.sleep(0.3)

    def _act(self, name: str, new_state: str) -> int:
        """Change state; the status from before the change becomes the newest one the console gets."""
        with self._lock:
            self.calls.append(name)
            before = time.time_ns()
            self._stale = self.status(self.state, before)
            self._stale_until = time.monotonic() + 30.0
            self.stale_stamps.append(before)
            self.state = new_state
            return time.time_ns()             # the answer's stamp: after the change

    def _start(self, request: bytes) -> bytes:
        deserialize(f"{START}_Request", request)
        if self.state == "recording":
            with self._lock:
                self.calls.append("start refused")
            return _reply(START, success=False, message="episode is being recorded; stop it first",
                          episode_index=0, stamp_ns=time.time_ns())
        self.episode += 1
        stamp = self._act("start", "recording")
        return _reply(START, success=True, message=f"recording episode {self.episode} of t",
                      episode_index=self.episode, stamp_ns=stamp)

    def _stop(self, name: str) -> bytes:
        time.sleep(self.stop_takes_s if name == "stop" else 0.0)       # the commit
        stamp = self._act(name, "idle")
        return _reply(STOP, success=True, message=f"episode {self.episode}: 30 rows committed",
                      episode_index=self.episode if name == "stop" else 0, rows=30, verdict="", reasons=[],
                      stamp_ns=stamp)

    def _list(self, _request: bytes) -> bytes:
        episodes = [{"episode_index": i, "rows": 30, "duration_s": 1.0, "created_at": 0.0, "instruction": "x",
                     "verdict": "ok", "reasons": [], "upload": UPLOADS[i] if self.upload else {"state": "off"}}
                    for i in sorted(UPLOADS)]
        return _reply(LIST_EPISODES, success=True, message="", task="t", episodes_json=json.dumps(episodes))

    def _delete(self, _request: bytes) -> bytes:
        return _reply(DELETE, success=False, message="not here", episode_index=0)

    def no_upload(self) -> None:
        """From now on a recorder without an upload server (and fresh statuses again)."""
        with self._lock:
            self.upload, self._stale_until = False, 0.0

    def close(self) -> None:
        self._running = False
        self._thread.join(timeout=5)
        for h in self._handles:
            h.close()


def _reply(srv: str, **fields) -> bytes:
    return bytes(STORE.serialize_cdr(STORE.types[f"{srv}_Response"](**fields), f"{srv}_Response"))


def test_start_and_stop_survive_stale_status_and_upload_states_show(tmp_path, monkeypatch):
    from selenium.webdriver.common.by import By
    for k, v in loopback_env(domain_for(__name__)).items():
        monkeypatch.setenv(k, v)
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    browser = browser_or_skip(tmp_path)
    try:
        with DdsTransport() as transport:
            rec = ScriptedRecorder(transport)
            console, url = console_process(["--name", NAME, "--out", str(tmp_path / "out")], env,
                                           tmp_path / "console.log")
            try:
                browser.get(url)
                find = browser.find_element

                def press(button: str, call: str, count: int) -> None:
                    """Click when the page holds the stale status; the recorder must get the call."""
                    stale = rec.stale_stamps[-1]
                    # (a JS number holds ns since the epoch to within 256 ns; statuses come 0.3 s apart)
                    wait_for(lambda: abs(browser.execute_script("return window.egorec.statusStamp") - stale) < 1000, 20,
                             "the page to get the status from before the last action")
                    find(By.ID, button).click()
                    wait_for(lambda: rec.calls.count(call) == count, 10,
                             f"the recorder to get {call} #{count} (the page says "
                             f"{find(By.ID, 'message').text!r}, badge {find(By.ID, 'state').text!r})")

                wait_for(lambda: find(By.ID, "start").is_enabled(), 30, "Start to be enabled")
                find(By.ID, "start").click()
                wait_for(lambda: rec.calls == ["start"], 10, "the first start")
                press("stop", "stop", 1)            # the newest status says idle (sent before the start)
                press("start", "start", 2)          # the newest status says recording (sent before the stop)
                # the answer's state holds against the stale status still being the newest one
                wait_for(lambda: "recording episode 2" in find(By.ID, "message").text, 10, "start #2's answer")
                stale = rec.stale_stamps[-1]          # idle, from before start #2
                wait_for(lambda: abs(browser.execute_script("return window.egorec.statusStamp") - stale) < 1000, 20,
                         "the page to get the status from before start #2")
                assert find(By.ID, "state").text == "recording"
                assert find(By.ID, "stop").is_enabled() and not find(By.ID, "start").is_enabled()

                # Start while a stop commits: queued, sent after the stop's answer
                rec.stop_takes_s = 2.0
                find(By.ID, "stop").click()
                wait_for(lambda: find(By.ID, "start").is_enabled(), 5, "Start to be enabled while stopping")
                find(By.ID, "start").click()
                assert "queued" in find(By.ID, "message").text
                wait_for(lambda: rec.calls[-2:] == ["stop", "start"], 15, "the queued start after the stop")
                wait_for(lambda: "recording episode 3" in find(By.ID, "message").text, 10, "the queued start's answer")
                assert "start refused" not in rec.calls

                # upload: the queue's summary and each episode's state
                def upload_cells() -> dict[int, str]:
                    return {int(r.get_attribute("data-episode")): r.find_element(By.CSS_SELECTOR, "td.upload").text
                            for r in browser.find_elements(By.CSS_SELECTOR, "#episodes tbody tr")}
                # the list arrives with the list's 25 %; the next ~/status event (0.2 s) makes it live
                cells = wait_for(lambda: (c := upload_cells()) and c.get(3) == "uploading 75 %" and c, 10,
                                 f"episode 3's cell to show the live 75 % (it shows {upload_cells().get(3)!r})")
                assert cells[1] == "done · session s-17"
                assert cells[2] == "failed after 5 attempts: the server answered 500"
                assert cells[3] == "uploading 75 %"           # live from ~/status (3 of 4 MB), not the list's 25 %
                assert cells[4] == "pending (1 attempt failed, retry in 8 s)"
                assert cells[5] == "not queued"
                summary = find(By.ID, "upload").text
                assert summary == ("upload: 1 pending · 1 uploading (episode 3: 75 % of 4.0 MB) · 1 done (2.0 MB) "
                                   "· 1 failed · 1.5 MB/s"), summary
                # a recorder without an upload server: the column and the summary say so
                rec.no_upload()
                wait_for(lambda: find(By.ID, "upload").text == "upload off", 10, "the summary to say upload off")
                find(By.ID, "refresh").click()
                wait_for(lambda: {c.text for c in browser.find_elements(By.CSS_SELECTOR, "#episodes td.upload")}
                         == {"no upload"}, 10, "every episode's upload cell to say 'no upload'")

                # the recorder restarted with another rig: the health table lists only its streams
                def health() -> list[str]:
                    return [r.text.split()[0] for r in browser.find_elements(By.CSS_SELECTOR, "#health tbody tr")]
                rec.streams = ["cam0.rgb", "cam1.rgb"]
                wait_for(lambda: health() == ["cam0.rgb", "cam1.rgb"], 10, f"two health rows (the page has {health()})")
                rec.streams = ["ego.left"]
                wait_for(lambda: health() == ["ego.left"], 10, f"only ego.left's row (the page has {health()})")
            finally:
                console.terminate()
                console.wait(timeout=20)
                rec.close()
    finally:
        browser.quit()
