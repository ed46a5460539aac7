"""Which bag topic feeds which rig stream, checked before any message is read.

A topic whose type cannot feed its stream, or is undecodable, stops the
conversion with a clear error; topics no stream reads, topics of unknown types
and rig streams absent from the bag are listed, not fatal.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from egorec_ros.bags.bagfile import Bag, TopicInfo
from egorec_ros.converter.clocks import stamp_option
from egorec_ros.messages.errors import StreamMappingError
from egorec_ros.messages.mapping import Rule, rule_for
from egorec_ros.rig.model import StreamSpec


@dataclass(frozen=True)
class Route:
    topic: str
    msgtype: str
    stream: StreamSpec
    rule: Rule


@dataclass(frozen=True)
class TopicPlan:
    routes: Mapping[str, tuple[Route, ...]]     # topic -> the streams it feeds (a TF topic may feed several)
    unmapped: tuple[TopicInfo, ...]             # decodable topics no stream reads
    undecodable: tuple[TopicInfo, ...]          # topics skipped because their type cannot be decoded
    missing: tuple[StreamSpec, ...]             # rig streams with no topic in this bag

    @property
    def topics(self) -> tuple[str, ...]:
        return tuple(self.routes)

    @property
    def all_routes(self) -> list[Route]:
        return [r for routes in self.routes.values() for r in routes]

    def lines(self) -> list[str]:
        out = [f"{r.topic} ({r.msgtype}) -> {r.stream.id}" for r in self.all_routes]
        out += [f"skipped {t.topic} ({t.msgtype}, {t.count} messages): {t.problem}" for t in self.undecodable]
        out += [f"not mapped {t.topic} ({t.msgtype}, {t.count} messages)" for t in self.unmapped]
        out += [f"no data for stream {s.id} (topic {s.topic or 'not set'})" for s in self.missing]
        return out


def plan_topics(bag: Bag, streams: Iterable[StreamSpec]) -> TopicPlan:
    """Map the bag's topics to ``streams`` (e.g. ``rig.streams.values()``)."""
    routes: dict[str, list[Route]] = {}
    missing = []
    for spec in streams:
        stamp_option(spec)
        info = bag.find(spec.topic) if spec.topic else None
        if info is None:
            missing.append(spec)
            continue
        if not info.decodable:
            raise StreamMappingError(f"{bag.path}: topic {info.topic} ({info.msgtype}) for stream {spec.id!r} "
                                     f"cannot be decoded: {info.problem}")
        try:
            rule = rule_for(spec, info.topic, info.msgtype)
        except StreamMappingError as exc:
            raise StreamMappingError(f"{bag.path}: {exc}") from None
        routes.setdefault(info.topic, []).append(Route(info.topic, info.msgtype, spec, rule))
    unused = [t for name, t in bag.topics.items() if name not in routes]
    return TopicPlan(routes={t: tuple(r) for t, r in routes.items()},
                     unmapped=tuple(t for t in unused if t.decodable),
                     undecodable=tuple(t for t in unused if not t.decodable),
                     missing=tuple(missing))
