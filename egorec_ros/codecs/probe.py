"""Reading our video files back: frame counts, sequential and random-access decoding,
and salvage of a file cut short by a crash.

Files are MP4 (H.264 / HEVC / AV1 RGB, HEVC gray12 depth) or Matroska (FFV1 depth), one
video stream each, written without B-frames: packet i is frame i. A file cut short by
a crash ends in a packet whose bytes are missing, which the demuxer flags as corrupt.
So "readable frames" means the complete packets before the first incomplete one:
``count_frames`` and ``trim_video`` stop there quietly (their callers compare counts
with the episode's rows), while the decoding functions, which a reader of a committed
episode uses, raise ``DamagedVideoError`` instead of returning fewer frames.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from fractions import Fraction
from itertools import chain
from pathlib import Path

import av
import numpy as np

from egorec_ros.layout.atomic import atomic_path

MUXERS = {"mp4": "mp4", "mkv": "matroska"}   # file suffix -> FFmpeg muxer


class DamagedVideoError(ValueError):
    """A file whose packets are incomplete or do not decode."""


@contextmanager
def _opened(path: str | Path) -> Iterator[tuple[av.container.InputContainer, av.video.stream.VideoStream]]:
    with av.open(str(path)) as container:
        if not container.streams.video:
            raise DamagedVideoError(f"{path}: no video stream (empty file, or cut before its header)")
        yield container, container.streams.video[0]


def _complete_packets(container: av.container.InputContainer, stream: av.video.stream.VideoStream,
                      path: str | Path, strict: bool) -> Iterator[av.Packet]:
    """Packets in file order up to the first incomplete one (strict: raise there instead)."""
    n = 0
    try:
        for packet in container.demux(stream):
            if packet.size == 0:      # the demuxer's end-of-stream marker
                continue
            if packet.is_corrupt:
                problem = f"packet {n} is incomplete (file cut short?)"
                break
            yield packet
            n += 1
        else:
            return
    except (av.error.InvalidDataError, av.error.EOFError) as exc:
        problem = f"cannot read past packet {n}: {exc}"
    if strict:
        raise DamagedVideoError(f"{path}: {problem}")


def count_frames(path: str | Path, decode: bool = False) -> int:
    """Readable frames: complete packets (fast, no decoding), or with ``decode`` the frames
    that actually decode, stopping at the first that does not."""
    with _opened(path) as (container, stream):
        if not decode:
            return sum(1 for _ in _complete_packets(container, stream, path, strict=False))
        stream.thread_type = "AUTO"
        n = 0
        try:
            for packet in _complete_packets(container, stream, path, strict=False):
                n += len(stream.codec_context.decode(packet))
            n += len(stream.codec_context.decode(None))
        except av.error.FFmpegError:
            pass
        return n


def decode_frames(path: str | Path) -> Iterator[av.VideoFrame]:
    """Every frame of the file in order; DamagedVideoError if it is cut short or broken."""
    with _opened(path) as (container, stream):
        stream.thread_type = "AUTO"
        n = 0
        for packet in chain(_complete_packets(container, stream, path, strict=True), [None]):
            try:
                frames = stream.codec_context.decode(packet)
            except av.error.FFmpegError as exc:
                raise DamagedVideoError(f"{path}: frame {n} does not decode: {exc}") from exc
            n += len(frames)
            yield from frames


def iter_frames(path: str | Path) -> Iterator[np.ndarray]:
    """HxWx3 uint8 RGB frames in order."""
    for frame in decode_frames(path):
        yield frame.to_ndarray(format="rgb24")


def _rate(stream: av.video.stream.VideoStream, path: str | Path) -> Fraction:
    rate = stream.guessed_rate or stream.average_rate
    if not rate:
        raise DamagedVideoError(f"{path}: no frame rate; cannot map frame numbers to timestamps")
    return Fraction(rate.numerator, rate.denominator)   # PyAV >= 19 gives an AVRational, older a Fraction


def _time_base(stream: av.video.stream.VideoStream, path: str | Path) -> Fraction:
    if stream.time_base is None:
        raise DamagedVideoError(f"{path}: no time base; cannot map frame numbers to timestamps")
    return Fraction(stream.time_base.numerator, stream.time_base.denominator)


def decode_frame_at(path: str | Path, index: int) -> av.VideoFrame:
    """Frame ``index``: seek to the keyframe at or before it and decode forward (about
    gop/2 frames). Frames are found by timestamp (pts = index / fps), so this works for
    MP4 and for Matroska's millisecond clock alike."""
    if index < 0:
        raise IndexError(f"{path}: frame index must be >= 0, got {index}")
    with _opened(path) as (container, stream):
        rate, tb = _rate(stream, path), _time_base(stream, path)
        start = stream.start_time or 0
        container.seek(start + int(Fraction(index) / rate / tb), stream=stream, backward=True)
        for packet in chain(_complete_packets(container, stream, path, strict=True), [None]):
            for frame in stream.codec_context.decode(packet):
                if frame.pts is None:
                    raise DamagedVideoError(f"{path}: a frame decoded near frame {index} has no timestamp")
                i = round((frame.pts - start) * tb * rate)
                if i == index:
                    return frame
                if i > index:
                    raise DamagedVideoError(f"{path}: frame {index} missing (next decoded frame is {i})")
    raise IndexError(f"{path}: frame {index} is past the end of the video")


def read_frame(path: str | Path, index: int) -> np.ndarray:
    """Frame ``index`` as HxWx3 uint8 RGB, for training loaders (random access)."""
    return decode_frame_at(path, index).to_ndarray(format="rgb24")


def trim_video(src: str | Path, dst: str | Path, frames: int) -> int:
    """Copy the first ``frames`` readable frames of ``src`` (possibly cut short by a crash)
    into a normal, complete file ``dst`` (stream copy, no re-encode; MP4 or MKV by its
    suffix). ``dst`` may be ``src``; it is replaced atomically and durably (fsync).
    Returns the frames kept."""
    src, dst = Path(src), Path(dst)
    if frames < 1:
        raise ValueError(f"{src}: trimming to {frames} frames; a video file keeps at least one")
    muxer = MUXERS.get(dst.suffix.lstrip("."))
    if muxer is None:
        raise ValueError(f"{dst}: video files end in .mp4 or .mkv")
    kept = 0
    with atomic_path(dst) as tmp, _opened(src) as (container, stream), \
            av.open(str(tmp), mode="w", format=muxer) as out:
        # opaque: copy the stream as is; no encoder is looked up (AV1 decodes with libdav1d)
        out_stream = out.add_stream_from_template(stream, opaque=True)
        out_stream.time_base = stream.time_base
        if muxer == "mp4" and stream.codec_context.name == "hevc":
            out_stream.codec_tag = "hvc1"   # Apple players and some readers accept only hvc1
        out.start_encoding()                # a header even if src holds no complete packet
        for packet in _complete_packets(container, stream, src, strict=False):
            if kept == frames:
                break
            packet.stream = out_stream
            out.mux(packet)
            kept += 1
    return kept
