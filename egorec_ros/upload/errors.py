"""What goes wrong when uploading, each a one-line message saying what to do (``UserError``)."""
from __future__ import annotations

from egorec_ros.errors import UserError


class UploadError(UserError, RuntimeError):
    """An upload that cannot go on as asked; the episodes stay queued."""


class ServerUnreachable(UploadError):
    """No connection, a timeout, or no answer to /health: retried later, reported when it lasts."""


class LoginFailed(UploadError):
    """The server refused the user name or password (or wants a login we have no credentials for)."""


class AmbiguousProject(UploadError):
    """The server cannot tell which project the task belongs to (HTTP 409), or --project matches several."""


class Rejected(UploadError):
    """The server refused the episode with a 4xx: sending it again would not help."""


class CredentialsError(UploadError):
    """A credentials file that is unreadable, malformed, or readable by others."""


class RetryableError(Exception):
    """A failed request that may succeed if sent again (5xx, dropped connection, timeout)."""
