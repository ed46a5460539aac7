"""One episode being written: rows go to a background row sink, frames to background
encoders, both into the staging folder; ``end`` verifies and commits, ``abort``
frees the number. Created by ``TaskWriter.begin``."""
from __future__ import annotations

import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from egorec_ros.layout.numbering import EpisodeNumber
from egorec_ros.layout.paths import TaskPaths
from egorec_ros.layout.recycle import write_recycled
from egorec_ros.qa.episode import row_verdict
from egorec_ros.schema.columns import Layout
from egorec_ros.schema.episode_row import write_episode_row
from egorec_ros.store.commit import commit_staged
from egorec_ros.store.row_buffer import RowBuffer, RowError, check_row
from egorec_ros.store.row_sink import DATA_FILE, RowSink
from egorec_ros.store.staging import EPISODE_ROW, Manifest
from egorec_ros.store.videos import EpisodeVideos, VideoResult

FLUSH_ROWS = 60                 # a parquet row group every 2 s at 30 fps ...
FLUSH_BYTES = 64 * 1024 * 1024  # ... or sooner when rows are big (force matrices)
JOURNAL_SECONDS = 0.2           # rows reach the crash journal this often: with the videos' fragments
                                # cut at every frame, what a kill -9 can cost (issue 24: 0.5-1 s was
                                # lost with the journal at the row group and fragments at keyframes)


class EmptyEpisodeError(RuntimeError):
    """end() on an episode without rows; the number was recycled."""


@dataclass(frozen=True)
class EpisodeResult:
    number: EpisodeNumber
    rows: int
    data_path: Path
    video_paths: dict[str, Path]
    drop_stats: dict
    commit_seconds: float       # from end() to committed
    schema_rewrites: int
    staged: Path | None = None  # end(commit=False): the finished staging folder
    qa: dict | None = None      # the QA verdict stored in the episode row (egorec_ros.qa.verdict)
    qa_seconds: float = 0.0     # what computing it took (part of commit_seconds)


class EpisodeWriter:
    def __init__(self, paths: TaskPaths, number: EpisodeNumber, manifest: Manifest, videos: EpisodeVideos,
                 folder: Path, on_close: Callable[[], None], *, journal: bool = True,
                 meta_lock: threading.RLock | None = None) -> None:
        self.paths, self.number, self.manifest, self.folder = paths, number, manifest, folder
        self.decl = manifest.declaration
        self._specs = {c.name: c for c in self.decl.columns}
        self._videos = videos
        self._sink = RowSink(folder, self.decl.columns, journal=journal, group_rows=FLUSH_ROWS,
                             group_bytes=FLUSH_BYTES)
        # rows handed to the sink at a time: journaled ones a fifth of a second's worth, else a row group's
        self._flush_rows = max(1, int(self.decl.fps * JOURNAL_SECONDS)) if journal else FLUSH_ROWS
        self._buffer = RowBuffer(self.decl.columns)
        self._on_close = on_close
        self._meta_lock = meta_lock or threading.RLock()
        self._trajectories = [c.name for c in self.decl.columns if c.layout is Layout.LIST and c.width]
        self._stamped: dict[str, bool] = {}   # trajectory -> whether its points come with host stamps
        self.rows = 0
        self._accounted = 0   # rows as of the last accounting checkpoint
        self._closed = False
        # per-stream drop accounting so far (drop_stats shape), checkpointed with every row group
        self.accounting: Callable[[], Mapping] | None = None

    @property
    def index(self) -> int:
        return self.number.index

    @property
    def flushed_rows(self) -> int:
        """Rows in the crash journal: what `egorec recover --salvage` keeps if the process
        dies now (as far as the videos hold their frames too)."""
        return self._sink.rows

    @property
    def backlog(self) -> dict[str, int]:
        """Queued work: rows waiting for the row sink (in buffers) and frames per encoder."""
        return {"rows": self._sink.backlog, **self._videos.backlog}

    def append(self, row: Mapping[str, Any], frames: Mapping[str, Any] | None = None) -> None:
        """Add one row. ``row`` maps column -> value (None or missing = no sample); ``frames``
        maps every recorded video key to its frame for this row (ndarray or LazyFrame)."""
        self._check_open()
        check_row(row, self._specs)
        self._check_stamping(row)
        frames = frames or {}
        if frames.keys() != self._videos.keys:
            raise ValueError(f"row {self.rows}: frames for {sorted(frames)} but the episode records "
                             f"{sorted(self._videos.keys)}; every recorded stream needs its frame in every row")
        t = self.rows / self.decl.fps
        full = dict(row)
        full["episode_index"] = self.index
        full["frame_index"] = self.rows
        full["task_index"] = self.manifest.task_index
        full.setdefault("timestamp", t)
        full.setdefault("wall_time", self.manifest.created_at + t)
        full.setdefault("hardware_ns", 0)
        self._videos.submit(frames)
        self._buffer.append(full)
        self.rows += 1
        if self._buffer.rows >= self._flush_rows or self._buffer.nbytes >= FLUSH_BYTES:
            self._flush()

    def end(self, drop_stats: Mapping | None = None, *, commit: bool = True,
            frame_marks: Mapping | None = None) -> EpisodeResult:
        """Flush, verify frames == rows for every video, and commit. With ``commit=False``
        the finished episode stays staged, for ``TaskWriter.adopt`` into another task dir
        (parallel conversion: workers stage, one process commits). ``frame_marks``: where
        rows were repeated or late (``qa.frame_marks``), kept in the row."""
        self._check_open()
        started = time.perf_counter()
        if self.rows == 0:
            self.abort()
            raise EmptyEpisodeError(f"episode {self.index} has no rows; nothing was written and its number is recycled")
        self._closed = True
        try:
            self._flush(final=True)
            sink = self._sink.finish()
            if sink.rows != self.rows:
                raise RuntimeError(f"row sink wrote {sink.rows} rows, expected {self.rows}")
            videos = self._videos.close(self.rows)
            drops = dict(drop_stats or {})
            substituted = {k: {"frames": v.substituted, "reasons": list(v.reasons)}
                           for k, v in videos.items() if v.substituted}
            if substituted:
                drops["substituted_frames"] = substituted
            qa_started = time.perf_counter()
            feature_stats = sink.stats.to_json()
            qa = self._verdict(drops, videos, feature_stats)
            qa_seconds = time.perf_counter() - qa_started
            write_episode_row(self.folder / EPISODE_ROW,
                              self.manifest.episode_row(self.rows, sink.present, drops, feature_stats)
                              | {"qa": qa, "frame_marks": dict(frame_marks or {})})
            if commit:
                with self._meta_lock:
                    commit_staged(self.paths, self.folder)
        except BaseException as exc:
            raise RuntimeError(f"episode {self.index} could not be committed ({exc}); its data is kept in "
                               f"{self.folder}: run `egorec recover {self.paths.root}`") from exc
        finally:
            self._on_close()
        n, m, elapsed = self.number, self.manifest, time.perf_counter() - started
        if not commit:
            return EpisodeResult(n, self.rows, self.folder / DATA_FILE,
                                 {k: self.folder / m.video_file(k) for k in m.video_extensions},
                                 drops, elapsed, sink.schema_rewrites, staged=self.folder, qa=qa,
                                 qa_seconds=qa_seconds)
        return EpisodeResult(n, self.rows, self.paths.data(n),
                             {k: self.paths.video(n, k, e) for k, e in m.video_extensions.items()},
                             drops, elapsed, sink.schema_rewrites, qa=qa, qa_seconds=qa_seconds)

    def _verdict(self, drops: Mapping, videos: Mapping[str, VideoResult], feature_stats: Mapping) -> dict:
        """The QA verdict (egorec_ros.qa) for the row; a QA failure never costs the episode: the
        row then says why there is no verdict."""
        frames = {k: (v.kind, v.stats) for k, v in videos.items() if v.stats is not None}
        return row_verdict(self.folder / DATA_FILE, self.decl.fps, self.decl.qa, drops, frames, feature_stats)

    def abort(self) -> None:
        """Discard the episode on the user's request and free its number (§1.3)."""
        if self._closed:
            return
        self._closed = True
        try:
            self._sink.abort()
            self._videos.abort()
            shutil.rmtree(self.folder, ignore_errors=True)
            write_recycled(self.paths.recycled, self.index)
        finally:
            self._on_close()

    def _check_stamping(self, row: Mapping[str, Any]) -> None:
        """Points of one trajectory come with stamps in every row or in none (§8.1.3: an
        unknown stamp is 0); mixing would leave the _ns column out of lockstep."""
        for name in self._trajectories:
            if row.get(name) is not None:
                stamped = row.get(name + "_ns") is not None
                if self._stamped.setdefault(name, stamped) != stamped:
                    raise RowError(f"row {self.rows}: {name} points come {'with' if stamped else 'without'} "
                                   f"{name}_ns stamps, earlier rows {'without' if stamped else 'with'}; give 0 "
                                   "for a point whose host stamp is unknown (§8.1.3)")

    def _flush(self, final: bool = False) -> None:
        if self._buffer.rows:
            # the drop accounting beside the journal (two fsyncs) once a row group's worth of rows,
            # not with every journaled buffer
            due = self.accounting is not None and (final or self.rows - self._accounted >= FLUSH_ROWS)
            self._sink.put(self._buffer, self.accounting() if due and self.accounting else None)
            if due:
                self._accounted = self.rows
            self._buffer = RowBuffer(self.decl.columns)

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"episode {self.index} is already ended or aborted")
