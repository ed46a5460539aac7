"""Giving a staged episode another number or task index before it is committed.

Only needed when a conversion worker's provisional number turns out wrong (an earlier
episode failed), so rewriting the data parquet here is the rare path, not the common one.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from egorec_ros.layout import atomic
from egorec_ros.schema.episode_row import EPISODE_COLUMNS, OPTIONAL_JSON_COLUMNS, read_episode_row, write_episode_row
from egorec_ros.store.row_sink import DATA_FILE, parquet_options
from egorec_ros.store.staging import EPISODE_ROW, Manifest


def restamp_staged(folder: Path, *, episode_index: int, task_index: int, task_name: str) -> None:
    manifest = Manifest.read(folder)
    if (manifest.episode_index, manifest.task_index) != (episode_index, task_index):
        _rewrite_data(folder / DATA_FILE, manifest, episode_index, task_index)
        row = read_episode_row(folder / EPISODE_ROW)
        row.update(episode_index=episode_index, task_index=task_index)
        write_episode_row(folder / EPISODE_ROW, {k: v for k, v in row.items()
                                                     if k in EPISODE_COLUMNS or k in OPTIONAL_JSON_COLUMNS})
    dataclasses.replace(manifest, episode_index=episode_index, task_index=task_index,
                        task_name=task_name).write(folder)


def _rewrite_data(path: Path, manifest: Manifest, episode_index: int, task_index: int) -> None:
    source = pq.ParquetFile(path)
    names = source.schema_arrow.names
    specs = [c for c in manifest.declaration.columns if c.name in names]
    with atomic.atomic_path(path) as tmp, pq.ParquetWriter(tmp, source.schema_arrow,
                                                           **parquet_options(specs)) as writer:
        for i in range(source.num_row_groups):
            group = source.read_row_group(i)
            n = group.num_rows
            for name, value in (("episode_index", episode_index), ("task_index", task_index)):
                group = group.set_column(names.index(name), name, pa.array(np.full(n, value, np.int64)))
            writer.write_table(group)
