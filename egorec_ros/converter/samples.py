"""Bag messages -> time-ordered ``Sample`` objects for the assembler.

One pass over the mapped topics of a window in receive-time order; each message
is deserialized, mapped by its route's rule and stamped by its stream's clock.
Images stay encoded (a LazyFrame keeps a view of the message bytes), so memory
stays flat whatever the bag size. Reading and deserialising run ahead on a thread of
their own (reader_thread.py); the samples are made and counted on the caller's.
"""
from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from contextlib import closing

from egorec_ros.assembly.sample import Sample
from egorec_ros.bags.bagfile import Bag, RawMessage
from egorec_ros.converter.clocks import DEFAULT_POLICY, ClockPolicy, StreamClock, choose_clocks
from egorec_ros.messages.errors import PayloadError
from egorec_ros.messages.context import MessageContext
from egorec_ros.messages.msg import Msg
from egorec_ros.messages.payloads.stamps import header_ns
from egorec_ros.converter.plan import TopicPlan
from egorec_ros.converter.reader_thread import ReadAhead
from egorec_ros.converter.report import ReadReport
from egorec_ros.converter.split import EpisodeWindow

ProgressFn = Callable[[int, int], object]   # (messages read since the last call, bag time of the last one)
_PROGRESS_EVERY = 64


def iter_samples(bag: Bag, plan: TopicPlan, window: EpisodeWindow | None = None, *,
                 policy: ClockPolicy = DEFAULT_POLICY, report: ReadReport | None = None,
                 progress: ProgressFn | None = None, read_ahead: bool = True) -> Generator[Sample, None, None]:
    """Samples of ``window`` (None: the whole bag) ordered by arrival_ns (bag receive time).

    Raises ClockPolicyError at the call (before an episode is started) when streams use
    different clocks; BagError while iterating when the bag cannot be read. Payloads that do
    not fit (PayloadError) and zero header stamps are dropped and counted in ``report``.
    ``read_ahead``: read on a thread of its own; close the generator (``contextlib.closing``)
    before closing the bag, which stops that thread.
    """
    report = report if report is not None else ReadReport(str(bag.path))
    start, stop = (window.start_ns, window.end_ns) if window else (None, None)
    clocks = choose_clocks(bag, plan.all_routes, start, stop, policy, report.notes)
    report.clocks.update(clocks)
    return _samples(bag, plan, start, stop, clocks, report, progress, read_ahead)


def _decoded(bag: Bag, plan: TopicPlan, start: int | None, stop: int | None) -> Generator[tuple[RawMessage, Msg], None, None]:
    for raw in bag.messages(plan.topics, start, stop):
        yield raw, bag.decode(raw)


def _samples(bag: Bag, plan: TopicPlan, start: int | None, stop: int | None, clocks: dict[str, StreamClock],
             report: ReadReport, progress: ProgressFn | None, read_ahead: bool) -> Generator[Sample, None, None]:
    """The reader starts with the first sample asked for (the bag is not shared before) and
    stops when this generator is closed or done."""
    messages: ReadAhead[tuple[RawMessage, Msg]] | Generator[tuple[RawMessage, Msg], None, None]
    messages = (ReadAhead(lambda: _decoded(bag, plan, start, stop), weigh=lambda m: len(m[0].data)) if read_ahead
                else _decoded(bag, plan, start, stop))
    with closing(messages):
        yield from _mapped(bag, plan, messages, clocks, report, progress)


def _mapped(bag: Bag, plan: TopicPlan, messages: Iterator[tuple[RawMessage, Msg]], clocks: dict[str, StreamClock],
            report: ReadReport, progress: ProgressFn | None) -> Iterator[Sample]:
    last_log = None
    pending = 0
    for raw, msg in messages:
        report.messages += 1
        report.bytes += len(raw.data)
        if last_log is not None and raw.log_ns < last_log:
            report.receive_not_increasing.add(raw.log_ns, f"{raw.topic} at {bag.when(raw.log_ns)}")
        last_log = raw.log_ns
        ctx = MessageContext(str(bag.path), raw.topic, raw.log_ns, bag.start_ns)
        for route in plan.routes[raw.topic]:
            spec = route.stream
            picked = route.rule.select(msg, spec)
            if picked is None:
                continue
            clock = clocks[spec.id]
            header = header_ns(picked)
            stamp = clock.stamp(header, raw.log_ns, ctx)
            if stamp is None:
                continue
            try:
                payload = route.rule.payload(picked, ctx)
            except PayloadError as exc:
                report.drop(spec.id, raw.log_ns, str(exc))
                continue
            report.samples[spec.id] += 1
            yield Sample(spec.id, stamp, raw.log_ns, payload, clock.raw_stamp(header))
        pending += 1
        if progress is not None and pending >= _PROGRESS_EVERY:
            progress(pending, raw.log_ns)
            pending = 0
    if progress is not None and pending and last_log is not None:    # pending: a message was read, so last_log is set
        progress(pending, last_log)
