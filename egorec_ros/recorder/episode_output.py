"""The assembler's output wired to an episode writer: the episode is begun when the
assembler knows which video streams it records, then every row is appended."""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping

from egorec_ros.assembly.counts import StreamCounts
from egorec_ros.rig.declare import declaration
from egorec_ros.rig.model import Rig
from egorec_ros.store import EpisodeWriter, TaskWriter
from egorec_ros.store.staging import FRAME_MARKS


class EpisodeOutput:
    """``number`` forces the episode number (conversion workers stage provisionally
    numbered episodes in a private task dir); None takes the task's next number."""

    def __init__(self, writer: TaskWriter, rig: Rig, *, task: str | None = None,
                 created_at: float | None = None, number: int | None = None) -> None:
        self._writer, self._rig, self._task, self._created_at = writer, rig, task, created_at
        self._number = number
        self._counts: Callable[[], Mapping[str, StreamCounts]] | None = None
        self._marks: Callable[[], Mapping] | None = None
        self.episode: EpisodeWriter | None = None

    def account_from(self, counts: Callable[[], Mapping[str, StreamCounts]],
                     marks: Callable[[], Mapping] | None = None) -> None:
        """The assembler's live per-stream counts (and where rows were repeated or late,
        ``marks``): checkpointed with every row group, so an episode salvaged after a crash
        keeps its drop accounting and frame marks up to its last rows."""
        self._counts, self._marks = counts, marks

    def begin(self, video_keys: list[str]) -> None:
        decl = declaration(self._rig)
        decl = dataclasses.replace(decl, videos=tuple(v for v in decl.videos if v.key in video_keys))
        self.episode = self._writer.begin(decl, task=self._task, created_at=self._created_at, number=self._number)
        if self._counts is not None:
            counts, marks = self._counts, self._marks
            self.episode.accounting = lambda: {"streams": {k: c.to_json() for k, c in counts().items()},
                                               **({FRAME_MARKS: marks()} if marks is not None else {})}

    def row(self, values: dict[str, Any], frames: dict[str, Any]) -> None:
        episode = self.episode
        if episode is None:
            raise RuntimeError("a row before begin(): the assembler begins the episode before its first row")
        episode.append(values, frames)
