"""Cost of the data parquet path: append + commit of an Appendix B episode without video.

    .venv/bin/python bench/bench_store.py [--seconds 60] [--pool 10] [--keep DIR]

Rows come from the simulated Appendix B rig through the real assembler (two grippers
with two 250x250x3 force matrices each at 30 fps, ~45 MB/s of int16 once encoded,
plus gloves, IMU, forces and three SLAM trajectories). ``--pool`` seconds of rows are
simulated before timing and cycled to make ``--seconds`` of episode.

1. Timed: every append, then (once the row sink caught up, as it does while recording
   in real time) ``end()`` up to the committed episode. CPU is user + system time of
   the whole process (all threads).
2. The same rows as one Arrow table through plain ``pq.write_table`` (zstd).
3. What the row sink does per row group, step by step, on one thread (first 20 s).
4. Parquet writer options on the force matrix columns of the first 5 s (A/B, median
   and best of ``--rounds`` interleaved rounds).
5. The same matrix values stored other ways than §4.6's ``list<int16>`` (for a decision
   on the layout, not options we could take): one ``binary`` value a row (the int16
   bytes), and zstd of the bytes without parquet (the floor any column type shares).
"""
from __future__ import annotations

import argparse
import dataclasses
import io
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import zstandard

from egorec_ros.assembly.assembler import Assembler
from egorec_ros.rig.declare import declaration
from egorec_ros.rig.load import load_rig
from egorec_ros.rig.resize import with_video_sizes
from egorec_ros.schema.columns import Layout
from egorec_ros.schema.declaration import Declaration
from egorec_ros.sim.replay import DEFAULT_START_NS, simulate
from egorec_ros.store import TaskWriter
from egorec_ros.store.episode_writer import FLUSH_BYTES, FLUSH_ROWS
from egorec_ros.store.journal import Journal
from egorec_ros.store.row_sink import matrices_by_row, parquet_options

OPTION_VARIANTS: dict[str, dict] = {   # changes to parquet_options() tried on the matrix columns
    "parquet_options() as shipped": {},
    "data_page_version 2.0": {"data_page_version": "2.0"},
    "lz4 instead of zstd": {"compression": "lz4"},
    "zstd level 3": {"compression_level": 3},
    "byte_stream_split": {"use_byte_stream_split": True},
    "DELTA_BINARY_PACKED": {"column_encoding": "DELTA_BINARY_PACKED", "use_dictionary": False},
    "data_page_size 8 MB": {"data_page_size": 8 << 20},
    "default write_batch_size": {"write_batch_size": None},
    "non-nullable list items": {"non_nullable_items": True},
    "row-group chunks (old way)": {"whole_groups": True},   # without matrices_by_row
    "zstd level -1": {"compression_level": -1},
    "data_page_size 16 MB": {"data_page_size": 16 << 20},
    "write_batch_size 1 M": {"write_batch_size": 1 << 20},
    "system memory pool": {"memory_pool": pa.system_memory_pool()},
}


class RowCapture:
    """An assembler output that keeps the row values and drops the frames."""

    def __init__(self) -> None:
        self.rows: list[dict] = []

    def begin(self, video_keys: list[str]) -> None:
        pass

    def row(self, values: dict, frames: dict) -> None:
        self.rows.append({k: v for k, v in values.items() if k not in ("timestamp", "wall_time")})


def simulated_rows(seconds: float) -> tuple[list[dict], Declaration]:
    rig = with_video_sizes(load_rig("appendix_b"), (64, 48))   # pictures are dropped: make them cheap
    capture = RowCapture()
    assembler = Assembler(rig, capture, start_ns=DEFAULT_START_NS)
    for sample in simulate(rig, seconds + 0.5, seed=1):
        assembler.push(sample)
    assembler.finish(DEFAULT_START_NS + int(seconds * 1e9))
    return capture.rows, dataclasses.replace(declaration(rig), videos=())


def episode_rows(pool: list[dict], n: int, fps: float) -> Iterator[dict]:
    """``n`` rows cycling through ``pool``; hardware_ns keeps increasing."""
    period = int(len(pool) * 1e9 / fps)
    for i in range(n):
        cycle, row = divmod(i, len(pool))
        values = pool[row]
        yield values if cycle == 0 else {**values, "hardware_ns": values["hardware_ns"] + cycle * period}


def cpu_of(fn: Callable[[], object]) -> tuple[float, float, float]:
    """(CPU s, of which in the kernel, wall s) of ``fn``, for the whole process."""
    before, wall = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    fn()
    after = resource.getrusage(resource.RUSAGE_SELF)
    user, system = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
    return user + system, system, time.perf_counter() - wall


def timed_episode(root: Path, pool: list[dict], decl: Declaration, n: int) -> dict:
    marks: dict = {}

    def record() -> None:
        with TaskWriter(root) as writer:
            episode = writer.begin(decl)
            start = time.perf_counter()
            for row in episode_rows(pool, n, decl.fps):
                episode.append(row)
            marks["append"] = time.perf_counter() - start
            while episode.backlog["rows"]:
                time.sleep(0.002)   # as in real time: at stop, one group in flight and one partial at most
            marks["drain"] = time.perf_counter() - start - marks["append"]
            marks["result"] = episode.end()

    marks["cpu"], marks["kernel"], marks["wall"] = cpu_of(record)
    return marks


def row_groups(pool: list[dict], decl: Declaration, n: int, present: list[str]) -> list[pa.Table]:
    specs = [c for c in decl.columns if c.name in present]
    schema = pa.schema([pa.field(c.name, c.type) for c in specs])
    rows = list(episode_rows(pool, n, decl.fps))
    size = group_rows(pool)
    return [pa.Table.from_arrays([c.to_arrow([r.get(c.name) for r in rows[i:i + size]]) for c in specs], schema=schema)
            for i in range(0, n, size)]


def plain_write(groups: list[pa.Table], path: Path) -> tuple[float, float]:
    """(CPU s, wall s) of pq.write_table with default options + zstd, the rows as one table."""
    table = pa.concat_tables(groups).combine_chunks()
    cpu, _, wall = cpu_of(lambda: pq.write_table(table, path, compression="zstd"))
    return cpu, wall


def group_rows(pool: list[dict]) -> int:
    """Rows per row group as EpisodeWriter flushes them (by count or by bytes)."""
    per_row = np.mean([sum(v.nbytes for v in r.values() if isinstance(v, np.ndarray)) for r in pool])
    return int(min(FLUSH_ROWS, np.ceil(FLUSH_BYTES / per_row)))


def breakdown(pool: list[dict], decl: Declaration, n: int, present: list[str],
              groups: list[pa.Table]) -> list[tuple[str, float, float]]:
    """(step, CPU s, kernel s) of each step the row sink takes for ``n`` rows, on one thread."""
    specs = [c for c in decl.columns if c.name in present]
    rows = list(episode_rows(pool, n, decl.fps))
    size = group_rows(pool)

    def convert(kinds: set[Layout]) -> None:
        for i in range(0, n, size):
            for c in specs:
                if c.layout in kinds:
                    c.to_arrow([r.get(c.name) for r in rows[i:i + size]])

    def journal() -> None:
        with tempfile.TemporaryDirectory() as folder:
            writer = Journal(Path(folder))
            for t in groups:
                writer.write(t)
            writer.close()

    def parquet() -> None:
        with pq.ParquetWriter(io.BytesIO(), groups[0].schema, **parquet_options(specs)) as w:
            for t in groups:
                w.write_table(matrices_by_row(t, specs), row_group_size=t.num_rows)

    steps = [("to_arrow: force matrices (encode)", lambda: convert({Layout.MATRIX})),
             ("to_arrow: all other columns", lambda: convert(set(Layout) - {Layout.MATRIX})),
             ("journal (Arrow IPC, lz4, fsync)", journal),
             ("parquet row groups (parquet_options)", parquet)]
    return [(label, *cpu_of(fn)[:2]) for label, fn in steps]


def option_variants(groups: list[pa.Table], decl: Declaration, rounds: int = 3) -> dict[str, tuple[float, float, int]]:
    """(median, best) CPU s of ``rounds`` runs and bytes of writing only the force matrix columns."""
    names = [c for c in groups[0].column_names if c.endswith("_force_matrix")]
    specs = [decl.column(c) for c in names]
    plain = [t.select(names) for t in groups]
    item = pa.field("element", pa.int16(), nullable=False)
    required = pa.schema([pa.field(c, pa.list_(item)) for c in names])
    strict = [pa.Table.from_arrays([col.cast(required.field(c).type) for c, col in zip(names, t.columns)],
                                   schema=required) for t in plain]
    runs: dict[str, list[float]] = {k: [] for k in OPTION_VARIANTS}
    sizes: dict[str, int] = {}
    for _ in range(rounds):
        for label, change in OPTION_VARIANTS.items():
            change = dict(change)
            tables = strict if change.pop("non_nullable_items", False) else plain
            if not change.pop("whole_groups", False):
                tables = [matrices_by_row(t, specs) for t in tables]
            options = {k: v for k, v in {**parquet_options(specs), **change}.items() if v is not None}
            buf = io.BytesIO()

            def write() -> None:
                with pq.ParquetWriter(buf, tables[0].schema, **options) as w:  # noqa: B023 (called at once)
                    for t in tables:  # noqa: B023
                        w.write_table(t, row_group_size=t.num_rows)
            runs[label].append(cpu_of(write)[0])
            sizes[label] = len(buf.getvalue())
    return {k: (float(np.median(v)), min(v), sizes[k]) for k, v in runs.items()}


def column_types(groups: list[pa.Table], decl: Declaration, rounds: int = 3) -> dict[str, tuple[float, float, int]]:
    """(median, best) CPU s and bytes of the force matrix values stored as other column types."""
    names = [c for c in groups[0].column_names if c.endswith("_force_matrix")]
    specs = [decl.column(c) for c in names]
    lists = [matrices_by_row(t.select(names), specs) for t in groups]

    def row_bytes(column: pa.ChunkedArray) -> pa.Array:   # one binary value a row: the row's int16 bytes
        return pa.array([v.values.to_numpy().tobytes() if v.is_valid else None for v in column], pa.binary())

    binary = [pa.Table.from_arrays([row_bytes(col) for col in t.select(names).columns], names=names) for t in groups]
    raw = [b for t in binary for col in t.columns for b in col.to_pylist() if b is not None]
    tables = {"list<int16> (§4.6, as shipped)": lists, "binary, int16 bytes a row": binary}
    no_parquet = "zstd of the bytes, no parquet"
    compressor = zstandard.ZstdCompressor(level=1)       # Arrow's default zstd level
    runs: dict[str, list[float]] = {k: [] for k in [*tables, no_parquet]}
    sizes: dict[str, int] = {}

    def write(label: str) -> None:
        buf = io.BytesIO()
        with pq.ParquetWriter(buf, tables[label][0].schema, compression="zstd", use_dictionary=False,
                              write_statistics=False, write_batch_size=1 << 16) as w:
            for t in tables[label]:
                w.write_table(t, row_group_size=t.num_rows)
        sizes[label] = len(buf.getvalue())

    def compress() -> None:
        sizes[no_parquet] = sum(len(compressor.compress(b)) for b in raw)

    for _ in range(rounds):
        for label in tables:
            runs[label].append(cpu_of(lambda: write(label))[0])  # noqa: B023 (called at once)
        runs[no_parquet].append(cpu_of(compress)[0])
    return {k: (float(np.median(v)), min(v), sizes[k]) for k, v in runs.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=60.0, help="episode length (default 60)")
    parser.add_argument("--pool", type=float, default=10.0, help="seconds of simulated rows to cycle (default 10)")
    parser.add_argument("--keep", type=Path, help="write the task dir here and keep it")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds of the option A/B (default 3)")
    args = parser.parse_args()
    secs = args.seconds

    t0 = time.perf_counter()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    pool, decl = simulated_rows(min(args.pool, secs))
    n = int(round(secs * decl.fps))
    matrices = sum(1 for r in pool for k, v in r.items() if k.endswith("_force_matrix") and v is not None)
    print(f"simulated {len(pool)} rows in {time.perf_counter() - t0:.1f} s ({matrices / len(pool):.2f} force "
          f"matrices per row); episode: {n} rows = {secs:g} s; row groups of {group_rows(pool)} rows")

    def share(cpu: float) -> str:
        return f"{100 * cpu / secs:5.1f} % of one core"

    root = args.keep or Path(tempfile.mkdtemp(prefix="bench_store_"))
    try:
        ours = timed_episode(root / "task", pool, decl, n)
        result = ours["result"]
        present = pq.read_schema(result.data_path).names
        print(f"\n1. append + commit: {result.rows} rows, {len(present)} columns, data parquet "
              f"{result.data_path.stat().st_size / 1e6:.1f} MB")
        print(f"   CPU (all threads)     {ours['cpu']:6.2f} s = {share(ours['cpu'])} (target < 10 %); "
              f"{ours['kernel']:.2f} s of it in the kernel")
        print(f"   wall                  {ours['wall']:6.2f} s = {100 * ours['wall'] / secs:5.1f} % of real time "
              f"(appends {ours['append']:.2f} s, sink catching up {ours['drain']:.2f} s)")
        print(f"   stop -> committed     {result.commit_seconds:6.3f} s (target < 1 s)")

        groups = row_groups(pool, decl, n, present)
        plain_path = root / "plain.parquet"
        plain_cpu, plain_wall = plain_write(groups, plain_path)
        print(f"\n2. plain pq.write_table(zstd), same rows as one table: CPU {plain_cpu:.2f} s = {share(plain_cpu)}, "
              f"wall {plain_wall:.2f} s, {plain_path.stat().st_size / 1e6:.1f} MB")
        print(f"   ours / plain CPU = {ours['cpu'] / plain_cpu:.2f}")

        head = groups[:max(1, int(np.ceil(20 * decl.fps / group_rows(pool))))]
        head_rows = sum(t.num_rows for t in head)
        print(f"\n3. the row sink's steps for the first {head_rows / decl.fps:.0f} s, one thread:")
        for label, cpu, kernel in breakdown(pool, decl, head_rows, present, head):
            print(f"   {label:40s} {cpu:6.2f} s = {100 * cpu * decl.fps / head_rows:5.1f} % of one core  "
                  f"(kernel {kernel:.2f} s)")

        sample = groups[:max(1, int(np.ceil(5 * decl.fps / group_rows(pool))))]
        sample_s = sum(t.num_rows for t in sample) / decl.fps
        print(f"\n4. parquet options, force matrix columns of the first {sample_s:.0f} s only "
              f"(median / best of {args.rounds}, load average {os.getloadavg()[0]:.1f}):")
        for label, (cpu, low, size) in option_variants(sample, decl, args.rounds).items():
            print(f"   {label:30s} {cpu:6.2f} s / {low:5.2f} s = {100 * cpu / sample_s:5.1f} % of one core  "
                  f"{size / 1e6:6.1f} MB")

        print(f"\n5. the same force matrix values as other column types than §4.6's, first {sample_s:.0f} s, "
              f"zstd, no dictionary, no statistics (median / best of {args.rounds}):")
        for label, (cpu, low, size) in column_types(sample, decl, args.rounds).items():
            print(f"   {label:34s} {cpu:6.2f} s / {low:5.2f} s = {100 * cpu / sample_s:5.1f} % of one core  "
                  f"{size / 1e6:6.1f} MB")
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
