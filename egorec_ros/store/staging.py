"""The staging folder of an episode in progress (a dot-folder in the task dir, so
readers ignore it, §8.2) and its manifest: everything needed to finish, salvage or
set aside the episode without the process that started it."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from egorec_ros.layout import atomic
from egorec_ros.schema.columns import Layout
from egorec_ros.schema.declaration import Declaration, declaration_from_json, declaration_to_json

MANIFEST = "manifest.json"
EPISODE_ROW = "episode.parquet"
ACCOUNTING = "drop_stats.json"   # per-stream accounting checkpointed with the journal, for a salvage
FRAME_MARKS = "frame_marks"       # its key holding the frame marks so far (the row's frame_marks, not drop_stats)


@dataclass(frozen=True)
class Manifest:
    episode_index: int
    task: str
    task_index: int
    task_name: str
    created_at: float
    declaration: Declaration
    video_extensions: dict[str, str]
    video_codec: dict

    def video_file(self, key: str) -> str:
        return f"{key}.{self.video_extensions[key]}"

    def without_videos(self, keys: list[str]) -> "Manifest":
        """This episode without the streams ``keys`` (a salvage leaves out a stream with no frame)."""
        decl = dataclasses.replace(self.declaration, videos=tuple(v for v in self.declaration.videos
                                                                  if v.key not in keys))
        return dataclasses.replace(self, declaration=decl,
                                   video_extensions={k: e for k, e in self.video_extensions.items() if k not in keys},
                                   video_codec={k: c for k, c in self.video_codec.items() if k not in keys})

    def episode_row(self, rows: int, present: list[str], drop_stats: dict, stats: dict) -> dict:
        """The §7 episode row of this episode once its rows are known."""
        decl = self.declaration
        present_set = set(present)
        matrices = {c.name: {"encoding": c.encoding, "scale": c.scale, "dtype": c.numpy_dtype}
                    for c in decl.columns if c.layout is Layout.MATRIX and c.name in present_set}
        return {
            "episode_index": self.episode_index,
            "task_index": self.task_index,
            "start_frame_index": 0,
            "end_frame_index": rows - 1,
            "length": rows,
            "created_at": self.created_at,
            "duration_sec": rows / decl.fps,
            "drop_stats": drop_stats,
            "video_codec": self.video_codec,
            "calibration": dict(decl.calibration),
            "force_matrix_specs": matrices,
            "slam_specs": {k: v for k, v in decl.slam_specs.items() if k in present_set},
            "stats": stats,
        }

    def write(self, folder: Path) -> None:
        atomic.write_json(folder / MANIFEST, {
            "episode_index": self.episode_index, "task": self.task, "task_index": self.task_index,
            "task_name": self.task_name,
            "created_at": self.created_at, "declaration": declaration_to_json(self.declaration),
            "video_extensions": self.video_extensions, "video_codec": self.video_codec,
        })

    @classmethod
    def read(cls, folder: Path) -> "Manifest":
        doc = atomic.read_json(Path(folder) / MANIFEST)
        return cls(doc["episode_index"], doc["task"], doc["task_index"], doc["task_name"], doc["created_at"],
                   declaration_from_json(doc["declaration"]), doc["video_extensions"], doc["video_codec"])
