"""Crash journal of an episode's rows: Arrow IPC stream segments written beside the
staged parquet.

A parquet file is unreadable until its footer is written at close, so after a
kill -9 the staged ``data.parquet`` is lost; the journal is what ``egorec recover
--salvage`` reads back. An IPC stream is append-only and self-delimiting: every
batch written before the crash can be read, a torn last batch is detected and
dropped. A new segment starts whenever the episode's column set grows.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO, Sequence

import pyarrow as pa
import pyarrow.ipc as ipc

from egorec_ros.schema.columns import ColumnSpec

SEGMENT_GLOB = "journal-*.arrows"
# lz4: the cheapest codec here (zstd costs ~1.5x the CPU for half the bytes). One thread:
# Arrow's pool would compress the buffers of a batch in parallel, which only adds hand-offs
# on a machine whose cores the video encoders already keep busy.
_OPTIONS = ipc.IpcWriteOptions(compression="lz4", use_threads=False)


class Journal:
    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self._writer: ipc.RecordBatchStreamWriter | None = None
        self._file: BinaryIO | None = None
        self._schema: pa.Schema | None = None
        self._segments = 0

    def write(self, table: pa.Table) -> None:
        if self._schema is None or not table.schema.equals(self._schema):
            self._open_segment(table.schema)
        assert self._writer is not None and self._file is not None
        self._writer.write_table(table)
        self._file.flush()
        os.fsync(self._file.fileno())  # the journal is what survives a power loss

    def _open_segment(self, schema: pa.Schema) -> None:
        self.close()
        path = self.folder / f"journal-{self._segments:03d}.arrows"
        self._segments += 1
        self._file = open(path, "wb")
        self._writer = ipc.new_stream(self._file, schema, options=_OPTIONS)
        self._schema = schema

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            if self._file is not None:
                self._file.close()
            self._writer = self._file = None


def read_journal(folder: Path, columns: Sequence[ColumnSpec]) -> tuple[pa.Table | None, list[str]]:
    """All complete batches of all segments, in order, as one table over the union of
    their columns (declaration order, §5.5 defaults where a segment lacked a column).
    Returns (table or None if nothing was journaled, notes about torn data)."""
    notes: list[str] = []
    tables: list[pa.Table] = []
    for path in sorted(Path(folder).glob(SEGMENT_GLOB)):
        batches = []
        try:
            with open(path, "rb") as f:
                reader = ipc.open_stream(f)
                while True:
                    try:
                        batches.append(reader.read_next_batch())
                    except StopIteration:
                        break
            tables.append(pa.Table.from_batches(batches, schema=reader.schema))
        except (pa.ArrowInvalid, OSError, EOFError) as exc:
            if batches:
                tables.append(pa.Table.from_batches(batches))
            notes.append(f"{path.name}: torn after {len(batches)} complete batches ({exc})")
    if not tables:
        return None, notes
    present = {name for t in tables for name in t.column_names}
    specs = [c for c in columns if c.name in present]
    return pa.concat_tables([_with_columns(t, specs) for t in tables]), notes


def _with_columns(table: pa.Table, specs: Sequence[ColumnSpec]) -> pa.Table:
    n = table.num_rows
    arrays = [table.column(c.name) if c.name in table.column_names else c.to_arrow([None] * n) for c in specs]
    return pa.Table.from_arrays(arrays, schema=pa.schema([pa.field(c.name, c.type) for c in specs]))
