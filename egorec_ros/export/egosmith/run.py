"""``egorec export egosmith``: check every selected episode first (a refusal writes nothing),
then write episodes into shards in episode order — straight into the shard with one job,
through workers' part files with ``jobs`` > 1 (the same bytes either way). The CLI then
applies the trainer's drop rules to what was written."""
from __future__ import annotations

import io
import re
from dataclasses import asdict
from pathlib import Path
from typing import Callable, Iterable, Iterator

from egorec_ros.cluster.executor import executor
from egorec_ros.cluster.session import check_paths_visible
from egorec_ros.dataset import open_task
from egorec_ros.export.egosmith.episode import EpisodeResult, Options, export_episode, plan_episode
from egorec_ros.export.egosmith.errors import ExportRefused
from egorec_ros.export.egosmith.head_pose import DEFAULT_TOLERANCE_NS
from egorec_ros.export.egosmith.shards import DEFAULT_FRAMES_PER_SHARD, ShardWriter
from egorec_ros.export.egosmith.sources import EpisodeSources, episode_sources

PART = ".egosmith-episode-{:06d}.part"


def dataset_name(task_info: dict, root: Path, given: str | None) -> str:
    """A key prefix: the trainer groups members by the text before the first '.', so no dots."""
    if given is not None:
        if not given or re.search(r"[./\s]", given):
            raise ExportRefused(f"--dataset-name {given!r}: use letters, digits, '_' or '-' (no dots, slashes, spaces)")
        return given
    name = re.sub(r"[^A-Za-z0-9_-]+", "_", str(task_info.get("task_name") or root.name)).strip("_")
    if not name:
        raise ExportRefused(f"{root}: the task name {task_info.get('task_name')!r} gives no usable ASCII dataset "
                            "name for sample keys; give --dataset-name NAME")
    return name


def _prepare_out(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    old = sorted(p.name for p in out.iterdir() if p.name.startswith("shard-") or p.name.endswith(".part"))
    if old:
        raise ExportRefused(f"{out} already holds {', '.join(old[:3])}{' ...' if len(old) > 3 else ''}; export "
                            "into an empty directory (shards of two exports must not mix)")


def _one(task_root: str, src: EpisodeSources, opts: Options, part: str, number: int) -> EpisodeResult:
    """Worker entry point (picklable arguments; the task is reopened in the worker)."""
    ep = open_task(task_root).episode(src.episode_index)
    with open(part, "wb") as out:
        return export_episode(ep, src, opts, plan_episode(ep, src, opts), out, number)


def _write_serial(task_root: Path, plans: list[EpisodeSources], opts: Options, writer: ShardWriter,
                  progress: Callable[[int], object]) -> Iterator[EpisodeResult]:
    """One process: each episode straight into its shard (its frame count is known first)."""
    task = open_task(task_root)
    for number, src in enumerate(plans):
        ep = task.episode(src.episode_index)
        plan = plan_episode(ep, src, opts)
        frames = len(plan.take)
        sink = writer.begin(src.episode_index, frames) if frames else io.BytesIO()
        yield export_episode(ep, src, opts, plan, sink, number, progress)
        if frames:
            writer.end()


def _write_parallel(task_root: Path, plans: list[EpisodeSources], opts: Options, writer: ShardWriter, out: Path,
                    jobs: int, progress: Callable[[int], object], ray: str | None = None) -> Iterator[EpisodeResult]:
    """Workers write part files; they are joined into shards in episode order as they come.
    With ``ray`` (an address, "" for a local instance) the workers are Ray tasks on every node,
    which must see the task and ``out`` (checked first); a retried task rewrites its part file.
    Local workers are spawned, never forked (``cluster.executor``)."""
    with executor(jobs, ray or None, ray=ray is not None, check=check_paths_visible,
                  check_args=(str(task_root), str(out)), what="the task dir and --out") as pool:
        parts = [out / PART.format(s.episode_index) for s in plans]
        futures = [pool.submit(_one, str(task_root), s, opts, str(p), number)
                   for number, (s, p) in enumerate(zip(plans, parts))]
        try:
            for src, part, fut in zip(plans, parts, futures):
                result = fut.result()
                writer.add_part(part, result.episode_index, result.frames)
                part.unlink()
                progress(src.rows)
                yield result
        except BaseException:
            for fut in futures:
                fut.cancel()
            raise


def export(task_dir: str | Path, out: str | Path, *, episodes: Iterable[int] | None = None, depth: bool = False,
           name: str | None = None, jobs: int = 1, hand_frame: str | None = None,
           frames_per_shard: int = DEFAULT_FRAMES_PER_SHARD, pose_tolerance_ns: int = DEFAULT_TOLERANCE_NS,
           progress: Callable[[int], object] = lambda n: None,
           on_plan: Callable[[int], object] = lambda total: None, ray: str | None = None) -> dict:
    task = open_task(task_dir)
    out = Path(out)
    wanted = set(episodes) if episodes is not None else None
    chosen = [ep for ep in task if wanted is None or ep.index in wanted]
    if wanted is not None and (missing := sorted(wanted - {ep.index for ep in chosen})):
        raise ExportRefused(f"{task.root}: no episode(s) {missing}; have {[ep.index for ep in task][:20]}")
    if not chosen:
        raise ExportRefused(f"{task.root}: no episode to export")
    if frames_per_shard < 1 or jobs < 1:
        raise ExportRefused(f"--frames-per-shard and --jobs must be at least 1 (got {frames_per_shard}, {jobs})")
    opts = Options(dataset_name(task.info, task.root, name), depth=depth, tolerance_ns=pose_tolerance_ns)
    plans = [episode_sources(ep, hand_frame=hand_frame) for ep in chosen]
    if depth and (nodepth := [s.episode_index for s in plans if s.depth_slot is None]):
        raise ExportRefused(f"--depth: episode(s) {nodepth} have no depth video of the head camera's device")
    _prepare_out(out)
    on_plan(sum(s.rows for s in plans))
    writer = ShardWriter(out, frames_per_shard)
    try:
        if jobs <= 1 and ray is None:
            results = list(_write_serial(task.root, plans, opts, writer, progress))
        else:
            results = list(_write_parallel(task.root, plans, opts, writer, out.resolve(), jobs, progress, ray))
        writer.finish()
    except BaseException:
        writer.abort()
        for p in out.glob(".egosmith-episode-*.part"):
            p.unlink()
        raise
    return {"task_dir": str(task.root), "out": str(out), "dataset_name": opts.dataset_name, "depth": depth,
            "hand_frame": plans[0].hands.frame, "head_slot": plans[0].head_slot,
            "episodes": [_episode_summary(r) for r in results], "shards": [asdict(s) for s in writer.done]}


def _episode_summary(r: EpisodeResult) -> dict:
    return {"episode_index": r.episode_index, "egosmith_episode_index": r.number, "rows": r.rows, "frames": r.frames, "bytes": r.bytes,
            "dropped": dict(sorted(r.dropped.items())), "presence": {str(k): v for k, v in sorted(r.presence.items())}}
