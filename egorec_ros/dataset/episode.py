"""One committed episode: columns by name, decoded force matrices and depth, video
frames aligned with rows, and trajectory points paired with their host times."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from egorec_ros.codecs import force_matrix as fm
from egorec_ros.codecs.depth import iter_depth_mm
from egorec_ros.codecs.probe import iter_frames
from egorec_ros.layout.numbering import EpisodeNumber
from egorec_ros.schema.episode_row import default_episode_row, read_episode_row

if TYPE_CHECKING:
    from egorec_ros.dataset.task import Task


@dataclass(frozen=True)
class Trajectory:
    """Points of one trajectory column, flattened over rows (§8.3)."""

    points: np.ndarray        # (N, 8) float64 [t, x, y, z, qx, qy, qz, qw], t on the sensor clock
    ns: np.ndarray | None     # (N,) int64 host time of each point, 0 = unknown; None if the column is absent
    row: np.ndarray           # (N,) int64 row (frame_index) each point was written in


class Episode:
    def __init__(self, task: "Task", number: EpisodeNumber) -> None:
        self.task, self.number = task, number

    @property
    def index(self) -> int:
        return self.number.index

    @property
    def data_path(self) -> Path:
        return self.task.paths.data(self.number)

    @cached_property
    def schema(self) -> pa.Schema:
        """This episode's own columns: the authority on what exists (§8.2.2)."""
        return pq.read_schema(self.data_path)

    @property
    def columns(self) -> list[str]:
        return list(self.schema.names)

    def has(self, column: str) -> bool:
        return column in self.schema.names

    @cached_property
    def row(self) -> dict:
        """The §7 episode row, JSON columns parsed; defaults if the row file is missing."""
        path = self.task.paths.episode_row(self.number)
        return read_episode_row(path) if path.exists() else default_episode_row(self.index)

    def row_or_default(self) -> tuple[dict, Exception | None]:
        """The row, or, when its file cannot be read, what a missing row file gives (every
        column's default) and the error; ``row`` then gives the defaults too. For tools that
        report a damaged file and go on (inspect, the HTML report); ``row`` raises instead."""
        try:
            return self.row, None
        except Exception as exc:   # torn, truncated, not parquet: the caller names it
            self.__dict__["row"] = default_episode_row(self.index)   # the cached_property's slot
            return self.row, exc

    def read(self, columns: Sequence[str] | None = None) -> pa.Table:
        if columns is not None:
            missing = [c for c in columns if not self.has(c)]
            if missing:
                raise KeyError(f"episode {self.index} has no column(s) {missing} (it has {self.columns})")
        return pq.read_table(self.data_path, columns=list(columns) if columns is not None else None)

    def column(self, name: str) -> pa.ChunkedArray:
        return self.read([name]).column(name)

    def __len__(self) -> int:
        return pq.ParquetFile(self.data_path).metadata.num_rows

    # ---- videos -------------------------------------------------------------------

    def video_path(self, key: str) -> Path | None:
        """The file of stream ``key`` in this episode, from video_extensions (§8.2.7)."""
        ext = self.task.video_extensions.get(key)
        if ext is None:
            return None
        p = self.task.paths.video(self.number, key, ext)
        return p if p.exists() else None

    @property
    def video_keys(self) -> list[str]:
        """Streams recorded in this episode (slots may change between episodes, §1.2.3)."""
        return [k for k in self.task.video_extensions if self.video_path(k) is not None]

    def is_depth(self, key: str) -> bool:
        return key not in self.task.info.get("cameras", {})

    def frames(self, key: str) -> Iterator[np.ndarray]:
        """RGB frames (HxWx3 uint8), or depth in mm (HxW uint16, 0 = invalid) for depth slots."""
        path = self.video_path(key)
        if path is None:
            raise KeyError(f"episode {self.index} has no video {key!r} (has {self.video_keys})")
        return iter_depth_mm(path) if self.is_depth(key) else iter_frames(path)

    def rows_with_frames(self, keys: Sequence[str] | None = None,
                         columns: Sequence[str] | None = None) -> Iterator[tuple[dict, dict[str, np.ndarray]]]:
        """(row, {key: frame}) in row order: frame i of every stream belongs to row i.
        ``columns=None``: every column but the force matrices (read those with force_matrices)."""
        keys = list(keys) if keys is not None else self.video_keys
        if columns is None:  # force matrices are 187,500 values a row: ask for them by name
            columns = [c for c in self.columns if not c.endswith("_force_matrix")]
        table = self.read(columns)
        streams = {k: self.frames(k) for k in keys}
        for i, row in enumerate(table.to_pylist()):
            frames = {}
            for k, it in streams.items():
                try:
                    frames[k] = next(it)
                except StopIteration:
                    raise ValueError(f"episode {self.index}: video {k!r} ends at frame {i} but the "
                                     f"episode has {table.num_rows} rows") from None
            yield row, frames

    # ---- force matrices ---------------------------------------------------------------

    def force_matrix_spec(self, column: str) -> tuple[str, float]:
        """(encoding, scale): episode row first, then info features, then 1 (§7.3, §8.2.6)."""
        feature = self.task.features.get(column, {})
        spec = self.row["force_matrix_specs"].get(column, {})
        encoding = spec.get("encoding") or feature.get("encoding") or fm.ROW_DIFF_QUANTIZED
        scale = spec.get("scale", feature.get("scale", 1)) or 1
        return encoding, float(scale)

    def force_matrices(self, column: str) -> tuple[np.ndarray, np.ndarray]:
        """(rows with a sample, matrices (n, 250, 250, 3) float32 mN) of one column."""
        encoding, scale = self.force_matrix_spec(column)
        col = self.column(column).combine_chunks()
        lengths = col.value_lengths().to_numpy(zero_copy_only=False)
        rows = np.flatnonzero(lengths)
        bad = lengths[rows] != fm.FLAT
        if bad.any():
            raise ValueError(f"episode {self.index} {column}: row {rows[bad][0]} holds {lengths[rows][bad][0]} "
                             f"values, expected {fm.FLAT} or 0")
        flat = col.flatten().to_numpy(zero_copy_only=False)
        return rows, fm.decode(flat.reshape(len(rows), fm.FLAT), encoding, scale)

    # ---- trajectories -------------------------------------------------------------------

    def trajectory_columns(self) -> list[str]:
        """Every trajectory of this episode, by suffix (never a hard-coded name, §8.2.3)."""
        return sorted(c for c in self.columns if c.endswith("slam_trajectory"))

    def slam_spec(self, column: str) -> dict:
        """Frame/time/owner of a trajectory: episode row first, then info (§7.3); no
        frame key means the old frame (§8.2.5)."""
        spec = self.row["slam_specs"].get(column) or self.task.features.get(column, {})
        return {"frame": "right_forward_up", **spec}

    def trajectory(self, column: str) -> Trajectory:
        col = self.column(column).combine_chunks()
        counts = col.value_lengths().to_numpy(zero_copy_only=False)
        if np.any(counts % 8):
            raise ValueError(f"episode {self.index} {column}: a row holds a number of values not divisible by 8")
        points = col.flatten().to_numpy(zero_copy_only=False).reshape(-1, 8)
        row = np.repeat(np.arange(len(counts)), counts // 8)
        ns = None
        if self.has(column + "_ns"):
            ns_col = self.column(column + "_ns").combine_chunks()
            if not np.array_equal(ns_col.value_lengths().to_numpy(zero_copy_only=False), counts // 8):
                raise ValueError(f"episode {self.index}: {column}_ns is not in lockstep with {column}")
            ns = ns_col.flatten().to_numpy(zero_copy_only=False).astype(np.int64)
        return Trajectory(points, ns, row)
