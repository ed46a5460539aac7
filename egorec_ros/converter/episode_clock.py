"""Where an episode window (bag receive time) lies on the clock its rows are built on.

Rows live on the stamp clock: the tick grid starts at a master frame's stamp and a row
is finalised once arrivals pass t_i + D, a frame being late when it arrived after its
row's deadline. Arrival is the bag's receive time. Both must be on one clock, or every
sample looks years late (tiny_svo: 2013 header stamps, 2023 bag time).

The rule, per episode:

* offset = stamp - receive time of the first sample of each stream (``StreamClock.offset_ns``,
  estimated by ``choose_clocks``). The episode's offset is the largest offset among the
  streams on the rows' clock (those within the clock tolerance of the master video
  stream): the stream that seems to travel fastest is taken as arriving at once, so no
  stream arrives before it was captured and the others keep their real extra delay.
* |offset| within the clock tolerance: stamps and receive times share a clock; arrivals
  are the true receive times (offset 0).
* otherwise arrivals are shifted by the offset onto the stamp clock, and ``wall_time``
  is shifted back (``AssemblyConfig.wall_offset_ns = -offset``) so it stays bag time.

Bounds on the stamp clock: a window that starts with its data (the whole bag, a part
between gaps) opens D (the latency budget) before its first video frame was received: a
frame received in time for its row was captured at most D before. A window cut out of
the recording (a time range, a start marker) opens at the cut, as a recorder started
there would, or D before the first video frame if that comes later (a camera that
starts late is not taken for silent). It stops at the window end. Samples are read up
to D past the window end, as a live recorder stopped there still takes what arrives
within D.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from egorec_ros.assembly.sample import Sample
from egorec_ros.converter.clocks import StreamClock
from egorec_ros.converter.split import EpisodeWindow
from egorec_ros.rig.kinds import StreamKind
from egorec_ros.rig.model import Rig


@dataclass(frozen=True)
class EpisodeClock:
    offset_ns: int       # added to receive times to put them on the stamp clock (0: one clock)
    start_ns: int        # episode start, stamp clock
    stop_ns: int         # episode stop, stamp clock

    def arrivals(self, samples: Iterable[Sample]) -> Iterator[Sample]:
        """``samples`` with their arrival on the stamp clock (a uniform shift keeps their order)."""
        if not self.offset_ns:
            yield from samples
            return
        for sample in samples:
            yield dataclasses.replace(sample, arrival_ns=sample.arrival_ns + self.offset_ns)

    def describe(self) -> str:
        if not self.offset_ns:
            return "stamps and bag receive times share one clock"
        return (f"stamps are {abs(self.offset_ns) / 1e9:.3f} s {'after' if self.offset_ns > 0 else 'before'} "
                "bag receive time: arrivals shifted onto the stamp clock, wall_time kept on bag time")


def read_window(window: EpisodeWindow, bag_end_ns: int, horizon_ns: int) -> EpisodeWindow:
    """The part of the bag read for ``window``: up to D past its end (not past the bag's)."""
    end = max(window.end_ns, min(window.end_ns + horizon_ns, bag_end_ns))
    return dataclasses.replace(window, end_ns=end)


def episode_offset(rig: Rig, clocks: Mapping[str, StreamClock], tolerance_ns: int) -> int:
    """The episode's clock offset by the rule of the module docstring."""
    known = {sid: c.offset_ns for sid, c in clocks.items() if c.offset_ns is not None}
    if not known:
        return 0
    videos = [s.id for s in rig.streams.values() if s.kind is StreamKind.VIDEO and s.id in known]
    master = next((s.id for s in rig.streams.values() if s.slot == rig.master_slot and s.id in known),
                  videos[0] if videos else None)
    if master is not None:
        known = {sid: off for sid, off in known.items() if abs(off - known[master]) <= tolerance_ns}
    offset = max(known.values())
    return offset if abs(offset) > tolerance_ns else 0


def episode_clock(window: EpisodeWindow, offset_ns: int, first_frame_ns: int | None, horizon_ns: int, *,
                  cut: bool) -> EpisodeClock:
    """Bounds of ``window`` on the stamp clock; ``first_frame_ns``: receive time of the first
    video frame in the window (None: no video); ``cut``: the window starts at a cut (range,
    marker), not with its data."""
    opens = window.start_ns
    if first_frame_ns is not None:
        opens = max(opens, first_frame_ns - horizon_ns) if cut else first_frame_ns - horizon_ns
    return EpisodeClock(offset_ns, opens + offset_ns, window.end_ns + offset_ns)
