"""Live recording: samples arrive from any thread (drivers, ROS callbacks, simulated
devices); one tick thread owns the assembler, builds each row at t_i + D and hands it
to the episode writer, whose encoders and row sink run on their own threads.

The ROS recorder node and ``egorec record --sim`` both drive this class; it knows
nothing about ROS.
"""
from __future__ import annotations

import dataclasses
import queue
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

from egorec_ros.errors import UserError
from egorec_ros.assembly.assembler import Assembler, AssemblyConfig, AssemblyReport
from egorec_ros.assembly.counts import problems
from egorec_ros.assembly.sample import Sample
from egorec_ros.recorder.disk import free_bytes
from egorec_ros.recorder.episode_output import EpisodeOutput
from egorec_ros.recorder.overload import live_warning
from egorec_ros.recorder.no_rows import no_rows_reason
from egorec_ros.recorder.stamp_lag import StampLag, describe, track
from egorec_ros.rig.kinds import StreamKind
from egorec_ros.rig.model import Rig
from egorec_ros.store import EpisodeResult, TaskWriter

TICK_SLEEP_S = 0.004
MAX_INBOX = 4000  # samples waiting for the tick thread: ~3 s of the Appendix B rig
DRAIN_IDLE_S = 60.0  # a stopping episode that makes no progress this long is stuck (an error)


class EpisodeAbortedError(RuntimeError):
    """A stop that came after an abort: the episode was discarded, there is nothing to commit."""


class MissingVideoError(UserError, RuntimeError):
    """The episode lost its master stream or every video stream: it is not a recording of
    the rig, so it was discarded (number recycled) unless missing video was allowed."""


class DrainStalledError(UserError, TimeoutError):
    """A stopping episode made no progress (no row built, no frame encoded) for a long time."""


@dataclass
class _Episode:
    assembler: Assembler
    output: EpisodeOutput
    max_rows: int | None = None      # the episode ends by itself after this many rows
    stop_ns: int | None = None
    abort: bool = False              # discard it (number recycled), whatever stage it is in
    drops: dict | None = None        # set once every row is built: the encoders are draining
    committing: bool = False
    aborted: bool = False
    peak_backlog: dict[str, int] = field(default_factory=dict)
    done: threading.Event = field(default_factory=threading.Event)
    result: EpisodeResult | None = None
    report: AssemblyReport | None = None
    error: BaseException | None = None
    progress: tuple = ()             # (signature, monotonic time it last changed)
    stamp_lag: dict[str, StampLag] = field(default_factory=dict)   # arrival - stamp per stream
    done_ns: int | None = None       # host clock when it was committed or discarded

    @property
    def stage(self) -> str:
        if self.done.is_set():
            return "aborted" if self.aborted else "done"
        if self.abort:
            return "aborting"
        if self.committing:
            return "committing"
        if self.drops is not None:
            return "draining"
        if self.assembler.grid is None:
            return "starting"
        return "recording" if self.stop_ns is None or self.max_rows else "stopping"

    def signature(self) -> tuple:
        """Changes whenever the episode moves: a row built, a frame encoded, a stage passed."""
        writer = self.output.episode
        return self.stage, self.assembler.rows, sum(writer.backlog.values()) if writer else 0


@dataclass(frozen=True)
class RecorderStatus:
    recording: bool
    rows: int
    received: dict[str, int]
    dropped: dict[str, int]       # the PROBLEMS counts summed, per stream
    backlog: dict[str, int]
    idle_samples: int
    overflow: dict[str, int]      # dropped at hand-over: the tick thread was too far behind
    stage: str = "idle"           # idle, starting, recording, stopping, draining, committing, aborting
    rows_target: int | None = None
    repeated: dict[str, int] = field(default_factory=dict)   # video streams: rows repeating a frame
    free_bytes: int | None = None  # free space where the episode is written
    overload: str = ""            # the recorder cannot keep up: what is wrong and what to do ("" if fine)
    invalid: dict[str, int] = field(default_factory=dict)  # messages that could not be decoded (live input)
    late: dict[str, int] = field(default_factory=dict)     # of dropped: arrived after their row's deadline


class Recorder:
    """``allow_missing_video``: commit an episode that lost its master stream or every video
    stream (by default it is discarded and ``MissingVideoError`` raised). ``writer`` None: no task
    folder yet (a node opens one at its first start); samples are counted, episodes refused."""

    def __init__(self, rig: Rig, writer: TaskWriter | None, *, config: AssemblyConfig = AssemblyConfig(),
                 clock: Callable[[], int] = time.time_ns, allow_missing_video: bool = False) -> None:
        self.rig, self.writer, self.config, self.clock = rig, writer, config, clock
        self.allow_missing_video = allow_missing_video
        self._inbox: queue.Queue[Sample] = queue.Queue(maxsize=MAX_INBOX)
        self._overflow: Counter[str] = Counter()
        self._invalid: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._episode: _Episode | None = None
        self._last: _Episode | None = None
        self._idle = 0
        self._running = True
        self._thread = threading.Thread(target=self._loop, name="egorec-tick", daemon=True)
        self._thread.start()

    # ---- any thread -------------------------------------------------------------------

    def on_sample(self, sample: Sample) -> int:
        """Hand a sample over from any thread. Its arrival is stamped here, on receipt:
        that is the time the latency budget is measured against (returned, so a bag of the
        session can carry the same arrival times). Never blocks the caller: if the tick thread
        is seconds behind, the sample is dropped and counted (overflow) rather than queued
        until memory runs out."""
        arrival_ns = self.clock()
        try:
            self._inbox.put_nowait(dataclasses.replace(sample, arrival_ns=arrival_ns))
        except queue.Full:
            with self._lock:
                self._overflow[sample.stream] += 1
        return arrival_ns

    def count_invalid(self, stream: str) -> None:
        """A message of ``stream`` that could not be decoded (truncated CDR, wrong sizes, zero
        stamp): counted into the episode's drop_stats as ``invalid_messages``."""
        with self._lock:
            self._invalid[stream] += 1

    def start_episode(self, *, task: str | None = None, rows: int | None = None) -> None:
        """Start an episode. ``rows``: it ends by itself after exactly that many rows (the
        length is counted in ticks, so a loaded machine does not make it longer or shorter);
        None: it lasts until ``request_stop``/``stop_episode``."""
        if rows is not None and rows < 1:
            raise ValueError(f"an episode needs at least 1 row, got rows={rows}")
        with self._lock:
            if self._episode is not None:
                raise RuntimeError("an episode is already being recorded; stop it first")
            if self.writer is None:
                raise RuntimeError("no task folder to record into (the recorder was made without a TaskWriter)")
            self._overflow.clear()
            self._invalid.clear()
            now = self.clock()
            output = EpisodeOutput(self.writer, self.rig, task=task,
                                   created_at=(now + self.config.wall_offset_ns) / 1e9)
            assembler = Assembler(self.rig, output, start_ns=now, config=self.config)
            assembler.max_rows = rows
            self._episode = self._last = _Episode(assembler, output, max_rows=rows)
            output.account_from(assembler.counts, assembler.frame_marks)

    def request_stop(self) -> None:
        """End the current episode now (its rows up to now are built and committed)."""
        with self._lock:
            episode = self._episode
            if episode is not None and episode.drops is None:
                now = self.clock()
                episode.stop_ns = now if episode.stop_ns is None else min(episode.stop_ns, now)
                episode.max_rows = None

    def request_abort(self) -> None:
        """Discard the current episode, whatever it is doing (its number is recycled, its
        staging folder removed). An episode already being committed is committed."""
        with self._lock:
            if self._episode is not None:
                self._episode.abort = True

    def wait_episode(self, timeout_s: float, *, idle_timeout_s: float | None = None) -> bool:
        """Wait up to ``timeout_s`` for the current (or last) episode to be committed or
        discarded; True once it is. Raises DrainStalledError when it has not moved (no row
        built, no frame encoded) for ``idle_timeout_s`` (default DRAIN_IDLE_S): a slow drain is
        not an error."""
        idle_timeout_s = DRAIN_IDLE_S if idle_timeout_s is None else idle_timeout_s
        episode = self._last
        if episode is None:
            raise RuntimeError("no episode was started")
        if episode.done.wait(timeout_s):
            return True
        signature, now = episode.signature(), time.monotonic()
        if not episode.progress or episode.progress[0] != signature:
            episode.progress = (signature, now)
        elif now - episode.progress[1] > idle_timeout_s:
            raise DrainStalledError(f"episode {self._number(episode)} made no progress for {idle_timeout_s:.0f} s "
                                    f"(stage {signature[0]}, {signature[1]} rows, encoder backlog {signature[2]})")
        return False

    def outcome(self) -> tuple[EpisodeResult | None, AssemblyReport | None]:
        """The last finished episode: (result, report); result None when it was discarded or
        empty. Raises the error that ended it, if any."""
        episode = self._last
        if episode is None or not episode.done.is_set():
            raise RuntimeError("no finished episode")
        if episode.error is not None:
            raise episode.error
        return episode.result, episode.report

    @property
    def last_episode(self) -> dict:
        """Facts about the last episode for a summary: stage, peak encoder backlog per stream."""
        episode = self._last
        if episode is None:
            return {}
        writer = episode.output.episode
        return {"stage": episode.stage, "peak_backlog": dict(episode.peak_backlog), "aborted": episode.aborted,
                "number": self._number(episode), "folder": writer.folder if writer is not None else None,
                "stamp_lag": dict(episode.stamp_lag), "latency_ns": episode.assembler.latency_ns,
                "done_ns": episode.done_ns}

    def stop_episode(self, timeout_s: float | None = None) -> tuple[EpisodeResult | None, AssemblyReport]:
        """Ends the episode at the current time; returns once it is committed. It waits as
        long as the drain progresses; ``timeout_s`` bounds the wait in any case."""
        if self._episode is None:
            raise RuntimeError("no episode is being recorded")
        self.request_stop()
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while not self.wait_episode(0.25):
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"episode did not finish within {timeout_s} s")
        result, report = self.outcome()
        if report is None:   # request_abort() came first: discarded before it stopped
            raise EpisodeAbortedError("the episode was aborted before it stopped: it was discarded, nothing to report")
        return result, report

    def abort_episode(self, timeout_s: float = 60.0) -> int | None:
        """Discard the running episode and wait until it is gone; its number is freed for the
        next one (§1.3). Returns the number it had, or None when nothing had been staged yet
        (or when its commit had already begun: then it is committed)."""
        with self._lock:
            episode = self._episode
            if episode is None:
                raise RuntimeError("no episode is being recorded")
            episode.abort = True
        if not episode.done.wait(timeout_s):
            raise TimeoutError(f"episode was not discarded within {timeout_s} s")
        writer = episode.output.episode
        return writer.index if writer is not None and episode.aborted else None

    def status(self) -> RecorderStatus:
        with self._lock:
            episode = self._episode
        counts = episode.assembler.counts() if episode else {}
        backlog = episode.output.episode.backlog if episode and episode.output.episode else {}
        videos = {s.id for s in self.rig.streams.values() if s.kind in (StreamKind.VIDEO, StreamKind.DEPTH)}
        repeated = {k: c.repeated for k, c in counts.items() if k in videos}
        rows = episode.assembler.rows if episode else 0
        return RecorderStatus(
            recording=episode is not None, rows=rows,
            received={k: c.received for k, c in counts.items()},
            dropped={k: sum(problems(c.to_json()).values()) for k, c in counts.items()},
            backlog=backlog, idle_samples=self._idle, overflow=dict(self._overflow),
            stage=episode.stage if episode else "idle", rows_target=episode.max_rows if episode else None,
            repeated=repeated, free_bytes=free_bytes(self.writer.paths.root) if self.writer else None,
            overload=live_warning(backlog, repeated, rows), invalid=dict(self._invalid),
            late={k: c.late for k, c in counts.items()})

    def close(self) -> None:
        if self._episode is not None:
            self.stop_episode()
        self._running = False
        self._thread.join()

    def _number(self, episode: _Episode) -> int | str:
        writer = episode.output.episode
        return writer.index if writer is not None else "(not begun)"

    # ---- tick thread ----------------------------------------------------------------

    def _loop(self) -> None:
        while self._running:
            # the clock is read before the inbox is emptied: every sample that arrived by
            # ``now`` (up to the assembler's margin for a thread between stamping and
            # handing over) is in this batch, so rows built up to ``now`` miss none of them
            now = self.clock()
            batch = []
            while True:
                try:
                    batch.append(self._inbox.get_nowait())
                except queue.Empty:
                    break
            batch.sort(key=lambda s: s.arrival_ns)  # threads may hand samples over out of order
            with self._lock:
                episode = self._episode
            if episode is None:
                self._idle += len(batch)
            else:
                self._step(episode, batch, now)
            time.sleep(TICK_SLEEP_S)

    def _step(self, episode: _Episode, batch: list[Sample], now: int) -> None:
        """Push the batch and build the rows that are due; once the last row is built, wait
        for the encoders to drain (an abort can still come), then commit. Samples that arrived
        after stop + D belong to no episode (as in replay)."""
        assembler = episode.assembler
        try:
            if episode.abort:
                self._idle += len(batch)
                return self._abort(episode)
            if episode.drops is not None:
                self._idle += len(batch)
                return self._drain(episode)
            stop = self._stop_at(episode, now)
            for i, sample in enumerate(batch):
                if stop is not None and sample.arrival_ns > stop + assembler.latency_ns:
                    self._idle += len(batch) - i
                    break
                assembler.push(sample)
                if sample.arrival_ns >= assembler.start_ns:   # the assembler ignores earlier ones too
                    track(episode.stamp_lag, sample.stream, sample.arrival_ns, sample.stamp_ns)
            if stop is None or now <= stop + assembler.horizon_ns:
                assembler.advance(now)
                self._stop_at(episode, now)
                self._track_backlog(episode)
                return
            episode.report = assembler.finish(stop, now)
            lost = self._lost_video(episode)
            if lost and not self.allow_missing_video:
                episode.error = MissingVideoError(
                    f"episode {self._number(episode)} discarded (number recycled): {lost}; an episode without it is "
                    "not a recording of the rig. Check the camera (cable, driver, topic) and the machine's load; "
                    "pass --allow-missing-video to keep such episodes")
                return self._abort(episode)
            drops = episode.report.drop_stats()
            with self._lock:
                if self._overflow:
                    drops["recorder_overflow"] = dict(self._overflow)
                if self._invalid:
                    drops["invalid_messages"] = dict(self._invalid)
                self._overflow.clear()
                self._invalid.clear()
            episode.drops = drops
            self._drain(episode)
        except BaseException as exc:  # the episode fails, the recorder keeps running
            episode.error = exc
            if episode.output.episode is not None:
                try:  # keep the rows written so far, and free the writer for the next episode
                    episode.output.episode.end({"error": f"{type(exc).__name__}: {exc}"})
                except Exception:
                    pass  # the staged episode is left for `egorec recover`; the writer is free either way
            self._finish(episode)

    def _stop_at(self, episode: _Episode, now: int) -> int | None:
        """The episode's end on the host clock: requested, or the tick of its last row. An
        episode that could not start (no master frame in time) within its own length plus
        the start timeout is stopped there: it ends with the rows it has, or none."""
        assembler = episode.assembler
        grid = assembler.grid
        if episode.max_rows is not None:
            with self._lock:
                if grid is not None:
                    last = grid.tick(episode.max_rows - 1)
                    episode.stop_ns = last if episode.stop_ns is None else min(episode.stop_ns, last)
                elif now > assembler.start_ns + int((episode.max_rows / self.rig.fps
                                                     + self.config.start_timeout_s) * 1e9):
                    episode.stop_ns, episode.max_rows = now, None
        return episode.stop_ns

    def _lost_video(self, episode: _Episode) -> str:
        """What makes the episode not a recording of the rig: no video, or no master stream.
        A stream that did send, but whose stamps lagged too far behind, is not called silent."""
        report = episode.report
        slots = {s.slot: s.id for s in self.rig.streams.values() if s.kind in (StreamKind.VIDEO, StreamKind.DEPTH)}
        if not slots or report is None or report.rows == 0:
            return ""
        latency = episode.assembler.latency_ns
        if not report.video_keys:
            if any(report.streams.get(sid, {}).get("received") for sid in report.missing_streams):
                return "no video stream usable: " + no_rows_reason(self.rig, report.streams, episode.stamp_lag, latency)
            return f"no video stream delivered (silent: {', '.join(report.missing_streams)})"
        master = self.rig.master_slot
        if master is not None and master not in report.video_keys:
            sid = slots.get(master, master)
            lag = episode.stamp_lag.get(sid)
            behind = describe(sid, lag, latency) if lag is not None else ""
            return f"the master stream {sid} delivered no frame" + (f" in time ({behind})" if behind else "")
        return ""

    def _track_backlog(self, episode: _Episode) -> None:
        writer = episode.output.episode
        if writer is not None:
            peak = episode.peak_backlog
            for key, n in writer.backlog.items():
                if n > peak.get(key, 0):
                    peak[key] = n

    def _drain(self, episode: _Episode) -> None:
        """Every row is built: commit once the encoders and the row sink have caught up
        (waiting here, not inside ``end``, lets a Ctrl-C abort a long drain)."""
        writer = episode.output.episode
        if writer is not None:
            if any(writer.backlog.values()):
                return
            episode.committing = True
            episode.result = writer.end(episode.drops,
                                        frame_marks=episode.report.frame_marks if episode.report else None)
        self._finish(episode)

    def _abort(self, episode: _Episode) -> None:
        if episode.output.episode is not None:
            episode.output.episode.abort()
        episode.aborted = True
        self._finish(episode)

    def _finish(self, episode: _Episode) -> None:
        episode.done_ns = self.clock()
        with self._lock:
            self._episode = None
        episode.done.set()
