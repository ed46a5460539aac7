"""``export_lerobot``: a pooled_episodes_v1 task directory -> a LeRobot v3.0 dataset that
``lerobot.datasets.LeRobotDataset(repo_id, root=OUT)`` opens.

Episodes are renumbered 0..N-1 in our (1-based) order. The per-frame int64 feature
``egorec.episode_index`` holds our episode number on every row, and its feature entry in
``meta/info.json`` (``features["egorec.episode_index"]["info"]``, see ``provenance``) names
the source task, each source episode's data file and how columns were mapped: LeRobot keeps
declared features through ``lerobot-edit-dataset`` (delete, split, merge renumber episodes;
the column still says which of ours a row came from). The dataset is built in a hidden ``.OUT.partial`` folder beside OUT and renamed into
place at the end, so OUT is either absent or complete."""
from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from egorec_ros.dataset import Episode, Task, open_task
from egorec_ros.export.lerobot import layout, stats, tables, videos
from egorec_ros.export.lerobot.mapping import IMAGE_PREFIX, MappingError, Plan, episode_values, plan_export
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

    def to_json(self) -> dict:
        return {"out": str(self.out), "repo_id": self.repo_id, "video": self.video, "episodes": self.episodes,
                "frames": self.frames, "seconds": round(self.seconds, 3), **self.mapping,
                "zero_filled": self.zero_filled}


def _task_names(task_root: Path) -> dict[int, str]:
    return {i: t for t, i in read_tasks(task_root / "meta" / "tasks.jsonl").items()}


def export_lerobot(task_dir: str | Path, out: str | Path, *, repo_id: str | None = None,
                   cameras: Sequence[str] | None = None, state: Sequence[str] | None = None,
                   action: Sequence[str] | None = None, state_layout: str = "concat", extras: str = "drop",
                   video: str = "copy", progress: Callable[[int, int], None] | None = None) -> Summary:
    if video not in VIDEO_MODES:
        raise MappingError(f"--video {video!r}: use copy or reencode")
    started = time.perf_counter()
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out}: exists and is not empty; choose a new --out (nothing was written)")
    task = open_task(task_dir)
    if not task.episodes:
        raise MappingError(f"{task.root}: no committed episode to export")
    plan = plan_export(task, cameras=cameras, state=state, action=action, layout=state_layout, extras=extras)
    summary = Summary(out, repo_id or f"egorec/{out.name}", video, mapping=plan.describe())

    tmp = out.with_name(f".{out.name}.partial")
    shutil.rmtree(tmp, ignore_errors=True)   # a previous export of ours that stopped half-way
    tmp.mkdir(parents=True)
    try:
        _write(task, plan, tmp, summary, progress)
        if out.exists():
            out.rmdir()
        tmp.rename(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    summary.seconds = time.perf_counter() - started
    return summary


def _write(task: Task, plan: Plan, root: Path, summary: Summary,
           progress: Callable[[int, int], None] | None) -> None:
    names = _task_names(task.root)
    used = sorted({int(i) for ep in task for i in np.unique(ep.column("task_index").to_numpy())})
    unknown = [i for i in used if i not in names]
    if unknown:
        raise MappingError(f"{task.root}/meta/tasks.jsonl: no text for task_index {unknown}")
    remap = {old: new for new, old in enumerate(used)}

    data = tables.DataFiles(root)
    ep_rows, ep_stats, total = [], [], 0
    sizes: dict[str, tuple[int, int]] = {}   # camera -> (height, width) of its first episode
    try:
        for k, ep in enumerate(task.episodes):
            row, st = _episode(k, ep, plan, root, total, data, remap, names, sizes, summary)
            ep_rows.append(row)
            ep_stats.append(st)
            total += row["length"]
            if progress:
                progress(k + 1, len(task.episodes))
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


def _episode(k: int, ep: Episode, plan: Plan, root: Path, first: int, data: tables.DataFiles,
             remap: dict[int, int], names: dict[int, str], sizes: dict[str, tuple[int, int]],
             summary: Summary) -> tuple[dict, dict]:
    """LeRobot episode k from our episode ``ep``: its rows appended to the data files, its
    videos put in place; returns its episodes-table row and its stats."""
    rows = len(ep)
    values, missing = episode_values(ep, plan)
    for c in missing:
        summary.zero_filled.setdefault(c, []).append(ep.index)
    base = ep.read(["frame_index", "task_index"])
    frame_index = base.column("frame_index").to_numpy()
    if not np.array_equal(frame_index, np.arange(rows)):
        raise MappingError(f"{ep.data_path}: frame_index is not 0..{rows - 1}; run `egorec validate`")
    ours = base.column("task_index").to_numpy()
    table = tables.frame_table(episode_index=k, first_index=first, frame_index=frame_index, fps=plan.fps,
                               task_index=np.vectorize(remap.__getitem__, otypes=[np.int64])(ours), values=values,
                               source_episode=ep.index)
    data_chunk, data_file = data.append(table)
    st = {name: stats.vector_stats(table.column(name).to_numpy())
          for name in (*layout.DEFAULT_FEATURES, layout.PROVENANCE)}
    st.update({name: stats.vector_stats(v) for name, v in values.items()})
    row = {"episode_index": k, "tasks": [names[i] for i in np.unique(ours).tolist()], "length": rows,
           "data/chunk_index": data_chunk, "data/file_index": data_file,
           "dataset_from_index": first, "dataset_to_index": first + rows}
    chunk, file = layout.chunk_file(k)
    for key in plan.cameras:
        depth = key in plan.depth
        put = (videos.copy_depth if depth else videos.copy_video if summary.video == "copy"
               else videos.reencode_video)
        src = ep.video_path(key)
        if src is None:
            raise MappingError(f"episode {ep.index} has no video {key!r}; leave it out with --cameras "
                               f"(this episode has {', '.join(ep.video_keys) or 'no video'})")
        feature = IMAGE_PREFIX + key
        dst = root / layout.VIDEO_PATH.format(video_key=feature, chunk_index=chunk, file_index=file)
        put(src, dst, rows, plan.fps)
        size = videos.frame_size(dst)
        if sizes.setdefault(key, size) != size:
            raise MappingError(f"{src}: {size[1]}x{size[0]} but {sizes[key][1]}x{sizes[key][0]} in earlier "
                               "episodes; a LeRobot feature has one shape: export those episodes apart")
        st[feature] = (stats.depth_stats(videos.keyframe_sample(dst, depth=True), videos.DEPTH_LEVELS, rows) if depth
                       else stats.image_stats(videos.keyframe_sample(dst), rows))
        row |= {f"videos/{feature}/chunk_index": chunk, f"videos/{feature}/file_index": file,
                f"videos/{feature}/from_timestamp": 0.0, f"videos/{feature}/to_timestamp": rows / plan.fps}
    row |= {"meta/episodes/chunk_index": 0, "meta/episodes/file_index": 0}
    row |= {f"stats/{name}/{s}": np.asarray(v).tolist() for name, fs in st.items() for s, v in fs.items()}
    return row, st


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
