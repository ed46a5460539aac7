"""The tick assembler: samples in, one row per tick out (§5.3, made exact).

Rows are built on the grid t_i = t0 + i/fps. Row i is finalised once the clock passes
t_i + D (the latency budget); only samples that *arrived* by t_i + D can be in it.
Live recording advances the clock with the wall clock; replay (bags) advances it with
each sample's recorded arrival time. Same samples -> same rows, in both modes.

An episode holds the samples that arrived between its start and its stop + D (no row
can take a later one; both drivers stop there) and were captured at or after its start.
t0 is the stamp of the first master frame near which every recorded video stream has a
frame; a stream that delivered nothing by ``start_timeout`` (or by the stop, if sooner)
is left out of the episode and reported. Every sample pushed is counted (``counts.py``).

A sample handed over after the clock passed its arrival by more than the margin (a
starved recorder thread) was not there when a row it was in time for was built; it is
treated as arriving just after the last decision taken (``restamped``), so its counts
agree with the rows written.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

import numpy as np

from egorec_ros.assembly import intake
from egorec_ros.assembly.counts import StreamCounts
from egorec_ros.assembly.queues import LatestQueue, Pending, VideoQueue, WindowQueue, stack
from egorec_ros.assembly.sample import Sample
from egorec_ros.assembly.tick_grid import TickGrid
from egorec_ros.qa.frame_marks import KINDS, RowRuns, document, stream_marks
from egorec_ros.rig.kinds import StreamKind
from egorec_ros.rig.model import Rig, StreamSpec

MAX_REASONS = 5
MAX_PENDING_INVALID = 10_000   # invalid frames waiting for their row to be built (the rest: unplaced)


@dataclass(frozen=True)
class AssemblyConfig:
    latency_ms: float = 150.0        # D: a row waits this long for its samples
    tolerance_ticks: float = 0.75    # a video frame is usable within this many ticks of its tick
    silence_s: float = 1.0           # status.<id> turns "disconnected" after this silence
    start_timeout_s: float = 3.0     # video streams silent this long after start are left out
    finalize_margin_ms: float = 5.0  # live: finalise a little after the deadline (thread races)
    wall_offset_ns: int = 0          # host clock + offset = Unix time (0: the host clock is Unix time)

    @property
    def horizon_ns(self) -> int:
        """How long after a tick its row is finalised (latency budget + margin)."""
        return int((self.latency_ms + self.finalize_margin_ms) * 1e6)


class AssemblyOutput(Protocol):
    def begin(self, video_keys: list[str]) -> None:
        """The episode starts; these video streams are recorded."""

    def row(self, values: dict[str, Any], frames: dict[str, Any]) -> None:
        """One finalised row: column values and one frame per recorded video stream."""


@dataclass
class _Stream:
    spec: StreamSpec
    queue: Any
    shapes: dict[str, tuple[int, ...]]
    floor: int                       # smallest stamp that can still reach a row
    slot: str = ""                   # VIDEO/DEPTH: the image key its frames go under (spec.slot)
    master: str = ""                 # DEPTH: the image key of the video it is matched to (spec.master)
    excluded: bool = False           # video stream left out of the episode
    reasons: list[str] = field(default_factory=list)
    marks: dict[str, RowRuns] = field(default_factory=lambda: {k: RowRuns() for k in KINDS})
    invalid_stamps: list[int] = field(default_factory=list)   # VIDEO/DEPTH: invalid frames whose row is not built yet

    @property
    def is_video(self) -> bool:
        return self.spec.kind in (StreamKind.VIDEO, StreamKind.DEPTH)


@dataclass(frozen=True)
class AssemblyReport:
    rows: int
    t0: int | None
    start_ns: int                    # the episode's bounds on the host clock: replaying the
    stop_ns: int                     # same samples between them gives the same rows
    video_keys: list[str]
    missing_streams: list[str]
    streams: dict[str, dict]
    invalid_examples: dict[str, list[str]]
    unknown_streams: dict[str, int]
    finalize_lag_ns: np.ndarray      # clock - deadline when each row was built (live: the tick jitter)
    frame_marks: dict = field(default_factory=dict)   # the row's frame_marks (qa.frame_marks)

    def drop_stats(self) -> dict:
        """The episode row's drop_stats: where every sample went, per stream."""
        out: dict[str, Any] = {"streams": self.streams}
        for key in ("missing_streams", "invalid_examples", "unknown_streams"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        return out


class Assembler:
    def __init__(self, rig: Rig, output: AssemblyOutput, *, start_ns: int,
                 config: AssemblyConfig = AssemblyConfig()) -> None:
        self.rig, self.output, self.config = rig, output, config
        self.start_ns = int(start_ns)
        self._latency = int(config.latency_ms * 1e6)
        self._margin = int(config.finalize_margin_ms * 1e6)
        self._tolerance = int(config.tolerance_ticks * 1e9 / rig.fps)
        kinds = {d.id: d.kind for d in rig.devices}
        self._streams: dict[str, _Stream] = {}
        for sid, spec in rig.streams.items():
            queue = {StreamKind.VIDEO: VideoQueue, StreamKind.DEPTH: VideoQueue,
                     StreamKind.IMU: WindowQueue, StreamKind.TRAJECTORY: WindowQueue}.get(spec.kind, LatestQueue)
            s = _Stream(spec, queue(), intake.field_shapes(spec, kinds[spec.device]), floor=self.start_ns)
            if s.is_video:
                s.slot = _image_key(sid, "slot", spec.slot)
            if spec.kind is StreamKind.DEPTH:
                s.master = _image_key(sid, "master", spec.master)
            self._streams[sid] = s
        self._videos = [s for s in self._streams.values() if s.is_video]
        self._status: dict[str, list[_Stream]] = {}
        for s in self._streams.values():
            if s.spec.status:
                self._status.setdefault(s.spec.status, []).append(s)
        self._unknown: dict[str, int] = {}
        self.grid: TickGrid | None = None
        self.included: list[_Stream] = []
        self._master: _Stream | None = None      # its frame stamps give hardware_ns
        self.missing: list[str] = []
        self.rows = 0
        self.max_rows: int | None = None   # live: the episode's length in ticks; no row is built past it
        self.stop_ns: int | None = None
        self._lags: list[int] = []
        self._sealed = self.start_ns - 1   # decisions were taken on every arrival up to here
        self._rejected_until = -1         # master frames up to this stamp cannot be t0
        self._timed_out = False

    # ---- input ---------------------------------------------------------------------

    def push(self, sample: Sample) -> None:
        """Hand one sample over; rows whose deadline passed before it arrived are built first.
        A sample that arrived before the episode started is not part of it and not counted
        (live, the recorder may already have set it aside; replay must agree)."""
        if sample.arrival_ns < self.start_ns:
            return
        self.advance(sample.arrival_ns)
        s = self._streams.get(sample.stream)
        if s is None:
            self._unknown[sample.stream] = self._unknown.get(sample.stream, 0) + 1
            return
        counts = s.queue.counts
        counts.received += 1
        reason = intake.problem(sample, s.spec, s.shapes)
        if reason is not None:
            counts.invalid += 1
            if len(s.reasons) < MAX_REASONS:
                s.reasons.append(f"stamp {sample.stamp_ns}: {reason}")
            if s.is_video:
                self._mark_invalid(s, sample.stamp_ns)
            return
        if sample.stamp_ns < s.floor:
            counts.outside += 1
            return
        if s.excluded:
            counts.excluded += 1
            return
        arrival = sample.arrival_ns
        if arrival <= self._sealed:
            counts.restamped += 1
            arrival = self._sealed + 1
        s.queue.add(Pending(sample.stamp_ns, arrival, sample.payload, sample.raw_stamp_ns))

    # ---- clock ----------------------------------------------------------------------

    def advance(self, now_ns: int) -> int:
        """Finalise every row whose deadline (+ margin) is before ``now_ns``; returns rows built."""
        if self.grid is None and not self._try_start(now_ns):
            return 0
        grid = self._grid
        built = 0
        while True:
            t = grid.tick(self.rows)
            if (self.stop_ns is not None and t > self.stop_ns) or self.rows == self.max_rows:
                break
            deadline = t + self._latency
            if now_ns <= deadline + self._margin:
                break
            self._build_row(grid, t, deadline)
            self._seal(deadline)
            self._lags.append(now_ns - deadline)
            built += 1
        return built

    def finish(self, stop_ns: int, now_ns: int | None = None) -> AssemblyReport:
        """Build the remaining rows up to ``stop_ns`` (the episode end on the host clock) and
        count what is left. Live mode passes the clock, replay nothing."""
        self.stop_ns = int(stop_ns)
        self.advance(max(now_ns or 0, self.stop_ns + self.horizon_ns + 1))
        for s in self._streams.values():
            s.queue.close(self._due(s))
        marks = self.frame_marks(final=True)
        return AssemblyReport(
            rows=self.rows, t0=self.grid.t0 if self.grid else None, start_ns=self.start_ns, stop_ns=self.stop_ns,
            video_keys=[s.slot for s in self.included], missing_streams=self.missing,
            streams={sid: s.queue.counts.to_json() for sid, s in self._streams.items()},
            invalid_examples={sid: s.reasons for sid, s in self._streams.items() if s.reasons},
            unknown_streams=dict(self._unknown), finalize_lag_ns=np.asarray(self._lags, dtype=np.int64),
            frame_marks=marks)

    @property
    def horizon_ns(self) -> int:
        """How long after a tick its row is finalised (latency budget + margin)."""
        return self.config.horizon_ns

    @property
    def latency_ns(self) -> int:
        """D. A sample arriving after stop + D cannot be in any row: it is not part of the
        episode (both drivers stop handing samples over there, so their counts agree)."""
        return self._latency

    @property
    def _grid(self) -> TickGrid:
        """The tick grid, which exists once the episode started (t0 placed): rows need it."""
        if self.grid is None:
            raise RuntimeError("the assembler has no tick grid yet: rows are built only after the episode "
                               "started (t0 placed by _try_start)")
        return self.grid

    def counts(self) -> dict[str, StreamCounts]:
        return {sid: s.queue.counts for sid, s in self._streams.items()}

    def frame_marks(self, final: bool = False) -> dict:
        """Where each recorded camera stream's rows were repeated, late or invalid so far (the
        episode row's ``frame_marks``); {} before the episode started. ``final``: every row is
        built, an invalid frame no row took is unplaced."""
        if self.grid is None:
            return {}
        for s in self.included:
            self._place_invalid(s, final)
        return document({s.spec.id: stream_marks(s.slot, s.marks) for s in self.included})

    def _mark_invalid(self, s: _Stream, stamp: int) -> None:
        """An invalid frame marks the row nearest its stamp, once that row is built."""
        if len(s.invalid_stamps) < MAX_PENDING_INVALID:
            s.invalid_stamps.append(stamp)
        else:
            s.marks["invalid"].samples += 1
            s.marks["invalid"].unplaced += 1

    def _place_invalid(self, s: _Stream, final: bool) -> None:
        grid, runs, waiting = self._grid, s.marks["invalid"], []
        for stamp in s.invalid_stamps:
            row = grid.nearest(stamp)
            if row < self.rows and abs(grid.tick(row) - stamp) <= self._tolerance:
                runs.add(row)
            elif final or row < self.rows:
                runs.samples += 1
                runs.unplaced += 1
            else:
                waiting.append(stamp)
        s.invalid_stamps = waiting

    def _seal(self, instant: int) -> None:
        self._sealed = max(self._sealed, instant)

    def _due(self, s: _Stream) -> Callable[[int], int | None]:
        """stamp -> deadline of the row a sample of ``s`` belongs to (None: after the last row)."""
        grid, last = self.grid, self.rows - 1
        if grid is None or last < 0:
            return lambda stamp: None
        row_of = grid.nearest if s.is_video else grid.index_at_or_after

        def due(stamp: int) -> int | None:
            i = row_of(stamp)
            return grid.tick(i) + self._latency if i <= last else None
        return due

    # ---- start ----------------------------------------------------------------------

    def _try_start(self, now_ns: int) -> bool:
        if not self._videos:
            return self._start(self.start_ns, [])
        timeout = int(self.config.start_timeout_s * 1e9)
        if self.stop_ns is not None:
            timeout = min(timeout, self.stop_ns - self.start_ns)
        timeout_at = self.start_ns + timeout + self._latency
        candidates = self._videos
        if now_ns > timeout_at + self._margin:
            if not self._timed_out:  # fewer streams to wait for: every master frame is a candidate again
                self._timed_out, self._rejected_until = True, -1
                self._seal(timeout_at)
            delivered = [s for s in self._videos if any(p.arrival <= timeout_at for p in s.queue.pending)]
            candidates = [s for s in delivered if s.spec.kind is StreamKind.VIDEO
                          or s.spec.master in {c.spec.slot for c in delivered}]
            if not candidates:
                return self._start(self.start_ns, [])
        master = next((s for s in candidates if s.spec.slot == self.rig.master_slot),
                      next((s for s in candidates if s.spec.kind is StreamKind.VIDEO), None))
        if master is None:
            return False
        for m in master.queue.pending:
            if m.stamp <= self._rejected_until:
                continue
            deadline = m.stamp + self._latency
            if deadline + self._margin >= now_ns or (self.stop_ns is not None and m.stamp > self.stop_ns):
                return False  # the next candidate's deadline has not passed yet
            if m.arrival <= deadline and all(self._has_frame_near(s, m.stamp) for s in candidates if s is not master):
                return self._start(m.stamp, [master] + [s for s in candidates if s is not master])
            self._rejected_until = m.stamp
            self._seal(deadline)
        return False

    def _has_frame_near(self, s: _Stream, t: int) -> bool:
        deadline = t + self._latency
        return any(abs(p.stamp - t) <= self._tolerance and p.arrival <= deadline for p in s.queue.pending)

    def _start(self, t0: int, included: list[_Stream]) -> bool:
        self.grid = grid = TickGrid.at(t0, self.rig.fps)
        order = {id(s): i for i, s in enumerate(self._videos)}
        self.included = sorted(included, key=lambda s: order[id(s)])
        self.missing = [s.spec.id for s in self._videos if s not in included]
        self._master = included[0] if included else None
        for s in self._streams.values():
            if s.is_video and s not in included:
                s.excluded = True
                s.queue.counts.excluded += len(s.queue.pending)
                s.queue.pending.clear()
                continue
            if s.is_video:
                s.queue.on_late = lambda stamp, runs=s.marks["late"]: runs.add(grid.nearest(stamp))
            # a video frame is usable from t0 - tolerance; row 0's window is (t_-1, t0]
            s.floor = max(s.floor, t0 - self._tolerance if s.is_video else grid.tick(-1) + 1)
            s.queue.drop_before(s.floor)
        self.output.begin([s.slot for s in self.included])
        return True

    # ---- rows -----------------------------------------------------------------------

    def _build_row(self, grid: TickGrid, t: int, deadline: int) -> None:
        values: dict[str, Any] = {}
        frames: dict[str, Any] = {}
        chosen: dict[str, Pending] = {}
        forensic = self.rig.forensic_slot
        previous = grid.tick(self.rows - 1)
        for s in self.included:
            if s.spec.kind is StreamKind.DEPTH:
                continue
            frame, repeated, gap = s.queue.take(t, deadline, self._tolerance, self._frame_due)
            frames[s.slot], chosen[s.slot] = frame.payload, frame
            if repeated:
                s.marks["repeated"].add(self.rows)
            if s.slot == forensic:
                values.update(host_ns=frame.arrival, rgb_dup=int(repeated), rgb_gap=gap,
                              ts_src=int(frame.raw != 0))
        for s in self.included:
            if s.spec.kind is not StreamKind.DEPTH:
                continue
            anchor = chosen[s.master].stamp
            frame, repeated, gap = s.queue.take(anchor, deadline, self._tolerance, self._frame_due)
            frames[s.slot] = frame.payload
            if repeated:
                s.marks["repeated"].add(self.rows)
            if s.master == forensic:
                values.update(depth_ns=frame.stamp, depth_dup=int(repeated), depth_gap=gap)
        if self._master is not None:
            master = chosen[self._master.slot]
            values["hardware_ns"] = master.stamp
            if master.raw:
                values["raw_hw_ns"] = master.raw
        for s in self._streams.values():
            kind = s.spec.kind
            if kind is StreamKind.LATEST:
                p = s.queue.take(t, previous, deadline)
                if p is not None:
                    for field_name, column in s.spec.columns.items():
                        values[column] = p.payload[field_name]
                    if s.spec.ns_column:
                        values[s.spec.ns_column] = p.stamp
            elif kind in (StreamKind.IMU, StreamKind.TRAJECTORY):
                items = s.queue.take(t, previous, deadline)
                if items:
                    key = "samples" if kind is StreamKind.IMU else "points"
                    ts = "ts" if kind is StreamKind.IMU else "ns"
                    values[s.spec.columns[key]] = stack(items, "float32" if kind is StreamKind.IMU else "float64")
                    values[s.spec.columns[ts]] = np.fromiter((p.stamp for p in items), np.int64, len(items))
        silence = int(self.config.silence_s * 1e9)
        for status, streams in self._status.items():
            alive = any(s.queue.last_alive >= t - silence for s in streams)
            values[f"status.{status}"] = "connected" if alive else "disconnected"
        values["timestamp"] = (t - grid.t0) / 1e9
        values["wall_time"] = (t + self.config.wall_offset_ns) / 1e9
        self.output.row(values, frames)
        self.rows += 1

    def _frame_due(self, stamp: int) -> int:
        """Deadline of the tick nearest a video frame's stamp: the row it belongs to."""
        grid = self._grid
        return grid.tick(grid.nearest(stamp)) + self._latency


def _image_key(sid: str, what: str, key: str | None) -> str:
    """A video/depth stream's ``slot`` or ``master``: rows store and match frames by it."""
    if key is None:
        raise ValueError(f"stream {sid}: a video or depth stream needs a {what} (an image key), and it has none; "
                         "compile the rig with egorec_ros.rig.compile.compile_rig, which sets it")
    return key
