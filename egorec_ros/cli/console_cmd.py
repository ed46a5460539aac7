"""egorec console: the operator's web page for a running recorder (live tiles, control, verdict,
episodes, review), a client of the recorder's topics and services only."""
from __future__ import annotations


def add_parser(sub) -> None:
    p = sub.add_parser("console", help="serve the operator's web console for a running recorder (loopback by default)")
    p.add_argument("--name", default="egorec_recorder", help="the recorder's node name")
    p.add_argument("--out", default="egorec_data", help="the recorder's dataset root (its --out): episodes for review")
    p.add_argument("--host", default="127.0.0.1",
                   help="interface to listen on; anything but loopback requires the printed token for every request")
    p.add_argument("--port", type=int, default=8765, help="TCP port (0: any free one, printed)")
    p.set_defaults(run=run)


def run(args) -> int:
    from pathlib import Path

    from egorec_ros.console.server import serve
    from egorec_ros.transport.dds import DdsTransport

    with DdsTransport() as transport:
        try:
            serve(transport, args.name, Path(args.out), args.host, args.port)
        except KeyboardInterrupt:
            pass
    return 0
