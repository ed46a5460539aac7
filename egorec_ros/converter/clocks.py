"""Which clock stamps each stream, and the policy that refuses mixing clocks.

Per stream, the option ``stamp: header | receive`` chooses ``Sample.stamp_ns``:
the message's header stamp (default when the message has one) or the bag's
receive time. Left unset, a stream whose first header stamp is zero uses the
receive time (reported). ``arrival_ns`` is always the receive time.

Rows pair samples by stamp, so all streams of an episode must share one clock.
Before the first sample of an episode, the first message of every stream gives
its offset (stamp - receive time); if the offsets differ by more than
``ClockPolicy.tolerance_s`` (e.g. the public tiny_svo bags: 2013 header stamps,
2023 bag time, next to a stream on receive time) the episode is refused with
``ClockPolicyError``, unless ``ClockPolicy.allow_mixed`` is set (then reported).

While samples are read, each stream counts zero header stamps (the sample is
dropped: it cannot be placed), header stamps far from the receive time, and
stamps that do not increase.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from egorec_ros.messages.errors import StreamMappingError
from egorec_ros.converter.errors import ClockPolicyError
from egorec_ros.converter.issues import Issue
from egorec_ros.messages.payloads.stamps import header_ns

if TYPE_CHECKING:
    from egorec_ros.bags.bagfile import Bag
    from egorec_ros.converter.plan import Route
    from egorec_ros.rig.model import StreamSpec

STAMP_OPTION = "stamp"
HEADER = "header"
RECEIVE = "receive"
_PROBE_LIMIT = 1000       # messages looked at to find a stream's first sample (TF without the frame)


@dataclass(frozen=True)
class ClockPolicy:
    tolerance_s: float = 2.0     # offsets within this of each other are one clock
    allow_mixed: bool = False
    allow_option: str = "allow_mixed_clocks=True"   # how the caller allows it: the CLI names its flag


DEFAULT_POLICY = ClockPolicy()


def stamp_option(spec: StreamSpec) -> str | None:
    """The stream's ``stamp`` option, validated (None: not set)."""
    value = spec.source.get(STAMP_OPTION)
    if value not in (None, HEADER, RECEIVE):
        raise StreamMappingError(f"stream {spec.id!r}: option `{STAMP_OPTION}: {value}` must be "
                                 f"`{HEADER}` or `{RECEIVE}`")
    return value


@dataclass
class StreamClock:
    """The clock of one stream and what was seen of its stamps."""

    stream: str
    source: str                       # HEADER or RECEIVE
    tolerance_ns: int
    offset_ns: int | None = None      # first stamp - its receive time (None: no sample in the episode)
    zero: Issue = field(default_factory=Issue)
    far: Issue = field(default_factory=Issue)
    not_increasing: Issue = field(default_factory=Issue)
    _last: int | None = None

    def stamp(self, header: int | None, log_ns: int, where: object) -> int | None:
        """stamp_ns of a sample, or None when it must be dropped (zero header stamp)."""
        if self.source == RECEIVE:
            stamp = log_ns
        elif not header:
            self.zero.add(log_ns, f"{where}: header stamp is zero")
            return None
        else:
            stamp = header
            if abs(stamp - log_ns) > self.tolerance_ns:
                self.far.add(log_ns, f"{where}: header stamp {stamp / 1e9:.6f} s is "
                                     f"{_span((stamp - log_ns) / 1e9)} bag time")
        if self._last is not None and stamp <= self._last:
            self.not_increasing.add(log_ns, f"{where}: stamp {stamp / 1e9:.6f} s is not after the previous "
                                            f"{self._last / 1e9:.6f} s")
        self._last = stamp
        return stamp

    def raw_stamp(self, header: int | None) -> int:
        """The header stamp is the device's clock when the stream is on receive time."""
        return (header or 0) if self.source == RECEIVE else 0

    def describe(self) -> str:
        if self.source == RECEIVE:
            return "bag receive time"
        if self.offset_ns is None:
            return "header stamps"
        return f"header stamps {_span(self.offset_ns / 1e9)} bag time"


def choose_clocks(bag: Bag, routes: Iterable[Route], start_ns: int | None, stop_ns: int | None,
                  policy: ClockPolicy, notes: list[str]) -> dict[str, StreamClock]:
    """Decide every stream's clock from its first sample in [start_ns, stop_ns) and apply the
    mixing policy; notes get the decisions a user should know about."""
    clocks: dict[str, StreamClock] = {}
    tolerance_ns = int(policy.tolerance_s * 1e9)
    for route in routes:
        spec = route.stream
        option = stamp_option(spec)
        first = _first_sample(bag, route, start_ns, stop_ns)
        header = header_ns(first[0]) if first else None
        if option is not None:
            source = option
        elif first is None or header:
            source = HEADER
        else:
            source = RECEIVE
            notes.append(f"{spec.id}: {'header stamps are zero' if header == 0 else 'messages have no header'}; "
                         f"using the bag receive time (set `{STAMP_OPTION}: {HEADER}` to refuse instead)")
        clock = StreamClock(spec.id, source, tolerance_ns)
        if first is not None:
            if source == RECEIVE:
                clock.offset_ns = 0
            elif header:
                clock.offset_ns = header - first[1]
        clocks[spec.id] = clock
    _apply_policy(bag, clocks.values(), policy, notes)
    return clocks


def _first_sample(bag: Bag, route: Route, start_ns: int | None, stop_ns: int | None) -> tuple[object, int] | None:
    """(picked message, receive time) of the stream's first sample in the window."""
    messages = bag.messages([route.topic], start_ns, stop_ns)
    try:
        for n, raw in enumerate(messages):
            msg = bag.decode(raw)
            picked = route.rule.pick(msg, route.stream.source) if route.rule.pick else msg
            if picked is not None:
                return picked, raw.log_ns
            if n >= _PROBE_LIMIT:
                break
        return None
    finally:
        messages.close()


def _apply_policy(bag: Bag, clocks: Iterable[StreamClock], policy: ClockPolicy, notes: list[str]) -> None:
    seen = [(c, c.offset_ns) for c in clocks if c.offset_ns is not None]     # (clock, its offset)
    if not seen:
        return
    offsets = [offset for _, offset in seen]
    if max(offsets) - min(offsets) <= policy.tolerance_s * 1e9:
        far = [offset for offset in offsets if abs(offset) > policy.tolerance_s * 1e9]
        if far:
            notes.append(f"all streams use header stamps {_span(far[0] / 1e9)} bag time "
                         "(one clock, so rows pair correctly; *_ns columns are on that clock)")
        return
    ordered = sorted(seen, key=lambda pair: pair[1])
    first, first_offset = ordered[0]
    # offsets of years print alike ("4.9 years before"): the difference between streams is the reason
    listing = "\n".join(f"  {c.stream}: {c.describe()}"
                        + (f", {_span((offset - first_offset) / 1e9)} {first.stream}'s" if c is not first
                           else "") for c, offset in ordered)
    spread = (f"{duration_words((max(offsets) - min(offsets)) / 1e9)} apart "
              f"(tolerance {policy.tolerance_s:g} s)")
    if policy.allow_mixed:
        notes.append(f"streams stamped by different clocks (allowed by allow_mixed_clocks), {spread}:\n{listing}")
        return
    raise ClockPolicyError(
        f"{bag.path}: the streams of this episode are stamped by different clocks, {spread}:\n{listing}\n"
        "Rows pair samples by stamp, so these streams would be paired as if simultaneous. Give every stream "
        f"the same clock with the stream option `{STAMP_OPTION}: {RECEIVE}` (bag receive time) or "
        f"`{STAMP_OPTION}: {HEADER}`, or pass {policy.allow_option} to convert anyway (the mix is then reported).")


def _span(seconds: float) -> str:
    """A signed duration in words: '10.6 years before', '0.120 s after'."""
    return f"{duration_words(seconds)} {'before' if seconds < 0 else 'after'}"


def duration_words(seconds: float) -> str:
    """An unsigned duration in words: '10.6 years', '3.0 days', '0.120 s'."""
    s = abs(seconds)
    for unit, size in (("years", 365.25 * 86400), ("days", 86400), ("h", 3600), ("min", 60)):
        if s >= size:
            return f"{s / size:.1f} {unit}"
    return f"{s:.3f} s"
