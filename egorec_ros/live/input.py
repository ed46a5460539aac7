"""Live messages -> samples for the recorder, through the same decode path as bags.

Each rig stream with a topic is subscribed on a transport. A message arrives as
serialized CDR; it is deserialized with rosbags' typestore and mapped by the
converter's rule for its stream kind and type, stamped by the stream's clock
(header stamp, or arrival with ``stamp: receive``), and handed to the recorder.
So a live recording and a bag of the same messages give the same samples.

A message that cannot be decoded (truncated CDR, a wrong encapsulation, arrays of
the wrong size, a zero header stamp) is counted as invalid for its stream
(``invalid_messages`` in the episode's drop_stats); it never stops the recorder.
Images stay lazy, as from a bag: pixels that do not add up are a substituted frame.
"""
from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass
from functools import partial
from typing import Callable

from egorec_ros.assembly.sample import Sample
from egorec_ros.converter.clocks import HEADER, StreamClock, stamp_option
from egorec_ros.messages.mapping import Rule, accepted_types, rule_for
from egorec_ros.messages.context import MessageContext
from egorec_ros.messages.payloads.stamps import header_ns
from egorec_ros.messages.decode import deserialize
from egorec_ros.messages.errors import PayloadError
from egorec_ros.recorder.session import Recorder
from egorec_ros.rig.model import Rig, StreamSpec
from egorec_ros.transport.base import RECORDER, QoS, Subscription, Transport

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


@dataclass
class _Route:
    spec: StreamSpec
    rule: Rule
    clock: StreamClock


class LiveInput:
    """Subscribes every topic of ``rig`` on ``transport`` and feeds ``recorder``; ``close()`` unsubscribes.

    ``qos``: one QoS for all (default: best effort, which matches reliable and best-effort
    publishers), or stream id -> QoS for exceptions."""

    def __init__(self, rig: Rig, transport: Transport, recorder: Recorder, *,
                 qos: QoS | dict[str, QoS] = RECORDER, source: str = "live", tap: Tap | None = None) -> None:
        self.recorder, self.source, self.tap = recorder, source, tap
        self._lock = threading.Lock()
        self.received: Counter[str] = Counter()       # decoded samples per stream
        self.invalid: Counter[str] = Counter()
        self.last_arrival_ns: dict[str, int] = {}
        by_topic: dict[tuple[str, str], list[_Route]] = {}
        for spec in rig.streams.values():
            if not spec.topic:
                continue
            msgtype = stream_msgtype(spec)
            route = _Route(spec, rule_for(spec, spec.topic, msgtype),
                           StreamClock(spec.id, stamp_option(spec) or HEADER, FAR_TOLERANCE_NS))
            by_topic.setdefault((spec.topic, msgtype), []).append(route)
        if not by_topic:
            raise ValueError(f"rig {rig.name!r} has no stream with a topic; nothing to subscribe to")
        self._subs: list[Subscription] = []
        self._callbacks: list[partial] = []
        for (topic, msgtype), routes in by_topic.items():
            topic_qos = qos.get(routes[0].spec.id, RECORDER) if isinstance(qos, dict) else qos
            self._callbacks.append(partial(self.on_message, topic, msgtype, routes))
            self._subs.append(transport.subscribe(topic, msgtype, topic_qos, self._callbacks[-1]))
        self.topics = sorted(by_topic)

    def on_message(self, topic: str, msgtype: str, routes: list[_Route], cdr: bytes, arrival_ns: int) -> None:
        handed = self._decode(topic, msgtype, routes, cdr, arrival_ns)
        if self.tap is not None:   # the bag gets the arrival the recorder judged lateness by
            self.tap(topic, msgtype, cdr, handed or arrival_ns)

    def _decode(self, topic: str, msgtype: str, routes: list[_Route], cdr: bytes, arrival_ns: int) -> int | None:
        """Hand the message's samples to the recorder; the arrival it stamped, None if none was handed over."""
        handed = None
        try:
            msg = deserialize(msgtype, cdr)
        except PayloadError:
            for route in routes:
                self._invalid(route.spec.id)
            return None
        ctx = MessageContext(self.source, topic, arrival_ns)
        for route in routes:
            spec = route.spec
            picked = route.rule.pick(msg, spec.source) if route.rule.pick else msg
            if picked is None:
                continue
            header = header_ns(picked)
            stamp = route.clock.stamp(header, arrival_ns, ctx)
            if stamp is None:
                self._invalid(spec.id)
                continue
            try:
                payload = route.rule.payload(picked, ctx)
            except (ValueError, TypeError, IndexError):   # PayloadError and malformed arrays
                self._invalid(spec.id)
                continue
            with self._lock:
                self.received[spec.id] += 1
                self.last_arrival_ns[spec.id] = arrival_ns
            sample = Sample(spec.id, stamp, arrival_ns, payload, route.clock.raw_stamp(header))
            stamped = self.recorder.on_sample(sample)
            handed = stamped if handed is None else handed
        return handed

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
