"""Run the console: bind (loopback unless told), print the URL with its token, serve until stopped."""
from __future__ import annotations

import ipaddress
import secrets
import socket
import sys
from pathlib import Path
from types import FrameType

import uvicorn

from egorec_ros.console.app import ConsoleState, build_app
from egorec_ros.console.link import RecorderLink
from egorec_ros.errors import UserError
from egorec_ros.transport.base import Transport


class ConsoleError(UserError):
    """The console could not start (address in use, bad host)."""


class _Server(uvicorn.Server):
    """Ends the pages' live event streams when asked to stop: uvicorn waits for open responses, and
    an event stream never ends by itself (Ctrl-C with a page open hung the console)."""

    def __init__(self, config: uvicorn.Config, state: ConsoleState) -> None:
        super().__init__(config)
        self._state = state

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self._state.stopping = True
        super().handle_exit(sig, frame)


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ConsoleError(f"cannot listen on {host}:{port} ({exc.strerror}); pick another --port or --host") from None
    sock.listen(64)
    return sock


def serve(transport: Transport, name: str, out: Path, host: str = "127.0.0.1", port: int = 8765,
          token: str | None = None) -> None:
    """Serve the console for recorder ``name`` whose dataset root is ``out`` until Ctrl-C."""
    sock = bind(host, port)
    token = token or secrets.token_urlsafe(18)
    link = RecorderLink(transport, name)
    state = ConsoleState(link, Path(out), token, open_reads=is_loopback(host))
    shown = f"[{host}]" if ":" in host else host
    print(f"egorec console: http://{shown}:{sock.getsockname()[1]}/?token={token}\n"
          f"  recorder /{name.strip('/')}, episodes from {out}; the token is needed for "
          f"{'control' if state.open_reads else 'everything'} (open the link above)", file=sys.stderr, flush=True)
    config = uvicorn.Config(build_app(state), log_level="warning", access_log=False, lifespan="off",
                            timeout_graceful_shutdown=2)
    try:
        _Server(config, state).run(sockets=[sock])
    finally:
        link.close()
        sock.close()
