"""Episode windows of a bag, in bag receive time: [start_ns, end_ns).

* ``whole_bag``: one episode per bag (the default).
* ``split_by_gap``: a new episode after ``gap_s`` seconds without any message on the given topics.
* ``split_by_ranges``: explicit ranges in seconds; ``origin="bag"`` counts from the bag's first
  message (``[[0, 10], [12.5, 30]]``), ``origin="epoch"`` takes absolute Unix times of bag time.
* ``split_by_marker``: a marker topic. ``std_msgs/Bool`` is a recording flag (true = recording);
  ``std_msgs/String`` carries start/stop words (case-insensitive, configurable). An episode runs
  from a start to the next stop; one still open when the bag ends closes at the bag's end.

Samples of a window are selected by receive time, so a replayed bag is cut where the recorder
would have cut it live.
"""
from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from itertools import pairwise

from egorec_ros.bags.bagfile import Bag
from egorec_ros.converter.errors import ConvertOptionError
from egorec_ros.messages.errors import StreamMappingError
from egorec_ros.messages.payloads.markers import BOOL, STRING

BAG, EPOCH = "bag", "epoch"


@dataclass(frozen=True)
class EpisodeWindow:
    start_ns: int
    end_ns: int                 # exclusive
    reason: str                 # how the window was found, for reports


def whole_bag(bag: Bag) -> list[EpisodeWindow]:
    return [EpisodeWindow(bag.start_ns, bag.end_ns, "whole bag")] if bag.message_count else []


def split_by_gap(bag: Bag, topics: Collection[str], gap_s: float) -> list[EpisodeWindow]:
    """Cut where no message arrives on ``topics`` for more than ``gap_s`` seconds."""
    if gap_s <= 0:
        raise ConvertOptionError(f"gap must be positive, got {gap_s} s")
    gap_ns = int(gap_s * 1e9)
    windows: list[EpisodeWindow] = []
    first: int | None = None    # the open window's first message (None: no message yet)
    last = 0                    # the last message read
    for raw in bag.messages(topics):
        if first is None:
            first = raw.log_ns
        elif raw.log_ns - last > gap_ns:
            windows.append(EpisodeWindow(first, last + 1, f"gap > {gap_s:g} s"))
            first = raw.log_ns
        last = raw.log_ns
    if first is not None:
        windows.append(EpisodeWindow(first, last + 1, f"gap > {gap_s:g} s"))
    return windows


def _ns(seconds: Decimal) -> int:
    return int((seconds * 10**9).to_integral_value(ROUND_HALF_EVEN))


def split_by_ranges(bag: Bag, ranges: Sequence[Sequence[float | Decimal | str]], *,
                    origin: str = BAG) -> list[EpisodeWindow]:
    """One window per [start_s, end_s]; refused when a range is empty, reversed, outside the bag
    or overlaps another."""
    if origin not in (BAG, EPOCH):
        raise ConvertOptionError(f"range origin must be {BAG!r} (seconds from the bag start) or {EPOCH!r}, got {origin!r}")
    base = bag.start_ns if origin == BAG else 0
    windows = []
    for pair in ranges:
        if len(pair) != 2:
            raise ConvertOptionError(f"a time range is [start, end], got {list(pair)}")
        start_s, end_s = (Decimal(str(v)) for v in pair)   # exact: epoch seconds need all 19 digits
        if end_s <= start_s:
            raise ConvertOptionError(f"time range [{start_s:g}, {end_s:g}] ends before it starts")
        start, end = max(base + _ns(start_s), bag.start_ns), min(base + _ns(end_s), bag.end_ns)
        if end <= start:
            raise ConvertOptionError(f"{bag.path}: time range [{start_s:g}, {end_s:g}] ({origin} seconds) is outside the "
                             f"bag, which spans {(bag.start_ns - base) / 1e9:.3f} .. {(bag.end_ns - base) / 1e9:.3f}")
        windows.append(EpisodeWindow(start, end, f"range [{start_s:g}, {end_s:g}] ({origin} s)"))
    windows.sort(key=lambda w: w.start_ns)
    for a, b in pairwise(windows):
        if b.start_ns < a.end_ns:
            raise ConvertOptionError(f"time ranges overlap: {a.reason} and {b.reason}")
    return windows


def marker_state(msgtype: str, data: object, start_words: Sequence[str] = ("start",),
                 stop_words: Sequence[str] = ("stop",)) -> bool | None:
    """What one marker message says: True = recording, False = not, None = neither (an unknown
    word). The live recorder follows its marker topic with the same rule."""
    if msgtype == BOOL:
        return bool(data)
    word = str(data).strip().lower()
    if word in {w.strip().lower() for w in start_words}:
        return True
    return False if word in {w.strip().lower() for w in stop_words} else None


def split_by_marker(bag: Bag, topic: str, *, start_words: Sequence[str] = ("start",),
                    stop_words: Sequence[str] = ("stop",)) -> list[EpisodeWindow]:
    """Windows between start and stop markers (see module docstring)."""
    info = bag.find(topic)
    if info is None:
        raise StreamMappingError(f"{bag.path}: marker topic {topic} is not in the bag")
    if info.msgtype not in (BOOL, STRING):
        raise StreamMappingError(f"{bag.path}: marker topic {topic} carries {info.msgtype}; "
                                 f"a marker is {BOOL} (recording flag) or {STRING} (start/stop words)")
    windows = []
    opened: int | None = None
    for raw in bag.messages([info.topic]):
        recording = marker_state(info.msgtype, bag.decode(raw).data, start_words, stop_words)
        if recording and opened is None:
            opened = raw.log_ns
        elif recording is False and opened is not None:
            windows.append(EpisodeWindow(opened, raw.log_ns, f"marker {topic}"))
            opened = None
    if opened is not None:
        windows.append(EpisodeWindow(opened, bag.end_ns, f"marker {topic} (no stop before the bag ended)"))
    return windows
