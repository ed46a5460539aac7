"""Working through the upload queue: every episode reaches the server exactly once.

For one entry: build its slice once (``slice``), then before the first POST note the server's
sessions named like the task (``known_sessions``, committed to the queue first). A POST that
fails in a way that may still have landed (a dropped connection after the body, a timeout, a
5xx, ``kill -9`` of this process) leaves the entry with those ids; before sending it again the
uploader lists the sessions once more and takes a new session of the task's name, not claimed
by another entry, as proof that it landed (the reference collector's rule, made durable). One
uploader works at a time per recordings root (a flock, taken per entry), so at most one entry
can be in flight and a new unclaimed session can only be its. Retries back off exponentially
with jitter; 4xx and refused logins are final."""
from __future__ import annotations

import fcntl
import os
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from egorec_ros.upload import slice as slices
from egorec_ros.upload.body import MultipartFile, UploadStopped
from egorec_ros.upload.client import ServerClient, Session
from egorec_ros.upload.credentials import Credentials
from egorec_ros.upload.errors import AmbiguousProject, LoginFailed, Rejected, RetryableError, UploadError
from egorec_ros.upload.queue import DONE, FAILED, GONE, LOCK_FILE, PENDING, UPLOADING, Entry, UploadQueue


@dataclass(frozen=True)
class UploadSettings:
    server: str
    project: str = ""                 # name or id; '' lets the server decide
    verify_tls: bool = True
    limit_bytes_s: float = 0.0        # 0: no limit
    max_attempts: int = 8             # then the entry is failed (the CLI makes it pending again)
    backoff_s: float = 2.0            # first retry after ~this, doubling, with jitter
    backoff_max_s: float = 300.0
    read_timeout_s: float = 120.0     # waiting for the answer after the body (the server unzips)
    precompress: bool = False
    delete_after: bool = False


def backoff_delay(attempts: int, base_s: float, cap_s: float, rng: Callable[[], float] = random.random) -> float:
    """Exponential backoff with "equal jitter": half the step fixed, half random, so uploaders
    that failed together do not come back together."""
    step = min(cap_s, base_s * 2 ** max(0, attempts - 1))
    return step / 2 + rng() * step / 2


def landed(entry: Entry, sessions: list[Session], claimed: set[str]) -> str | None:
    """The session an interrupted POST of ``entry`` created, if the server has one."""
    known = set(entry.known_sessions or ())
    new = [s for s in sessions if s.name == entry.task and s.id not in known and s.id not in claimed]
    if not new:
        return None
    return min(new, key=lambda s: s.created_at).id


ProgressFactory = Callable[[Entry, int], Callable[[int], None]]


class Uploader:
    """Sends the queue of one recordings root to one server (holds the client and its cookie)."""

    def __init__(self, root: Path, settings: UploadSettings, credentials: Credentials | None = None, *,
                 log: Callable[[str], None] = lambda m: None, progress: ProgressFactory | None = None,
                 stop: threading.Event | None = None,
                 delete_local: Callable[[Entry], None] | None = None) -> None:
        self.root = Path(root)
        self.settings = settings
        self.queue = UploadQueue(self.root)
        self.client = ServerClient(settings.server, credentials, verify=settings.verify_tls,
                                   read_timeout_s=settings.read_timeout_s)
        self.log = log
        self.progress = progress
        self.stop = stop or threading.Event()
        self.current: tuple[Entry, int, int] | None = None      # (entry, bytes sent, bytes total)
        self.sent_total = 0          # body bytes sent since this uploader began (the recorder's rate)
        self._projects: dict[str, str] = {}
        # --delete-after: the task's own writer by default; a recorder holding the task passes its delete
        self.delete_local = delete_local or self._delete_local

    def close(self) -> None:
        self.client.close()
        self.queue.close()

    def connect(self) -> None:
        """Fail early and in one line: an unreachable server, a wrong password, an unknown project."""
        self.client.health()
        try:
            if self.client.credentials is not None:
                self.client.login()
            self.project_id(self.settings.project)
        except RetryableError as exc:
            raise UploadError(f"the upload server {self.settings.server} failed ({exc}); try again later; "
                              "the episodes stay queued") from None

    def project_id(self, given: str) -> str:
        if given not in self._projects:
            self._projects[given] = self.client.resolve_project(given)
        return self._projects[given]

    def enqueue(self, task: str, episode_index: int) -> Entry:
        s = self.settings
        return self.queue.add(task, episode_index, s.server, s.project, precompress=s.precompress,
                              delete_after=s.delete_after)

    # ---- the loop -------------------------------------------------------------------------

    def run(self, ids: set[int] | None = None, *, forever: bool = False,
            wake: threading.Event | None = None) -> list[Entry]:
        """Work until every due entry (of ``ids``) is done, failed or gone; ``forever``: keep
        waiting for new entries (``wake`` set when one is added) until ``stop`` is set."""
        while not self.stop.is_set():
            due = [e for e in self.queue.due(self.settings.server) if ids is None or e.id in ids]
            now = time.time()
            ready = [e for e in due if e.next_try <= now]
            if ready:
                self.process(ready[0])
                continue
            if not due and not forever:
                break
            wait = min((e.next_try for e in due), default=now + 3600.0) - now
            if wake is not None:
                if wake.wait(max(0.0, wait)):
                    wake.clear()
            else:
                self.stop.wait(max(0.0, wait))
        return [self.queue.get(i) for i in sorted(ids)] if ids is not None else self.queue.entries()

    def process(self, entry: Entry) -> Entry:
        """One attempt at ``entry``; the entry as it is afterwards."""
        try:
            with self._turn():
                return self._locked_attempt(entry)
        except UploadStopped:
            return self.queue.get(entry.id)            # stays uploading: the next run checks the server
        finally:
            self.current = None                        # nothing is being sent between attempts

    def _locked_attempt(self, entry: Entry) -> Entry:
        entry = self.queue.get(entry.id)
        if entry.state not in (PENDING, UPLOADING) or self.stop.is_set():
            return entry
        try:
            return self._attempt(entry)
        except RetryableError as exc:
            return self._retry_later(self.queue.get(entry.id), str(exc))
        except AmbiguousProject as exc:     # every entry of the task would meet it: stop and say so
            self.queue.update(entry.id, state=FAILED, last_error=str(exc))
            raise
        except Rejected as exc:
            self.log(f"episode {entry.episode_index} of {entry.task}: {exc}")
            return self.queue.update(entry.id, state=FAILED, last_error=str(exc))
        except LoginFailed as exc:
            self.queue.update(entry.id, last_error=str(exc))
            raise
        except slices.EpisodeGone as exc:
            self.log(str(exc))
            gone = self.queue.update(entry.id, state=GONE, last_error=str(exc))
            if gone.slice:
                Path(gone.slice).unlink(missing_ok=True)
            return gone
        except UploadError as exc:       # no room for the slice: stays pending, reported now
            self.queue.update(entry.id, last_error=str(exc))
            raise

    def _attempt(self, entry: Entry) -> Entry:
        sessions = self.client.sessions()
        if entry.known_sessions is not None:        # an earlier POST may have landed: never send twice
            session_id = landed(entry, sessions, self.queue.claimed_sessions(entry.server))
            if session_id is not None:
                self.log(f"episode {entry.episode_index} of {entry.task}: already on the server "
                         f"(session {session_id}); not sent again")
                return self._done(entry, session_id)
            known = entry.known_sessions
        else:
            known = [s.id for s in sessions if s.name == entry.task]
        entry = self._ensure_slice(entry)
        paths = slices.task_paths(self.root / entry.task)
        number = paths.number(entry.episode_index)
        if not paths.data(number).is_file():     # deleted since its slice was built: it does not go
            raise slices.EpisodeGone(f"{paths.root}: episode {entry.episode_index} was deleted before it was sent; "
                                     "it is not uploaded")
        fields = {"name": entry.task, "project_id": self.project_id(entry.project), "episode_index": str(number.file)}
        entry = self.queue.update(entry.id, state=UPLOADING, known_sessions=known, attempts=entry.attempts + 1)
        body = MultipartFile(fields, Path(entry.slice), f"{entry.task}.zip", self.settings.limit_bytes_s,
                             self._progress(entry), self.stop)
        session_id = self.client.upload(body, f"episode {entry.episode_index} of {entry.task}")
        return self._done(entry, session_id)

    def _progress(self, entry: Entry) -> Callable[[int], None]:
        shown = self.progress(entry, entry.size) if self.progress else None
        sent = [0]
        self.current = (entry, 0, entry.size)

        def step(n: int) -> None:
            sent[0] += n
            self.sent_total += n
            self.current = (entry, sent[0], entry.size)
            if shown:
                shown(n)
        return step

    def _ensure_slice(self, entry: Entry) -> Entry:
        """The entry's slice file, built now unless a complete one is there from an earlier attempt."""
        if entry.slice and Path(entry.slice).is_file() and Path(entry.slice).stat().st_size == entry.size:
            return entry
        task_dir = self.root / entry.task
        members = slices.slice_members(task_dir, entry.episode_index)
        dest = self.queue.slice_dir / slices.slice_name(entry.id, entry.task, entry.episode_index)
        made: list[Path] = []
        try:
            if entry.precompress:
                members, made = self._precompressed(members, dest)
            size, digest = slices.write_slice(members, dest)
        finally:
            for p in made:
                p.unlink(missing_ok=True)
        return self.queue.update(entry.id, slice=str(dest), size=size, sha256=digest)

    def _precompressed(self, members: list[slices.SliceFile], dest: Path) -> tuple[list[slices.SliceFile], list[Path]]:
        from egorec_ros.upload import precompress     # PyAV only when asked for

        out: list[slices.SliceFile] = []
        made: list[Path] = []
        for m in members:
            if m.arcname.startswith("videos/") and precompress.needs_reencode(m.path):
                copy = dest.with_name(f".{dest.stem}-{len(made)}{m.path.suffix}")
                made.append(copy)
                precompress.reencode(m.path, copy)
                m = slices.SliceFile(m.arcname, copy, copy.stat().st_size)
            out.append(m)
        return out, made

    def _done(self, entry: Entry, session_id: str) -> Entry:
        if entry.slice:
            Path(entry.slice).unlink(missing_ok=True)
        entry = self.queue.update(entry.id, state=DONE, session_id=session_id, last_error="", next_try=0)
        self.log(f"episode {entry.episode_index} of {entry.task}: uploaded (session {session_id})")
        if entry.delete_after:
            self.delete_local(entry)
        return entry

    def _delete_local(self, entry: Entry) -> None:
        from egorec_ros.store import TaskWriter     # pyarrow only when deleting

        try:
            with TaskWriter(self.root / entry.task) as writer:
                writer.delete(entry.episode_index)
            self.log(f"episode {entry.episode_index} of {entry.task}: deleted locally (--delete-after)")
        except (UploadError, OSError, RuntimeError) as exc:
            self.log(f"episode {entry.episode_index} of {entry.task}: uploaded but not deleted locally ({exc})")

    def _retry_later(self, entry: Entry, error: str) -> Entry:
        s = self.settings
        if entry.attempts >= s.max_attempts:
            self.log(f"episode {entry.episode_index} of {entry.task}: failed after {entry.attempts} attempts "
                     f"({error}); `egorec upload` queues it again")
            return self.queue.update(entry.id, state=FAILED, last_error=error)
        delay = backoff_delay(max(1, entry.attempts), s.backoff_s, s.backoff_max_s)
        self.log(f"episode {entry.episode_index} of {entry.task}: attempt {entry.attempts} failed ({error}); "
                 f"next in {delay:.1f} s")
        return self.queue.update(entry.id, state=PENDING, last_error=error, next_try=time.time() + delay)

    @contextmanager
    def _turn(self) -> Iterator[None]:
        """One uploader per recordings root at a time (the CLI and a recorder's may share it)."""
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.root / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        waited = False
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if not waited:
                        self.log(f"another uploader is sending from {self.root}; waiting for its turn")
                        waited = True
                    if self.stop.wait(0.2):
                        raise UploadStopped("stopped while waiting for the other uploader") from None
            yield
        finally:
            os.close(fd)


def sweep_slices(queue: UploadQueue) -> list[Path]:
    """Old slice files no pending or uploading entry needs."""
    keep = {Path(e.slice).name for e in queue.entries() if e.slice and e.state in (PENDING, UPLOADING)}
    return slices.sweep(queue.slice_dir, keep)

