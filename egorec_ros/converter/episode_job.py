"""One episode of one bag, converted into a private task dir and left staged.

This is what a worker runs, in the driver's process (serial), a local worker process
(``--jobs``) or a Ray task (``--ray``): the same function in every mode, so every mode
writes the same files. The driver commits the staged episode (``TaskWriter.adopt``)
in run order; the private task dir is seeded with the real task's tasks.jsonl and the
episode is begun under the number the driver expects it to get, so adopting it is a
move, not a rewrite.

Nothing raises out of ``convert_episode`` except an interrupt: a failure comes back as
an ``EpisodeOutcome`` with ``error`` set (and nothing staged).
"""
from __future__ import annotations

import dataclasses
import os
import secrets
import shutil
import traceback
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from egorec_ros.assembly.assembler import AssemblyConfig, AssemblyReport
from egorec_ros.assembly.counts import problems
from egorec_ros.codecs.video_codec import VideoCodec
from egorec_ros.bags.bagfile import Bag, open_bag
from egorec_ros.converter.calibration import with_bag_calibration
from egorec_ros.converter.clocks import ClockPolicy
from egorec_ros.converter.episode_clock import episode_clock, episode_offset, read_window
from egorec_ros.converter.errors import ConvertOptionError
from egorec_ros.converter.failures import CONVERSION_ERRORS, NoRowsError
from egorec_ros.converter.frame_watch import FrameWatch
from egorec_ros.converter.gap_guard import DEFAULT_MAX_GAP_S, GapGuard
from egorec_ros.converter.plan import TopicPlan, plan_topics
from egorec_ros.converter.report import ReadReport
from egorec_ros.converter.samples import ProgressFn, iter_samples
from egorec_ros.converter.split import EpisodeWindow
from egorec_ros.converter.work_dir import check_shared
from egorec_ros.recorder.replay import record_samples
from egorec_ros.rig.kinds import StreamKind
from egorec_ros.rig.model import Rig
from egorec_ros.schema.episode_row import read_episode_row, write_episode_row
from egorec_ros.store import TaskWriter
from egorec_ros.store.staging import EPISODE_ROW

# A bag is read as fast as the encoders take frames, and they run below the reader's priority
# (thread_priority.py), so their queues stay full: 8 frames a stream keep them as busy as 30 did
# (60 s of three raw 640x480 cameras, medians of 4: 14.8 / 14.7 s) with 39 MB less peak RSS (300 / 339 MB).
REPLAY_ENCODER_BACKLOG = 8


@dataclass(frozen=True)
class ConvertSettings:
    """Everything about a run that is the same for every episode."""

    rig: Rig
    task: str                                   # task text, and the task dir's name
    codec: VideoCodec = VideoCodec()
    depth_container: str = "mp4"
    policy: ClockPolicy = ClockPolicy()
    assembly: AssemblyConfig = AssemblyConfig()
    bad_frames: int = 0                         # invalid frames tolerated per stream and episode
    max_gap_s: float = DEFAULT_MAX_GAP_S        # a longer silence of the master camera ends the episode

    def __post_init__(self) -> None:
        if not self.max_gap_s > 0:
            raise ConvertOptionError(f"--max-gap must be positive, got {self.max_gap_s:g} s")


@dataclass(frozen=True)
class EpisodeJob:
    order: int                                  # position in the run: bag order, then window order
    bag: str
    window: EpisodeWindow
    number: int                                 # the episode number it should get when committed
    work_dir: str                               # a private task dir for this job (created here)
    cut: bool = False                           # the window starts at a cut (range, marker), not with data
    tasks_jsonl: bytes | None = None            # the real task's meta/tasks.jsonl
    probe: tuple[str, str] | None = None        # (file, token) proving the driver's filesystem is visible
    source: dict | None = None                  # the episode row's ``source`` (provenance.py)


@dataclass
class EpisodeOutcome:
    order: int
    bag: str
    window: EpisodeWindow
    staged: str | None = None                   # finished staging folder, ready for adopt()
    rows: int = 0
    messages: int = 0                           # bag messages read
    drops: dict[str, dict[str, int]] = field(default_factory=dict)   # stream with problems -> its counts
    lines: list[str] = field(default_factory=list)                    # clock notes, odd stamps, bad frames
    qa: dict = field(default_factory=dict)                            # the QA verdict in its episode row
    error: str | None = None
    node: str = ""                              # where it ran (Ray: the node), for the farm's progress


def convert_episode(job: EpisodeJob, settings: ConvertSettings, progress: ProgressFn | None = None) -> EpisodeOutcome:
    outcome = EpisodeOutcome(job.order, job.bag, job.window)
    try:
        if job.probe is not None:
            check_shared(*job.probe)
        with open_bag(job.bag) as bag:
            _convert(bag, job, settings, progress, outcome)
    except CONVERSION_ERRORS as exc:
        outcome.error = str(exc)
    except Exception as exc:     # a bug: reported with its trace, the run goes on with --keep-going
        outcome.error = (f"{job.bag}: unexpected {type(exc).__name__} while converting "
                         f"{job.window.reason}: {exc}\n{traceback.format_exc(limit=6)}")
    if outcome.error is not None:
        outcome.staged = None
        shutil.rmtree(job.work_dir, ignore_errors=True)
    return outcome


def _convert(bag: Bag, job: EpisodeJob, settings: ConvertSettings, progress: ProgressFn | None,
             outcome: EpisodeOutcome) -> None:
    plan = plan_topics(bag, settings.rig.streams.values())
    horizon = settings.assembly.horizon_ns
    window = read_window(job.window, bag.end_ns, horizon)
    report = ReadReport(str(bag.path))
    samples = iter_samples(bag, plan, window, policy=settings.policy, report=report, progress=progress)
    offset = episode_offset(settings.rig, report.clocks, int(settings.policy.tolerance_s * 1e9))
    clock = episode_clock(job.window, offset, _first_frame(bag, plan, job.window), horizon, cut=job.cut)
    rig = with_bag_calibration(settings.rig, bag, job.window, outcome.lines)
    watch = FrameWatch(rig, settings.bad_frames)
    guard = GapGuard(rig, settings.max_gap_s, bag.when)
    config = dataclasses.replace(settings.assembly, wall_offset_ns=-clock.offset_ns)
    clock_lines = ([clock.describe()] if clock.offset_ns else []) + _clock_lines(report)
    work = _attempt_dir(Path(job.work_dir))
    # closing(samples): its reader thread stops here, before the bag is closed, even on an error;
    # no crash journal: an interrupted conversion is run again from the bag
    with TaskWriter(work, task_name=settings.task, codec=settings.codec, depth_container=settings.depth_container,
                    crash_journal=False, encoder_backlog=REPLAY_ENCODER_BACKLOG) as writer, closing(samples):
        if job.tasks_jsonl is not None:
            writer.seed_tasks(job.tasks_jsonl)
        result, assembly = record_samples(
            writer, rig, watch.watch(clock.arrivals(guard.watch(samples))), start_ns=clock.start_ns,
            stop_ns=clock.stop_ns,
            task=settings.task, config=config, created_at=job.window.start_ns / 1e9, number=job.number,
            commit=False, notes=clock_lines + report.notes)
    watch.check(final=True)
    outcome.messages = report.messages
    # ReadReport.lines(): a header and a line per stream (replaced by _clock_lines), then the findings
    outcome.lines += clock_lines + report.lines()[1 + len(report.samples):] + watch.lines()
    if guard.note:
        outcome.lines.append(guard.note)
    if result is None:
        topics = {r.stream.id: r.topic for r in plan.all_routes}
        raise NoRowsError(_no_rows(bag, job.window, assembly, settings.assembly.latency_ms,
                                   _delays(rig, report, clock.offset_ns), topics))
    assert result.staged is not None            # commit=False: the episode is left staged
    if job.source is not None:
        row = Path(result.staged) / EPISODE_ROW
        write_episode_row(row, read_episode_row(row) | {"source": job.source})
    outcome.staged, outcome.rows, outcome.qa = str(result.staged), result.rows, result.qa or {}
    outcome.drops = {sid: c for sid, c in assembly.streams.items() if problems(c)}
    if assembly.missing_streams:
        outcome.lines.append(f"video streams left out (no frame at the episode start): "
                             f"{', '.join(assembly.missing_streams)}")


def _attempt_dir(job_dir: Path) -> Path:
    """A fresh folder for this attempt of the job, other attempts' staging removed first: a Ray
    task re-run after its worker or node died must not adopt what the dead attempt half wrote
    (the dead attempt no longer writes, so removing its folder races with nothing)."""
    job_dir.mkdir(parents=True, exist_ok=True)
    for old in job_dir.glob("attempt-*"):
        shutil.rmtree(old, ignore_errors=True)
    return job_dir / f"attempt-{os.getpid()}-{secrets.token_hex(4)}"


def _clock_lines(report: ReadReport) -> list[str]:
    """One line per clock: which streams are stamped by it (ReadReport.lines() gives one per
    stream, with sample counts, which is too much for a summary of many episodes)."""
    streams: dict[str, list[str]] = {}
    for sid, clock in sorted(report.clocks.items()):
        streams.setdefault(clock.describe(), []).append(sid)
    return [f"clock of {', '.join(sids)}: {how}" for how, sids in streams.items()]


def _first_frame(bag: Bag, plan: TopicPlan, window: EpisodeWindow) -> int | None:
    """Receive time of the first video frame in the window (readers seek by index: cheap)."""
    topics = {r.topic for r in plan.all_routes if r.stream.kind is StreamKind.VIDEO}
    firsts = [raw.log_ns for t in topics if (raw := bag.first(t, window.start_ns, window.end_ns)) is not None]
    return min(firsts, default=None)


def _delays(rig: Rig, report: ReadReport, offset_ns: int) -> dict[str, float]:
    """Video stream -> seconds its first frame arrived after its stamp (on the rows' clock)."""
    return {sid: (offset_ns - c.offset_ns) / 1e9 for sid, c in report.clocks.items()
            if c.offset_ns is not None and rig.streams[sid].kind is StreamKind.VIDEO}


def _no_rows(bag: Bag, window: EpisodeWindow, report: AssemblyReport, latency_ms: float,
             delays: dict[str, float], topics: dict[str, str]) -> str:
    counts = "; ".join(f"{sid}: " + ", ".join(f"{k} {v}" for k, v in c.items())
                       for sid, c in report.streams.items() if sid in delays or sid in report.missing_streams)
    slow = {sid: d for sid, d in delays.items() if d * 1e3 > latency_ms}
    hint = ""
    if slow:
        hint = (" " + ", ".join(f"{sid} ({bag.path.name} {topics[sid]}) frames arrive {d:.3f} s after their stamps"
                              for sid, d in slow.items())
                + f", more than the latency budget of {latency_ms:g} ms, so they are too late for any row; if the "
                f"camera pipeline is that slow, convert with --latency-ms {1e3 * max(slow.values()) + 100:.0f}.")
    return (f"{bag.path}: no row could be built for {window.reason} "
            f"({bag.when(window.start_ns)} .. {bag.when(window.end_ns)}): no video frame was usable at the "
            f"episode start ({counts or 'no video sample'}).{hint}")
