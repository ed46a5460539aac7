"""Invalid image payloads in a bag are an error, not a silent black frame.

The episode writer replaces a frame it cannot decode or that does not fit its stream
by the previous one and counts it (DESIGN "Video integrity"); that suits a live camera
that hiccups, but in a bag it usually means a broken topic or a rig with the wrong
image size. So the converter wraps every lazy frame: whatever fails when the encoder
decodes it (``FrameError`` naming bag, topic and bag time, or a size that is not the
stream's) is recorded here. More than ``allowed`` such frames on a stream stop the
episode with the first reason; up to ``allowed`` are substituted and counted (a frame
repeated in several rows counts once).

Frames are decoded on the encoder threads, so the check runs as samples flow (the
episode stops soon after the first bad frame) and once more after the episode ended.
"""
from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator

import numpy as np

from egorec_ros.assembly.sample import Sample
from egorec_ros.codecs.lazy_frame import LazyFrame, is_lazy_frame
from egorec_ros.messages.errors import FrameError
from egorec_ros.rig.kinds import StreamKind
from egorec_ros.rig.model import Rig, StreamSpec

_CHECK_EVERY = 32


class _WatchedFrame:
    """A lazy frame whose failure is recorded once, however many rows repeat it."""

    __slots__ = ("frame", "spec", "watch", "reason", "seen")

    def __init__(self, frame: LazyFrame, spec: StreamSpec, watch: FrameWatch) -> None:
        self.frame, self.spec, self.watch = frame, spec, watch
        self.reason: str | None = None
        self.seen = False

    def array(self) -> np.ndarray:
        if self.reason is not None:
            raise FrameError(self.reason)
        try:
            pixels = self.frame.array()
        except FrameError as exc:
            self.reason = str(exc)
        else:
            self.reason = self._size_problem(pixels)
        if self.reason is not None:
            self.watch.failed(self.spec.id, self.reason)
            raise FrameError(self.reason)
        if not self.seen:
            self.seen = True
            self.watch.decoded(self.spec.id)
        return pixels

    def _size_problem(self, pixels: np.ndarray) -> str | None:
        size = (int(self.spec.source.get("width", 0)), int(self.spec.source.get("height", 0)))
        if pixels.shape[1::-1] == size:
            return None
        where = getattr(self.frame, "where", self.spec.topic)
        return (f"{where}: the image is {pixels.shape[1]}x{pixels.shape[0]} but stream {self.spec.id} is "
                f"{size[0]}x{size[1]} in the rig; set its width/height to the bag's size")


class FrameWatch:
    def __init__(self, rig: Rig, allowed: int) -> None:
        self.allowed = allowed
        self._images = {sid: s for sid, s in rig.streams.items() if s.kind in (StreamKind.VIDEO, StreamKind.DEPTH)}
        self._lock = threading.Lock()
        self.counts: dict[str, int] = {}         # stream -> bad frames
        self.first: dict[str, str] = {}          # stream -> why the first bad frame was bad
        self.good: dict[str, int] = {}           # stream -> frames decoded

    def failed(self, stream: str, reason: str) -> None:
        with self._lock:
            self.counts[stream] = self.counts.get(stream, 0) + 1
            self.first.setdefault(stream, reason)

    def decoded(self, stream: str) -> None:
        with self._lock:
            self.good[stream] = self.good.get(stream, 0) + 1

    def watch(self, samples: Iterable[Sample]) -> Iterator[Sample]:
        """``samples`` with their lazy frames watched; raises FrameError (stopping the episode)
        once a stream has more bad frames than allowed."""
        for n, sample in enumerate(samples):
            spec = self._images.get(sample.stream)
            if spec is not None and is_lazy_frame(sample.payload):
                sample = Sample(sample.stream, sample.stamp_ns, sample.arrival_ns,
                                _WatchedFrame(sample.payload, spec, self), sample.raw_stamp_ns)
            if n % _CHECK_EVERY == 0:
                self.check()
            yield sample

    def check(self, *, final: bool = False) -> None:
        """Raise FrameError if a stream has more bad frames than allowed, or (``final``: the
        episode is complete) bad frames and not one good frame."""
        with self._lock:
            over = {s: n for s, n in self.counts.items() if n > self.allowed}
            hopeless = {s: n for s, n in self.counts.items() if final and not self.good.get(s)}
        if over:
            stream = min(over)
            raise FrameError(f"{self.first[stream]} ({over[stream]} bad frame(s) on {stream}; --bad-frames "
                             f"{self.allowed} tolerates {self.allowed} per stream and episode, each replaced by the "
                             "previous frame and counted in drop_stats: raise it to convert anyway)")
        if hopeless:
            stream = min(hopeless)
            raise FrameError(f"{self.first[stream]} (none of the frames of {stream} could be used)")

    def lines(self) -> list[str]:
        return [f"{s}: {n} bad frames substituted; first: {self.first[s]}" for s, n in sorted(self.counts.items())]
