"""A live message (raw CDR bytes) -> Samples, through the same rules as a bag.

A live subscriber (DDS, rclpy serialized subscriptions) hands over the message's
type name, its CDR bytes and the host time it arrived; rosbags' typestore
deserializes it and the ``mapping`` rules turn it into each fed stream's payload,
exactly as the bag converter does. Stamps: by default the header stamp, or the
arrival time for a stream whose ``stamp`` option is ``receive`` or whose message has
no header; a zero header stamp is a drop (a driver that never set it). A caller with
its own stamp policy (the live recorder's per-stream clocks) passes a ``Stamper``.
"""
from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from rosbags.serde import SerdeError
from rosbags.typesys.store import Typestore

from egorec_ros.assembly.sample import Sample
from egorec_ros.messages.context import RECEIVE_TIME, MessageContext
from egorec_ros.messages.errors import PayloadError
from egorec_ros.messages.mapping import Rule, rule_for
from egorec_ros.messages.payloads.stamps import header_ns
from egorec_ros.messages.typestores import ros2_typestore
from egorec_ros.messages.msg import Msg
from egorec_ros.rig.model import StreamSpec


Stamper = Callable[[StreamSpec, "int | None", int, MessageContext], "tuple[int, int] | str"]
"""(stream, header stamp or None, arrival ns, context) -> (stamp_ns, raw_stamp_ns), or why it is dropped."""


def stamp_by_option(spec: StreamSpec, header: int | None, arrival_ns: int, ctx: MessageContext) -> tuple[int, int] | str:
    """The stream's ``stamp`` option decides; a zero header stamp is a drop."""
    if spec.options.stamp == "receive" or header is None:
        return arrival_ns, header or 0
    if not header:
        return f"{ctx}: header stamp is zero"
    return header, 0


@dataclass
class Decoded:
    samples: list[Sample] = field(default_factory=list)
    drops: list[tuple[str, str]] = field(default_factory=list)     # (stream id, why)


def deserialize(typename: str, cdr: bytes | memoryview, store: Typestore | None = None) -> Msg:
    """A ROS 2 message from its CDR bytes (the Humble types plus ours by default);
    PayloadError when the bytes do not decode as that type (truncated, wrong encapsulation).

    rosbags slices the 4-byte CDR header off, which copies ``bytes`` (a raw 640x480 image:
    170 us with the GIL held) but not a memoryview: the message's arrays view ``cdr``."""
    try:
        return (store or ros2_typestore()).deserialize_cdr(memoryview(cdr), typename)
    except (SerdeError, ValueError, IndexError, struct.error) as exc:
        raise PayloadError(f"{len(cdr)} bytes do not decode as {typename}: {exc}") from exc


@dataclass(frozen=True)
class TopicDecoder:
    """Decodes the messages of one topic for every rig stream it feeds."""

    topic: str
    typename: str
    routes: tuple[tuple[StreamSpec, Rule], ...]
    source: str = "live"                    # names the transport in error messages

    @classmethod
    def for_streams(cls, topic: str, typename: str, specs: Sequence[StreamSpec], source: str = "live") -> TopicDecoder:
        """StreamMappingError if ``typename`` cannot feed one of ``specs``."""
        return cls(topic, typename, tuple((s, rule_for(s, topic, typename)) for s in specs), source)

    def decode(self, cdr: bytes, arrival_ns: int, context: MessageContext | None = None,
               store: Typestore | None = None, stamp: Stamper = stamp_by_option) -> Decoded:
        """PayloadError when the bytes do not decode as the topic's type (no stream gets a sample)."""
        ctx = context or MessageContext(self.source, self.topic, arrival_ns, clock=RECEIVE_TIME)
        return decode_message(deserialize(self.typename, cdr, store), self.routes, arrival_ns, ctx, stamp)


def decode_message(msg: Msg, routes: Sequence[tuple[StreamSpec, Rule]], arrival_ns: int,
                   ctx: MessageContext, stamp: Stamper = stamp_by_option) -> Decoded:
    """Samples of a deserialized message for each (stream, rule); misfits are drops, not errors."""
    out = Decoded()
    for spec, rule in routes:
        picked = rule.select(msg, spec)
        if picked is None:
            continue
        stamped = stamp(spec, header_ns(picked), arrival_ns, ctx)
        if isinstance(stamped, str):
            out.drops.append((spec.id, stamped))
            continue
        try:
            payload = rule.payload(picked, ctx)
        except (ValueError, TypeError, IndexError) as exc:   # PayloadError, and arrays of the wrong size
            out.drops.append((spec.id, str(exc)))
            continue
        out.samples.append(Sample(spec.id, stamped[0], arrival_ns, payload, stamped[1]))
    return out
