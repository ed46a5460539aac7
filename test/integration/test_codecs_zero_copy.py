"""Writers wrap the caller's pixels in a frame without copying them (issue 13): the files
are byte for byte those of PyAV's copying ``from_ndarray``, read-only message bytes are
accepted as they are, and the caller's arrays are left untouched."""
from __future__ import annotations

from fractions import Fraction

import av
import numpy as np
import pytest

from egorec_ros.codecs.depth import hevc_depth_settings, mm_to_code, open_depth_writer
from egorec_ros.codecs.video import VideoCodec, VideoFileWriter, encoder_settings, open_video_writer

W, H = 320, 240


def _frames(n: int) -> list[np.ndarray]:
    rng = np.random.default_rng(3)
    base = rng.integers(0, 256, (H, W, 3), dtype=np.uint8)
    frames = [np.roll(base, 5 * k, axis=1) for k in range(n)]
    # a read-only view of message bytes, as a raw sensor_msgs/Image gives it
    frames[1] = np.frombuffer(frames[1].tobytes(), np.uint8).reshape(H, W, 3)
    return frames


def test_video_files_are_those_of_a_copying_writer(tmp_path):
    frames = _frames(12)
    before = [f.copy() for f in frames]
    with open_video_writer(tmp_path / "wrapped.mp4", W, H, 30) as writer:
        for f in frames:
            writer.write(f)
    copying = VideoFileWriter(tmp_path / "copied.mp4", W, H, Fraction(30), encoder_settings(VideoCodec()),
                              lambda f: av.VideoFrame.from_ndarray(f, format="rgb24"), np.zeros((H, W, 3), np.uint8))
    with copying:
        for f in frames:
            copying.write(f)
    assert (tmp_path / "wrapped.mp4").read_bytes() == (tmp_path / "copied.mp4").read_bytes()
    assert all(np.array_equal(a, b) for a, b in zip(frames, before))


def test_depth_files_are_those_of_a_copying_writer(tmp_path):
    rng = np.random.default_rng(4)
    frames = [rng.integers(0, 6000, (H, W)).astype(np.uint16) for _ in range(6)]
    with open_depth_writer(tmp_path / "wrapped.mp4", W, H, 30) as writer:
        for f in frames:
            writer.write(f)
    if writer.path.suffix != ".mp4":
        pytest.skip("no 12-bit libx265 in this PyAV: the writer fell back to FFV1 (test_codecs_depth checks it)")
    copying = VideoFileWriter(tmp_path / "copied.mp4", W, H, Fraction(30), hevc_depth_settings(),
                              lambda f: av.VideoFrame.from_ndarray(mm_to_code(f), format="gray12le"),
                              np.zeros((H, W), np.uint16))
    with copying:
        for f in frames:
            copying.write(f)
    assert writer.path.read_bytes() == (tmp_path / "copied.mp4").read_bytes()
