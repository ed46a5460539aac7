"""Automatic upload from the recorder: each committed episode is queued, and a thread below
the recorder's priority (and its encoders') sends the queue, in the idle I/O class and
bandwidth-limited if asked, so uploading never takes CPU or disk time a recording needs. Aborted episodes are never queued;
an episode deleted before its turn is marked gone. A server that is down is retried with
backoff for as long as the recorder runs; the queue outlives the process."""
from __future__ import annotations

import queue
import threading
import time
from collections import deque
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

from egorec_ros.thread_priority import BACKGROUND_NICENESS, idle_io_for_thread, lower_this_thread
from egorec_ros.upload.credentials import Credentials, load_credentials
from egorec_ros.upload.errors import UploadError
from egorec_ros.upload.queue import DONE, FAILED, GONE, PENDING, UPLOADING, Entry, UploadQueue
from egorec_ros.upload.uploader import Uploader, UploadSettings, backoff_delay, sweep_slices

UPLOAD_NICENESS = 2 * BACKGROUND_NICENESS     # below the encoders (+5), which are below the recorder


def upload_config(server: str | None, project: str = "", user: str | None = None, limit_mbps: float = 0.0,
                  verify_tls: bool = True, delete_after: bool = False) -> dict:
    """The recorder's upload fields (``NodeConfig.upload``, ``upload_credentials``) from its
    flags or ROS parameters; empty without a server. Credentials are read (and checked) now."""
    if not server:
        return {}
    settings = UploadSettings(server=server.rstrip("/"), project=project, verify_tls=verify_tls,
                              limit_bytes_s=limit_mbps * 1e6 / 8, delete_after=delete_after)
    return {"upload": settings, "upload_credentials": load_credentials(user or None)}


@dataclass(frozen=True)
class QueueStatus:
    pending: int              # waiting: pending or being sent
    failed: int
    text: str                 # one line: counts and what is being sent
    uploading: int = 0        # of ``pending``: being sent (or interrupted mid-send)
    done: int = 0
    done_bytes: int = 0       # the done entries' slice bytes
    current_task: str = ""    # the episode being sent now ("" / 0 when none)
    current_episode: int = 0
    sent_bytes: int = 0       # of it, sent so far
    size_bytes: int = 0       # its slice's size
    rate_bytes_s: float = 0.0


def queue_status(root: Path, current: str = "") -> QueueStatus:
    """What the queue of ``root`` holds, for ``/status``, ``/diagnostics`` and ``--status``."""
    with UploadQueue(root) as queue:
        counts = queue.counts()
        done_bytes = queue.done_bytes()
    waiting = counts[PENDING] + counts[UPLOADING]
    text = f"{waiting} waiting, {counts['done']} done, {counts[FAILED]} failed" + (
        f", {counts[GONE]} gone" if counts[GONE] else "") + (f"; {current}" if current else "")
    return QueueStatus(waiting, counts[FAILED], text, uploading=counts[UPLOADING], done=counts[DONE],
                       done_bytes=done_bytes)


class RateMeter:
    """Bytes per second over the last ``window_s`` from a growing byte counter sampled now and
    then (every status): 0 once nothing has moved for the window."""

    def __init__(self, window_s: float = 3.0) -> None:
        self.window_s = window_s
        self._samples: deque[tuple[float, int]] = deque()

    def rate(self, total: int, now: float | None = None) -> float:
        now = time.monotonic() if now is None else now
        if self._samples and total < self._samples[-1][1]:     # a new uploader counts from 0
            self._samples.clear()
        self._samples.append((now, total))
        while len(self._samples) > 1 and now - self._samples[1][0] >= self.window_s:
            self._samples.popleft()
        t0, b0 = self._samples[0]
        return (total - b0) / (now - t0) if now - t0 > 0.2 else 0.0


def entry_view(entry: Entry, sent: int | None = None) -> dict:
    """One episode's upload as the console's Episodes list shows it (``~/list_episodes``):
    state, attempts, last error, server session id, slice size, and while it is being sent the
    bytes gone so far; a pending entry waiting out a backoff says in how many seconds it retries."""
    view: dict = {"state": entry.state, "attempts": entry.attempts, "last_error": entry.last_error,
                  "session_id": entry.session_id, "size": entry.size}
    if sent is not None:
        view["sent"] = sent
    if entry.state == PENDING and entry.next_try > time.time():
        view["retry_in_s"] = round(entry.next_try - time.time(), 1)
    return view


class BackgroundUploader:
    """The recorder's upload thread for the recordings root ``root``.

    With ``settings.delete_after`` an episode the server confirmed is deleted locally by
    ``delete(task, episode_index)``: the recorder's own delete (its writer holds the task, so
    the number is never reused and total_episodes stays, §1.3). That call runs on a thread of
    the recorder's priority started here, not on the upload thread: it takes the recorder's
    lock, which a thread in the idle I/O class must not hold while the recorder waits for it."""

    def __init__(self, root: Path, settings: UploadSettings, credentials: Credentials | None,
                 log: Callable[[str], None], delete: Callable[[str, int], None] | None = None) -> None:
        self.root, self.settings, self.credentials, self.log = Path(root), settings, credentials, log
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._uploader: Uploader | None = None
        self._delete = delete
        self._deletions: queue.Queue[tuple[str, int] | None] = queue.Queue()
        self._deleter: threading.Thread | None = None
        if settings.delete_after and delete is not None:      # started from here: the caller's priority
            self._deleter = threading.Thread(target=self._delete_loop, name="egorec-upload-delete", daemon=True)
            self._deleter.start()
        self._rate = RateMeter()
        self._thread = threading.Thread(target=self._loop, name="egorec-upload", daemon=True)
        self._thread.start()

    def enqueue(self, task: str, episode_index: int) -> None:
        """Queue a committed episode; the thread sends it when its turn comes."""
        with UploadQueue(self.root) as queue:
            s = self.settings
            queue.add(task, episode_index, s.server, s.project, precompress=s.precompress,
                      delete_after=s.delete_after, retry_failed=False)
        self._wake.set()

    def status(self) -> QueueStatus:
        """The queue's counts, the episode being sent (bytes so far of its size) and the send rate."""
        up = self._uploader
        rate = self._rate.rate(up.sent_total if up is not None else 0)
        sending = self._sending()
        if sending is None:
            return replace(queue_status(self.root), rate_bytes_s=rate)
        entry, sent, total = sending
        status = queue_status(self.root, f"sending episode {entry.episode_index} of {entry.task} "
                                         f"({100 * sent / max(1, total):.0f} %)")
        return replace(status, current_task=entry.task, current_episode=entry.episode_index, sent_bytes=sent,
                       size_bytes=total, rate_bytes_s=rate)

    def episode_states(self, task: str) -> dict[int, dict]:
        """episode_index -> its upload (``entry_view``) for the episodes of ``task`` queued for this
        recorder's server; an episode not in the queue is absent."""
        sending = self._sending()
        with UploadQueue(self.root) as queue:
            entries = queue.entries(task=task, server=self.settings.server)
        return {e.episode_index: entry_view(e, sending[1] if sending and sending[0].id == e.id else None)
                for e in entries}

    def _sending(self) -> tuple[Entry, int, int] | None:
        up = self._uploader
        current = up.current if up is not None else None
        return current if current is not None and current[1] < current[2] else None

    def close(self, timeout_s: float = 10.0) -> None:
        """Stop between pieces of the body (an interrupted entry is checked against the server
        next time); the queue keeps everything not yet sent."""
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout_s)
        if self._deleter is not None:       # deletions the server confirmed are done before the recorder goes
            self._deletions.put(None)
            self._deleter.join(timeout_s)

    def _delete_loop(self) -> None:
        assert self._delete is not None
        while (item := self._deletions.get()) is not None:
            task, episode_index = item
            try:
                self._delete(task, episode_index)
            except Exception as exc:  # noqa: BLE001 - the episode is on the server; the local copy stays
                self.log(f"episode {episode_index} of {task}: uploaded but not deleted locally ({exc})")

    @property
    def thread_id(self) -> int | None:
        """The upload thread's kernel id (its priorities are read there)."""
        return self._thread.native_id

    def _loop(self) -> None:
        lower_this_thread(UPLOAD_NICENESS)
        why = idle_io_for_thread()
        if why:
            self.log(f"upload: I/O priority not lowered ({why}); uploading at the recorder's I/O priority, "
                     "CPU niceness and bandwidth limit only")
        failures = 0
        while not self._stop.is_set():
            try:
                if self._uploader is None:
                    self._uploader = Uploader(
                        self.root, self.settings, self.credentials, log=self.log, stop=self._stop,
                        delete_local=(lambda e: self._deletions.put((e.task, e.episode_index)))
                        if self._deleter is not None else None)
                    sweep_slices(self._uploader.queue)       # slices a crashed run left behind
                self._uploader.run(forever=True, wake=self._wake)
            except UploadError as exc:        # login refused, ambiguous project, full disk: said, then retried
                failures += 1
                delay = backoff_delay(failures, self.settings.backoff_s, self.settings.backoff_max_s)
                self.log(f"upload: {exc} (retrying in {delay:.0f} s)")
                self._stop.wait(delay)
            except Exception as exc:  # noqa: BLE001 - the upload thread must never take the recorder down
                failures += 1
                self.log(f"upload: unexpected {exc!r}; retrying")
                self._stop.wait(backoff_delay(failures, self.settings.backoff_s, self.settings.backoff_max_s))
        if self._uploader is not None:
            self._uploader.close()
