"""The background half of the data parquet: Arrow conversion, the crash journal, the
parquet row groups and the feature statistics, on one thread off the caller's.

The parquet schema is the set of columns seen so far (§5.5 column-level sparsity).
When a column first appears after row groups were written, the file is rewritten
once with the new column defaulted in the earlier rows; it happens on this thread,
so the caller never waits, and in practice only in the first seconds. The thread runs
below the caller's priority, as the video encoders do (thread_priority.py).
"""
from __future__ import annotations

import queue
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from egorec_ros.layout import atomic
from egorec_ros.schema.columns import ColumnSpec, Layout
from egorec_ros.schema.stats import FeatureStats
from egorec_ros.store.journal import Journal
from egorec_ros.store.row_buffer import RowBuffer
from egorec_ros.store.staging import ACCOUNTING
from egorec_ros.thread_priority import lower_this_thread

DATA_FILE = "data.parquet"
EXTEND_FILE = "data.before-extend.parquet"  # the file while a new column is defaulted into it
MAX_PENDING_BUFFERS = 2  # flushed row buffers waiting for this thread before put() waits (bounded memory)


def parquet_options(specs: Sequence[ColumnSpec]) -> dict:
    """zstd everywhere (DESIGN); dictionaries only for the status strings; min/max
    statistics only for scalar columns, where readers can use them (on the big list
    columns they cost time and help nobody)."""
    return {
        "compression": "zstd",
        "use_dictionary": [c.name for c in specs if c.layout is Layout.STRING],
        "write_statistics": [c.name for c in specs if c.layout in (Layout.SCALAR, Layout.STRING)],
        "write_batch_size": 1 << 16,
    }


def matrices_by_row(table: pa.Table, columns: Sequence[ColumnSpec]) -> pa.Table:
    """``table`` with each force-matrix column cut into one chunk per row (zero-copy slices).

    Why: pyarrow's parquet writer builds the repetition and definition levels of a chunk in
    one buffer: 24 MB for a 64-row group of 187 500-value matrices, grown by copying and
    mapped fresh at every flush. One row at a time they are 375 kB and reused; the file holds
    the same rows, and the matrix columns take 9 % less parquet CPU at the recorder's 23-row
    groups (bench/bench_store.py section 4: 0.65 -> 0.59 s), 15-25 % at 64-row groups."""
    for c in columns:
        if c.layout is Layout.MATRIX and table.num_rows > 1:
            column = table.column(c.name)
            rows = pa.chunked_array([part.slice(i, 1) for part in column.chunks for i in range(len(part))],
                                    column.type)
            index = table.schema.get_field_index(c.name)
            table = table.set_column(index, table.schema.field(index), rows)
    return table


@dataclass
class SinkResult:
    path: Path
    rows: int
    present: list[str]
    stats: FeatureStats
    schema_rewrites: int


class RowSink:
    def __init__(self, folder: Path, columns: Sequence[ColumnSpec], *, journal: bool = True,
                 group_rows: int = 60, group_bytes: int = 64 * 1024 * 1024) -> None:
        """``journal=False``: no crash journal, for rows that can be rebuilt from their source.
        Every buffer put is journaled at once (what a crash keeps); parquet row groups collect
        buffers up to ``group_rows`` rows or ``group_bytes`` (RowBuffer.nbytes), so a journal
        kept a fraction of a second behind the rows does not make the data file's groups small."""
        self.folder = Path(folder)
        self.columns = tuple(columns)
        self.path = self.folder / DATA_FILE
        self.stats = FeatureStats()
        self.rows = 0
        self.schema_rewrites = 0
        self._seen: set[str] = {c.name for c in self.columns if c.always}
        self._present: list[ColumnSpec] = []
        self._writer: pq.ParquetWriter | None = None
        self._journal = Journal(self.folder) if journal else None
        self._group_limits = (group_rows, group_bytes)
        self._group: list[pa.Table] = []          # journaled tables waiting to become one row group
        self._group_present: list[ColumnSpec] = []
        self._group_rows = self._group_bytes = 0
        self._queue: queue.Queue[tuple[RowBuffer, Mapping | None] | None] = queue.Queue(maxsize=MAX_PENDING_BUFFERS)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=f"rows:{self.folder.name}", daemon=True)
        self._thread.start()

    @property
    def backlog(self) -> int:
        return self._queue.qsize()

    def put(self, buffer: RowBuffer, accounting: Mapping | None = None) -> None:
        """Queue rows; ``accounting`` (per-stream drop counts as of these rows) is checkpointed
        beside the journal once they are in it, so a salvaged episode keeps its drop_stats."""
        self._raise_if_failed()
        self._queue.put((buffer, accounting))

    def finish(self) -> SinkResult:
        self._queue.put(None)
        self._thread.join()
        self._raise_if_failed()
        return SinkResult(self.path, self.rows, [c.name for c in self._present], self.stats, self.schema_rewrites)

    def abort(self) -> None:
        self._queue.put(None)
        self._thread.join()

    def _raise_if_failed(self) -> None:
        if self._error is not None:
            raise RuntimeError(f"writing rows of {self.folder} failed: {self._error}") from self._error

    def _run(self) -> None:
        lower_this_thread()
        try:
            while (item := self._queue.get()) is not None:
                buffer, accounting = item
                self._write(buffer)
                if accounting is not None:
                    atomic.write_json(self.folder / ACCOUNTING, {"rows": self.rows, **accounting}, indent=None)
            self._write_group()
            if self._writer is not None:
                self._writer.close()
        except BaseException as exc:  # surfaced on the caller's next put/finish
            self._error = exc
            while self._queue.get() is not None:  # drain so put() never blocks
                pass
        finally:
            if self._journal is not None:
                self._journal.close()

    def _write(self, buffer: RowBuffer) -> None:
        self._seen |= buffer.seen
        present = [c for c in self.columns if c.name in self._seen]
        table = pa.Table.from_arrays([c.to_arrow(buffer.values[c.name]) for c in present],
                                     schema=_schema(present))
        if self._journal is not None:
            self._journal.write(table)
        self.rows += table.num_rows
        if self._group and len(present) != len(self._group_present):
            self._write_group()      # a new column: the tables before it are one group
        self._group.append(table)
        self._group_present = present
        self._group_rows += table.num_rows
        self._group_bytes += buffer.nbytes
        if self._group_rows >= self._group_limits[0] or self._group_bytes >= self._group_limits[1]:
            self._write_group()
        self._accumulate(buffer, present)

    def _write_group(self) -> None:
        """The collected tables as one parquet row group."""
        if not self._group:
            return
        present = self._group_present
        table = self._group[0] if len(self._group) == 1 else pa.concat_tables(self._group)
        self._group, self._group_rows, self._group_bytes = [], 0, 0
        writer = self._writer
        if writer is None:
            writer = self._open(present)
        elif len(present) != len(self._present):
            writer = self._extend(writer, present)
        writer.write_table(matrices_by_row(table, present), row_group_size=table.num_rows)

    def _open(self, present: list[ColumnSpec]) -> pq.ParquetWriter:
        self._present = present
        self._writer = writer = pq.ParquetWriter(self.path, _schema(present), **parquet_options(present))
        return writer

    def _extend(self, writer: pq.ParquetWriter, present: list[ColumnSpec]) -> pq.ParquetWriter:
        """Rewrite what is on disk with the new columns defaulted, row group by row group;
        ``writer`` (the file's) is closed, the new file's is returned."""
        writer.close()
        old = self.path.with_name(EXTEND_FILE)
        self.path.replace(old)
        extended = self._open(present)
        source = pq.ParquetFile(old)
        for i in range(source.num_row_groups):
            group = source.read_row_group(i)
            arrays = [group.column(c.name) if c.name in group.column_names else c.to_arrow([None] * group.num_rows)
                      for c in present]
            extended.write_table(pa.Table.from_arrays(arrays, schema=_schema(present)))
        old.unlink()
        self.schema_rewrites += 1
        return extended

    def _accumulate(self, buffer: RowBuffer, present: list[ColumnSpec]) -> None:
        for c in present:
            real_action = c.name == "action" and not c.extra.get("placeholder")
            if not c.declared or not (c.name.startswith("observation.") or real_action):
                continue
            vals = [v for v in buffer.values[c.name] if v is not None]
            if not vals:
                continue
            if c.layout is Layout.VECTOR:
                self.stats.add(c.name, np.stack([np.asarray(v, np.float32).reshape(-1) for v in vals]))
            elif c.layout is Layout.NESTED:
                self.stats.add(c.name, np.concatenate([np.asarray(v, np.float32).reshape(-1, c.width) for v in vals]))


def _schema(specs: Sequence[ColumnSpec]) -> pa.Schema:
    return pa.schema([pa.field(c.name, c.type) for c in specs])
