"""`egorec recover`: what to do with episodes staged by a run that did not finish.

* commit point passed (data file in place): finish the commit (roll forward);
* ``end()`` had finished (stopped and verified, episode row written) but the commit
  stopped before its commit point: commit it whole — the recording was complete;
* otherwise (interrupted while recording), by default: set the staged data aside under
  ``.set_aside/`` and recycle the number — the spec's rule for aborted episodes (§1.3);
* with ``salvage``: keep the rows the journal holds and the frames the videos hold,
  cut to the shorter, and commit them as a complete, valid episode.

Nothing is deleted: set-aside data stays on disk for a human to look at.
"""
from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from egorec_ros.codecs.probe import count_frames, trim_video
from egorec_ros.errors import UserError
from egorec_ros.layout import atomic
from egorec_ros.layout.lock import TaskLock
from egorec_ros.layout.paths import META, SET_ASIDE, TaskPaths
from egorec_ros.layout.recycle import write_recycled
from egorec_ros.schema.columns import ColumnSpec, Layout
from egorec_ros.qa.episode import row_verdict
from egorec_ros.qa.frame_marks import cut
from egorec_ros.schema.episode_row import read_episode_row, write_episode_row
from egorec_ros.schema.stats import FeatureStats
from egorec_ros.store import metadata
from egorec_ros.store.commit import commit_staged
from egorec_ros.store.journal import read_journal
from egorec_ros.store.row_sink import DATA_FILE, EXTEND_FILE, parquet_options
from egorec_ros.store.staging import ACCOUNTING, EPISODE_ROW, FRAME_MARKS, MANIFEST, Manifest


class NotATaskError(UserError, ValueError):
    """``recover`` was given a folder that does not exist or holds no task."""


@dataclass(frozen=True)
class StagedEpisode:
    episode_index: int
    folder: Path
    committed: bool          # the data file is in place: only metadata is missing
    journal_rows: int | None
    video_frames: dict[str, int]
    finished: bool = False   # end() had verified everything; the commit stopped before its commit point
    complete: bool = False   # recorded to the end and verified, but killed before its episode row was written

    def describe(self) -> str:
        if self.committed:
            return f"episode {self.episode_index}: committed, metadata update interrupted (will be completed)"
        if self.finished:
            return (f"episode {self.episode_index}: finished, {self.journal_rows} rows; its commit was interrupted "
                    f"before the data file moved into place (recover commits it whole) ({self.folder.name})")
        if self.complete:
            return (f"episode {self.episode_index}: recorded to the end, {self.journal_rows} rows and every video "
                    "complete, but interrupted before its episode row was written (recover commits it whole "
                    f"with a rebuilt row) ({self.folder.name})")
        frames = ", ".join(f"{k} {v}" for k, v in self.video_frames.items()) or "no videos"
        return (f"episode {self.episode_index}: interrupted while recording; {self.journal_rows or 0} rows "
                f"journaled; readable frames: {frames} ({self.folder.name})")


@dataclass(frozen=True)
class Action:
    episode_index: int
    action: str              # "completed" | "salvaged" | "set_aside"
    rows: int
    detail: str


def check_task_dir(task_dir: str | Path) -> None:
    """Refuse a path that is no task directory (a typo, or ROOT instead of ROOT/TASK):
    "nothing to recover" there would hide the mistake."""
    root = Path(task_dir)
    if not root.is_dir():
        raise NotATaskError(f"{root}: no such directory; give the task directory (ROOT/TASK, the folder "
                            "holding meta/ and the staged .staging-episode-* folders)")
    if _is_task(root):
        return
    tasks = sorted(p.name for p in root.iterdir() if p.is_dir() and _is_task(p))
    hint = f"; task directories inside it: {', '.join(tasks[:10])}" if tasks else ""
    raise NotATaskError(f"{root}: not a task directory (no meta/info.json, no staged episode){hint}; "
                        "give the task directory (ROOT/TASK)")


def _is_task(root: Path) -> bool:
    """A task dir, even one whose only episodes were interrupted: meta/ or staged or set-aside data."""
    return (root / META).is_dir() or (root / SET_ASIDE).is_dir() or bool(TaskPaths(root).list_staged())


def inspect_staged(task_dir: Path) -> list[StagedEpisode]:
    check_task_dir(task_dir)
    paths = _paths(task_dir)
    out = []
    for index, folder in paths.list_staged():
        n = paths.number(index)
        committed = paths.data(n).exists()
        rows, frames, finished, complete = None, {}, False, False
        if not committed and (folder / MANIFEST).exists():
            manifest = Manifest.read(folder)
            table, _ = read_journal(folder, manifest.declaration.columns)
            rows = 0 if table is None else table.num_rows
            finished = _finished(folder, paths.episode_row(n), rows)
            for key in manifest.video_extensions:
                f = folder / manifest.video_file(key)
                frames[key] = _readable_frames(f)
            complete = not finished and rows > 0 and _staged_rows(folder) == rows and \
                all(v == rows for v in frames.values())
        out.append(StagedEpisode(index, folder, committed, rows, frames, finished, complete))
    return out


def recover(task_dir: str | Path, *, salvage: bool = False) -> list[Action]:
    task_dir = Path(task_dir)
    check_task_dir(task_dir)
    with TaskLock(task_dir):
        paths = _paths(task_dir)
        actions = []
        for staged in inspect_staged(task_dir):
            if staged.committed and not (staged.folder / MANIFEST).exists():
                shutil.rmtree(staged.folder)   # the manifest goes last: the commit itself had finished
                actions.append(Action(staged.episode_index, "completed", -1, "removed what was left of its staging"))
            elif staged.committed:
                commit_staged(paths, staged.folder, rebuild_stats=True)
                actions.append(Action(staged.episode_index, "completed", -1, "finished the interrupted commit"))
            elif staged.finished:  # stopped and verified; only its commit was cut short
                commit_staged(paths, staged.folder, rebuild_stats=True)
                rows = staged.journal_rows if staged.journal_rows is not None else -1   # -1: not counted
                actions.append(Action(staged.episode_index, "completed", rows,
                                      "the episode was finished; committed it whole"))
            elif staged.complete:  # nothing to cut: only the episode row is missing
                actions.append(_salvage(paths, staged, complete=True))
            elif salvage and (staged.folder / MANIFEST).exists():
                actions.append(_salvage(paths, staged))
            else:
                actions.append(_set_aside(paths, staged, "set aside; number recycled"))
        return actions


def _salvage(paths: TaskPaths, staged: StagedEpisode, *, complete: bool = False) -> Action:
    """Commit the rows the journal holds that every stream with frames can show, cut to the
    shortest; a stream with no readable frame is left out and reported (as the assembler
    does for a silent stream), columns without a sample in the kept rows are dropped (§5.5)."""
    folder = staged.folder
    manifest = Manifest.read(folder)
    table, notes = read_journal(folder, manifest.declaration.columns)
    journal_rows = 0 if table is None else table.num_rows
    empty = sorted(k for k, n in staged.video_frames.items() if n == 0)
    with_frames = [n for n in staged.video_frames.values() if n > 0]
    rows = min([journal_rows, *with_frames])
    if table is None or rows == 0 or (staged.video_frames and not with_frames):   # no journal: 0 rows
        frames = ", ".join(f"{k} {n}" for k, n in staged.video_frames.items()) or "no videos"
        return _set_aside(paths, staged, f"nothing to salvage ({journal_rows} rows journaled; readable frames: "
                                         f"{frames}); set aside")
    left_out = {}
    if empty:
        left_out = _leave_out_videos(paths, folder, manifest, empty)
        manifest = manifest.without_videos(empty)
        manifest.write(folder)
    for key in manifest.video_extensions:
        src = folder / manifest.video_file(key)
        kept = trim_video(src, src, rows)   # replaced atomically
        if kept != rows:
            raise RuntimeError(f"{src}: trimmed to {kept} frames, expected {rows}")
    table = table.slice(0, rows)
    if rows < journal_rows:   # rows were cut: a column may have lost every sample it had
        table = _sampled_columns(table, manifest.declaration.columns)
    specs = [c for c in manifest.declaration.columns if c.name in table.column_names]
    for stale in (folder / DATA_FILE, folder / EXTEND_FILE):
        stale.unlink(missing_ok=True)
    with atomic.atomic_path(folder / DATA_FILE) as tmp:
        pq.write_table(table, tmp, row_group_size=64, **parquet_options(specs))
    lost = {"journal_rows": journal_rows, "video_frames": staged.video_frames, "kept_rows": rows}
    accounting = _checkpoint(folder)
    marks = accounting.pop(FRAME_MARKS, None)
    drops = {k: v for k, v in accounting.items() if k != "rows"}
    drops["salvaged"] = {**lost, "notes": notes}
    if accounting:
        drops["salvaged"]["accounting_as_of_row"] = accounting.get("rows")
    if left_out:
        drops["salvaged"]["left_out_videos"] = left_out
    feature_stats = _table_stats(table, specs).to_json()
    qa = row_verdict(folder / DATA_FILE, manifest.declaration.fps, manifest.declaration.qa, drops, {}, feature_stats)
    write_episode_row(folder / EPISODE_ROW, manifest.episode_row(rows, table.column_names, drops, feature_stats)
                      | {"qa": qa, "frame_marks": _kept_marks(marks, manifest, rows)})
    commit_staged(paths, folder, rebuild_stats=True)
    if complete:
        return Action(staged.episode_index, "completed", rows, f"the episode was recorded to the end; committed "
                      f"all {rows} rows with a rebuilt episode row")
    detail = f"kept {rows} rows; {lost}"
    if left_out:
        detail += "; left out " + "; ".join(f"{k} ({why})" for k, why in left_out.items())
    return Action(staged.episode_index, "salvaged", rows, detail)


def _leave_out_videos(paths: TaskPaths, folder: Path, manifest: Manifest, keys: list[str]) -> dict[str, str]:
    """Move videos without a readable frame to ``.set_aside/`` (nothing is deleted)."""
    dest = paths.set_aside / f"{folder.name}-{time.strftime('%Y%m%dT%H%M%S')}-left-out"
    dest.mkdir(parents=True, exist_ok=True)
    out = {}
    for key in keys:
        src = folder / manifest.video_file(key)
        if src.exists():
            shutil.move(str(src), dest / src.name)
        out[key] = f"no readable frame; its file is kept in {dest.relative_to(paths.root)}"
    return out


def _sampled_columns(table: pa.Table, specs: Sequence[ColumnSpec]) -> pa.Table:
    """Drop the columns that hold no sample in these rows (only their §5.5 default):
    a column exists in an episode only if its source delivered in it."""
    keep = []
    for c in specs:
        if c.name not in table.column_names:
            continue
        if c.always or _has_sample(table.column(c.name).combine_chunks(), c):
            keep.append(c.name)
    return table.select(keep)


def _has_sample(col: pa.Array, spec: ColumnSpec) -> bool:
    if spec.layout is Layout.SCALAR:
        return bool(pc.any(pc.not_equal(col, 0)).as_py())
    if spec.layout is Layout.VECTOR:   # the journal kept no null-ness: a sample is a non-zero vector
        return bool(np.any(col.flatten().to_numpy(zero_copy_only=False)))
    if spec.layout is Layout.STRING:
        return True
    return bool(np.any(pc.list_value_length(col).to_numpy(zero_copy_only=False)))


def _kept_marks(marks: object, manifest: Manifest, rows: int) -> dict:
    """The checkpointed frame marks of the videos kept, cut at the rows kept."""
    if not isinstance(marks, dict) or not isinstance(marks.get("streams"), dict):
        return {}
    kept = {sid: e for sid, e in marks["streams"].items()
            if isinstance(e, dict) and e.get("video") in manifest.video_extensions}
    return cut({**marks, "streams": kept}, rows)


def _checkpoint(folder: Path) -> dict:
    """The last per-stream accounting the writer checkpointed beside the journal, if any."""
    try:
        doc = atomic.read_json(folder / ACCOUNTING)
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def _set_aside(paths: TaskPaths, staged: StagedEpisode, detail: str) -> Action:
    """Move the staged folder, and any files already moved into place for that number,
    to ``.set_aside/``; recycle the number."""
    n = paths.number(staged.episode_index)
    dest = paths.set_aside / f"{staged.folder.name}-{time.strftime('%Y%m%dT%H%M%S')}"
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(staged.folder), dest)
    info = metadata.read_info(paths) or {}
    strays = [paths.episode_row(n)] + [paths.video(n, k, e) for k, e in info.get("video_extensions", {}).items()]
    if (dest / MANIFEST).exists():
        m = Manifest.read(dest)
        strays += [paths.video(n, k, e) for k, e in m.video_extensions.items()]
    for stray in strays:
        if stray.exists():
            shutil.move(str(stray), dest / f"moved-{stray.parent.name}-{stray.name}")
    write_recycled(paths.recycled, n.index)
    return Action(n.index, "set_aside", 0, f"{detail} -> {dest.relative_to(paths.root)}")


def _finished(folder: Path, row_in_place: Path, journal_rows: int) -> bool:
    """end() writes the episode row only after the row sink closed the staged parquet and
    every video passed frames == rows; the commit may have moved the row (and videos) already."""
    row = folder / EPISODE_ROW if (folder / EPISODE_ROW).exists() else row_in_place
    try:
        length = read_episode_row(row)["length"]
        return length == journal_rows == pq.read_metadata(folder / DATA_FILE).num_rows
    except (OSError, ValueError, KeyError):   # missing or torn files: not finished
        return False


def _staged_rows(folder: Path) -> int | None:
    """Rows of the staged data parquet, None while it is unreadable (no footer yet)."""
    try:
        return pq.read_metadata(folder / DATA_FILE).num_rows
    except (OSError, pa.ArrowInvalid):
        return None


def _readable_frames(path: Path) -> int:
    try:
        return count_frames(path)
    except Exception:  # a file torn before its first fragment holds no readable frame
        return 0


def _table_stats(table: pa.Table, specs) -> FeatureStats:
    """Stats of salvaged rows. The journal no longer knows which rows carried a sample,
    so rows whose vector is all zeros count as "no sample" (the §5.5 default)."""
    stats = FeatureStats()
    for c in specs:
        if not c.declared or not c.name.startswith("observation."):
            continue
        col = table.column(c.name).combine_chunks()
        if c.layout is Layout.VECTOR:
            values = col.flatten().to_numpy(zero_copy_only=False).reshape(-1, c.width)
            stats.add(c.name, values[np.any(values != 0, axis=1)])
        elif c.layout is Layout.NESTED:
            stats.add(c.name, col.flatten().flatten().to_numpy(zero_copy_only=False).reshape(-1, c.width))
    return stats


def _paths(task_dir: Path) -> TaskPaths:
    info = metadata.read_info(TaskPaths(Path(task_dir)))
    return TaskPaths.from_info(Path(task_dir), info)
