"""Camera videos into the export: copied as they are (our MP4s are H.264/HEVC/AV1
without B-frames, pts = i/fps from 0, which LeRobot decodes by timestamp frame-exactly),
or re-encoded with LeRobot's own defaults (libsvtav1, yuv420p, g=2, crf=30, preset 12,
fast-decode 0; lerobot 0.6.1 configs/video.py RGBEncoderConfig). One file per episode and
camera: LeRobot v3 lets a file hold one or several episodes; from/to timestamps say where.

Depth: our depth MP4 already is LeRobot 0.6's depth encoding. LeRobot stores 12-bit codes
``c`` in HEVC gray12le and reads ``exp(ln(min+shift) + c·(ln(max+shift) − ln(min+shift))/4095)
− shift`` metres (lerobot/datasets/depth_utils.py); with depth_min 0.1 m, depth_max 5 m,
shift 0, use_log that is our code ``mm = exp(ln 100 + c·ln 50/4095)`` (codecs/depth.py)
exactly, so depth files are copied under ``--video reencode`` too, and an FFV1 .mkv
(raw mm, our fallback) is transcoded to that code. Holes (our codes < 128) come back from
LeRobot as depths below ``DEPTH_HOLE_BELOW_MM``: LeRobot clamps to depth_min, no zero."""
from __future__ import annotations

import shutil
from fractions import Fraction
from pathlib import Path
from typing import TypedDict

import av
import numpy as np

from egorec_ros.codecs import depth as depth_codec
from egorec_ros.codecs.probe import count_frames, decode_frames
from egorec_ros.errors import UserError

COPYABLE = {"h264", "hevc", "av1"}
class Encoder(TypedDict):
    codec: str
    pix_fmt: str
    options: dict[str, str]


LEROBOT_ENCODER: Encoder = {"codec": "libsvtav1", "pix_fmt": "yuv420p",
                            "options": {"g": "2", "crf": "30", "preset": "12", "svtav1-params": "fast-decode=0"}}
# the encoder fields lerobot 0.6.1 records as video.<field> (get_video_info with its encoder)
LEROBOT_ENCODER_FIELDS = {"g": 2, "crf": 30, "preset": 12, "fast_decode": 0, "video_backend": "pyav",
                          "extra_options": {}}
# our depth code in LeRobot's terms (DepthEncoderConfig fields, metres)
DEPTH_QUANTIZER = {"depth_min": 0.1, "depth_max": 5.0, "shift": 0.0, "use_log": True}   # 100 mm, 100·50 mm
# millimetres LeRobot reads for each of our 12-bit codes (its dequantize_depth, output_unit "mm")
DEPTH_LEVELS = np.rint(np.exp(depth_codec.LN_100 + np.arange(depth_codec.CODE_MAX + 1)
                              * (depth_codec.LN_50 / depth_codec.CODE_MAX)))
# Below this many mm (as LeRobot reads it) a pixel is a hole. We store holes as code 0 and
# valid depths at codes >= GUARD_CODE (128 mm); HEVC drift keeps holes <= ~46 and valid
# pixels >= ~216 (codecs/depth.py), so the middle of the guard band (code 192) separates
# them; LeRobot rounds to whole mm, so a code threshold (ours: 128) has no exact mm twin.
DEPTH_HOLE_BELOW_MM = int(DEPTH_LEVELS[(depth_codec.INVALID_BELOW + depth_codec.GUARD_CODE) // 2])
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


def copy_depth(src: Path, dst: Path, rows: int, fps: int) -> None:
    """Our HEVC code MP4 as it is; FFV1 mm (.mkv) transcoded to it (needs 12-bit libx265)."""
    if src.suffix == ".mp4":
        copy_video(src, dst, rows, fps)
        return
    frames = depth_codec.iter_depth_mm(src)
    first = next(frames, None)
    if first is None:
        raise VideoExportError(f"{src}: no depth frame decodes")
    writer = depth_codec.open_depth_writer(dst.with_suffix(".partial.mp4"), first.shape[1], first.shape[0], fps)
    n = 0
    with writer:
        if writer.extension != "mp4":
            raise VideoExportError(f"{src}: FFV1 depth needs libx265 with 12-bit gray to become LeRobot's depth "
                                   "video, and this FFmpeg has none; leave the stream out with --cameras")
        for mm in (first, *frames):
            writer.write(mm)
            n += 1
    if n != rows:
        writer.path.unlink()
        raise VideoExportError(f"{src}: {n} frames for {rows} rows; run `egorec validate` on the task")
    writer.path.rename(dst)


def encoder_fields(entry: dict | None, depth: bool) -> dict:
    """video.<field> entries of lerobot 0.6's VideoEncoderConfig for a copied file, from the
    episode row's ``video_codec`` entry of its stream (what our recorder encoded with)."""
    entry = entry or {}
    out: dict = {"g": entry.get("gop"), "crf": entry.get("crf"), "preset": entry.get("preset"), "fast_decode": 0,
           "video_backend": "pyav", "extra_options": {}}
    if depth:
        settings = depth_codec.hevc_depth_settings()
        out |= {"preset": settings.options["preset"], "crf": None,
                "extra_options": {"x265-params": ":".join(
                    p for p in settings.options["x265-params"].split(":")
                    if p.split("=")[0] not in ("log-level", "pools", "frame-threads"))},
                **DEPTH_QUANTIZER}
    return out


def video_info(path: Path, encoder: dict, depth: bool = False) -> dict:
    """The ``info`` block of a video feature as lerobot 0.6.1's get_video_info writes it
    (stream-derived keys, then ``video.<encoder field>``, then ``is_depth_map``; depth
    features also carry ``depth_unit``, the unit the recorder was given)."""
    with av.open(str(path)) as c:
        s = c.streams.video[0]
        rate = s.base_rate   # PyAV >= 19: an AVRational, which int() refuses
        if rate is None:
            raise VideoExportError(f"{path}: its video stream has no frame rate; re-encode it with one (ffmpeg -r)")
        info: dict = {"depth_unit": "mm"} if depth else {}
        info |= {"video.height": s.height, "video.width": s.width,
                 "video.codec": s.codec_context.codec.canonical_name, "video.pix_fmt": s.pix_fmt,
                 "video.fps": rate.numerator // rate.denominator, "video.channels": 1 if depth else 3,
                 "has_audio": bool(c.streams.audio)}
    info |= {f"video.{k}": v for k, v in encoder.items()}
    info["is_depth_map"] = depth
    return info


def frame_size(path: Path) -> tuple[int, int]:
    with av.open(str(path)) as c:
        s = c.streams.video[0]
        return s.height, s.width


def keyframe_sample(path: Path, at_most: int = 40, depth: bool = False) -> np.ndarray:
    """Up to ``at_most`` keyframes spread over the file, each decoded on its own (no
    inter-frame decoding) and scaled to about STATS_MAX_SIDE pixels: (K, h, w, 3) uint8
    for the per-channel image stats, or for depth (K, h, w) uint16 codes (every step-th
    pixel: codes are not averaged, a hole beside a wall is not a middle depth)."""
    with av.open(str(path)) as c:
        s = c.streams.video[0]
        keys = [p for p in c.demux(s) if p.is_keyframe and p.size]
        keys = [keys[i] for i in np.unique(np.linspace(0, len(keys) - 1, min(at_most, len(keys))).astype(int))]
        step = max(1, max(s.height, s.width) // STATS_MAX_SIDE)
        width, height = s.width // step, s.height // step
        frames: list[np.ndarray] = []
        for packet in keys:
            ctx = av.CodecContext.create(s.codec_context.name, "r")
            assert isinstance(ctx, av.VideoCodecContext)     # a video stream's codec (PyAV 17's stubs say CodecContext)
            ctx.extradata = s.codec_context.extradata
            decoded = (*ctx.decode(packet), *ctx.decode(None))
            frames += ([f.to_ndarray()[::step, ::step] for f in decoded] if depth
                       else [f.reformat(width, height, "rgb24").to_ndarray() for f in decoded])
    if not frames:
        raise VideoExportError(f"{path}: no keyframe decodes")
    return np.stack(frames)
