"""BackgroundEncoder: one frame per submission, bad payloads substituted, errors surfaced."""
from __future__ import annotations

import resource
import signal
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from egorec_ros.codecs.lazy_frame import LazyFrame
from egorec_ros.codecs.depth import iter_depth_mm, open_depth_writer
from egorec_ros.codecs.encoder_thread import BackgroundEncoder, EncoderError
from egorec_ros.codecs.probe import count_frames, iter_frames
from egorec_ros.codecs.video import open_video_writer
from egorec_ros.sim.scene import RgbCanvas, Scene

W, H = 320, 240


def render(n: int) -> list[np.ndarray]:
    canvas = RgbCanvas(Scene(11), W, H, 0.7 * W)
    rng = np.random.default_rng(11)
    return [canvas.paint(i / 10, np.array([0.09 * np.sin(1.3 * i), 0.05 * np.cos(i)]), rng)  # frames differ
            for i in range(n)]


class Jpeg:
    """A LazyFrame: decodes on demand, maybe slowly, maybe not at all."""

    def __init__(self, frame: np.ndarray | None, delay_s: float = 0.0):
        self.frame, self.delay_s = frame, delay_s

    def array(self) -> np.ndarray:
        time.sleep(self.delay_s)
        if self.frame is None:
            raise OSError("broken JPEG: premature end of data")
        return self.frame


def mean_abs(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.mean(np.abs(a.astype(np.int16) - b.astype(np.int16))))


def test_every_submission_is_one_frame(tmp_path: Path) -> None:
    frames = render(12)
    assert isinstance(Jpeg(None), LazyFrame)
    payloads = [
        Jpeg(None),                       # 0: nothing good yet -> black
        frames[1], frames[2],
        frames[3][:100],                  # 3: wrong size -> repeat 2
        Jpeg(frames[4]),
        Jpeg(None),                       # 5: does not decode -> repeat 4
        frames[6].astype(np.float32),     # 6: wrong dtype -> repeat 4
        None,                             # 7: not an image at all -> repeat 4
        frames[8], frames[9][..., 0].copy(),  # 9: gray is fine
        frames[10][..., :2],              # 10: two channels -> repeat 9
        frames[11],
    ]
    encoder = BackgroundEncoder(lambda: open_video_writer(tmp_path / "v.mp4", W, H, 30), name="head_left_rgb")
    for p in payloads:
        encoder.submit(p)
    assert encoder.close() == len(payloads) == encoder.frames_written
    assert count_frames(encoder.writer.path, decode=True) == len(payloads)
    assert encoder.substituted == 6
    reasons = encoder.substitution_reasons
    assert [r.split(":")[0] for r in reasons] == [f"frame {i}" for i in (0, 3, 5, 6, 7, 10)]
    assert "broken JPEG" in reasons[0] and "(100, 320, 3)" in reasons[1] and "float32" in reasons[3]

    decoded = list(iter_frames(encoder.writer.path))
    assert decoded[0].max() < 20                                           # black
    for i, source in [(3, 2), (5, 4), (6, 4), (7, 4), (10, 9)]:
        assert mean_abs(decoded[i], decoded[source]) < 1.5, i              # the previous good frame
        assert mean_abs(decoded[i], frames[i]) > 10, i                     # not the frame it replaced
    for i in (1, 2, 4, 8, 11):
        assert mean_abs(decoded[i], frames[i]) < 8, i


def test_depth_substitutes_no_depth_before_the_first_good_frame(tmp_path: Path) -> None:
    good = np.full((H, W), 1500, np.uint16)
    encoder = BackgroundEncoder(lambda: open_depth_writer(tmp_path / "d.mkv", W, H, 30, "mkv"), name="d435_depth")
    for p in [np.zeros((H, W, 3), np.uint8), good, Jpeg(None)]:
        encoder.submit(p)
    assert encoder.close() == 3 and encoder.substituted == 2
    back = list(iter_depth_mm(encoder.writer.path))
    assert not back[0].any() and np.array_equal(back[1], good) and np.array_equal(back[2], good)


@contextmanager
def disk_full_after(limit_bytes: int):
    """Writes past ``limit_bytes`` of any file fail with EFBIG, as on a full disk."""
    old_limit = resource.getrlimit(resource.RLIMIT_FSIZE)
    old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, old_limit[1]))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, old_limit)
        signal.signal(signal.SIGXFSZ, old_handler)


def test_encoder_failure_surfaces_with_the_stream_name(tmp_path: Path) -> None:
    frames = render(40)
    encoder = BackgroundEncoder(lambda: open_video_writer(tmp_path / "v.mp4", W, H, 30), name="stereo_left")
    with disk_full_after(40_000):
        for f in frames[:30]:
            encoder.submit(f)
        deadline = time.monotonic() + 20
        while encoder.backlog and time.monotonic() < deadline:
            time.sleep(0.01)
        with pytest.raises(EncoderError, match="stream 'stereo_left': encoder failed after"):
            encoder.submit(frames[30])
        with pytest.raises(EncoderError, match="stereo_left") as failure:
            encoder.close()
    assert isinstance(failure.value.__cause__, OSError)
    with pytest.raises(RuntimeError, match="after close"):
        encoder.submit(frames[31])
    # what reached the disk before it filled up is still readable
    assert 0 < count_frames(encoder.writer.path, decode=True) < 30


def test_submit_never_waits_for_the_encoder(tmp_path: Path) -> None:
    frames = render(30)
    encoder = BackgroundEncoder(lambda: open_video_writer(tmp_path / "v.mp4", W, H, 30), name="slow")
    times = []
    for f in frames:
        t = time.perf_counter()
        encoder.submit(Jpeg(f, delay_s=0.02))              # 20 ms of decoding each, in the encoder thread
        times.append(time.perf_counter() - t)
    backlog = encoder.backlog
    assert backlog >= 20                                     # the encoder is busy ...
    # ... and the caller did not wait for it: no submit took as long as one frame's decoding,
    # all 30 together took a small part of the 0.6 s the encoder needs
    assert max(times) < 0.02 and sum(times) < 0.06
    assert encoder.close() == 30 and encoder.backlog == 0


def test_a_slow_encoder_makes_submit_wait_instead_of_growing_memory(tmp_path: Path) -> None:
    """The queue is bounded: with an encoder slower than the caller, submit waits (and says
    how long in blocked_s); every submission still becomes exactly one frame."""
    writer = open_video_writer(tmp_path / "slow.mp4", 64, 48, 30)
    real_write = writer.write

    def slow_write(frame):
        time.sleep(0.01)
        real_write(frame)
    writer.write = slow_write
    encoder = BackgroundEncoder(lambda: writer, "slow", max_backlog=3)
    frame = np.zeros((48, 64, 3), np.uint8)
    peak = 0
    for _ in range(30):
        encoder.submit(frame)
        peak = max(peak, encoder.backlog)
    assert peak <= 3 + 1  # the queue, plus the frame being encoded
    assert encoder.blocked_s > 0.1
    assert encoder.close() == 30


class CountingJpeg(Jpeg):
    """A LazyFrame that counts its decodes."""

    def __init__(self, frame: np.ndarray | None):
        super().__init__(frame)
        self.decodes = 0

    def array(self) -> np.ndarray:
        self.decodes += 1
        return super().array()


def test_a_repeated_payload_is_decoded_once_and_written_again(tmp_path: Path) -> None:
    """Rows that repeat the previous row's frame (the same payload object) reuse its pixels: the
    video holds the same frames as if each were decoded again, and the figures say repeat."""
    frames = render(3)
    a, b, bad = CountingJpeg(frames[0]), CountingJpeg(frames[1]), CountingJpeg(None)
    payloads = [a, a, a, b, b, a, bad, bad, b]     # a again after b, b after bad: decoded again
    encoder = BackgroundEncoder(lambda: open_video_writer(tmp_path / "v.mp4", W, H, 30), name="wrist")
    for p in payloads:
        encoder.submit(p)
    assert encoder.close() == len(payloads)
    assert (a.decodes, b.decodes) == (2, 2)
    assert bad.decodes == 2 and encoder.substituted == 2      # a bad payload is tried (and counted) each row
    decoded = list(iter_frames(encoder.writer.path))
    assert len(decoded) == len(payloads)
    for i, p in enumerate(payloads):
        source = frames[0] if p is bad else p.frame   # substituted by the previous good frame (a)
        assert mean_abs(decoded[i], source) < 8, i
    assert encoder.stats.series().repeat.tolist() == [False, True, True, False, True, False, False, True, False]
