"""Background output work (video encoders with their codec threads, the row sink) runs
below the priority of the thread that feeds it, and the feeding thread keeps its own."""
from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import pytest

from egorec_ros.codecs.encoder_thread import BackgroundEncoder
from egorec_ros.codecs.video import open_video_writer
from egorec_ros.codecs.video_codec import VideoCodec
from egorec_ros.schema.columns import ColumnSpec, Layout
from egorec_ros.store.row_sink import RowSink
from egorec_ros.thread_priority import BACKGROUND_NICENESS, lower_this_thread

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread niceness is Linux's")


def niceness(tid: int) -> int:
    return os.getpriority(os.PRIO_PROCESS, tid)


def threads() -> set[int]:
    return {int(t) for t in os.listdir("/proc/self/task")}


def test_lowering_a_thread_leaves_the_others_alone() -> None:
    mine = niceness(threading.get_native_id())
    seen: dict[str, int] = {}

    def worker() -> None:
        seen["changed"] = lower_this_thread()
        seen["niceness"] = niceness(threading.get_native_id())
    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert seen == {"changed": True, "niceness": min(mine + BACKGROUND_NICENESS, 19)}
    assert niceness(threading.get_native_id()) == mine


def test_the_encoder_and_its_codec_threads_run_below_the_caller(tmp_path: Path) -> None:
    mine = niceness(threading.get_native_id())
    before = threads()
    encoder = BackgroundEncoder(lambda: open_video_writer(tmp_path / "v.mp4", 64, 48, 30, VideoCodec(threads=2)),
                                name="cam")
    started = threads() - before
    try:
        # the encoder's thread and what x264 started on it when the codec opened (frame threads)
        assert len(started) >= 2
        assert {niceness(tid) for tid in started} == {min(mine + BACKGROUND_NICENESS, 19)}
        assert niceness(threading.get_native_id()) == mine
    finally:
        encoder.close()


def test_a_writer_that_does_not_open_fails_the_constructor_and_leaves_no_thread(tmp_path: Path) -> None:
    before = threading.active_count()
    with pytest.raises(ValueError, match="RGB video is written as .mp4"):
        BackgroundEncoder(lambda: open_video_writer(tmp_path / "v.avi", 64, 48, 30), name="cam")
    assert threading.active_count() == before


def test_the_row_sink_writes_below_the_caller(tmp_path: Path) -> None:
    mine = niceness(threading.get_native_id())
    sink = RowSink(tmp_path, [ColumnSpec("index", Layout.SCALAR, "int64", always=True)], journal=False)
    try:
        (tid,) = [t.native_id for t in threading.enumerate() if t.name == f"rows:{tmp_path.name}"]   # named for py-spy
        deadline = time.monotonic() + 5
        while niceness(tid) == mine and time.monotonic() < deadline:   # its first step
            time.sleep(0.01)
        assert niceness(tid) == min(mine + BACKGROUND_NICENESS, 19)
    finally:
        sink.abort()
