"""A collection server for the upload tests, run in its own process:
``python upload_server.py --store DIR [--user U --password P] [--projects JSON] [--discard]``
prints ``PORT <n>`` when it listens on 127.0.0.1.

Routes of the contract: ``GET /health``, ``GET /api/v1/sessions?limit=N`` (newest first),
``GET /api/v1/projects?limit=N``, ``POST /api/v1/auth/login`` (JSON; sets the ``session``
cookie; with --user every /api/v1 route wants it, else 401), ``POST /api/v1/session/upload``
(multipart, parsed as it streams in by a real parser, the file part spooled to disk):
200 with ``session_id``; 409 naming the project when ``project_id`` is empty and the task name
is a workflow of two projects. Every stored upload is ``DIR/<session_id>.zip`` (unless
--discard: then only its size and sha256) with ``DIR/<session_id>.json`` (fields, size, sha256).

Test routes: ``POST /_faults`` with a JSON list of faults the next uploads meet in turn:
``drop`` (read half the body, close the connection), ``500`` (read it all, answer 500, store
nothing), ``slow:S`` (store, answer after S s), ``silent`` (store, never answer: the duplicate
trap), ``413`` (read it all, refuse it), ``ok``. ``GET /_received`` lists the stored uploads; ``GET /_inflight`` the body bytes
read so far of uploads in progress.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import secrets
import sys
import tempfile
import threading
import time
import uuid
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import multipart

PIECE = 1 << 20


class State:
    def __init__(self, store: Path, user: str | None, password: str | None, projects: list[dict],
                 discard: bool) -> None:
        self.store, self.user, self.password, self.projects, self.discard = store, user, password, projects, discard
        self.lock = threading.Lock()
        self.faults: list[str] = []
        self.sessions: list[dict] = []
        self.tokens: set[str] = set()
        self.inflight: dict[int, int] = {}
        self.logins = 0


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state: State

    def log_message(self, *args) -> None:      # quiet
        pass

    # ---- plumbing ---------------------------------------------------------------------------

    def _json(self, code: int, doc: object, cookie: str | None = None) -> None:
        body = json.dumps(doc).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if cookie:
            self.send_header("Set-Cookie", f"session={cookie}; Path=/; HttpOnly")
        self.end_headers()
        self.wfile.write(body)

    def _authorized(self) -> bool:
        st = self.state
        if st.user is None or not self.path.startswith("/api/v1/") or self.path == "/api/v1/auth/login":
            return True
        cookies = dict(c.strip().split("=", 1) for c in (self.headers.get("Cookie") or "").split(";") if "=" in c)
        if cookies.get("session") in st.tokens:
            return True
        self._json(401, {"detail": "Not authenticated"})
        return False

    def _body_len(self) -> int:
        return int(self.headers.get("Content-Length") or 0)

    # ---- routes -----------------------------------------------------------------------------

    def do_GET(self) -> None:
        url = urlparse(self.path)
        st = self.state
        if not self._authorized():
            return
        limit = int(parse_qs(url.query).get("limit", ["100"])[0])
        if url.path == "/health":
            self._json(200, {"status": "ok"})
        elif url.path == "/api/v1/sessions":
            with st.lock:
                newest = sorted(st.sessions, key=lambda s: s["created_at"], reverse=True)[:limit]
            self._json(200, {"sessions": [{k: s[k] for k in ("id", "name", "created_at")} for s in newest]})
        elif url.path == "/api/v1/projects":
            self._json(200, {"projects": st.projects[:limit]})
        elif url.path == "/_received":
            with st.lock:
                self._json(200, {"sessions": st.sessions, "logins": st.logins})
        elif url.path == "/_inflight":
            with st.lock:
                self._json(200, {"inflight": list(st.inflight.values())})
        else:
            self._json(404, {"detail": "Not Found"})

    def do_POST(self) -> None:
        url = urlparse(self.path)
        st = self.state
        if url.path == "/_faults":
            faults = json.loads(self.rfile.read(self._body_len()))
            with st.lock:
                st.faults = list(faults)
            self._json(200, {"faults": faults})
        elif url.path == "/api/v1/auth/login":
            doc = json.loads(self.rfile.read(self._body_len()) or b"{}")
            if st.user is None or (doc.get("username") == st.user and doc.get("password") == st.password
                                   and doc.get("remember_me") is True):
                token = secrets.token_hex(16)
                with st.lock:
                    st.tokens.add(token)
                    st.logins += 1
                self._json(200, {"ok": True}, cookie=token)
            else:
                self._json(401, {"detail": "Incorrect username or password"})
        elif url.path == "/api/v1/session/upload":
            if not self._authorized():
                self.rfile.read(self._body_len())
                return
            self._upload()
        else:
            self._json(404, {"detail": "Not Found"})

    def _upload(self) -> None:
        st = self.state
        with st.lock:
            fault = st.faults.pop(0) if st.faults else "ok"
        length = self._body_len()
        ctype, opts = multipart.parse_options_header(self.headers.get("Content-Type", ""))
        if ctype != "multipart/form-data" or "boundary" not in opts:
            self.rfile.read(length)
            self._json(422, {"detail": "expected multipart/form-data"})
            return
        key = id(self)
        fields: dict[str, str] = {}
        digest, size = hashlib.sha256(), 0
        spool = tempfile.NamedTemporaryFile(dir=st.store, prefix=".upload-", delete=False)
        current: multipart.MultipartSegment | None = None
        text = bytearray()
        read = 0
        try:
            with multipart.PushMultipartParser(opts["boundary"], content_length=length, strict=True) as parser:
                while read < length:
                    if fault == "drop" and read >= length // 2:
                        self.close_connection = True
                        self.connection.shutdown(2)
                        return
                    want = min(PIECE, length - read) if fault != "drop" else max(1, min(PIECE, length // 2 - read))
                    chunk = self.rfile.read1(want)          # what has arrived: progress is visible
                    if not chunk:
                        return                      # the client went away
                    read += len(chunk)
                    with st.lock:
                        st.inflight[key] = read
                    for event in parser.parse(chunk):
                        if isinstance(event, multipart.MultipartSegment):
                            current, text = event, bytearray()
                        elif event is None:
                            if current is not None and current.name != "file":
                                fields[current.name] = text.decode()
                            elif current is not None:
                                fields["filename"] = current.filename or ""
                            current = None
                        elif current is not None and current.name == "file":
                            digest.update(event)
                            size += len(event)
                            if not st.discard:
                                spool.write(event)
                        else:
                            text += event
                for _ in parser.parse(b""):
                    pass
            spool.close()
            if fault == "500":
                self._json(500, {"detail": "Internal Server Error"})
                return
            if fault == "413":
                self._json(413, {"detail": "file too large for this project"})
                return
            missing = {"name", "project_id", "episode_index", "filename"} - set(fields)
            if missing:
                self._json(422, {"detail": f"missing form fields {sorted(missing)}"})
                return
            owners = [p for p in st.projects if fields["name"] in p.get("workflow_names", [])]
            if not fields["project_id"] and len(owners) > 1:
                self._json(409, {"detail": f"ambiguous project for task {fields['name']}: "
                                           f"{', '.join(p['name'] for p in owners)}"})
                return
            session_id = uuid.uuid4().hex
            if not st.discard:
                os.replace(spool.name, st.store / f"{session_id}.zip")
            record = {"id": session_id, "name": fields["name"], "project_id": fields["project_id"],
                      "episode_index": fields["episode_index"], "filename": fields["filename"],
                      "size": size, "sha256": digest.hexdigest(),
                      "created_at": datetime.now(timezone.utc).isoformat(timespec="microseconds")}
            (st.store / f"{session_id}.json").write_text(json.dumps(record))
            with st.lock:
                st.sessions.append(record)
            if fault.startswith("slow:"):
                time.sleep(float(fault.split(":", 1)[1]))
            if fault == "silent":
                self.close_connection = True
                time.sleep(30.0)                     # the client gives up first; the session stays
                return
            self._json(200, {"session_id": session_id})
        finally:
            with st.lock:
                st.inflight.pop(key, None)
            spool.close()
            if os.path.exists(spool.name):
                os.unlink(spool.name)


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        """A client that went away mid-request (the tests kill and time out clients) is no news."""
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--user")
    ap.add_argument("--password")
    ap.add_argument("--projects", default="[]", help="JSON list of {id, name, workflow_names}")
    ap.add_argument("--discard", action="store_true", help="keep only the size and sha256 of uploaded files")
    args = ap.parse_args()
    args.store.mkdir(parents=True, exist_ok=True)
    Handler.state = State(args.store, args.user, args.password, json.loads(args.projects), args.discard)
    server = Server(("127.0.0.1", 0), Handler)
    print(f"PORT {server.server_address[1]}", flush=True)
    try:
        server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
