"""``export_lerobot``: a pooled_episodes_v1 task directory -> a LeRobot v3.0 dataset that
``lerobot.datasets.LeRobotDataset(repo_id, root=OUT)`` opens.

Episodes are renumbered 0..N-1 in our (1-based) order. The per-frame int64 feature
``egorec.episode_index`` holds our episode number on every row, and its feature entry in
``meta/info.json`` (``features["egorec.episode_index"]["info"]``, see ``provenance``) names
the source task, each source episode's data file and how columns were mapped: LeRobot keeps
declared features through ``lerobot-edit-dataset`` (delete, split, merge renumber episodes;
the column still says which of ours a row came from). The dataset is built in a hidden
``.OUT.partial`` folder beside OUT and renamed into place at the end, so OUT is either absent
or complete.

Per episode (``episode.py``) the work is independent of the other episodes: in this process,
or (``jobs``, ``ray``) in workers that write parts (``parts.py``). What depends on the
episodes before it (which data file its rows go to, the camera size check, the dataset
stats) is done here, in episode order, so every mode writes the same bytes."""
from __future__ import annotations

import json
import shutil
import time
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Generator, Sequence

import numpy as np

from egorec_ros.cluster.executor import executor
from egorec_ros.cluster.session import check_paths_visible
from egorec_ros.dataset import Episode, Task, open_task
from egorec_ros.export.lerobot import layout, parts, stats, tables, videos
from egorec_ros.export.lerobot.episode import DATA_FILE_KEYS, EpisodePart, Shared, episode_part
from egorec_ros.export.lerobot.mapping import IMAGE_PREFIX, MappingError, Plan, plan_export
from egorec_ros.schema.tasks import read_tasks

VIDEO_MODES = ("copy", "reencode")


@dataclass
class Summary:
    out: Path
    repo_id: str
    video: str
    episodes: int = 0
    frames: int = 0
    seconds: float = 0.0
    mapping: dict = field(default_factory=dict)
    zero_filled: dict[str, list[int]] = field(default_factory=dict)   # column -> our episodes that lacked it
    nodes: dict[str, int] = field(default_factory=dict)   # Ray node -> episodes it made (--ray)
    reused: int = 0                                        # episodes an earlier, stopped run had made

    def to_json(self) -> dict:
        return {"out": str(self.out), "repo_id": self.repo_id, "video": self.video, "episodes": self.episodes,
                "frames": self.frames, "seconds": round(self.seconds, 3), **self.mapping,
                "zero_filled": self.zero_filled, "nodes": self.nodes, "reused": self.reused}


def _task_names(task_root: Path) -> dict[int, str]:
    return {i: t for t, i in read_tasks(task_root / "meta" / "tasks.jsonl").items()}


def export_lerobot(task_dir: str | Path, out: str | Path, *, repo_id: str | None = None,
                   cameras: Sequence[str] | None = None, state: Sequence[str] | None = None,
                   action: Sequence[str] | None = None, state_layout: str = "concat", extras: str = "drop",
                   video: str = "copy", progress: Callable[[int, int], None] | None = None,
                   jobs: int = 1, ray: str | None = None) -> Summary:
    """``jobs`` > 1: episodes made by that many local processes; ``ray`` (an address, "" for a
    local instance): by Ray tasks on every node, which must see TASK_DIR and OUT's folder
    (checked first). Either way through part files (``parts.py``), and the same files as a
    serial export; a stopped parallel export leaves its parts, and the same command goes on."""
    if video not in VIDEO_MODES:
        raise MappingError(f"--video {video!r}: use copy or reencode")
    if jobs < 1:
        raise MappingError(f"--jobs {jobs}: give at least 1")
    started = time.perf_counter()
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out}: exists and is not empty; choose a new --out (nothing was written)")
    task = open_task(task_dir)
    if not task.episodes:
        raise MappingError(f"{task.root}: no committed episode to export")
    plan = plan_export(task, cameras=cameras, state=state, action=action, layout=state_layout, extras=extras)
    summary = Summary(out, repo_id or f"egorec/{out.name}", video, mapping=plan.describe())

    tmp = partial_dir(out)
    remote = jobs > 1 or ray is not None
    if not remote:
        shutil.rmtree(tmp, ignore_errors=True)   # a previous export of ours that stopped half-way
    tmp.mkdir(parents=True, exist_ok=True)
    finished = False
    try:
        _write(task, plan, tmp, summary, progress, jobs, ray)
        if remote:
            parts.remove_parts(tmp)
        if out.exists():
            out.rmdir()
        tmp.rename(out)
        finished = True
    finally:
        if not finished and not (remote and parts.finished(tmp)):
            shutil.rmtree(tmp, ignore_errors=True)
    summary.seconds = time.perf_counter() - started
    return summary


def partial_dir(out: Path) -> Path:
    """Where the dataset is built before it is renamed to ``out`` (a stopped parallel export's
    parts stay there for the next run)."""
    return out.with_name(f".{out.name}.partial")


def _write(task: Task, plan: Plan, root: Path, summary: Summary, progress: Callable[[int, int], None] | None,
           jobs: int, ray: str | None) -> None:
    names = _task_names(task.root)
    used = sorted({int(i) for ep in task for i in np.unique(ep.column("task_index").to_numpy())})
    unknown = [i for i in used if i not in names]
    if unknown:
        raise MappingError(f"{task.root}/meta/tasks.jsonl: no text for task_index {unknown}")
    shared = Shared(plan, summary.video, {old: new for new, old in enumerate(used)}, names)
    firsts = np.concatenate([[0], np.cumsum([len(ep) for ep in task.episodes])[:-1]]).tolist()
    made: Generator[EpisodePart, None, None] = (_parallel(task, shared, firsts, root, jobs, ray, summary) if jobs > 1 or ray is not None
            else (episode_part(ep, k, first, shared, root) for k, (ep, first) in enumerate(zip(task.episodes, firsts))))

    data = tables.DataFiles(root)
    ep_rows, ep_stats, total = [], [], 0
    sizes: dict[str, tuple[int, int]] = {}   # camera -> (height, width) of its first episode
    try:
        with closing(made) as episodes:      # a failure here stops the workers before the folder goes
            for part in episodes:
                _check_sizes(part, sizes, task.episodes[part.k])
                for c in part.missing:
                    summary.zero_filled.setdefault(c, []).append(part.source)
                part.row.update(zip(DATA_FILE_KEYS, data.append(part.table)))
                ep_rows.append(part.row)
                ep_stats.append(part.stats)
                total += part.row["length"]
                if progress:
                    progress(part.k + 1, len(task.episodes))
    finally:
        data.close()

    tables.write_episodes(root, ep_rows)
    tables.write_tasks(root, [names[i] for i in used])
    features = _features(plan, root, task, summary.video)
    features[layout.PROVENANCE]["info"] = {
        "what": "our (egorec) 1-based episode number of each row; keys below are those numbers",
        "source_task": str(task.root.resolve()), "source_format": task.info.get("format"),
        "source_task_name": task.info.get("task_name"),
        "source_episodes": {str(ep.index): str(ep.data_path.relative_to(task.root)) for ep in task.episodes},
        "video": summary.video, **plan.describe(),
        "state_names": "<column without 'observation.'>.<flat index>, columns in the order of 'features'",
        **({"depth_holes": f"a depth below {videos.DEPTH_HOLE_BELOW_MM} mm is a pixel without depth"}
           if plan.depth else {}),
    }
    info = {
        "codebase_version": layout.CODEBASE_VERSION, "robot_type": None,
        "total_episodes": len(ep_rows), "total_frames": total, "total_tasks": len(used),
        "chunks_size": layout.CHUNKS_SIZE, "data_files_size_in_mb": layout.DATA_FILES_SIZE_IN_MB,
        "video_files_size_in_mb": layout.VIDEO_FILES_SIZE_IN_MB, "fps": plan.fps,
        "splits": {"train": f"0:{len(ep_rows)}"}, "data_path": layout.DATA_PATH,
        "video_path": layout.VIDEO_PATH if plan.cameras else None, "features": features,
    }
    _write_json(root / layout.INFO_PATH, info)
    _write_json(root / layout.STATS_PATH, {name: stats.to_json(stats.aggregate([s[name] for s in ep_stats]))
                                           for name in ep_stats[0]})
    summary.episodes, summary.frames = len(ep_rows), total


def _check_sizes(part: EpisodePart, sizes: dict[str, tuple[int, int]], ep: Episode) -> None:
    """A LeRobot video feature has one shape: every episode's frames as episode 0's."""
    for key, size in part.sizes.items():
        if sizes.setdefault(key, size) != size:
            raise MappingError(f"{ep.video_path(key)}: {size[1]}x{size[0]} but {sizes[key][1]}x{sizes[key][0]} in "
                               "earlier episodes; a LeRobot feature has one shape: export those episodes apart")


def _parallel(task: Task, shared: Shared, firsts: list[int], root: Path, jobs: int, ray: str | None,
              summary: Summary) -> Generator[EpisodePart, None, None]:
    """The episodes' parts in order, made by workers (parts an earlier run left that still match
    are kept); a worker's error is raised when its episode's turn comes, as a serial export would."""
    task_root, where = str(task.root.resolve()), str(root.resolve())
    keys = {k: parts.part_key(ep, k, first, shared) for k, (ep, first) in enumerate(zip(task.episodes, firsts))}
    kept = parts.keep_only(root, keys)
    summary.reused = len(kept)
    with executor(jobs, ray or None, ray=ray is not None, check=check_paths_visible, check_args=(task_root, where),
                  what="the task dir and the folder of --out") as pool:
        futures = {k: pool.submit(parts.make_part, task_root, ep.index, k, firsts[k], shared, where, keys[k],
                                  ray is not None)
                   for k, ep in enumerate(task.episodes) if k not in kept}
        try:
            for k in range(len(task.episodes)):
                if k in futures:
                    done = futures[k].result()
                    if done.error is not None:
                        raise done.error
                    if done.node:
                        summary.nodes[done.node] = summary.nodes.get(done.node, 0) + 1
                part = parts.read_part(root, k, keys[k])
                if part is None:
                    raise MappingError(f"{root}: episode {k}'s part is missing or unreadable after its worker "
                                       "finished; is the folder of --out on storage every node shares?")
                yield part
        finally:
            for fut in futures.values():
                fut.cancel()


def _write_json(path: Path, doc: dict) -> None:
    """Plain write: the whole folder is renamed into place once complete."""
    path.write_text(json.dumps(doc, ensure_ascii=False, indent=4) + "\n", encoding="utf-8")


def _features(plan: Plan, root: Path, task: Task, video: str) -> dict:
    """info.json features as lerobot 0.6.1 declares them; video info from episode 0's files
    (as LeRobot's update_video_info) and the encoder our recorder used (its episode row)."""
    features: dict = {}
    codecs = task.episodes[0].row.get("video_codec") or {}
    for key in plan.cameras:
        feature, depth = IMAGE_PREFIX + key, key in plan.depth
        encoder = (videos.LEROBOT_ENCODER_FIELDS if video == "reencode" and not depth
                   else videos.encoder_fields(codecs.get(key), depth))
        info = videos.video_info(root / layout.VIDEO_PATH.format(video_key=feature, chunk_index=0, file_index=0),
                                 encoder, depth)
        features[feature] = {"dtype": "video", "shape": [info["video.height"], info["video.width"], 1 if depth else 3],
                             "names": ["height", "width", "channels"], "info": info}
    for f in plan.features:
        features[f.name] = {"dtype": "float32", "shape": [f.width], "names": list(f.names)}
    features[layout.PROVENANCE] = {"dtype": "int64", "shape": [1], "names": None}
    return features | {k: dict(v) for k, v in layout.DEFAULT_FEATURES.items()}


def provenance(info: dict) -> dict:
    """Where an export came from: the ``info`` of its provenance feature in meta/info.json."""
    return info["features"][layout.PROVENANCE]["info"]
