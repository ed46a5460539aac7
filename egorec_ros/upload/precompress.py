"""``--precompress``: RGB videos re-encoded to HEVC at CRF ~30 before packing, as the reference
collector does, to send less. HEVC files (already small) and depth (12-bit HEVC gray or
16-bit FFV1: millimetres must not be touched by a lossy 8-bit encoder) go as they are. The
local files stay as recorded (the episode row's codec fields describe them); only the slice
carries the re-encoded copies."""
from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import av

from egorec_ros.codecs.probe import iter_frames
from egorec_ros.codecs.video import open_video_writer
from egorec_ros.codecs.video_codec import VideoCodec

CRF = 30
CODEC = VideoCodec("hevc", crf=CRF, preset="fast")
_EIGHT_BIT = {"yuv420p", "yuvj420p", "yuv422p", "yuvj422p", "yuv444p", "yuvj444p", "nv12", "rgb24", "gray"}


def needs_reencode(path: Path) -> bool:
    """True for an 8-bit RGB video that is not HEVC already."""
    with av.open(str(path)) as container:
        if not container.streams.video:
            return False
        ctx = container.streams.video[0].codec_context
        return ctx.name not in ("hevc", "ffv1") and (ctx.pix_fmt or "") in _EIGHT_BIT


def reencode(src: Path, dst: Path) -> int:
    """HEVC CRF 30 copy of ``src`` at ``dst`` (same size, rate and frame count); returns frames."""
    with av.open(str(src)) as container:
        stream = container.streams.video[0]
        width, height = stream.codec_context.width, stream.codec_context.height
        rate = stream.guessed_rate or stream.average_rate   # PyAV >= 19: an AVRational, older: a Fraction
        fps = Fraction(rate.numerator, rate.denominator) if rate else Fraction(30)
    with open_video_writer(dst, width, height, fps, CODEC) as writer:
        for frame in iter_frames(src):
            writer.write(frame)
        return writer.frames_written
