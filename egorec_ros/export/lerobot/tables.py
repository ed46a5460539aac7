"""The parquet files of a LeRobot v3 dataset: per-frame data (several episodes a file,
a new file past data_files_size_in_mb), the episodes table, and tasks.parquet."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from egorec_ros.export.lerobot import layout


def frame_table(*, episode_index: int, first_index: int, frame_index: np.ndarray, task_index: np.ndarray,
                fps: int, values: dict[str, np.ndarray], source_episode: int) -> pa.Table:
    """One episode's rows: LeRobot's default columns, the features as fixed-size float32
    lists (what ``datasets.Sequence(length=D)`` reads back), then our provenance column
    (``source_episode`` on every row)."""
    n = len(frame_index)
    cols = {
        "timestamp": pa.array((frame_index / fps).astype(np.float32)),
        "frame_index": pa.array(frame_index.astype(np.int64)),
        "episode_index": pa.array(np.full(n, episode_index, np.int64)),
        "index": pa.array(np.arange(first_index, first_index + n, dtype=np.int64)),
        "task_index": pa.array(task_index.astype(np.int64)),
    }
    for name, v in values.items():
        cols[name] = pa.FixedSizeListArray.from_arrays(pa.array(v.reshape(-1).astype(np.float32)), v.shape[1])
    cols[layout.PROVENANCE] = pa.array(np.full(n, source_episode, np.int64))
    return pa.table(cols)


class DataFiles:
    """Appends episode tables to data/chunk-XXX/file-YYY.parquet, starting a new file once
    the current one holds ``limit_mb`` of (uncompressed) rows."""

    def __init__(self, root: Path, limit_mb: float = layout.DATA_FILES_SIZE_IN_MB) -> None:
        self.root, self.limit = root, limit_mb * 1024 * 1024
        self.n, self.size = 0, 0
        self.writer: pq.ParquetWriter | None = None

    def append(self, table: pa.Table) -> tuple[int, int]:
        """(chunk_index, file_index) of the file the episode went into."""
        if self.writer is not None and self.size >= self.limit:
            self.close()
            self.n += 1
        if self.writer is None:
            chunk, file = layout.chunk_file(self.n)
            path = self.root / layout.DATA_PATH.format(chunk_index=chunk, file_index=file)
            path.parent.mkdir(parents=True, exist_ok=True)
            self.writer, self.size = pq.ParquetWriter(path, table.schema, compression="snappy"), 0
        self.writer.write_table(table)
        self.size += table.nbytes
        return layout.chunk_file(self.n)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


def write_episodes(root: Path, rows: list[dict]) -> Path:
    """meta/episodes/chunk-000/file-000.parquet: one row per episode, in episode order
    (LeRobot indexes this table by position)."""
    path = root / layout.EPISODES_PATH.format(chunk_index=0, file_index=0)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path, compression="snappy")
    return path


def write_tasks(root: Path, tasks: list[str]) -> Path:
    """meta/tasks.parquet as lerobot 0.6 writes it with pandas,
    ``DataFrame({"task_index": ...}, index=pd.Index(tasks, name="task"))``: LeRobot reads it
    with pandas and names a row's task by its index label."""
    name = layout.TASKS_INDEX
    table = pa.table({"task_index": pa.array(np.arange(len(tasks), dtype=np.int64)),
                      name: pa.array(tasks, pa.string())})
    meta = {"index_columns": [name],
            "column_indexes": [{"name": None, "field_name": None, "pandas_type": "unicode",
                                "numpy_type": "object", "metadata": {"encoding": "UTF-8"}}],
            "columns": [{"name": "task_index", "field_name": "task_index", "pandas_type": "int64",
                         "numpy_type": "int64", "metadata": None},
                        {"name": name, "field_name": name, "pandas_type": "unicode",
                         "numpy_type": "object", "metadata": None}],
            "attributes": {}, "creator": {"library": "pyarrow", "version": pa.__version__}, "pandas_version": "2.3.3"}
    table = table.replace_schema_metadata({b"pandas": json.dumps(meta).encode()})
    path = root / layout.TASKS_PATH
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    return path
