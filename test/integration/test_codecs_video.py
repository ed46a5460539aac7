"""RGB video files: real encoders, real files, read back with PyAV (egorec_ros.codecs.video/probe)."""
from __future__ import annotations

import signal
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest

from egorec_ros.codecs.probe import DamagedVideoError, count_frames, iter_frames, read_frame, trim_video
from egorec_ros.codecs.video import FrameFormatError, VideoCodec, open_video_writer
from egorec_ros.sim.scene import RgbCanvas, Scene

W, H = 320, 240
GOP = 15


def render(n: int, seed: int = 7, width: int = W, height: int = H) -> list[np.ndarray]:
    """A textured wall panning behind moving objects, with sensor grain."""
    canvas = RgbCanvas(Scene(seed), width, height, 0.7 * width)
    rng = np.random.default_rng(seed)
    return [canvas.paint(i / 30, np.array([0.002 * i, 0.0005 * i]), rng) for i in range(n)]


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return float(10 * np.log10(255.0 ** 2 / max(mse, 1e-12)))


def top_level_boxes(path: Path) -> list[str]:
    """MP4 top-level box types, in order (fragmented files have moof/mdat pairs)."""
    data, pos, out = path.read_bytes(), 0, []
    while pos + 8 <= len(data):
        size = int.from_bytes(data[pos:pos + 4], "big")
        if size == 1:
            size = int.from_bytes(data[pos + 8:pos + 16], "big")
        elif size == 0:
            size = len(data) - pos
        out.append(data[pos + 4:pos + 8].decode("latin-1"))
        pos += max(size, 8)
    return out


@pytest.fixture(scope="module")
def frames() -> list[np.ndarray]:
    return render(40)


@pytest.mark.parametrize("name, fps", [("h264", 30), ("hevc", 29.97), ("av1", Fraction(30000, 1001))])
def test_round_trip(tmp_path: Path, frames: list[np.ndarray], name: str, fps) -> None:
    path = tmp_path / f"{name}.mp4"
    writer = open_video_writer(path, W, H, fps, VideoCodec(name, gop=GOP))
    for f in frames:
        writer.write(f)
    assert writer.close() == len(frames)

    assert count_frames(path) == count_frames(path, decode=True) == len(frames)
    decoded = list(iter_frames(path))
    assert len(decoded) == len(frames)
    assert all(d.shape == (H, W, 3) and d.dtype == np.uint8 for d in decoded)
    assert min(psnr(d, f) for d, f in zip(decoded, frames, strict=True)) > 28.0     # crf 23-35 on a grainy scene

    rate = Fraction(fps).limit_denominator(1001)
    with av.open(str(path)) as c:
        s = c.streams.video[0]
        packets = [p for p in c.demux(s) if p.size]
        assert [p.pts * s.time_base for p in packets] == [i / rate for i in range(len(frames))]
        assert [p.is_keyframe for p in packets] == [i % GOP == 0 for i in range(len(frames))]
        assert [p.dts for p in packets] == [p.pts for p in packets]          # no B-frames
        assert s.codec_tag == {"h264": "avc1", "hevc": "hvc1", "av1": "av01"}[name]
    boxes = top_level_boxes(path)
    assert "moof" not in boxes and boxes.count("moov") == 1, boxes             # a normal MP4 after close

    for i in [0, 1, GOP - 1, GOP, 2 * GOP + 3, len(frames) - 1, 17]:
        assert np.array_equal(read_frame(path, i), decoded[i]), i
    with pytest.raises(IndexError):
        read_frame(path, len(frames))


def test_colours_survive(tmp_path: Path) -> None:
    """Flat patches come back as the same colour: catches a wrong YUV matrix, range or channel order."""
    colours = np.array([[255, 0, 0], [0, 255, 0], [0, 0, 255], [128, 128, 128],
                        [250, 200, 30], [20, 60, 200], [0, 0, 0], [255, 255, 255]], np.uint8)
    frame = np.repeat(np.repeat(colours.reshape(2, 4, 3), H // 2, axis=0), W // 4, axis=1)
    for name in ["h264", "hevc", "av1"]:
        writer = open_video_writer(tmp_path / f"{name}.mp4", W, H, 30, VideoCodec(name))
        for _ in range(3):
            writer.write(frame)
        writer.close()
        decoded = list(iter_frames(writer.path))[-1].astype(int)
        centres = decoded[H // 4::H // 2, W // 8::W // 4].reshape(8, 3)
        assert np.abs(centres - colours).max() <= 8, (name, centres)


def test_gray_frames_are_stored_as_gray(tmp_path: Path, frames: list[np.ndarray]) -> None:
    gray = [f.mean(axis=2).astype(np.uint8) for f in frames[:10]]
    with open_video_writer(tmp_path / "gray.mp4", W, H, 30) as writer:
        for g in gray:
            writer.write(g)
    assert writer.frames_written == count_frames(writer.path) == 10
    for d, g in zip(iter_frames(writer.path), gray, strict=True):
        assert psnr(d[..., 0], g) > 30.0
        assert np.abs(d[..., 0].astype(int) - d[..., 2]).max() <= 2       # no colour appears


def test_bad_frames_are_refused_without_writing(tmp_path: Path, frames: list[np.ndarray]) -> None:
    writer = open_video_writer(tmp_path / "v.mp4", W, H, 30)
    writer.write(frames[0])
    for bad in [frames[0][:100], frames[0].astype(np.uint16), frames[0][..., :2], "not an image"]:
        with pytest.raises(FrameFormatError, match=r"expected RGB"):
            writer.write(bad)
    writer.write(frames[1])
    assert writer.close() == 2
    assert count_frames(writer.path, decode=True) == 2


def test_a_video_without_frames_is_a_valid_file(tmp_path: Path) -> None:
    writer = open_video_writer(tmp_path / "empty.mp4", W, H, 30)
    assert writer.close() == 0
    assert count_frames(writer.path) == count_frames(writer.path, decode=True) == 0
    assert list(iter_frames(writer.path)) == []


def test_codec_settings_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="h264, hevc, av1"):
        VideoCodec("vp9")
    with pytest.raises(ValueError, match="crf"):
        VideoCodec("h264", crf=60)
    assert (VideoCodec().crf, VideoCodec("hevc").crf, VideoCodec("av1").crf) == (23, 28, 35)
    with pytest.raises(ValueError, match="even"):
        open_video_writer(tmp_path / "odd.mp4", 321, 240, 30)
    with pytest.raises(ValueError, match=".mp4"):
        open_video_writer(tmp_path / "v.avi", W, H, 30)


CHILD = """
import sys
import numpy as np
from egorec_ros.codecs.video import VideoCodec, open_video_writer
sys.path.insert(0, {test_dir!r})
from test_codecs_video import render
frames = render(60)
writer = open_video_writer({path!r}, {w}, {h}, 30, VideoCodec("h264", gop={gop}))
i = 0
while True:
    writer.write(frames[i % 60])
    i += 1
    print(i, flush=True)
"""


def record_and_kill(path: Path, frames_before_kill: int) -> int:
    """Run a recording in a subprocess and SIGKILL it while it writes; frames written by then."""
    code = CHILD.format(test_dir=str(Path(__file__).parent), path=str(path), w=W, h=H, gop=GOP)
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    written = 0
    for line in child.stdout:
        written = int(line)
        if written >= frames_before_kill:
            break
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=10)
    assert child.returncode == -signal.SIGKILL and written >= frames_before_kill
    return written


@pytest.fixture(scope="module")
def crashed(tmp_path_factory) -> tuple[Path, int]:
    path = tmp_path_factory.mktemp("crash") / "killed.mp4"
    return path, record_and_kill(path, 100)


def test_sigkill_leaves_readable_fragments(crashed: tuple[Path, int], tmp_path: Path) -> None:
    path, written = crashed
    assert "moof" in top_level_boxes(path)                  # fragmented while recording
    readable = count_frames(path)
    # a fragment completes at each keyframe; x264 holds back ~12 frames (look-ahead + threads)
    assert written - GOP - 20 <= readable <= written
    assert count_frames(path, decode=True) == readable

    clean = tmp_path / "salvaged.mp4"
    assert trim_video(path, clean, 10_000) == readable
    assert "moof" not in top_level_boxes(clean)
    expected = render(60)
    decoded = list(iter_frames(clean))
    assert len(decoded) == readable
    assert min(psnr(d, expected[i % 60]) for i, d in enumerate(decoded)) > 30.0
    assert np.array_equal(read_frame(clean, readable - 1), decoded[-1])


def test_trim_keeps_exactly_the_frames_asked_for(crashed: tuple[Path, int], tmp_path: Path) -> None:
    path, _ = crashed
    copy = tmp_path / "copy.mp4"
    copy.write_bytes(path.read_bytes())
    assert trim_video(copy, copy, 37) == 37                  # in place, atomically
    assert count_frames(copy, decode=True) == 37
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_cut_at_any_byte_loses_only_the_cut_packet(crashed: tuple[Path, int], tmp_path: Path) -> None:
    path, _ = crashed
    data = path.read_bytes()
    cut_file = tmp_path / "cut.mp4"
    previous = 0
    for cut in [*np.linspace(len(data) // 10, len(data) - 1, 9).astype(int), len(data)]:
        cut_file.write_bytes(data[:cut])
        readable = count_frames(cut_file)
        assert readable >= previous                           # more bytes never means fewer frames
        assert count_frames(cut_file, decode=True) == readable
        assert trim_video(cut_file, tmp_path / "t.mp4", readable) == readable
        if cut == len(data) - 1:                              # the last packet lost a byte
            assert readable == count_frames(path) - 1
            with pytest.raises(DamagedVideoError, match="incomplete"):
                list(iter_frames(cut_file))                   # readers of episodes get no short file
        previous = readable
    assert previous == count_frames(path)
    cut_file.write_bytes(data[:40])                           # torn inside the header
    with pytest.raises((DamagedVideoError, av.error.FFmpegError)):
        count_frames(cut_file)


def test_a_writer_for_frames_that_can_be_made_again_writes_no_fragments(tmp_path: Path,
                                                                      frames: list[np.ndarray]) -> None:
    """A conversion (crash_safe=False) writes plain MP4: no moof while writing, the same pictures."""
    safe, plain = tmp_path / "safe.mp4", tmp_path / "plain.mp4"
    with open_video_writer(safe, W, H, 30) as a, open_video_writer(plain, W, H, 30, crash_safe=False) as b:
        for f in frames[:20]:
            a.write(f)
            b.write(f)
        assert "moof" in top_level_boxes(safe)
        assert "moof" not in top_level_boxes(plain)
    assert count_frames(plain) == 20 and "moov" in top_level_boxes(plain)
    for x, y in zip(iter_frames(safe), iter_frames(plain)):
        assert np.array_equal(x, y)
