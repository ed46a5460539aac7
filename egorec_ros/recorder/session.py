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

from egorec_ros.assembly.assembler import Assembler, AssemblyConfig, AssemblyReport
from egorec_ros.assembly.counts import problems
from egorec_ros.assembly.sample import Sample
from egorec_ros.recorder.episode_output import EpisodeOutput
from egorec_ros.rig.model import Rig
from egorec_ros.store import EpisodeResult, TaskWriter

TICK_SLEEP_S = 0.004
MAX_INBOX = 4000  # samples waiting for the tick thread: ~3 s of the Appendix B rig


@dataclass
class _Episode:
    assembler: Assembler
    output: EpisodeOutput
    stop_ns: int | None = None
    done: threading.Event = field(default_factory=threading.Event)
    result: EpisodeResult | None = None
    report: AssemblyReport | None = None
    error: BaseException | None = None
    abort: bool = False                   # discard instead of commit (§1.3: the number is freed)
    aborted_index: int | None = None


@dataclass(frozen=True)
class RecorderStatus:
    recording: bool
    rows: int
    received: dict[str, int]
    dropped: dict[str, int]       # the PROBLEMS counts summed, per stream
    backlog: dict[str, int]
    idle_samples: int
    overflow: dict[str, int]      # dropped at hand-over: the tick thread was too far behind
    invalid: dict[str, int] = field(default_factory=dict)  # messages that could not be decoded (live input)
    late: dict[str, int] = field(default_factory=dict)     # of dropped: arrived after their row's deadline


class Recorder:
    def __init__(self, rig: Rig, writer: TaskWriter, *, config: AssemblyConfig = AssemblyConfig(),
                 clock: Callable[[], int] = time.time_ns) -> None:
        self.rig, self.writer, self.config, self.clock = rig, writer, config, clock
        self._inbox: queue.Queue[Sample] = queue.Queue(maxsize=MAX_INBOX)
        self._overflow: Counter[str] = Counter()
        self._invalid: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._episode: _Episode | None = None
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

    def start_episode(self, *, task: str | None = None) -> None:
        with self._lock:
            if self._episode is not None:
                raise RuntimeError("an episode is already being recorded; stop it first")
            self._overflow.clear()
            self._invalid.clear()
            now = self.clock()
            output = EpisodeOutput(self.writer, self.rig, task=task,
                                   created_at=(now + self.config.wall_offset_ns) / 1e9)
            self._episode = _Episode(Assembler(self.rig, output, start_ns=now, config=self.config), output)

    def stop_episode(self, timeout_s: float = 60.0) -> tuple[EpisodeResult | None, AssemblyReport]:
        """Ends the episode at the current time; returns once it is committed."""
        with self._lock:
            episode = self._episode
            if episode is None:
                raise RuntimeError("no episode is being recorded")
            episode.stop_ns = self.clock()
        if not episode.done.wait(timeout_s):
            raise TimeoutError(f"episode did not finish within {timeout_s} s")
        if episode.error is not None:
            raise episode.error
        return episode.result, episode.report

    def abort_episode(self, timeout_s: float = 60.0) -> int | None:
        """Discard the running episode; its number is freed for the next one (§1.3). Returns the
        number it had, or None when no row had been built yet (nothing was staged)."""
        with self._lock:
            episode = self._episode
            if episode is None:
                raise RuntimeError("no episode is being recorded")
            episode.abort = True
        if not episode.done.wait(timeout_s):
            raise TimeoutError(f"episode was not discarded within {timeout_s} s")
        return episode.aborted_index

    def status(self) -> RecorderStatus:
        with self._lock:
            episode = self._episode
        counts = episode.assembler.counts() if episode else {}
        backlog = episode.output.episode.backlog if episode and episode.output.episode else {}
        return RecorderStatus(
            recording=episode is not None, rows=episode.assembler.rows if episode else 0,
            received={k: c.received for k, c in counts.items()},
            dropped={k: sum(problems(c.to_json()).values()) for k, c in counts.items()},
            backlog=backlog, idle_samples=self._idle, overflow=dict(self._overflow), invalid=dict(self._invalid),
            late={k: c.late for k, c in counts.items()})

    def close(self) -> None:
        if self._episode is not None:
            self.stop_episode()
        self._running = False
        self._thread.join()

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
        """Push the batch and build the rows that are due; finish the episode once its last
        row is due. Samples that arrived after stop + D belong to no episode (as in replay)."""
        assembler = episode.assembler
        if episode.abort:
            try:
                if episode.output.episode is not None:
                    episode.aborted_index = episode.output.episode.index
                    episode.output.episode.abort()
            except BaseException as exc:  # noqa: BLE001 - reported to the caller of abort_episode
                episode.error = exc
            self._finish(episode)
            return
        try:
            stop = episode.stop_ns
            for i, sample in enumerate(batch):
                if stop is not None and sample.arrival_ns > stop + assembler.latency_ns:
                    self._idle += len(batch) - i
                    break
                assembler.push(sample)
            if stop is None or now <= stop + assembler.horizon_ns:
                assembler.advance(now)
                return
            episode.report = assembler.finish(stop, now)
            drops = episode.report.drop_stats()
            with self._lock:
                if self._overflow:
                    drops["recorder_overflow"] = dict(self._overflow)
                if self._invalid:
                    drops["invalid_messages"] = dict(self._invalid)
                self._overflow.clear()
                self._invalid.clear()
            if episode.output.episode is not None:
                episode.result = episode.output.episode.end(drops)
            self._finish(episode)
        except BaseException as exc:  # the episode fails, the recorder keeps running
            episode.error = exc
            if episode.output.episode is not None:
                try:  # keep the rows written so far, and free the writer for the next episode
                    episode.output.episode.end({"error": f"{type(exc).__name__}: {exc}"})
                except Exception:
                    pass  # the staged episode is left for `egorec recover`; the writer is free either way
            self._finish(episode)

    def _finish(self, episode: _Episode) -> None:
        with self._lock:
            self._episode = None
        episode.done.set()
