"""The writing side of a task directory: the lock, episode numbering (§1.3), and
episode lifecycle (begin / delete). One TaskWriter per task dir at a time."""
from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

from egorec_ros.allocator import keep_frame_buffers
from egorec_ros.codecs import depth
from egorec_ros.codecs.encoder_thread import MAX_BACKLOG
from egorec_ros.codecs.video_codec import VideoCodec
from egorec_ros.errors import UserError
from egorec_ros.layout import atomic
from egorec_ros.layout.lock import TaskLock
from egorec_ros.layout.numbering import DEFAULT_CHUNKS_SIZE, EpisodeNumber
from egorec_ros.layout.paths import META, TaskPaths
from egorec_ros.layout.recycle import read_recycled
from egorec_ros.schema import info as info_json
from egorec_ros.schema import tasks
from egorec_ros.schema.declaration import Declaration
from egorec_ros.store import metadata
from egorec_ros.store.commit import commit_staged
from egorec_ros.store.delete import delete_episode, finish_deletions
from egorec_ros.store.episode_writer import EmptyEpisodeError, EpisodeWriter
from egorec_ros.store.restamp import restamp_staged
from egorec_ros.store.staging import Manifest
from egorec_ros.store.videos import EpisodeVideos


class UnfinishedEpisodesError(UserError, RuntimeError):
    """The task dir holds staged episodes from a crash; recover them first."""


class TaskFolderError(UserError, OSError):
    """The task folder cannot be created (read-only or missing parent, a file in the way)."""


class TaskFormatError(UserError, ValueError):
    """The task dir's info.json is of another format; episodes are not added to it."""


class TaskWriter:
    def __init__(self, task_dir: str | Path, *, task_name: str | None = None,
                 chunks_size: int = DEFAULT_CHUNKS_SIZE, codec: VideoCodec | None = None,
                 depth_container: str = "mp4", discard_if_unused: bool = False, crash_journal: bool = True,
                 encoder_backlog: int = MAX_BACKLOG) -> None:
        """``discard_if_unused``: a task dir this writer creates is removed again on close
        if no episode was committed into it (a conversion that failed leaves nothing behind).
        ``crash_journal=False`` where the rows can be rebuilt from their source (a conversion:
        the bag is still there): no second copy of every row, videos written as plain MP4 (not
        a fragment a frame), and an interrupted episode has nothing to salvage (`egorec recover`
        sets it aside). ``encoder_backlog``: frames each stream's encoder may have queued before
        appending a row waits (codecs.encoder_thread)."""
        keep_frame_buffers()   # frames of ~1 MB come and go from now on (allocator.py)
        root = Path(task_dir)
        self._discard = discard_if_unused and not root.exists()
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise TaskFolderError(f"{root}: cannot create the task folder ({exc.strerror or exc}); "
                                  "record into a folder you can write (--out)") from exc
        self._lock = TaskLock(root).acquire()
        try:
            info = metadata.read_info(TaskPaths(root))
            if info is not None and info.get("format") != info_json.FORMAT:
                raise TaskFormatError(f"{root}: info.json format is {info.get('format')!r}, not "
                                 f"{info_json.FORMAT!r}; refusing to add episodes to it")
            self.paths = TaskPaths.from_info(root, info, chunks_size)
            staged = self.paths.list_staged()
            if staged:
                raise UnfinishedEpisodesError(
                    f"{root} holds {len(staged)} unfinished episode(s) from an interrupted run "
                    f"({', '.join(p.name for _, p in staged)}); run `egorec recover {root}` to set them "
                    f"aside (their numbers are recycled) or `egorec recover --salvage {root}` to keep "
                    "the rows written before the interruption")
            finish_deletions(self.paths)   # a deletion a crash interrupted: roll it forward
        except BaseException:
            self._lock.release()
            raise
        self.task_name = (info or {}).get("task_name") or task_name or root.name
        self.codec = codec or VideoCodec()
        self.depth_container = depth_container
        self.crash_journal = crash_journal
        self.encoder_backlog = encoder_backlog
        self._current: EpisodeWriter | None = None
        # commits (the recording thread) and deletions (a service thread) of this task take turns:
        # both rewrite stats.json and read the episode list
        self.meta_lock = threading.RLock()

    def tasks_jsonl(self) -> bytes | None:
        """The task's meta/tasks.jsonl, for ``seed_tasks`` of a worker's private task dir."""
        return self.paths.tasks.read_bytes() if self.paths.tasks.exists() else None

    def seed_tasks(self, tasks_jsonl: bytes) -> None:
        """Start this (new, private) task dir with another task's tasks.jsonl, so the task
        indexes its episodes get are those of the task they will be adopted into."""
        if self.paths.tasks.exists():
            raise ValueError(f"{self.paths.root}: tasks.jsonl exists already; seed only a new task dir")
        atomic.write_bytes(self.paths.tasks, tasks_jsonl)

    def next_number(self) -> EpisodeNumber:
        """The recycled number if one is free, else one past every number ever used."""
        info = metadata.read_info(self.paths) or {}
        used = [n.index for n in self.paths.list_episodes()] + [i for i, _ in self.paths.list_staged()]
        high = max([int(info.get("total_episodes", 0)), *used])
        recycled = read_recycled(self.paths.recycled)
        if recycled is not None and recycled > int(info.get("total_episodes", 0)) and recycled not in used:
            return self.paths.number(recycled)
        return self.paths.number(high + 1)

    def begin(self, decl: Declaration, *, task: str | None = None, created_at: float | None = None,
              number: int | None = None) -> EpisodeWriter:
        """Start an episode under the next number (or ``number``, for conversion workers that
        stage provisionally numbered episodes in a private task dir)."""
        if self._current is not None:
            raise RuntimeError(f"episode {self._current.index} is still open; end or abort it first")
        metadata.check_cameras(self.paths, decl)
        if number is None:
            chosen = self.next_number()
        else:
            chosen = self.paths.number(number)
            if self.paths.data(chosen).exists() or self.paths.staging(chosen).exists():
                raise ValueError(f"{self.paths.root}: episode number {chosen.index} is already used")
        folder = self.paths.staging(chosen)
        folder.mkdir()
        task_text = task or self.task_name
        try:
            videos = EpisodeVideos(folder, decl.videos, decl.fps, self.codec, self.depth_container,
                                   self.encoder_backlog, crash_safe=self.crash_journal)
            manifest = Manifest(chosen.index, task_text, tasks.task_index(self.paths.tasks, task_text), self.task_name,
                                time.time() if created_at is None else created_at, decl,
                                videos.extensions, _codec_description(self.codec, videos.extensions, decl))
            manifest.write(folder)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        self._current = EpisodeWriter(self.paths, chosen, manifest, videos, folder, self._closed,
                                      journal=self.crash_journal, meta_lock=self.meta_lock)
        return self._current

    def adopt(self, folder: Path) -> EpisodeNumber:
        """Commit an episode staged elsewhere on this filesystem (``end(commit=False)`` in a
        worker's task dir) under this task's next number, renumbered if it was staged with
        another one. Committing in a fixed order gives the numbering of a serial run."""
        if self._current is not None:
            raise RuntimeError(f"episode {self._current.index} is still open; end or abort it first")
        metadata.check_cameras(self.paths, Manifest.read(folder).declaration)
        number = self.next_number()
        restamp_staged(Path(folder), episode_index=number.index,
                       task_index=tasks.task_index(self.paths.tasks, Manifest.read(folder).task),
                       task_name=self.task_name)
        dest = self.paths.staging(number)
        shutil.move(str(folder), dest)
        commit_staged(self.paths, dest)
        return number

    def delete(self, episode_index: int) -> list[Path]:
        """Remove a committed episode (``store.delete``): its files go, its number is never
        reused (total_episodes keeps the high-water mark), stats.json is rebuilt without it.
        Safe while another episode of this task is being recorded or committed."""
        with self.meta_lock:
            current = self._current
            if current is not None and current.index == episode_index:
                raise ValueError(f"{self.paths.root}: episode {episode_index} is being recorded; stop or abort it")
            return delete_episode(self.paths, self.paths.number(episode_index))

    def close(self) -> None:
        if self._current is not None:
            raise RuntimeError(f"episode {self._current.index} is still open; end or abort it before closing")
        if self._discard and not self.paths.list_episodes():
            self._lock.path.unlink(missing_ok=True)
        self._lock.release()
        if self._discard:
            _remove_if_empty(self.paths.root / META, self.paths.root)

    def _closed(self) -> None:
        self._current = None

    def __enter__(self) -> "TaskWriter":
        return self

    def __exit__(self, exc_type, *exc: object) -> None:
        try:
            if self._current is not None and exc_type is not None:
                # interrupted mid-episode (Ctrl-C, an error upstream): keep what was recorded
                try:
                    self._current.end()
                except EmptyEpisodeError:
                    pass   # nothing recorded, the number is free again; the caller's exception matters
        finally:
            self.close()   # the lock must not outlive the writer, whatever end() did


def _remove_if_empty(*folders: Path) -> None:
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:        # not empty: something else is in it, keep it
            return


def _codec_description(codec: VideoCodec, extensions: dict[str, str], decl: Declaration) -> dict:
    """The episode row's video_codec: enough for a reader to decode every stream right."""
    out = {}
    for v in decl.videos:
        if v.kind == "depth":
            out[v.key] = depth.codec_description(extensions[v.key])
        else:
            out[v.key] = {"codec": codec.name, "crf": codec.crf, "preset": codec.preset, "gop": codec.gop,
                          "b_frames": 0, "ext": extensions[v.key]}
    return out
