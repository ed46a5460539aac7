"""One LeRobot episode from one of ours: everything an export does per episode except what
depends on the episodes before it (which data file its rows go to, whether its camera sizes
match episode 0's). So it runs in the exporting process, a local worker or a Ray task alike:
its videos go straight to their place in the dataset folder (frames never leave the
process), the rest comes back as an ``EpisodePart`` for the exporter to assemble in order."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from egorec_ros.dataset import Episode
from egorec_ros.export.lerobot import layout, stats, tables, videos
from egorec_ros.export.lerobot.mapping import IMAGE_PREFIX, MappingError, Plan, episode_values

# the episodes-table columns only the assembly knows; a part's row holds None there (in place,
# so the column order is the serial export's)
DATA_FILE_KEYS = ("data/chunk_index", "data/file_index")


@dataclass(frozen=True)
class Shared:
    """What every episode of one export needs: picklable, sent once a task."""

    plan: Plan
    video: str                    # copy | reencode
    remap: dict[int, int]         # our task_index -> LeRobot's
    names: dict[int, str]         # our task_index -> its text


@dataclass
class EpisodePart:
    k: int                                  # LeRobot episode index (0-based)
    source: int                             # our episode number
    table: pa.Table                         # its data rows
    row: dict                               # its episodes-table row (DATA_FILE_KEYS still None)
    stats: dict[str, dict[str, np.ndarray]]
    sizes: dict[str, tuple[int, int]]       # camera -> (height, width)
    missing: list[str]                      # columns it lacked (zero-filled)
    videos: list[str]                       # its video files, relative to the dataset folder


def episode_part(ep: Episode, k: int, first: int, shared: Shared, root: Path) -> EpisodePart:
    """LeRobot episode k (its rows are ``first``.. of the dataset) from our episode ``ep``;
    its videos are written under ``root``."""
    plan, rows = shared.plan, len(ep)
    values, missing = episode_values(ep, plan)
    base = ep.read(["frame_index", "task_index"])
    frame_index = base.column("frame_index").to_numpy()
    if not np.array_equal(frame_index, np.arange(rows)):
        raise MappingError(f"{ep.data_path}: frame_index is not 0..{rows - 1}; run `egorec validate`")
    ours = base.column("task_index").to_numpy()
    table = tables.frame_table(episode_index=k, first_index=first, frame_index=frame_index, fps=plan.fps,
                               task_index=np.vectorize(shared.remap.__getitem__, otypes=[np.int64])(ours),
                               values=values, source_episode=ep.index)
    st = {name: stats.vector_stats(table.column(name).to_numpy())
          for name in (*layout.DEFAULT_FEATURES, layout.PROVENANCE)}
    st.update({name: stats.vector_stats(v) for name, v in values.items()})
    row: dict = {"episode_index": k, "tasks": [shared.names[i] for i in np.unique(ours).tolist()], "length": rows,
                 **dict.fromkeys(DATA_FILE_KEYS), "dataset_from_index": first, "dataset_to_index": first + rows}
    chunk, file = layout.chunk_file(k)
    sizes: dict[str, tuple[int, int]] = {}
    written: list[str] = []
    for key in plan.cameras:
        depth = key in plan.depth
        put = (videos.copy_depth if depth else videos.copy_video if shared.video == "copy"
               else videos.reencode_video)
        src = ep.video_path(key)
        if src is None:
            raise MappingError(f"episode {ep.index} has no video {key!r}; leave it out with --cameras "
                               f"(this episode has {', '.join(ep.video_keys) or 'no video'})")
        feature = IMAGE_PREFIX + key
        rel = layout.VIDEO_PATH.format(video_key=feature, chunk_index=chunk, file_index=file)
        put(src, root / rel, rows, plan.fps)
        written.append(rel)
        sizes[key] = videos.frame_size(root / rel)
        st[feature] = (stats.depth_stats(videos.keyframe_sample(root / rel, depth=True), videos.DEPTH_LEVELS, rows)
                       if depth else stats.image_stats(videos.keyframe_sample(root / rel), rows))
        row |= {f"videos/{feature}/chunk_index": chunk, f"videos/{feature}/file_index": file,
                f"videos/{feature}/from_timestamp": 0.0, f"videos/{feature}/to_timestamp": rows / plan.fps}
    row |= {"meta/episodes/chunk_index": 0, "meta/episodes/file_index": 0}
    row |= {f"stats/{name}/{s}": np.asarray(v).tolist() for name, fs in st.items() for s, v in fs.items()}
    return EpisodePart(k, ep.index, table, row, st, sizes, missing, written)
