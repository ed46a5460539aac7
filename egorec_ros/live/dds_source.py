"""A recorder fed by DDS topics (no ROS needed): transport + live input, opened and closed together."""
from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from egorec_ros.bags.tap import BagTap
from egorec_ros.live.input import LiveInput
from egorec_ros.recorder.session import Recorder
from egorec_ros.rig.model import Rig
from egorec_ros.transport.socket_drops import rcvbuf_advice, rmem_max, udp_drops


@contextmanager
def dds_input(rig: Rig, recorder: Recorder, *, domain: int | None = None,
              bag: str | Path | None = None) -> Iterator[LiveInput]:
    """``bag``: also write every received message to this new rosbag2 (mcap) folder."""
    from egorec_ros.transport.dds import DdsTransport   # cyclonedds loads only when used
    tap = BagTap(bag) if bag else None
    transport = DdsTransport(domain)
    advice = rcvbuf_advice(rmem_max())
    if advice:
        print(f"egorec: warning: {advice}", file=sys.stderr)
    drops_before = udp_drops().drops
    try:
        live = LiveInput(rig, transport, recorder, source="dds", tap=tap)
        try:
            yield live
        finally:
            live.close()
    finally:
        drops = udp_drops().drops - drops_before
        transport.close()
        if drops:
            print(f"egorec: warning: the kernel dropped {drops} UDP datagrams on the DDS sockets while recording "
                  "(socket receive buffer full): messages were lost before DDS saw them", file=sys.stderr)
        if tap is not None:
            tap.close()


def wait_for_streams(live: LiveInput, streams: list[str], timeout_s: float) -> list[str]:
    """Wait until every stream has delivered a sample; the streams still silent at the timeout."""
    deadline = time.monotonic() + timeout_s
    while True:
        silent = [s for s in streams if not live.received[s]]
        if not silent or time.monotonic() >= deadline:
            return silent
        time.sleep(0.05)
