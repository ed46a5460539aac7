"""The single-episode slice: the zip the server imports, holding one episode's task-relative
pooled paths (its videos, data parquet and episode-row parquet) plus ``meta/info.json``,
``meta/stats.json`` and ``meta/tasks.jsonl`` when present, stored uncompressed (videos and
parquet are compressed already). Never a dotfile, lock, temp file or the recycled marker.

The zip is written once, to a temp file in the recordings root's upload folder, and sent
from there as many times as needed: every attempt sends the same bytes (the meta files change
as later episodes are committed; the queue keeps the slice's sha256)."""
from __future__ import annotations

import errno
import hashlib
import shutil
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from egorec_ros.layout import atomic
from egorec_ros.layout.numbering import EpisodeNumber
from egorec_ros.layout.paths import INFO, STATS, TASKS, TaskPaths
from egorec_ros.upload.errors import UploadError

CHUNK = 1 << 20                      # copy and hash in 1 MiB pieces: memory stays flat for any size
ZIP_OVERHEAD = 1 << 16               # local + central headers of a handful of members, generously


class EpisodeGone(UploadError):
    """The episode is not (or no longer) in the task folder: deleted, aborted, never committed."""


@dataclass(frozen=True)
class SliceFile:
    arcname: str                      # task-relative posix path: the name in the zip
    path: Path                        # where it is read from (a re-encoded copy with --precompress)
    size: int


def task_paths(task_dir: Path) -> TaskPaths:
    info_path = Path(task_dir) / INFO
    info = atomic.read_json(info_path) if info_path.exists() else None
    return TaskPaths.from_info(Path(task_dir), info)


def video_files(task_dir: Path, episode_index: int) -> dict[str, Path]:
    """The episode's video files by stream key (those present on disk)."""
    paths = task_paths(task_dir)
    n = paths.number(episode_index)
    info = atomic.read_json(paths.info) if paths.info.exists() else {}
    found = {}
    for key, ext in sorted(info.get("video_extensions", {}).items()):
        path = paths.video(n, key, ext)
        if path.is_file():
            found[key] = path
    return found


def slice_members(task_dir: Path, episode_index: int) -> list[SliceFile]:
    """What the slice of episode ``episode_index`` (1-based, §1.3) holds, in zip order."""
    task_dir = Path(task_dir)
    paths = task_paths(task_dir)
    n: EpisodeNumber = paths.number(episode_index)
    data = paths.data(n)
    if not data.is_file():
        raise EpisodeGone(f"{task_dir}: episode {episode_index} is not there ({data.relative_to(task_dir)} missing): "
                          "deleted or never committed; it is not uploaded")
    files = [*video_files(task_dir, episode_index).values(), data]
    row = paths.episode_row(n)
    if row.is_file():
        files.append(row)
    files += [task_dir / rel for rel in (INFO, STATS, TASKS) if (task_dir / rel).is_file()]
    return [SliceFile(p.relative_to(task_dir).as_posix(), p, p.stat().st_size) for p in files]


def write_slice(members: list[SliceFile], dest: Path,
                progress: Callable[[int], None] = lambda n: None) -> tuple[int, str]:
    """Write the zip (ZIP_STORED) to ``dest`` atomically; returns (size, sha256).
    Raises UploadError before writing when the disk has no room for it."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    need = sum(m.size for m in members) + ZIP_OVERHEAD
    free = shutil.disk_usage(dest.parent).free
    if free < need:
        raise UploadError(f"no room to build the upload slice in {dest.parent}: it needs {need / 1e6:.0f} MB, "
                          f"{free / 1e6:.0f} MB are free; free space on that disk (the episode stays queued)")
    tmp = atomic.tmp_path(dest)
    try:
        size, digest = _write_zip(members, tmp, progress)
        atomic.fsync_path(tmp)       # after a power loss the queue's size and sha256 still describe the file
        atomic.replace(tmp, dest)
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        raise UploadError(f"the disk filled up while building the upload slice {dest.name} in {dest.parent}; "
                          "free space on that disk (the episode stays queued)") from None
    finally:
        tmp.unlink(missing_ok=True)
    return size, digest


def _write_zip(members: list[SliceFile], tmp: Path, progress: Callable[[int], None]) -> tuple[int, str]:
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        for m in members:
            info = zipfile.ZipInfo(m.arcname, _zip_time(m.path.stat().st_mtime))
            info.compress_type = zipfile.ZIP_STORED
            info.file_size = m.size
            info.external_attr = 0o644 << 16
            with open(m.path, "rb") as src, zf.open(info, "w", force_zip64=m.size >= 1 << 31) as out:
                while piece := src.read(CHUNK):
                    out.write(piece)
                    progress(len(piece))
    return tmp.stat().st_size, file_sha256(tmp)


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    buf = bytearray(CHUNK)
    view = memoryview(buf)
    with open(path, "rb", buffering=0) as f:
        while n := f.readinto(buf):
            h.update(view[:n])
    return h.hexdigest()


def sweep(folder: Path, keep: set[str], older_than_s: float = 24 * 3600.0) -> list[Path]:
    """Remove slices and temporaries in the upload folder that no queue entry needs and that
    are older than ``older_than_s`` (a crashed build, an entry since done or dropped)."""
    removed: list[Path] = []
    if not Path(folder).is_dir():
        return removed
    now = time.time()
    for p in Path(folder).iterdir():
        if p.name in keep or not p.is_file():
            continue
        try:
            if now - p.stat().st_mtime >= older_than_s:
                p.unlink()
                removed.append(p)
        except FileNotFoundError:
            pass
    return removed


def _zip_time(mtime: float) -> tuple[int, int, int, int, int, int]:
    t = time.localtime(max(mtime, 315532800.0))   # zip times start in 1980
    return (t.tm_year, t.tm_mon, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec)


def slice_name(entry_id: int, task: str, episode_index: int) -> str:
    """The temp file of queue entry ``entry_id`` (unique, so two roots' tasks never collide)."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in task)
    return f"{entry_id:06d}-{safe}-episode-{episode_index:06d}.zip"
