"""The collection server's HTTP contract, as the reference collector's client uses it:
``GET /health``, ``GET /api/v1/sessions?limit=200``, ``GET /api/v1/projects?limit=100``,
``POST /api/v1/auth/login`` (sets a session cookie) and ``POST /api/v1/session/upload``
(multipart: ``file``, ``name``, ``project_id``, ``episode_index`` = the 0-based file number).

Failures are sorted here: a refused login, a 409 naming the project and other 4xx are final
(``UploadError`` subclasses, one line each); 5xx, dropped connections and timeouts are
``RetryableError`` (the episode may or may not have landed: the uploader decides that from
the sessions list). TLS certificates are verified unless ``verify=False``."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from egorec_ros.upload.body import MultipartFile, UploadStopped
from egorec_ros.upload.credentials import Credentials
from egorec_ros.upload.errors import (AmbiguousProject, LoginFailed, Rejected, RetryableError,
                                      ServerUnreachable, UploadError)

SESSIONS_LIMIT, PROJECTS_LIMIT = 200, 100


@dataclass(frozen=True)
class Session:
    id: str
    name: str
    created_at: str


class ServerClient:
    """One server, one cookie jar (holds an httpx client)."""

    def __init__(self, url: str, credentials: Credentials | None = None, *, verify: bool = True,
                 connect_timeout_s: float = 10.0, read_timeout_s: float = 120.0) -> None:
        if not url.startswith(("http://", "https://")):
            raise UploadError(f"--server {url!r} is not an http:// or https:// address")
        self.url = url.rstrip("/")
        self.credentials = credentials
        self._logged_in = False
        timeout = httpx.Timeout(connect=connect_timeout_s, read=read_timeout_s, write=60.0, pool=10.0)
        self._http = httpx.Client(base_url=self.url, verify=verify, timeout=timeout, follow_redirects=False)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "ServerClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- routes -------------------------------------------------------------------------

    def health(self) -> None:
        """Raises ServerUnreachable unless ``GET /health`` answers 200."""
        try:
            r = self._http.get("/health")
        except httpx.HTTPError as exc:
            raise ServerUnreachable(f"cannot reach the upload server {self.url} ({_reason(exc)}); check the address "
                                    "and the network; the episodes stay queued (`egorec upload --status`)") from None
        if r.status_code != 200:
            raise ServerUnreachable(f"the upload server {self.url} is not healthy (GET /health: HTTP {r.status_code}); "
                                    "try again later; the episodes stay queued")

    def login(self) -> None:
        creds = self.credentials
        if creds is None:
            raise LoginFailed(f"the upload server {self.url} wants a login: give --user and set "
                              "EGOREC_UPLOAD_PASSWORD (or a 0600 credentials file)")
        r = self._send("POST", "/api/v1/auth/login",
                       json={"username": creds.user, "password": creds.password, "remember_me": True})
        if r.status_code in (400, 401, 403):
            raise LoginFailed(f"the upload server {self.url} refused user {creds.user!r}: wrong user name or password "
                              f"(from {creds.source}); fix it and run again")
        _check(r, "logging in")
        self._logged_in = True

    def sessions(self) -> list[Session]:
        doc = self._json("GET", f"/api/v1/sessions?limit={SESSIONS_LIMIT}", "listing sessions")
        return [Session(str(s.get("id")), str(s.get("name", "")), str(s.get("created_at", "")))
                for s in doc.get("sessions", [])]

    def projects(self) -> list[dict[str, Any]]:
        return list(self._json("GET", f"/api/v1/projects?limit={PROJECTS_LIMIT}", "listing projects")
                    .get("projects", []))

    def resolve_project(self, given: str) -> str:
        """A project given by id or name -> its id ('' stays '': the server decides)."""
        if not given:
            return ""
        projects = self.projects()
        by_id = [p for p in projects if str(p.get("id")) == given]
        if by_id:
            return str(by_id[0]["id"])
        named = [p for p in projects if str(p.get("name")) == given]
        if len(named) == 1:
            return str(named[0]["id"])
        if named:
            raise AmbiguousProject(f"{len(named)} projects on {self.url} are named {given!r} (ids "
                                   f"{', '.join(str(p.get('id')) for p in named)}); give --project ID")
        known = ", ".join(f"{p.get('name')} ({p.get('id')})" for p in projects[:10]) or "none"
        raise Rejected(f"no project {given!r} on {self.url} (projects: {known}); check --project")

    def upload(self, body: MultipartFile, what: str) -> str:
        """POST the slice; the new session's id. Raises RetryableError when it may be retried."""
        headers = {"Content-Type": body.content_type, "Content-Length": str(len(body))}
        r = self._send("POST", "/api/v1/session/upload", content=iter(body), headers=headers)
        if r.status_code == 409:
            detail = _detail(r)
            raise AmbiguousProject(f"the server cannot tell which project {what} belongs to ({detail}); "
                                   "give --project NAME|ID")
        _check(r, f"uploading {what}")
        try:
            session_id = r.json().get("session_id")
        except ValueError:
            session_id = None
        if not session_id:
            raise RetryableError(f"HTTP {r.status_code} without a session_id")
        return str(session_id)

    # ---- plumbing -----------------------------------------------------------------------

    def _json(self, method: str, path: str, what: str) -> dict:
        r = self._send(method, path)
        _check(r, what)
        try:
            doc = r.json()
        except ValueError:
            raise RetryableError(f"{what}: the answer is not JSON") from None
        return doc if isinstance(doc, dict) else {}

    def _send(self, method: str, path: str, **kw) -> httpx.Response:
        """One request; a 401 logs in (once) and repeats it when there are credentials."""
        for first in (True, False):
            try:
                r = self._http.request(method, path, **kw)
            except UploadStopped:
                raise
            except httpx.HTTPError as exc:
                raise RetryableError(f"{method} {path}: {_reason(exc)}") from None
            if r.status_code != 401 or path == "/api/v1/auth/login" or not first:
                return r
            if "content" in kw:     # a streamed body is spent: the caller retries after the login
                self.login()
                raise RetryableError(f"{method} {path}: HTTP 401 (logged in again)")
            self.login()
        return r


def _reason(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if text != type(exc).__name__ else text


def _detail(r: httpx.Response) -> str:
    try:
        doc = r.json()
        detail = doc.get("detail") if isinstance(doc, dict) else None
    except ValueError:
        detail = None
    text = str(detail) if detail else r.text[:200]
    return " ".join(text.split()) or f"HTTP {r.status_code}"


def _check(r: httpx.Response, what: str) -> None:
    if r.status_code < 300:
        return
    if r.status_code in (401, 403):
        raise LoginFailed(f"the upload server refused access while {what} (HTTP {r.status_code}: {_detail(r)}); "
                          "give --user and set EGOREC_UPLOAD_PASSWORD")
    if r.status_code in (408, 425, 429) or r.status_code >= 500:
        raise RetryableError(f"{what}: HTTP {r.status_code} {_detail(r)}")
    raise Rejected(f"the upload server refused {what}: HTTP {r.status_code} {_detail(r)}; the request will not be "
                   "repeated; check the task and the server's rules")

