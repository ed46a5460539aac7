"""``egorec convert``: bags -> episodes of one pooled task directory.

1. Plan every bag (topics, required streams, episode windows) in the driver. A bag that
   cannot be converted stops the run here, before any work (or, with ``keep_going``,
   is listed and skipped).
2. Number the episodes in run order (bag order, then window order), starting at the
   task's next number, and hand one job per episode to a runner: the driver itself,
   local worker processes or a Ray cluster. Each job stages its episode in a private
   task dir of the run's work folder (``work_dir.py``).
   A bag window some committed episode of the task was already converted from (its row's
   ``source``, ``provenance.py``) gets no job: running the same farm again after Ctrl-C, a
   killed driver or a lost node converts only what is missing.
3. Commit staged episodes strictly in run order, waiting for earlier ones: numbering is
   that of a serial run whatever finishes first; when an episode fails, the next one
   takes its number (``TaskWriter.adopt`` renumbers). Every mode runs the same job
   function and the same commit, so all modes write the same files.

Nothing partial reaches the task dir: jobs write only into the work folder, which is
removed at the end, also after a failure or Ctrl-C; a commit in progress finishes
before Ctrl-C is honoured.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from egorec_ros.assembly.counts import judged
from egorec_ros.converter.bag_plan import BagPlan, SplitRule, plan_bag
from egorec_ros.converter.episode_job import ConvertSettings, EpisodeJob, EpisodeOutcome
from egorec_ros.converter.failures import CONVERSION_ERRORS, DuplicateBagError
from egorec_ros.converter.errors import ConvertOptionError
from egorec_ros.converter.farm_progress import FarmProgress
from egorec_ros.converter.interrupts import interrupts_deferred
from egorec_ros.converter.provenance import SourceKey, bag_identity, converted_windows, source_key, source_of
from egorec_ros.converter.run_progress import RunProgress
from egorec_ros.converter.runners import OnProgress, ProcessRunner, Runner, SerialRunner
from egorec_ros.converter.work_dir import WorkDir
from egorec_ros.qa.verdict import summary_lines
from egorec_ros.rig.declare import declaration
from egorec_ros.store import TaskWriter
from egorec_ros.store.metadata import check_cameras


@dataclass(frozen=True)
class Parallelism:
    jobs: int = 1                   # worker processes (1 and no Ray: in the driver)
    ray: bool = False
    ray_address: str | None = None  # None: a local Ray instance for the run

    def __post_init__(self) -> None:
        if self.jobs < 1:           # refused before any bag is read
            raise ConvertOptionError(f"--jobs must be at least 1, got {self.jobs}")


@dataclass
class BagResult:
    bag: str
    plan: BagPlan | None = None
    episodes: list[tuple[int, EpisodeOutcome]] = field(default_factory=list)   # (episode_index, outcome)
    failures: list[str] = field(default_factory=list)
    identity: tuple[int, str] | None = None     # (size, hash): provenance.bag_identity
    already: int = 0                            # windows converted by an earlier run (no job)

    def lines(self) -> list[str]:
        """What a user should know about this bag, after the run."""
        rows = sum(o.rows for _, o in self.episodes)
        numbers = ", ".join(f"{n} ({o.rows} rows, {o.window.reason})" for n, o in self.episodes)
        storage = f" ({self.plan.storage})" if self.plan else ""
        head = f"{self.bag}{storage}: {len(self.episodes)} episode(s), {rows} rows"
        out = [head + (f": {numbers}" if numbers else "")]
        if self.already:
            out.append(f"  {self.already} episode(s) of this bag were already in the task (converted earlier)")
        drops: dict[str, Counter] = defaultdict(Counter)
        for _, o in self.episodes:
            for sid, kinds in o.drops.items():
                drops[sid].update(kinds)
        if drops:
            out.append("  drops: " + "; ".join(f"{sid} {judged(kinds)}" for sid, kinds in sorted(drops.items())))
        out += [f"  {line}" for line in dict.fromkeys(line for _, o in self.episodes for line in o.lines)]
        for n, o in self.episodes:
            out += [f"  episode {n} {line}" if i == 0 else f"  {line}" for i, line in enumerate(summary_lines(o.qa))]
        if self.plan is not None:
            out += [f"  {line}" for line in (*_condensed(self.plan.skipped), *self.plan.notes)]
        out += [f"  FAILED: {f}" for f in self.failures]
        return out


def _condensed(lines: Sequence[str], keep: int = 5) -> list[str]:
    """Plan lines with a long run of "not mapped" topics (a bag of 90 test topics) cut short."""
    unmapped = [line for line in lines if line.startswith("not mapped ")]
    if len(unmapped) <= keep + 1:
        return list(lines)
    rest = [line for line in lines if not line.startswith("not mapped ")]
    return unmapped[:keep] + [f"not mapped: {len(unmapped) - keep} more topics"] + rest


@dataclass
class RunResult:
    task_dir: Path
    bags: list[BagResult]
    stopped: str | None = None      # why the run stopped before converting everything
    farm: str = ""                  # the farm's last progress line (bags, rows, nodes)

    @property
    def failures(self) -> list[str]:
        return [f for b in self.bags for f in b.failures]

    @property
    def episodes(self) -> int:
        return sum(len(b.episodes) for b in self.bags)


def convert_bags(bags: Sequence[str | Path], settings: ConvertSettings, *, out: str | Path,
                 rule: SplitRule = SplitRule(), parallel: Parallelism = Parallelism(), keep_going: bool = False,
                 progress: bool | None = None,
                 on_episode: Callable[[int, EpisodeOutcome], object] | None = None) -> RunResult:
    """Convert ``bags`` into ``out/settings.task``; see the module docstring. ``progress``:
    None: a bar per bag when stderr is a terminal, else a plain line every 10 s; False: none.
    DuplicateBagError when a bag is given twice. ``on_episode(number, outcome)`` is called
    after each commit."""
    refuse_duplicates(bags)
    task_dir = Path(out) / settings.task
    result = RunResult(task_dir, [BagResult(str(b)) for b in bags])
    created = _missing_folders(task_dir)
    try:
        _run(result, settings, out, rule, parallel, keep_going, progress, on_episode)
    finally:
        if created and not result.episodes:
            _remove_created(created)
    return result


def _run(result: RunResult, settings: ConvertSettings, out: str | Path, rule: SplitRule, parallel: Parallelism,
         keep_going: bool, progress: bool | None, on_episode: Callable[[int, EpisodeOutcome], object] | None) -> None:
    with TaskWriter(result.task_dir, task_name=settings.task, codec=settings.codec,
                    depth_container=settings.depth_container, discard_if_unused=True) as writer:
        check_cameras(writer.paths, declaration(settings.rig))   # refuse a size change before converting
        for bag in result.bags:
            try:
                bag.plan = plan_bag(bag.bag, settings.rig, rule)
                bag.identity = bag_identity(bag.bag)
            except OSError as exc:
                bag.failures.append(f"{bag.bag}: cannot be read: {exc}")
                if not keep_going:
                    result.stopped = "a bag cannot be converted; nothing was converted (--keep-going skips it)"
                    return
            except CONVERSION_ERRORS as exc:
                bag.failures.append(str(exc))
                if not keep_going:
                    result.stopped = "a bag cannot be converted; nothing was converted (--keep-going skips it)"
                    return
        with WorkDir(out) as work:
            jobs, owner, totals = _jobs(result.bags, writer, work, converted_windows(writer.paths),
                                        remote=parallel.ray)
            bars = RunProgress(jobs, totals, fps=settings.rig.fps, enabled=progress)
            farm = _farm(result.bags, jobs, progress)
            left = Counter(j.bag for j in jobs)
            runner = _runner(settings, parallel, work, bars.advance, sorted(left))
            try:
                for job in jobs:
                    runner.submit(job)
                for job in jobs:
                    outcome = runner.outcome(job.order)
                    bars.done(outcome)
                    left[job.bag] -= 1
                    if outcome.error is not None:
                        owner[job.order].failures.append(outcome.error)
                        if not left[job.bag]:
                            farm.bag(job.bag, failed=True)
                        if not keep_going:
                            result.stopped = "an episode failed; the run stopped (--keep-going converts the rest)"
                            break
                        continue
                    assert outcome.staged is not None       # no error: convert_episode staged the episode
                    with interrupts_deferred():
                        number = writer.adopt(Path(outcome.staged)).index
                    owner[job.order].episodes.append((number, outcome))
                    farm.episode(job.bag, outcome.node, outcome.rows)
                    if not left[job.bag]:
                        farm.bag(job.bag, failed=bool(owner[job.order].failures))
                    if on_episode is not None:
                        on_episode(number, outcome)
            finally:
                runner.close()
                bars.close()
                result.farm = farm.line()


def refuse_duplicates(bags: Sequence[str | Path]) -> None:
    """DuplicateBagError when two arguments are one bag: ``./a``, ``a/``, a symlink to it, or a
    rosbag2 folder and one of its storage files would convert the same messages twice."""
    seen: dict[Path, str | Path] = {}
    for bag in bags:
        files = _storage_files(Path(bag))
        for file in files:
            if file in seen:
                raise DuplicateBagError(
                    f"the same bag is given twice: {seen[file]} and {bag} (both are {file}); remove one of them: "
                    "converting a bag twice would make two identical episodes")
        seen.update(dict.fromkeys(files, bag))


def _storage_files(path: Path) -> set[Path]:
    """What a bag argument reads, with symlinks and relative parts resolved."""
    path = path.resolve()
    try:
        files = {f.resolve() for f in path.iterdir() if f.suffix in (".db3", ".mcap")} if path.is_dir() else set()
    except OSError:           # unreadable: opening it will say so
        files = set()
    return files or {path}


def _missing_folders(task_dir: Path) -> list[Path]:
    """The task dir and those of its parents (the output root ...) that do not exist yet."""
    return [p for p in (task_dir, *task_dir.parents) if not p.exists()]


def _remove_created(created: list[Path]) -> None:
    """Remove the output folders this run created but put no episode in (the task writer has
    already discarded the unused task dir itself), innermost first."""
    for folder in created:
        try:
            folder.rmdir()
        except FileNotFoundError:
            continue
        except OSError:        # not empty: something else is in it, keep it
            return


def _farm(bags: list[BagResult], jobs: list[EpisodeJob], progress: bool | None) -> FarmProgress:
    """Bags failed at planning count as failed; bags with nothing left to do as already converted."""
    with_jobs = {j.bag for j in jobs}
    farm = FarmProgress(len(bags), sum(1 for b in bags if b.plan is not None and b.already
                                       and str(Path(b.bag).resolve()) not in with_jobs),
                        enabled=progress is not False)
    farm.failed = sum(1 for b in bags if b.plan is None)
    farm.done = sum(1 for b in bags if b.plan is not None and not b.already and not b.plan.windows)
    return farm


def _jobs(bags: list[BagResult], writer: TaskWriter, work: WorkDir, converted: set[SourceKey], *,
          remote: bool) -> tuple[list[EpisodeJob], dict[int, BagResult], dict[str, int | None]]:
    """One job per episode window in run order, numbered from the task's next number; the
    bag each job belongs to; and the messages each job's bag reads (its plan's, for progress).
    Windows in ``converted`` (an earlier run's) get no job. Paths are absolute: workers may run
    elsewhere."""
    first = writer.next_number().index
    tasks = writer.tasks_jsonl()
    jobs: list[EpisodeJob] = []
    owner: dict[int, BagResult] = {}
    totals: dict[str, int | None] = {}
    for bag in bags:
        plan = bag.plan
        if plan is None:        # its planning failed (--keep-going): no jobs
            continue
        path = str(Path(bag.bag).resolve())
        assert bag.identity is not None         # planned: identified too
        for window in plan.windows:
            source = source_of(path, bag.identity, window)
            if source_key(source) in converted:
                bag.already += 1
                continue
            order = len(jobs)
            owner[order] = bag
            totals[path] = plan.messages
            jobs.append(EpisodeJob(order, path, window, first + order, work.job_dir(order),
                                   plan.cut, tasks, work.probe if remote else None, source))
    return jobs, owner, totals


def _runner(settings: ConvertSettings, parallel: Parallelism, work: WorkDir, on_progress: OnProgress,
            bags: Sequence[str]) -> Runner:
    if parallel.ray:
        from egorec_ros.converter.ray_runner import RayRunner    # ray is an optional dependency
        return RayRunner(settings, parallel.ray_address, parallel.jobs if parallel.jobs > 1 else None,
                         work.probe, on_progress, bags)
    if parallel.jobs > 1:
        return ProcessRunner(settings, parallel.jobs, on_progress)
    return SerialRunner(settings, on_progress)
