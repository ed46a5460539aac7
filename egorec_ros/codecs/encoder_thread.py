"""A video writer in its own thread, so whoever builds rows never waits for an encoder.

``submit`` only appends to a queue (a fraction of a microsecond; the caller watches
``backlog`` to see an encoder falling behind). The queue is bounded (``max_backlog``
frames, 1 s at 30 fps by default): an encoder that cannot keep up makes ``submit`` wait
(``blocked_s`` says how long in total) instead of letting memory grow until the process
dies — in replay that is plain back-pressure, in a live recording the rows are then
built late and the assembler counts the samples that missed their deadline. The thread decodes lazy frames
(e.g. a JPEG from a bag) and encodes; PyAV releases the GIL inside FFmpeg, so encoders
of several streams run on several cores.

Integrity rule: every submitted payload becomes exactly one frame, so frames in the file
== submissions == rows. A payload that cannot be decoded or does not fit the stream
(size, dtype, channels) is replaced by the previous good frame (black / no depth before
the first one), counted in ``substituted`` and explained in ``substitution_reasons``.
A row that repeats the previous row's payload (the same object) is written from the pixels
decoded for that row, not decoded again: on a busy recorder most rows of a camera can repeat.
Anything else that fails (the encoder, the disk) stops the stream: the error is raised,
with the stream name, from the caller's next ``submit`` or ``close``; frames already
muxed stay readable in the crash-safe file.

Priority: the thread lowers its own (thread_priority.py) before it opens the writer, so
the codec's worker threads, started when the codec opens, are lowered with it.
"""
from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable

import numpy as np

from egorec_ros.codecs.frame_stats import FrameStats
from egorec_ros.codecs.lazy_frame import LazyFrame, frame_array
from egorec_ros.codecs.video import FrameFormatError, VideoFileWriter
from egorec_ros.thread_priority import lower_this_thread

MAX_REASONS = 20        # substitution reasons kept; the count covers all
MAX_BACKLOG = 30        # frames queued per stream before submit waits
_CLOSE = object()
_NO_PAYLOAD = object()   # no payload was decoded yet (or the last one was substituted)


class EncoderError(RuntimeError):
    """The encoder of a stream failed; the message names the stream."""


class BackgroundEncoder:
    """Encodes one stream in its own thread; owns ``writer`` (only that thread writes to it)."""

    def __init__(self, open_writer: Callable[[], VideoFileWriter], name: str, max_backlog: int = MAX_BACKLOG):
        """``open_writer`` is called on the encoder's thread; what it raises (a bad option, a
        codec that is missing) is raised here, and no thread is left behind."""
        self.name = name
        self.writer: VideoFileWriter          # set on the encoder's thread, before __init__ returns
        self.substituted = 0
        self.substitution_reasons: list[str] = []
        self.stats = FrameStats()               # per-frame QA figures (read after close)
        self._queue: queue.Queue = queue.Queue(maxsize=max_backlog)
        self.blocked_s = 0.0
        self._submitted = 0
        self._processed = 0
        self._previous: np.ndarray | None = None
        self._previous_payload: object = _NO_PAYLOAD   # the payload ``_previous`` was decoded from
        self._error: BaseException | None = None
        self._closed = False
        self._discard = False
        self._opened = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(open_writer,), name=f"encoder-{name}", daemon=True)
        self._thread.start()
        self._opened.wait()
        if self._error is not None:
            self._thread.join()
            raise self._error

    @property
    def backlog(self) -> int:
        """Payloads submitted but not yet encoded."""
        return self._submitted - self._processed

    @property
    def frames_written(self) -> int:
        return self.writer.frames_written

    def submit(self, payload: np.ndarray | LazyFrame) -> None:
        """Queue one frame. The array must not be modified afterwards (it is not copied)."""
        if self._closed:
            raise RuntimeError(f"stream {self.name!r}: submit after close")
        self._raise_if_failed()
        self._submitted += 1
        try:
            self._queue.put_nowait(payload)
        except queue.Full:
            waited = time.perf_counter()
            self._queue.put(payload)
            self.blocked_s += time.perf_counter() - waited

    def close(self) -> int:
        """Encode what is queued, close the file; frames written. Raises EncoderError if the
        encoder failed at any point (the file then keeps the frames encoded before)."""
        if not self._closed:
            self._closed = True
            self._queue.put(_CLOSE)
        self._thread.join()
        self._raise_if_failed()
        return self.writer.frames_written

    def abort(self) -> None:
        """Close without encoding what is still queued (the episode is being discarded:
        a long backlog must not make the discard wait); errors are ignored."""
        self._discard = True
        try:
            self.close()
        except Exception:
            pass

    def _raise_if_failed(self) -> None:
        if self._error is not None:
            raise EncoderError(f"stream {self.name!r}: encoder failed after {self.writer.frames_written} "
                               f"frames: {type(self._error).__name__}: {self._error}") from self._error

    def _run(self, open_writer: Callable[[], VideoFileWriter]) -> None:
        lower_this_thread()
        try:
            self.writer = open_writer()
        except BaseException as exc:          # raised by __init__
            self._error = exc
            return
        finally:
            self._opened.set()
        while (payload := self._queue.get()) is not _CLOSE:
            if self._error is None and not self._discard:
                try:
                    self._encode(payload)
                except BaseException as exc:   # reported to the caller, never lost in this thread
                    self._error = exc
            self._processed += 1
        try:
            self.writer.close()
        except BaseException as exc:
            self._error = self._error or exc

    def _encode(self, payload: np.ndarray | LazyFrame) -> None:
        if payload is self._previous_payload and self._previous is not None:
            # a repeated row (the same payload object: no new frame came): its pixels were decoded
            # and written for the previous row; decoding a JPEG again would give the same pixels
            self.writer.write(self._previous)
            self.stats.add(payload, self._previous)
            return None
        try:
            frame = frame_array(payload)
        except Exception as exc:
            return self._substitute(payload, f"{type(payload).__name__} did not decode: {type(exc).__name__}: {exc}")
        try:
            self.writer.write(frame)
        except FrameFormatError as exc:
            return self._substitute(payload, str(exc))
        self.stats.add(payload, frame)
        self._previous, self._previous_payload = frame, payload

    def _substitute(self, payload: object, reason: str) -> None:
        self._previous_payload = _NO_PAYLOAD
        self.stats.add(payload, None)
        index = self.writer.frames_written
        self.writer.write(self._previous if self._previous is not None else self.writer.blank_frame())
        self.substituted += 1
        if len(self.substitution_reasons) < MAX_REASONS:
            self.substitution_reasons.append(f"frame {index}: {reason}")
