"""``egorec export egosmith``: check every selected episode first (a refusal writes nothing),
export episodes (in parallel with ``jobs``) to part files, join them into shards in episode
order, then apply the trainer's drop rules to what was written."""
from __future__ import annotations

import re
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import Callable, Iterable, Iterator

from egorec_ros.dataset import open_task
from egorec_ros.export.egosmith.episode import EpisodeResult, Options, export_episode
from egorec_ros.export.egosmith.errors import ExportRefused
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


def _one(task_root: str, index: int, src: EpisodeSources, opts: Options, part: str) -> EpisodeResult:
    """Worker entry point (picklable arguments; the task is reopened in the worker)."""
    ep = open_task(task_root).episode(index)
    return export_episode(ep, src, opts, Path(part))


def _results(task_root: Path, plans: list[EpisodeSources], opts: Options, out: Path, jobs: int,
             progress: Callable[[int], None]) -> Iterator[EpisodeResult]:
    """Episode results in episode order, whatever order the workers finish in."""
    if jobs <= 1:
        task = open_task(task_root)
        for src in plans:
            yield export_episode(task.episode(src.episode_index), src, opts, out / PART.format(src.episode_index),
                                 progress)
        return
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(_one, str(task_root), s.episode_index, s, opts, str(out / PART.format(s.episode_index)))
                   for s in plans]
        try:
            for src, fut in zip(plans, futures):
                result = fut.result()
                progress(src.rows)
                yield result
        except BaseException:
            for fut in futures:
                fut.cancel()
            raise


def export(task_dir: str | Path, out: str | Path, *, episodes: Iterable[int] | None = None, depth: bool = False,
           name: str | None = None, jobs: int = 1, hand_frame: str | None = None,
           frames_per_shard: int = DEFAULT_FRAMES_PER_SHARD,
           progress: Callable[[int], None] = lambda n: None,
           on_plan: Callable[[int], None] = lambda total: None) -> dict:
    task = open_task(task_dir)
    out = Path(out)
    wanted = set(episodes) if episodes is not None else None
    chosen = [ep for ep in task if wanted is None or ep.index in wanted]
    if wanted is not None and (missing := sorted(wanted - {ep.index for ep in chosen})):
        raise ExportRefused(f"{task.root}: no episode(s) {missing}; have {[ep.index for ep in task][:20]}")
    if not chosen:
        raise ExportRefused(f"{task.root}: no episode to export")
    opts = Options(dataset_name(task.info, task.root, name), depth=depth)
    plans = [episode_sources(ep, hand_frame=hand_frame) for ep in chosen]
    if depth and (nodepth := [s.episode_index for s in plans if s.depth_slot is None]):
        raise ExportRefused(f"--depth: episode(s) {nodepth} have no depth video of the head camera's device")
    _prepare_out(out)
    on_plan(sum(s.rows for s in plans))
    writer = ShardWriter(out, frames_per_shard)
    results: list[EpisodeResult] = []
    try:
        for result in _results(task.root, plans, opts, out, jobs, progress):
            part = out / PART.format(result.episode_index)
            writer.add(part, result.episode_index, result.frames)
            part.unlink()
            results.append(result)
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
    return {"episode_index": r.episode_index, "rows": r.rows, "frames": r.frames, "bytes": r.bytes,
            "dropped": dict(sorted(r.dropped.items())), "presence": {str(k): v for k, v in sorted(r.presence.items())}}
