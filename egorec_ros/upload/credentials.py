"""The server login: from the environment (EGOREC_UPLOAD_USER, EGOREC_UPLOAD_PASSWORD) or from a
file only its owner can read (JSON ``{"user": ..., "password": ...}``, mode 0600). The password
is never printed, logged or put in an error message (its repr is hidden)."""
from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from egorec_ros.upload.errors import CredentialsError

USER_ENV, PASSWORD_ENV, FILE_ENV = "EGOREC_UPLOAD_USER", "EGOREC_UPLOAD_PASSWORD", "EGOREC_UPLOAD_CREDENTIALS"
DEFAULT_FILE = Path("~/.config/egorec/upload_credentials.json")


@dataclass(frozen=True)
class Credentials:
    user: str
    password: str = field(repr=False)
    source: str = ""                  # where the password came from, for messages


def default_file() -> Path:
    return Path(os.environ.get(FILE_ENV) or DEFAULT_FILE).expanduser()


def load_credentials(user: str | None = None, file: Path | None = None) -> Credentials | None:
    """The login to use, or None when none is configured (a server without logins).
    ``user`` (--user) picks the user; the password comes from the environment, else the file."""
    path = Path(file).expanduser() if file else default_file()
    stored = _read_file(path) if (file or path.exists()) else {}
    user = user or os.environ.get(USER_ENV) or stored.get("user")
    if not user:
        return None
    password = os.environ.get(PASSWORD_ENV)
    if password is not None:
        return Credentials(user, password, f"${PASSWORD_ENV}")
    if stored.get("password") is not None and stored.get("user", user) == user:
        return Credentials(user, str(stored["password"]), str(path))
    raise CredentialsError(f"no password for upload user {user!r}: set {PASSWORD_ENV}, or write "
                           f'{{"user": "{user}", "password": "..."}} to {path} (chmod 600)')


def _read_file(path: Path) -> dict:
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise CredentialsError(f"credentials file {path} does not exist; create it (JSON user and password, "
                               "chmod 600) or set EGOREC_UPLOAD_USER and EGOREC_UPLOAD_PASSWORD") from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise CredentialsError(f"credentials file {path} is readable by others (mode {stat.S_IMODE(mode):o}); "
                               f"run `chmod 600 {path}`")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CredentialsError(f"credentials file {path} is not readable JSON ({type(exc).__name__}); it must hold "
                               '{"user": "...", "password": "..."}') from None
    if not isinstance(doc, dict):
        raise CredentialsError(f'credentials file {path} must hold a JSON object {{"user": ..., "password": ...}}')
    return doc
