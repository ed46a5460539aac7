"""Replay mode: a finished, arrival-ordered stream of samples through the assembler
into one episode (the converter and the tests use this; the live recorder does the
same with the wall clock).

Two things differ from a live recording because the stream is finished:

* the samples come as fast as they can be read, so the producer waits while the
  episode's encoders or row sink are more than ``max_backlog`` frames / ``2`` row
  buffers behind: memory stays flat however long the stream (a bag of an hour);
* the episode ends at ``stop_ns`` or half a tick after the last video frame, whichever
  comes first: past the last frame of every camera there is nothing to put in a row
  (a live recorder repeats that frame until it is stopped; ``end_at_last_frame=False``
  does the same, to rebuild a live episode from the samples it received).

The producer (reading, assembling, building rows) is busy Python, and each encoder
thread needs the GIL for a moment per frame between its FFmpeg calls; with Python's
default 5 ms switch interval the slowest encoder waits up to that long each time, and
the episode took ~40 % longer than its encoding alone (bench/bench_convert.py). So the
switch interval is 0.5 ms while an episode is replayed.
"""
from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

from egorec_ros.assembly.assembler import Assembler, AssemblyConfig, AssemblyReport
from egorec_ros.assembly.sample import Sample
from egorec_ros.recorder.episode_output import EpisodeOutput
from egorec_ros.rig.kinds import StreamKind
from egorec_ros.rig.model import Rig
from egorec_ros.store import EpisodeResult, TaskWriter

GIL_SWITCH_S = 0.0005       # how long a thread may hold the GIL while encoder threads wait for it


def record_samples(writer: TaskWriter, rig: Rig, samples: Iterable[Sample], *, start_ns: int, stop_ns: int,
                   task: str | None = None, config: AssemblyConfig = AssemblyConfig(),
                   created_at: float | None = None, number: int | None = None,
                   commit: bool = True, notes: Sequence[str] = (),
                   end_at_last_frame: bool = True) -> tuple[EpisodeResult | None, AssemblyReport]:
    """One episode from ``samples`` (in arrival order) between start_ns and stop_ns.

    ``number`` forces the episode number and ``commit=False`` leaves the finished episode
    staged (``TaskWriter.adopt`` commits it elsewhere): what conversion workers do. ``notes``
    (the converter's clock decisions) are kept in drop_stats["notes"] for reports.
    Memory stays bounded however fast samples come: the writer's encoder queues and row
    sink queue are bounded, so appending waits for them (back-pressure).
    Returns (None, report) if no row could be built (e.g. no video stream ever delivered);
    nothing is written then."""
    output = EpisodeOutput(writer, rig, task=task, created_at=created_at, number=number)
    assembler = Assembler(rig, output, start_ns=start_ns, config=config)
    output.account_from(assembler.counts, assembler.frame_marks)
    videos = {sid for sid, s in rig.streams.items() if s.kind is StreamKind.VIDEO}
    half_tick = int(1e9 / rig.fps) // 2
    last_frame: int | None = None
    with _short_gil_switch():
        try:
            for sample in samples:
                if sample.arrival_ns > stop_ns + assembler.latency_ns:
                    break           # not part of the episode (the live recorder stops there too)
                assembler.push(sample)
                if sample.stream in videos:
                    last_frame = sample.stamp_ns if last_frame is None else max(last_frame, sample.stamp_ns)
            end = stop_ns if last_frame is None or not end_at_last_frame else min(stop_ns, last_frame + half_tick)
            report = assembler.finish(end)
        except BaseException:
            if output.episode is not None:
                output.episode.abort()
            raise
        if output.episode is None:
            return None, report
        if report.rows == 0:
            output.episode.abort()
            return None, report
        stats = report.drop_stats()
        if notes:
            stats["notes"] = list(notes)
        return output.episode.end(stats, commit=commit, frame_marks=report.frame_marks), report


@contextmanager
def _short_gil_switch() -> Iterator[None]:
    previous = sys.getswitchinterval()
    sys.setswitchinterval(min(previous, GIL_SWITCH_S))
    try:
        yield
    finally:
        sys.setswitchinterval(previous)

