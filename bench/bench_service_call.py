"""A service call's latency over loopback DDS: a new client per call (what `DdsTransport.call`, the
console and `ros2 service call` do: endpoint discovery every time) against one client kept for the
service, in the same run. The server is a real `DdsService` in another process; the request is the
recorder's ListEpisodes. Prints median / p90 / max per way and the ratio of medians."""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test"))     # helpers/, as pytest has them

from helpers.dds_domains import domain_for  # noqa: E402

from egorec_ros.live.node import LIST_EPISODES  # noqa: E402
from egorec_ros.messages.typestores import ros2_typestore  # noqa: E402
from egorec_ros.transport.dds import DdsTransport  # noqa: E402
from egorec_ros.transport.dds.loopback import loopback_env  # noqa: E402
from egorec_ros.transport.dds.services import DdsClient  # noqa: E402

SERVICE = "/bench_rec/list_episodes"
SERVER = f"""
import sys, time
from egorec_ros.live.node import LIST_EPISODES
from egorec_ros.messages.typestores import ros2_typestore
from egorec_ros.transport.dds import DdsTransport
store = ros2_typestore()
reply = bytes(store.serialize_cdr(store.types[LIST_EPISODES + "_Response"](
    success=True, message="", task="t", episodes_json="[]"), LIST_EPISODES + "_Response"))
with DdsTransport() as t:
    t.serve("{SERVICE}", LIST_EPISODES, lambda _req: reply)
    print("serving", flush=True)
    sys.stdin.read()
"""


def percentiles(ms: list[float]) -> str:
    ms = sorted(ms)
    return f"median {statistics.median(ms):7.1f} ms  p90 {ms[int(0.9 * (len(ms) - 1))]:7.1f} ms  max {ms[-1]:7.1f} ms"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=30, help="calls per way (interleaved in rounds of 5)")
    args = ap.parse_args()
    os.environ.update(loopback_env(domain_for("bench_service_call")))
    store = ros2_typestore()
    request = bytes(store.serialize_cdr(store.types[LIST_EPISODES + "_Request"](task="t"), LIST_EPISODES + "_Request"))
    server = subprocess.Popen([sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None and server.stdout.readline().strip() == "serving"
        fresh: list[float] = []
        kept_ms: list[float] = []
        with DdsTransport() as transport, DdsClient(transport, SERVICE, LIST_EPISODES) as kept:
            kept.call(request, 30.0)                       # the kept client's own discovery, once
            while len(fresh) < args.calls:
                for _ in range(5):
                    t0 = time.perf_counter()
                    transport.call(SERVICE, LIST_EPISODES, request, 30.0)
                    fresh.append(1e3 * (time.perf_counter() - t0))
                for _ in range(5):
                    t0 = time.perf_counter()
                    kept.call(request, 30.0)
                    kept_ms.append(1e3 * (time.perf_counter() - t0))
        print(f"load {os.getloadavg()[0]:.1f}, {len(fresh)} calls each")
        print(f"new client per call : {percentiles(fresh)}")
        print(f"one client kept     : {percentiles(kept_ms)}")
        print(f"ratio of medians (new / kept): {statistics.median(fresh) / statistics.median(kept_ms):.1f}x")
    finally:
        server.stdin.close()                                # type: ignore[union-attr]
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
