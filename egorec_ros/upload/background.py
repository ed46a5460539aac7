"""Automatic upload from the recorder: each committed episode is queued, and a thread below
the recorder's priority (and its encoders') sends the queue, in the idle I/O class and
bandwidth-limited if asked, so uploading never takes CPU or disk time a recording needs. Aborted episodes are never queued;
an episode deleted before its turn is marked gone. A server that is down is retried with
backoff for as long as the recorder runs; the queue outlives the process."""
from __future__ import annotations

import queue
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from egorec_ros.thread_priority import BACKGROUND_NICENESS, idle_io_for_thread, lower_this_thread
from egorec_ros.upload.credentials import Credentials, load_credentials
from egorec_ros.upload.errors import UploadError
from egorec_ros.upload.queue import FAILED, GONE, PENDING, UPLOADING, UploadQueue
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
    pending: int
    failed: int
    text: str                 # one line: counts and what is being sent


def queue_status(root: Path, current: str = "") -> QueueStatus:
    """What the queue of ``root`` holds, for ``/status``, ``/diagnostics`` and ``--status``."""
    with UploadQueue(root) as queue:
        counts = queue.counts()
    waiting = counts[PENDING] + counts[UPLOADING]
    text = f"{waiting} waiting, {counts['done']} done, {counts[FAILED]} failed" + (
        f", {counts[GONE]} gone" if counts[GONE] else "") + (f"; {current}" if current else "")
    return QueueStatus(waiting, counts[FAILED], text)


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
        current = ""
        up = self._uploader
        if up is not None and up.current is not None:
            entry, sent, total = up.current
            if sent < total:
                current = f"sending episode {entry.episode_index} of {entry.task} ({100 * sent / max(1, total):.0f} %)"
        return queue_status(self.root, current)

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
