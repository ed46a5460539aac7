"""RGB video files: H.264 by default, HEVC and AV1 selectable; written incrementally, crash-safe.

Layout of a file while it is being written: fragmented MP4 (``frag_every_frame+empty_moov+
default_base_moof``, every packet flushed to the OS). Every frame is a complete fragment,
so a process killed with SIGKILL leaves a file whose every encoded frame can be read back
and salvaged (``probe.trim_video``); what is lost is the encoder's delay. Fragments cut
only at keyframes lost up to a GOP more: 0.5-1.6 s of rows per kill (issue 24, with the
journal a row group behind); cut at every frame, with x264's look-ahead at 5 frames
(``LOOKAHEAD``, delay 13 -> 8 frames) and the journal 0.2 s behind, at most 0.5 s
(test_record_kill). The per-frame ``moof`` costs ~100 bytes a frame while recording; the
remux at close drops it. ``close()`` then remuxes the file (stream copy,
no re-encode, a few ms per minute of video) into a normal MP4 with a complete sample
table, replaced atomically: readers open it and seek in it ~3x faster than in the
fragmented form (measured 3 ms vs 10 ms per random read of a 10-minute file).

Timing: pts = frame index, time base 1/fps (an exact ``Fraction``, so 29.97 is 2997/100).
There are no B-frames (x264 ``bf=0``, x265 ``bframes=0``, SVT-AV1 low-delay prediction),
so decode order is presentation order and packet i is frame i.

Look-ahead: x264 veryfast looks 10 frames ahead (13 frames from a frame in to its packet
out, 2 threads); ``rc-lookahead=5`` makes it 8. On 150 simulated 640x480 camera frames
(crf 23): 6.4 % smaller files, 0.39 dB lower PSNR (41.98 -> 41.59), 6 % less CPU: about
the same rate-distortion trade, for 5 frames less to lose in a crash. The 12-bit depth
HEVC (constant QP) gets the same look-ahead (delay 13 -> 8); SVT-AV1 low-delay and FFV1
have none.

GOP (keyframe interval) ``gop=15`` by default: half a second at 30 fps. A training loader
reading frame i decodes from the keyframe before it, on average (gop+1)/2 frames, so the
GOP is what a random read costs; a short GOP also bounds what a crash loses. The price
is file size, as a keyframe costs many P-frames. ``bench/bench_video.py`` measures it
(h264 640x480, 300 frames of a rendered panning scene, 2 cores):

    gop   file size   read_frame (open, seek, decode)   sequential decode
    15    0.96 MB      9.7 ms                           0.55 ms/frame
    30    0.75 MB     13.0 ms                           0.55 ms/frame
    60    0.64 MB     24.7 ms                           0.55 ms/frame

So gop 15 reads a random frame 25 % faster than gop 30 and 2.5x faster than gop 60, for
files 28 % larger than gop 30 on this mostly static scene (less on real footage, where
P-frames cost more). Pass ``VideoCodec(gop=30)`` when storage matters more.

Presets (bench, 1280x800, 2 threads): h264 veryfast ~120 fps, hevc ultrafast ~65 fps,
av1 (SVT preset 8) ~45 fps. Threads: FFmpeg's encoders would start a thread per core or
more each; on a small recording PC several encoders run at once, so each gets
``threads`` (default 2: x264 frame threads, x265 ``pools``, SVT ``lp``). PyAV releases
the GIL while encoding: two encoder threads keep 1.95 of 2 cores busy.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import av
import numpy as np

from egorec_ros.codecs.probe import MUXERS, trim_video
from egorec_ros.codecs.video_codec import CODECS, VideoCodec
from egorec_ros.layout.atomic import fsync_path

FRAGMENTED_MP4 = {"movflags": "frag_every_frame+empty_moov+default_base_moof", "flush_packets": "1"}
INCREMENTAL_MKV = {"flush_packets": "1"}

LOOKAHEAD = 5             # x264 frames of look-ahead: the encoder's delay, what a kill -9 loses (see above)

AVCOL_SPC_SMPTE170M = 6   # BT.601: the matrix swscale uses for rgb24 -> yuv420p by default
AVCOL_RANGE_MPEG = 1      # limited range, also swscale's default for yuv420p


@dataclass(frozen=True)
class EncoderSettings:
    """Everything FFmpeg is told about one stream; the writer and the benchmark's bare
    PyAV loop both use it, so they encode identically."""

    encoder: str
    pix_fmt: str
    options: dict[str, str]
    thread_count: int
    thread_type: str = "FRAME"
    codec_tag: str | None = None
    color: dict[str, int] = field(default_factory=dict)   # codec-context colour tags


def encoder_settings(codec: VideoCodec) -> EncoderSettings:
    if codec.encoder:
        return hardware_settings(codec, codec.encoder)
    family = CODECS[codec.name]
    common = {"g": str(codec.gop), "crf": str(codec.crf), "preset": codec.preset}
    color = {"colorspace": AVCOL_SPC_SMPTE170M, "color_range": AVCOL_RANGE_MPEG}
    if codec.name == "h264":
        return EncoderSettings(family.encoder, "yuv420p", {**common, "bf": "0", "x264-params": f"rc-lookahead={LOOKAHEAD}"},
                               codec.threads, color=color)
    if codec.name == "hevc":
        params = f"log-level=error:bframes=0:pools={codec.threads}:frame-threads=1"
        return EncoderSettings(family.encoder, "yuv420p", {**common, "x265-params": params}, codec.threads,
                               codec_tag="hvc1", color=color)
    # SVT-AV1: low-delay prediction (no hidden reordering, no 40-frame look-ahead), lp = threads;
    # SVT_LOG=1 (errors only) stops the banner it prints on stderr for every encoder.
    os.environ.setdefault("SVT_LOG", "1")
    return EncoderSettings(family.encoder, "yuv420p",
                           {**common, "svtav1-params": f"pred-struct=1:lp={codec.threads}"}, codec.threads, color=color)


def hardware_settings(codec: VideoCodec, encoder: str) -> EncoderSettings:
    """Settings for the hardware ``encoder`` (``codec.encoder``): same GOP, no B-frames, a
    constant-quality mode close to ``codec.crf``. The software frames are converted to the
    pixel format here."""
    gop = str(codec.gop)
    family = encoder.rsplit("_", 1)[1]
    if family == "nvenc":
        options = {"g": gop, "bf": "0", "preset": "p4", "rc": "vbr", "cq": str(codec.crf)}
    elif family == "qsv":
        options = {"g": gop, "bf": "0", "global_quality": str(codec.crf)}
    elif family == "amf":
        options = {"g": gop, "bf": "0", "rc": "cqp", "qp_i": str(codec.crf), "qp_p": str(codec.crf)}
    else:  # vaapi, v4l2m2m
        options = {"g": gop, "bf": "0"}
    pix_fmt = "nv12" if family in ("qsv", "vaapi") else "yuv420p"
    tag = "hvc1" if encoder.startswith("hevc") else None
    return EncoderSettings(encoder, pix_fmt, options, 1, thread_type="SLICE", codec_tag=tag)


class FrameFormatError(ValueError):
    """A frame that does not fit the stream (size, dtype, channels). Nothing was written."""


def check_frame(frame: object, height: int, width: int, dtype: type, channels: tuple[int, ...],
                what: str) -> np.ndarray:
    """``frame`` as a C-contiguous array if its shape and dtype fit, else FrameFormatError.
    ``channels`` lists the accepted channel counts, 0 meaning a plain HxW image.

    Writers wrap that array in a frame without copying (``VideoFrame.from_numpy_buffer``):
    ``from_ndarray`` copied every picture twice into fresh buffers (``tobytes`` then the
    plane), megabytes of allocation per frame and most of the converter's page faults
    (issue 13); the encoded bytes are the same."""
    if not isinstance(frame, np.ndarray):
        raise FrameFormatError(f"expected {what} as a numpy array, got {type(frame).__name__}")
    shapes = [(height, width) if c == 0 else (height, width, c) for c in channels]
    if frame.dtype != dtype or frame.shape not in shapes:
        raise FrameFormatError(f"expected {what} of shape {' or '.join(map(str, shapes))} "
                               f"{np.dtype(dtype).name}, got {frame.shape} {frame.dtype}")
    return np.ascontiguousarray(frame)


class VideoFileWriter:
    """One video stream written into one file, frame by frame. Not thread-safe: one
    thread writes (``BackgroundEncoder`` gives it its own)."""

    def __init__(self, path: Path, width: int, height: int, fps: float | Fraction, settings: EncoderSettings,
                 to_frame: Callable[[np.ndarray], av.VideoFrame], blank: np.ndarray, *, crash_safe: bool = True):
        """``crash_safe=False``: a plain MP4 written at close, for frames that can be made again from
        their source (a conversion: the bag is still there). Cutting a fragment at every frame,
        flushing every packet and remuxing at close cost a conversion ~12 % more CPU (issue 24.11)."""
        self.path = Path(path)
        self.width, self.height = width, height
        self.fps = frame_rate(fps)
        self.settings = settings
        self.frames_written = 0
        self._to_frame = to_frame
        self._blank = blank
        self._closed = False
        container = self.path.suffix.lstrip(".")
        if container not in MUXERS:
            raise ValueError(f"{self.path}: video files end in .mp4 or .mkv")
        self._fragmented = crash_safe and container == "mp4"
        options = FRAGMENTED_MP4 if self._fragmented else INCREMENTAL_MKV if crash_safe else {}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._container = av.open(str(self.path), mode="w", format=MUXERS[container], options=options)
        try:
            self._stream = add_video_stream(self._container, settings, width, height, self.fps)
            self._stream.codec_context.open()  # fail now (bad option, missing codec), not at frame 1
            self._container.start_encoding()   # the header is on disk: a file with 0 frames is valid
        except BaseException:
            self._container.close()
            self.path.unlink(missing_ok=True)
            raise

    @property
    def extension(self) -> str:
        """"mp4" or "mkv": what info.json's video_extensions must say for this file."""
        return self.path.suffix.lstrip(".")

    def blank_frame(self) -> np.ndarray:
        """A frame this writer accepts that carries nothing (black / no depth)."""
        return self._blank

    def write(self, frame: np.ndarray) -> None:
        if self._closed:
            raise RuntimeError(f"{self.path}: write after close")
        vf = self._to_frame(frame)
        vf.pts = self.frames_written
        vf.time_base = self._stream.codec_context.time_base
        for packet in self._stream.encode(vf):
            self._container.mux(packet)
        self.frames_written += 1

    def close(self) -> int:
        """Flush the encoder, close the file and, for MP4, turn the fragmented file into a
        normal one. Returns the number of frames written."""
        if self._closed:
            return self.frames_written
        self._closed = True
        try:
            for packet in self._stream.encode(None):
                self._container.mux(packet)
        finally:
            self._container.close()
        if not (self._fragmented and self.frames_written):  # (an MP4 without samples loses its track)
            fsync_path(self.path)
            return self.frames_written
        kept = trim_video(self.path, self.path, self.frames_written)
        if kept != self.frames_written:   # the copy holds every complete packet there was
            raise RuntimeError(f"{self.path}: {self.frames_written} frames encoded but the file holds {kept}")
        return self.frames_written

    def __enter__(self) -> VideoFileWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def frame_rate(fps: float | Fraction) -> Fraction:
    """fps as an exact fraction: 30 -> 30, 29.97 -> 2997/100, 30000/1001 stays."""
    rate = Fraction(fps).limit_denominator(1001)
    if rate <= 0:
        raise ValueError(f"fps must be positive, got {fps}")
    return rate


def add_video_stream(container: av.container.OutputContainer, settings: EncoderSettings, width: int,
                     height: int, fps: Fraction) -> av.video.stream.VideoStream:
    stream = container.add_stream(settings.encoder, rate=fps)
    assert isinstance(stream, av.video.stream.VideoStream)     # a video encoder gives a video stream
    ctx = stream.codec_context
    ctx.width, ctx.height, ctx.pix_fmt = width, height, settings.pix_fmt
    ctx.time_base = 1 / fps
    stream.time_base = 1 / fps
    ctx.options = dict(settings.options)
    ctx.thread_count = settings.thread_count
    ctx.thread_type = settings.thread_type
    for name, value in settings.color.items():
        setattr(ctx, name, value)
    if settings.codec_tag:
        ctx.codec_tag = settings.codec_tag
    return stream


def open_video_writer(path: str | Path, width: int, height: int, fps: float | Fraction,
                      codec: VideoCodec = VideoCodec(), *, crash_safe: bool = True) -> VideoFileWriter:
    """An MP4 writer for HxWx3 uint8 RGB or HxW uint8 gray frames (``crash_safe``: VideoFileWriter)."""
    path = Path(path)
    if path.suffix != ".mp4":
        raise ValueError(f"{path}: RGB video is written as .mp4")
    if width % 2 or height % 2:
        raise ValueError(f"{path}: yuv420p video needs even width and height, got {width}x{height}")

    def to_frame(frame: np.ndarray) -> av.VideoFrame:
        arr = check_frame(frame, height, width, np.uint8, (3, 0), "RGB (HxWx3) or gray (HxW) uint8")
        return av.VideoFrame.from_numpy_buffer(arr, format="rgb24" if arr.ndim == 3 else "gray")

    return VideoFileWriter(path, width, height, fps, encoder_settings(codec),
                           to_frame, np.zeros((height, width, 3), np.uint8), crash_safe=crash_safe)
