"""Camera videos into the export: copied as they are (our MP4s are H.264/HEVC/AV1
without B-frames, pts = i/fps from 0, which LeRobot decodes by timestamp frame-exactly),
or re-encoded with LeRobot's own defaults (libsvtav1, yuv420p, g=2, crf=30, preset 12;
lerobot/datasets/video_utils.py encode_video_frames). One file per episode and camera:
LeRobot v3 lets a file hold one or several episodes; from/to timestamps say where."""
from __future__ import annotations

import shutil
from fractions import Fraction
from pathlib import Path
from typing import TypedDict

import av
import numpy as np

from egorec_ros.codecs.probe import count_frames, decode_frames
from egorec_ros.errors import UserError

COPYABLE = {"h264", "hevc", "av1"}
class Encoder(TypedDict):
    codec: str
    pix_fmt: str
    options: dict[str, str]


LEROBOT_ENCODER: Encoder = {"codec": "libsvtav1", "pix_fmt": "yuv420p",
                            "options": {"g": "2", "crf": "30", "preset": "12"}}
STATS_MAX_SIDE = 150          # keyframes for image stats are subsampled to about this size


class VideoExportError(UserError, ValueError):
    """A video that cannot go into the export as asked (message: file, problem, what to do)."""


def check_copyable(path: Path, rows: int, fps: int) -> None:
    """A copy is only frame-exact if the file is an MP4 of a copyable codec, has one
    frame per row, starts at pts 0 and runs at the task fps."""
    with av.open(str(path)) as c:
        s = c.streams.video[0]
        avg = s.average_rate   # PyAV >= 19: an AVRational (int() refuses it), older: a Fraction
        codec, rate = s.codec_context.name, Fraction(avg.numerator, avg.denominator) if avg else Fraction(0)
        start = s.start_time or 0
    if path.suffix != ".mp4" or codec not in COPYABLE:
        raise VideoExportError(f"{path}: {codec} in {path.suffix}; --video copy takes H.264/HEVC/AV1 MP4 only, "
                               "use --video reencode")
    if rate != fps:
        raise VideoExportError(f"{path}: {float(rate)} fps but the task is {fps} fps; use --video reencode")
    if start != 0:
        raise VideoExportError(f"{path}: first frame at pts {start}, not 0; use --video reencode")
    frames = count_frames(path)
    if frames != rows:
        raise VideoExportError(f"{path}: {frames} frames for {rows} rows; run `egorec validate` on the task")


def copy_video(src: Path, dst: Path, rows: int, fps: int) -> None:
    check_copyable(src, rows, fps)
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)   # no fsync per file: the export folder is renamed into place when complete


def reencode_video(src: Path, dst: Path, rows: int, fps: int) -> None:
    """Decode every frame and encode it as LeRobot would; frame i gets pts i (time base 1/fps)."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with av.open(str(dst), "w", format="mp4") as out:
        stream: av.VideoStream | None = None
        for frame in decode_frames(src):
            if stream is None:
                added = out.add_stream(LEROBOT_ENCODER["codec"], rate=fps, options=LEROBOT_ENCODER["options"])
                assert isinstance(added, av.VideoStream)       # libsvtav1 encodes video
                stream = added
                stream.width, stream.height = frame.width, frame.height
                stream.pix_fmt = LEROBOT_ENCODER["pix_fmt"]
                stream.time_base = Fraction(1, fps)
            img = frame.reformat(format="yuv420p")
            img.pts, img.time_base = n, Fraction(1, fps)
            out.mux(stream.encode(img))
            n += 1
        if stream is None:
            raise VideoExportError(f"{src}: no frame decodes")
        out.mux(stream.encode(None))
    if n != rows:
        dst.unlink()
        raise VideoExportError(f"{src}: {n} frames for {rows} rows; run `egorec validate` on the task")


def video_info(path: Path) -> dict:
    """The ``info`` block of a video feature, as lerobot's get_video_info writes it."""
    with av.open(str(path)) as c:
        s = c.streams.video[0]
        rate = s.base_rate   # PyAV >= 19: an AVRational, which int() refuses
        if rate is None:
            raise VideoExportError(f"{path}: its video stream has no frame rate; re-encode it with one (ffmpeg -r)")
        return {"video.height": s.height, "video.width": s.width, "video.codec": s.codec_context.codec.canonical_name,
                "video.pix_fmt": s.pix_fmt, "video.is_depth_map": False, "video.fps": rate.numerator // rate.denominator,
                "video.channels": 3, "has_audio": bool(c.streams.audio)}


def frame_size(path: Path) -> tuple[int, int]:
    with av.open(str(path)) as c:
        s = c.streams.video[0]
        return s.height, s.width


def keyframe_sample(path: Path, at_most: int = 40) -> np.ndarray:
    """Up to ``at_most`` keyframes spread over the file, each decoded on its own (no
    inter-frame decoding) and scaled to about STATS_MAX_SIDE pixels: (K, h, w, 3) uint8
    for the per-channel image stats."""
    with av.open(str(path)) as c:
        s = c.streams.video[0]
        keys = [p for p in c.demux(s) if p.is_keyframe and p.size]
        keys = [keys[i] for i in np.unique(np.linspace(0, len(keys) - 1, min(at_most, len(keys))).astype(int))]
        step = max(1, max(s.height, s.width) // STATS_MAX_SIDE)
        width, height = s.width // step, s.height // step
        frames = []
        for packet in keys:
            ctx = av.CodecContext.create(s.codec_context.name, "r")
            assert isinstance(ctx, av.VideoCodecContext)     # a video stream's codec (PyAV 17's stubs say CodecContext)
            ctx.extradata = s.codec_context.extradata
            frames += [f.reformat(width, height, "rgb24").to_ndarray() for f in (*ctx.decode(packet), *ctx.decode(None))]
    if not frames:
        raise VideoExportError(f"{path}: no keyframe decodes")
    return np.stack(frames)
