"""The persistent upload queue: one SQLite file in the recordings root, a dotfile so readers of
the layout ignore it. An entry is one episode of one task for one server, walking
pending -> uploading -> done | failed (| gone: deleted before it could go). Every change
is committed (synchronous FULL) before the step it announces, so after ``kill -9`` or a
power loss the queue says what may have reached the server: an entry found "uploading", or
pending again after a failed attempt, carries the server sessions known before its first POST
(``known_sessions``), and the uploader compares them with the server's list before sending it
again (``uploader.landed``)."""
from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

QUEUE_FILE = ".egorec-upload.sqlite"
SLICE_DIR = ".egorec-upload"
LOCK_FILE = ".egorec-upload.lock"

PENDING, UPLOADING, DONE, FAILED, GONE = "pending", "uploading", "done", "failed", "gone"
STATES = (PENDING, UPLOADING, DONE, FAILED, GONE)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS uploads (
    id INTEGER PRIMARY KEY,
    task TEXT NOT NULL,                 -- task folder name (the form's `name`), under the root
    episode_index INTEGER NOT NULL,     -- 1-based (§1.3)
    server TEXT NOT NULL,
    project TEXT NOT NULL DEFAULT '',   -- as given (name or id); resolved per run
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT NOT NULL DEFAULT '',
    session_id TEXT NOT NULL DEFAULT '',
    slice TEXT NOT NULL DEFAULT '',     -- temp zip in SLICE_DIR
    size INTEGER NOT NULL DEFAULT 0,
    sha256 TEXT NOT NULL DEFAULT '',
    known_sessions TEXT,                -- JSON ids of the server's sessions named `task` before the first POST
    precompress INTEGER NOT NULL DEFAULT 0,
    delete_after INTEGER NOT NULL DEFAULT 0,
    next_try REAL NOT NULL DEFAULT 0,
    created REAL NOT NULL,
    updated REAL NOT NULL,
    UNIQUE (task, episode_index, server)
)"""


@dataclass(frozen=True)
class Entry:
    id: int
    task: str
    episode_index: int
    server: str
    project: str
    state: str
    attempts: int
    last_error: str
    session_id: str
    slice: str
    size: int
    sha256: str
    known_sessions: list[str] | None
    precompress: bool
    delete_after: bool
    next_try: float
    created: float
    updated: float


class UploadQueue:
    """The queue file of one recordings root (holds an open SQLite connection)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.path = self.root / QUEUE_FILE
        self.slice_dir = self.root / SLICE_DIR
        self._db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute(_SCHEMA)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "UploadQueue":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add(self, task: str, episode_index: int, server: str, project: str = "", *,
            precompress: bool = False, delete_after: bool = False, retry_failed: bool = True) -> Entry:
        """Queue one episode (once per task, episode and server); a failed entry is made pending
        again (``retry_failed``) and a waiting one takes the new project and options and is due
        now (asked again: no backoff left to sit out); an entry
        done or in flight is returned as it is."""
        now = time.time()
        with self._db:
            self._db.execute(
                "INSERT OR IGNORE INTO uploads (task, episode_index, server, project, state, precompress, "
                "delete_after, created, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (task, episode_index, server, project, PENDING, int(precompress), int(delete_after), now, now))
            self._db.execute(
                "UPDATE uploads SET project=?, delete_after=?, next_try=0, updated=? WHERE task=? AND episode_index=? "
                "AND server=? "
                "AND state IN (?, ?)", (project, int(delete_after), now, task, episode_index, server, PENDING, FAILED))
            self._db.execute(       # another --precompress choice: the slice is built again
                "UPDATE uploads SET precompress=?, slice='', size=0, sha256='' WHERE task=? AND episode_index=? "
                "AND server=? AND state IN (?, ?) AND precompress != ?",
                (int(precompress), task, episode_index, server, PENDING, FAILED, int(precompress)))
            if retry_failed:
                self._db.execute(
                    "UPDATE uploads SET state=?, attempts=0, next_try=0 WHERE task=? AND episode_index=? AND server=? "
                    "AND state=?", (PENDING, task, episode_index, server, FAILED))
        entry = self.find(task, episode_index, server)
        assert entry is not None
        return entry

    def find(self, task: str, episode_index: int, server: str) -> Entry | None:
        rows = self._select("WHERE task=? AND episode_index=? AND server=?", (task, episode_index, server))
        return rows[0] if rows else None

    def get(self, entry_id: int) -> Entry:
        (entry,) = self._select("WHERE id=?", (entry_id,))
        return entry

    def entries(self, task: str | None = None, server: str | None = None) -> list[Entry]:
        where, args = [], []
        if task is not None:
            where.append("task=?")
            args.append(task)
        if server is not None:
            where.append("server=?")
            args.append(server)
        return self._select(("WHERE " + " AND ".join(where)) if where else "", tuple(args))

    def due(self, server: str | None = None) -> list[Entry]:
        """Entries to work on, oldest first: uploading (interrupted) before pending."""
        rows = [e for e in self.entries(server=server) if e.state in (PENDING, UPLOADING)]
        return sorted(rows, key=lambda e: (e.state != UPLOADING, e.id))

    def claimed_sessions(self, server: str) -> set[str]:
        """Server sessions already matched to a done entry: never a second episode's proof."""
        return {e.session_id for e in self.entries(server=server) if e.session_id}

    def update(self, entry_id: int, **fields) -> Entry:
        if "known_sessions" in fields and fields["known_sessions"] is not None:
            fields["known_sessions"] = json.dumps(sorted(fields["known_sessions"]))
        for flag in ("precompress", "delete_after"):
            if flag in fields:
                fields[flag] = int(fields[flag])
        fields["updated"] = time.time()
        cols = ", ".join(f"{k}=?" for k in fields)
        with self._db:
            self._db.execute(f"UPDATE uploads SET {cols} WHERE id=?", (*fields.values(), entry_id))
        return self.get(entry_id)

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(STATES, 0)
        for state, n in self._db.execute("SELECT state, COUNT(*) FROM uploads GROUP BY state"):
            out[state] = n
        return out

    def done_bytes(self) -> int:
        """Slice bytes of the done entries (what reached the server)."""
        (total,) = self._db.execute("SELECT COALESCE(SUM(size), 0) FROM uploads WHERE state=?", (DONE,)).fetchone()
        return int(total)

    def _select(self, where: str, args: tuple) -> list[Entry]:
        cur = self._db.execute(f"SELECT {', '.join(Entry.__dataclass_fields__)} FROM uploads {where} ORDER BY id",
                               args)
        out = []
        for row in cur.fetchall():
            values = dict(zip(Entry.__dataclass_fields__, row))
            known = values["known_sessions"]
            values["known_sessions"] = None if known is None else list(json.loads(known))
            values["precompress"], values["delete_after"] = bool(values["precompress"]), bool(values["delete_after"])
            out.append(Entry(**values))
        return out
