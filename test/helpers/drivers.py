"""Shared pieces of the driver tests (test_drivers_*.py): a simulated serial device on
a pty pair, a publish callback that keeps what a driver published, and recording that
output through the converter's payload rules and the replay recorder into a task that
``egorec validate`` passes."""
from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from egorec_ros.assembly.sample import Sample
from egorec_ros.messages.mapping import rule_for
from egorec_ros.messages.context import MessageContext
from egorec_ros.messages.payloads.stamps import header_ns
from egorec_ros.drivers import clock
from egorec_ros.recorder.replay import record_samples
from egorec_ros.rig.kinds import StreamKind
from egorec_ros.rig.load import load_rig
from egorec_ros.rig.model import Rig
from egorec_ros.rig.resize import with_video_sizes
from egorec_ros.store import EpisodeResult, TaskWriter
from egorec_ros.validate.validate import validate_task

DATA = Path(__file__).parents[1] / "data"
SIZE = (64, 48)
WAIT_S = 10.0
ARRIVAL_NS = 1_000_000


def wait_for(condition, what: str, timeout: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.01)


@dataclass
class Published:
    """The ``publish`` callback of a driver under test: (topic, msg, host arrival ns)."""

    items: list = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, topic: str, msg: object) -> None:
        with self.lock:
            self.items.append((topic, msg, clock.now_ns()))

    def on(self, topic: str) -> list:
        with self.lock:
            return [m for t, m, _ in self.items if t == topic]

    def count(self, topic: str | None = None) -> int:
        with self.lock:
            return sum(topic is None or t == topic for t, _, _ in self.items)


class PtyDevice:
    """A serial device on the far side of a pty whose slave is reached through a stable
    symlink (like /dev/serial/by-id/...): unplug closes the pty, replug makes a new one
    behind the same link."""

    def __init__(self, link: Path) -> None:
        self.link = link
        self.master = -1
        self.slave = -1
        self.plug()

    def plug(self) -> None:
        self.master, self.slave = os.openpty()
        tmp = self.link.with_name(self.link.name + ".new")
        tmp.unlink(missing_ok=True)
        tmp.symlink_to(os.ttyname(self.slave))
        os.replace(tmp, self.link)

    def unplug(self) -> None:
        os.close(self.master)
        os.close(self.slave)
        self.link.unlink()
        self.master = self.slave = -1

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            n = os.write(self.master, view)
            view = view[n:]

    def read_available(self, timeout: float = 0.05) -> bytes:
        import select
        out = b""
        while select.select([self.master], [], [], timeout)[0]:
            out += os.read(self.master, 4096)
            timeout = 0.0
        return out

    def close(self) -> None:
        if self.master >= 0:
            self.unplug()


def rig_with_camera(name: str) -> Rig:
    """A test rig (test/data/NAME.yaml) at a small video size."""
    return with_video_sizes(load_rig(DATA / f"{name}.yaml"), SIZE)


def samples_of(rig: Rig, published: list) -> list[Sample]:
    """Driver output -> Samples, through the converter's payload rules (the same path a
    bag of these messages takes). Each arrives 1 ms after its stamp: the rows then depend
    on what the driver published, not on how loaded this machine was while the test ran."""
    by_topic = {s.topic: s for s in rig.streams.values() if s.topic}
    out = []
    for topic, msg, _ in published:
        spec = by_topic[topic]
        stamp = header_ns(msg)
        rule = rule_for(spec, topic, msg.__msgtype__)
        payload = rule.payload(msg, MessageContext("driver", topic, stamp + ARRIVAL_NS))
        out.append(Sample(spec.id, stamp, stamp + ARRIVAL_NS, payload))
    return out


def camera_samples(rig: Rig, stream: str, start_ns: int, stop_ns: int) -> list[Sample]:
    """A plain 30 fps camera beside the device under test: an episode needs a video stream."""
    step = int(1e9 / rig.fps)
    spec = rig.streams[stream]
    assert spec.kind is StreamKind.VIDEO
    frames = []
    for i, t in enumerate(range(start_ns, stop_ns, step)):
        pixels = np.full((SIZE[1], SIZE[0], 3), (i * 7) % 256, dtype=np.uint8)
        frames.append(Sample(stream, t, t + ARRIVAL_NS, pixels))
    return frames


def record(tmp: Path, rig: Rig, published: list, camera: str | None = None) -> tuple[Path, EpisodeResult]:
    """Record the driver's messages (plus a camera when the rig's only video is elsewhere)
    into a task; assert it validates; return the task and episode."""
    samples = samples_of(rig, published)
    start = min(s.stamp_ns for s in samples)
    stop = max(s.stamp_ns for s in samples) + 34_000_000   # one tick past the last sample: it makes a row
    if camera is not None:
        samples += camera_samples(rig, camera, start, stop + 1)
    samples.sort(key=lambda s: s.arrival_ns)
    task = tmp / "task"
    with TaskWriter(task) as writer:
        result, _ = record_samples(writer, rig, samples, start_ns=start, stop_ns=stop, task="drivers")
    assert result is not None and result.rows > 0
    assert validate_task(task) == []
    return task, result
