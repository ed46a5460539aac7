"""Before any episode is converted: which topics of a bag feed the rig, is anything
required missing, and which episode windows the bag is cut into.

Done once per bag by the driver, so the windows (and with them the episode numbers)
are known before workers start; a bag that cannot be converted is refused here,
before hours are spent on the others.

Required: every video stream of the rig (a bag without one of the rig's cameras is a
rig that does not describe the bag). Other streams absent from the bag are listed.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

from egorec_ros.converter import split
from egorec_ros.bags.bagfile import Bag, open_bag
from egorec_ros.converter.errors import ConvertOptionError
from egorec_ros.messages.payloads.camera_info import camera_info_topic
from egorec_ros.converter.failures import MissingTopicError, NothingToConvertError
from egorec_ros.converter.plan import TopicPlan, plan_topics
from egorec_ros.converter.split import EpisodeWindow
from egorec_ros.rig.kinds import StreamKind
from egorec_ros.rig.model import Rig


@dataclass(frozen=True)
class SplitRule:
    """How bags are cut into episodes; the default is one episode per bag."""

    gap_s: float | None = None                       # new episode after this long without messages
    ranges: tuple[tuple[float | Decimal, float | Decimal], ...] = ()   # explicit [start, end] seconds
    range_origin: str = split.BAG                    # ranges from the bag start ("bag") or Unix time ("epoch")
    marker: str | None = None                        # a Bool / String marker topic
    start_words: tuple[str, ...] = ("start",)
    stop_words: tuple[str, ...] = ("stop",)

    def __post_init__(self) -> None:
        chosen = [self.gap_s is not None, bool(self.ranges), self.marker is not None]
        if sum(chosen) > 1:
            raise ConvertOptionError("split a bag by one of gap, ranges or marker, not several")

    @property
    def cuts(self) -> bool:
        """True when windows start at a cut (a range, a start marker) rather than with their
        data (whole bag, gaps); a cut window also leaves mapped messages outside."""
        return bool(self.ranges) or self.marker is not None

    def windows(self, bag: Bag, plan: TopicPlan) -> list[EpisodeWindow]:
        if self.gap_s is not None:
            return split.split_by_gap(bag, plan.topics, self.gap_s)
        if self.ranges:
            return split.split_by_ranges(bag, self.ranges, origin=self.range_origin)
        if self.marker is not None:
            return split.split_by_marker(bag, self.marker, start_words=self.start_words, stop_words=self.stop_words)
        return split.whole_bag(bag)


@dataclass(frozen=True)
class BagPlan:
    bag: str
    storage: str
    windows: tuple[EpisodeWindow, ...]
    skipped: tuple[str, ...] = ()               # topics left out (but CameraInfo used for calibration),
                                                # rig streams without data
    messages: int | None = None                 # mapped messages the windows read (None: not known)
    cut: bool = False                           # windows start at cuts (SplitRule.cuts)
    notes: tuple[str, ...] = field(default_factory=tuple)


def plan_bag(path: str | Path, rig: Rig, rule: SplitRule) -> BagPlan:
    """Open, map and cut one bag; raises a conversion error naming the bag if it cannot be converted."""
    with open_bag(path) as bag:
        plan = plan_topics(bag, rig.streams.values())
        if not plan.routes:
            listing = ", ".join(f"{t.topic} ({t.msgtype})" for t in bag.topics.values()) or "none"
            raise NothingToConvertError(
                f"{bag.path}: nothing to convert: none of the rig's topics is in this bag (its topics: {listing}); "
                f"write a rig for it with `egorec convert --suggest-rig {bag.path}`")
        missing = [s for s in plan.missing if s.kind is StreamKind.VIDEO]
        if missing:
            raise MissingTopicError(
                f"{bag.path}: no topic for the rig's video stream(s) "
                + ", ".join(f"{s.id} (topic {s.topic or 'not set'})" for s in missing)
                + f"; the bag's image topics: {', '.join(_image_topics(bag)) or 'none'}. Fix the topic in the rig, "
                "or use a rig without that camera")
        windows = rule.windows(bag, plan)
        notes = () if windows else (f"no episode in this bag ({_why_empty(bag, rule)})",)
        lines = plan.lines()[len(plan.all_routes):]          # after the routes: what is left out
        infos = {info.topic for s in rig.streams.values() if s.kind is StreamKind.VIDEO and s.topic
                 and (info := bag.find(camera_info_topic(s.topic, s.source.get("camera_info"))))}
        skipped = [line for line in lines if not any(line.startswith(f"not mapped {t} (") for t in infos)]
        messages = sum(bag.topics[t].count for t in plan.topics) if not rule.cuts else None
        return BagPlan(str(bag.path), bag.storage, tuple(windows), tuple(skipped), messages=messages,
                       cut=rule.cuts, notes=notes)


def _image_topics(bag: Bag) -> list[str]:
    return [t.topic for t in bag.topics.values() if t.msgtype.endswith(("/Image", "/CompressedImage"))]


def _why_empty(bag: Bag, rule: SplitRule) -> str:
    if not bag.message_count:
        return "the bag holds no message"
    if rule.marker is not None:
        return f"marker topic {rule.marker} never starts a recording"
    return "no message on the mapped topics"
