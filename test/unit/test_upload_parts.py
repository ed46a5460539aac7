"""The upload's small parts: --episodes ranges, backoff with jitter, the duplicate rule,
credentials (never shown), the queue's states surviving a reopen, what the recorder shows of it
(each episode's state, the queue's sums, the send rate)."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from egorec_ros.upload.background import RateMeter, entry_view, queue_status
from egorec_ros.upload.client import Session
from egorec_ros.upload.credentials import Credentials, load_credentials
from egorec_ros.upload.errors import CredentialsError, UploadError
from egorec_ros.upload.queue import DONE, FAILED, PENDING, UPLOADING, UploadQueue
from egorec_ros.upload.selection import new_episodes, parse_episodes
from egorec_ros.upload.uploader import backoff_delay, landed


def test_episode_ranges() -> None:
    assert parse_episodes("1,3-5") == [1, 3, 4, 5]          # the shared parser: test_episode_list.py
    with pytest.raises(UploadError, match="--episodes"):
        parse_episodes("a")
    assert new_episodes([1, 2, 3, 1000], [2]) == [1, 3, 1000]


def test_backoff_doubles_with_jitter_and_a_cap() -> None:
    assert [backoff_delay(a, 2.0, 300.0, rng=lambda: 0.0) for a in (1, 2, 3, 4)] == [1.0, 2.0, 4.0, 8.0]
    assert [backoff_delay(a, 2.0, 300.0, rng=lambda: 1.0) for a in (1, 2, 3, 4)] == [2.0, 4.0, 8.0, 16.0]
    assert backoff_delay(30, 2.0, 300.0, rng=lambda: 1.0) == 300.0
    delays = {backoff_delay(3, 2.0, 300.0) for _ in range(50)}
    assert len(delays) > 40 and all(4.0 <= d <= 8.0 for d in delays)


def test_a_new_unclaimed_session_of_the_task_is_the_proof(tmp_path: Path) -> None:
    with UploadQueue(tmp_path) as q:
        entry = q.update(q.add("pick", 3, "http://s").id, state=UPLOADING, known_sessions=["a"])
    sessions = [Session("a", "pick", "1"), Session("b", "other", "2"), Session("c", "pick", "3"),
                Session("d", "pick", "4")]
    assert landed(entry, sessions, claimed={"c"}) == "d"
    assert landed(entry, sessions, claimed={"c", "d"}) is None
    assert landed(entry, sessions[:2], claimed=set()) is None


def test_the_queue_survives_a_reopen_and_requeues_failed(tmp_path: Path) -> None:
    with UploadQueue(tmp_path) as q:
        a = q.add("pick", 1, "http://s", "kitchen")
        q.update(a.id, state=FAILED, attempts=8, last_error="HTTP 500", known_sessions=["x"])
        b = q.add("pick", 2, "http://s")
        q.update(b.id, state=DONE, session_id="s2")
        assert q.add("pick", 1, "http://other").id not in (a.id, b.id)    # per server
    with UploadQueue(tmp_path) as q:
        again = q.add("pick", 1, "http://s", "kitchen")
        assert (again.id, again.state, again.attempts, again.known_sessions) == (a.id, PENDING, 0, ["x"])
        assert q.add("pick", 2, "http://s").state == DONE                  # never sent twice
        assert q.counts()[PENDING] == 2 and q.claimed_sessions("http://s") == {"s2"}


def test_credentials_from_env_or_a_private_file(tmp_path: Path, monkeypatch) -> None:
    for var in ("EGOREC_UPLOAD_USER", "EGOREC_UPLOAD_PASSWORD", "EGOREC_UPLOAD_CREDENTIALS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert load_credentials() is None
    monkeypatch.setenv("EGOREC_UPLOAD_PASSWORD", "pw-env")
    creds = load_credentials("ana")
    assert creds == Credentials("ana", "pw-env", "$EGOREC_UPLOAD_PASSWORD") and "pw-env" not in repr(creds)
    monkeypatch.delenv("EGOREC_UPLOAD_PASSWORD")
    with pytest.raises(CredentialsError, match="no password for upload user 'ana'"):
        load_credentials("ana")
    f = tmp_path / "c.json"
    f.write_text(json.dumps({"user": "bo", "password": "pw-file"}))
    f.chmod(0o640)
    with pytest.raises(CredentialsError, match="chmod 600") as err:
        load_credentials(file=f)
    assert "pw-file" not in str(err.value)
    f.chmod(0o600)
    assert load_credentials(file=f) == Credentials("bo", "pw-file", str(f))
    f.write_text("user=bo")
    with pytest.raises(CredentialsError, match="not readable JSON") as err:
        load_credentials(file=f)


def test_what_the_recorder_shows_of_the_queue(tmp_path: Path) -> None:
    with UploadQueue(tmp_path) as q:
        done = q.update(q.add("t", 1, "http://s").id, state=DONE, attempts=2, session_id="s-1", size=1000)
        failed = q.update(q.add("t", 2, "http://s").id, state=FAILED, attempts=5, last_error="500", size=70)
        sending = q.update(q.add("t", 3, "http://s").id, state=UPLOADING, attempts=1, size=400)
        waiting = q.update(q.add("t", 4, "http://s").id, attempts=1, last_error="reset", next_try=time.time() + 9)
        q.update(q.add("t", 5, "http://s").id, state=DONE, size=24)
    assert entry_view(done) == {"state": "done", "attempts": 2, "last_error": "", "session_id": "s-1", "size": 1000}
    assert entry_view(failed)["last_error"] == "500" and entry_view(failed)["attempts"] == 5
    assert entry_view(sending, sent=100)["sent"] == 100 and "sent" not in entry_view(sending)
    assert 8 < entry_view(waiting)["retry_in_s"] <= 9
    status = queue_status(tmp_path)
    assert (status.pending, status.uploading, status.done, status.failed, status.done_bytes) == (2, 1, 2, 1, 1024)
    assert status.text == "2 waiting, 2 done, 1 failed"


def test_send_rate_over_the_last_seconds() -> None:
    meter = RateMeter(window_s=3.0)
    assert meter.rate(0, now=0.0) == 0.0
    assert meter.rate(1_000, now=1.0) == 1_000.0
    assert meter.rate(4_000, now=2.0) == 2_000.0
    assert meter.rate(4_000, now=4.0) == 1_000.0            # 3000 bytes over the 3 s since t=1
    assert meter.rate(4_000, now=8.0) == 0.0                # nothing moved for the window
    assert meter.rate(10, now=9.0) == 0.0                   # a new uploader counts from 0 again
    assert meter.rate(510, now=10.0) == 500.0
