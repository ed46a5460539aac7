"""Live messages -> samples for the recorder, through the same decode path as bags.

Each rig stream with a topic is subscribed on a transport. A message arrives as
serialized CDR; messages.decode deserializes it with rosbags' typestore and maps it
by the converter's rule for its stream kind and type, stamped by the stream's clock
(header stamp, or arrival with ``stamp: receive``); the samples go to the recorder.
So a live recording and a bag of the same messages give the same samples.

A message that cannot be decoded (truncated CDR, a wrong encapsulation, arrays of
the wrong size, a zero header stamp) is counted as invalid for its stream
(``invalid_messages`` in the episode's drop_stats); it never stops the recorder.
Images stay lazy, as from a bag: pixels that do not add up are a substituted frame.
"""
from __future__ import annotations

import threading
from collections import Counter
from functools import partial
from typing import TYPE_CHECKING, Callable

from egorec_ros.converter.clocks import HEADER, StreamClock, stamp_option
from egorec_ros.messages.context import MessageContext
from egorec_ros.messages.decode import Decoded, TopicDecoder
from egorec_ros.messages.mapping import accepted_types
from egorec_ros.messages.errors import PayloadError
from egorec_ros.rig.kinds import StreamKind
from egorec_ros.rig.model import Rig, StreamSpec
from egorec_ros.transport.base import RECORDER, RECORDER_SMALL, QoS, Subscription, Transport

if TYPE_CHECKING:   # only a type here: a drivers process asking stream_msgtype() loads no pyarrow/PyAV
    from egorec_ros.assembly.sample import Sample
    from egorec_ros.recorder.session import Recorder

MSG_TYPE_OPTION = "msg_type"
Tap = Callable[[str, str, bytes, int], None]     # (topic, type, serialized message, arrival ns), e.g. a BagTap
FAR_TOLERANCE_NS = 2_000_000_000


def stream_msgtype(spec: StreamSpec) -> str:
    """The ROS type a stream is subscribed with: its ``msg_type`` option, else the first type
    that can feed it (what ``egorec sim-devices`` and the test-bag writer publish)."""
    explicit = spec.source.get(MSG_TYPE_OPTION)
    if explicit:
        return str(explicit)
    types = accepted_types(spec)
    if not types:
        raise ValueError(f"stream {spec.id!r} ({spec.kind.value}) has no message type that can feed it")
    return types[0]


class LiveInput:
    """Subscribes every topic of ``rig`` on ``transport`` and feeds ``recorder``; ``close()`` unsubscribes.

    ``qos``: one QoS for all (default: best effort, which matches reliable and best-effort
    publishers), or stream id -> QoS for exceptions."""

    def __init__(self, rig: Rig, transport: Transport, recorder: Recorder, *,
                 qos: QoS | dict[str, QoS] = RECORDER, source: str = "live", tap: Tap | None = None) -> None:
        self.recorder, self.source, self.tap = recorder, source, tap
        self.preview: Callable[[Sample], None] | None = None    # sees every sample (live/preview.py)
        self._lock = threading.Lock()
        self.received: Counter[str] = Counter()       # decoded samples per stream
        self.invalid: Counter[str] = Counter()
        self.last_arrival_ns: dict[str, int] = {}
        self._clocks: dict[str, StreamClock] = {}
        by_topic: dict[tuple[str, str], list[StreamSpec]] = {}
        for spec in rig.streams.values():
            if not spec.topic:
                continue
            by_topic.setdefault((spec.topic, stream_msgtype(spec)), []).append(spec)
            self._clocks[spec.id] = StreamClock(spec.id, stamp_option(spec) or HEADER, FAR_TOLERANCE_NS)
        if not by_topic:
            raise ValueError(f"rig {rig.name!r} has no stream with a topic; nothing to subscribe to")
        self.decoders = [TopicDecoder.for_streams(topic, msgtype, specs, source)
                         for (topic, msgtype), specs in by_topic.items()]
        self._subs: list[Subscription] = []
        for decoder in self.decoders:
            spec = decoder.routes[0][0]
            topic_qos = qos.get(spec.id, RECORDER) if isinstance(qos, dict) else qos
            if topic_qos == RECORDER and spec.kind in (StreamKind.IMU, StreamKind.TRAJECTORY):
                topic_qos = RECORDER_SMALL
            self._subs.append(transport.subscribe(decoder.topic, decoder.typename, topic_qos,
                                                  partial(self.on_message, decoder)))
        self.topics = sorted(by_topic)

    def on_message(self, decoder: TopicDecoder, cdr: bytes, arrival_ns: int) -> None:
        handed = self._decode(decoder, cdr, arrival_ns)
        if self.tap is not None:   # the bag gets the arrival the recorder judged lateness by
            self.tap(decoder.topic, decoder.typename, cdr, handed or arrival_ns)

    def _decode(self, decoder: TopicDecoder, cdr: bytes, arrival_ns: int) -> int | None:
        """Hand the message's samples to the recorder; the arrival it stamped, None if none was handed over."""
        try:
            # the decoder names live messages by their receive time (not "bag time") in errors
            decoded = decoder.decode(cdr, arrival_ns, stamp=self._stamp)
        except PayloadError as exc:
            decoded = Decoded(drops=[(spec.id, str(exc)) for spec, _ in decoder.routes])
        for stream, _why in decoded.drops:
            self._invalid(stream)
        handed = None
        for sample in decoded.samples:
            with self._lock:
                self.received[sample.stream] += 1
                self.last_arrival_ns[sample.stream] = arrival_ns
            stamped = self.recorder.on_sample(sample)
            if self.preview is not None:
                self.preview(sample)
            handed = stamped if handed is None else handed
        return handed

    def _stamp(self, spec: StreamSpec, header: int | None, arrival_ns: int, ctx: MessageContext) -> tuple[int, int] | str:
        """The stream's clock stamps (and counts zero, far and out-of-order stamps)."""
        clock = self._clocks[spec.id]
        stamp = clock.stamp(header, arrival_ns, ctx)
        return f"{ctx}: header stamp is zero" if stamp is None else (stamp, clock.raw_stamp(header))

    def _invalid(self, stream: str) -> None:
        with self._lock:
            self.invalid[stream] += 1
        self.recorder.count_invalid(stream)

    def snapshot(self) -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
        """(received, invalid, last arrival ns) per stream, consistent with each other."""
        with self._lock:
            return dict(self.received), dict(self.invalid), dict(self.last_arrival_ns)

    def close(self) -> None:
        for sub in self._subs:
            sub.close()
        self._subs.clear()
