"""Depth maps as video (DESIGN "Depth code", spec §4.8): a 12-bit log-depth code in HEVC
gray12le .mp4, or raw millimetres in FFV1 gray16le .mkv (lossless fallback).

Code: ``code = clip(rint((ln mm - ln 100) * 4095 / ln 50), 0, 4095)``, decoded as
``mm = rint(exp(ln 100 + code * ln 50 / 4095))``: 100 mm .. 5 m in steps of 0.096 % of
the depth (1 mm at 1 m, 5 mm at 5 m); farther than 5 m is stored as 5 m.

Invalid pixels (0 mm, "no depth") need care, because the formula sends 0 mm and 100 mm
to the same code 0 and HEVC at qp=6 is lossy: a hole next to a far surface comes back
as code 40-200 (depending on encoder settings) and a near surface next to a far one
dips by a few tens of codes. So the stored code has a guard band:

* invalid (0 mm) -> code 0; a valid depth -> its formula code but at least
  ``GUARD_CODE`` = 256, so ``MIN_DEPTH_MM`` = 128 mm is the nearest representable depth
  (100-128 mm, and anything under 100 mm, is stored as 128 mm). Above 128 mm the code
  is exactly the DESIGN formula, so other readers of the file decode valid pixels right.
* the reader takes a decoded code below ``INVALID_BELOW`` = 128 (= 113 mm by the
  formula) as invalid, and any code at or above it as valid.

Encoder settings, chosen by measurement (x265 at qp=6, 848x480 rendered depth with
sensor noise, speckle holes, occlusion shadows, holes rimming objects, gripper fingers at
105-160 mm and a wall at up to 5.6 m; test_codecs_depth.py repeats it):

    x265 at qp=6, psy-rd=0 psy-rdoq=0   holes: max   valid: min   max error   KB/frame
                                        code         code         (codes)
    preset ultrafast                    107-205      211          112         212
    preset superfast                     62-90       220           86         109
     + ctu=16 max-tu-size=4 (ours)       43-46       216           50         75-81

So with ours, holes decode to code <= 46 (margin >= 82 below the threshold) and valid
pixels to code >= 216 (margin >= 88 above it); 30 % single-pixel holes on a 5.2 m wall
beside a 110-140 mm surface stay <= 44 / >= 222. 4x4 transforms keep the ringing of a
0 -> 4095 step local, and on noisy depth they are also the cheapest to code. Psycho-
visual RD is off: it keeps texture a viewer would miss, which for depth is error (with
it on, the largest error of a valid pixel grew from 108 to 138 codes in the ultrafast run).
Valid pixels: relative error median 0.3 %, p99 1.5 %, max 5 % (the largest on the rim of
a depth edge, a mixed pixel anyway); most of it is sensor noise the codec smooths.

Cost: qp=6 keeps the sensor noise, so 12-bit HEVC is slow. bench_video.py (noisy depth
with holes, 2 threads): 848x480 takes 38-55 ms CPU per frame, 1.1-1.7 cores at 30 fps
(~50 fps wall at best); 1280x800 87 ms, 22 fps wall, not real time on 2 cores. FFV1 takes
16 / 45 ms per frame but writes 4-9x the bytes (295 vs 34 KB per 848x480 frame). On a
2-core recorder prefer ``container="mkv"`` and transcode later.

No libx265, or one without 12-bit: ``open_depth_writer`` logs a warning and writes FFV1
.mkv instead; the writer's ``path`` / ``extension`` say which file was made, and
``iter_depth_mm`` reads both.
"""
from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterator
from fractions import Fraction
from pathlib import Path

import av
import numpy as np

from egorec_ros.codecs.probe import decode_frame_at, decode_frames
from egorec_ros.codecs.video import EncoderSettings, VideoFileWriter, check_frame

log = logging.getLogger(__name__)

CODE_MAX = 4095
LN_100, LN_50 = math.log(100.0), math.log(50.0)
GUARD_CODE = 256          # lowest code a valid pixel is stored with
INVALID_BELOW = 128       # decoded codes below this are holes
GOP = 15                  # as RGB video: random access and crash loss bounded by half a second
QP = 6
AVCOL_RANGE_JPEG = 2      # full range: all 4096 codes are data
DEPTH_CODE = "log12: code = rint((ln mm - ln 100) * 4095 / ln 50)"     # the formula, for readers


def log_depth_code(mm: np.ndarray) -> np.ndarray:
    """The DESIGN formula, without the guard band (0 mm and <= 100 mm both give code 0)."""
    with np.errstate(divide="ignore"):
        code = np.rint((np.log(np.asarray(mm, dtype=np.float64)) - LN_100) * (CODE_MAX / LN_50))
    return np.clip(code, 0, CODE_MAX).astype(np.uint16)


def _encode_table() -> np.ndarray:
    table = np.maximum(log_depth_code(np.arange(65536)), GUARD_CODE).astype(np.uint16)
    table[0] = 0
    return table


def _decode_table() -> np.ndarray:
    table = np.rint(np.exp(LN_100 + np.arange(CODE_MAX + 1) * (LN_50 / CODE_MAX))).astype(np.uint16)
    table[:INVALID_BELOW] = 0
    return table


_CODE_OF_MM = _encode_table()
_MM_OF_CODE = _decode_table()
MIN_DEPTH_MM = int(_MM_OF_CODE[GUARD_CODE])
MAX_DEPTH_MM = int(_MM_OF_CODE[CODE_MAX])


def codec_description(extension: str) -> dict:
    """What a reader needs to decode a depth file of this extension (the episode row's
    ``video_codec`` entry), including how holes are told apart from 100 mm (the guard band)."""
    if extension == "mp4":
        return {"codec": "hevc", "pix_fmt": "gray12le", "qp": QP, "gop": GOP, "ext": "mp4",
                "depth_code": DEPTH_CODE, "guard_code": GUARD_CODE, "invalid_below": INVALID_BELOW,
                "min_depth_mm": MIN_DEPTH_MM, "max_depth_mm": MAX_DEPTH_MM}
    return {"codec": "ffv1", "pix_fmt": "gray16le", "unit": "mm", "invalid": 0, "ext": "mkv"}


def mm_to_code(mm: np.ndarray) -> np.ndarray:
    """uint16 mm (0 = invalid) -> stored uint16 code: 0 for invalid, else >= GUARD_CODE."""
    mm = np.asarray(mm)
    if mm.dtype != np.uint16:
        raise TypeError(f"depth must be uint16 millimetres, got {mm.dtype}")
    return _CODE_OF_MM[mm]


def code_to_mm(code: np.ndarray) -> np.ndarray:
    """Decoded codes -> uint16 mm, 0 where the code is below INVALID_BELOW."""
    return _MM_OF_CODE[np.minimum(np.asarray(code, dtype=np.uint16), CODE_MAX)]


def hevc12_available() -> bool:
    """True if this FFmpeg's libx265 can encode 12-bit gray."""
    try:
        codec = av.codec.Codec("libx265", "w")
    except Exception:  # UnknownCodecError; its module moved between PyAV releases
        return False
    return any(f.name == "gray12le" for f in codec.video_formats or ())


def hevc_depth_settings(threads: int = 2) -> EncoderSettings:
    """x265 as measured in the module docstring; no B-frames, as RGB video."""
    params = (f"log-level=error:qp={QP}:bframes=0:psy-rd=0:psy-rdoq=0:ctu=16:max-tu-size=4:range=full"
              f":pools={threads}:frame-threads=1:rc-lookahead=5")   # delay 13 -> 8 frames (video.py)
    return EncoderSettings("libx265", "gray12le", {"g": str(GOP), "preset": "superfast", "x265-params": params},
                           threads, codec_tag="hvc1", color={"color_range": AVCOL_RANGE_JPEG})


def ffv1_depth_settings(threads: int = 2) -> EncoderSettings:
    """Intra-only (g=1): every frame decodes alone; slice CRCs let a reader spot damage."""
    return EncoderSettings("ffv1", "gray16le", {"level": "3", "g": "1", "slices": "4", "slicecrc": "1"},
                           threads, thread_type="SLICE")


def code_frame(mm: np.ndarray) -> av.VideoFrame:
    """uint16 mm -> gray12le frame of stored codes."""
    return av.VideoFrame.from_numpy_buffer(mm_to_code(mm), format="gray12le")   # no copy: see check_frame


def mm_frame(mm: np.ndarray) -> av.VideoFrame:
    return av.VideoFrame.from_numpy_buffer(np.ascontiguousarray(mm), format="gray16le")


def open_depth_writer(path: str | Path, width: int, height: int, fps: float | Fraction,
                      container: str = "mp4", *, threads: int = 2, crash_safe: bool = True) -> VideoFileWriter:
    """A writer for HxW uint16 mm frames (0 = invalid). ``container`` "mp4": HEVC 12-bit
    log-depth code, falling back to "mkv" (FFV1 mm) when libx265 cannot; the suffix of
    ``path`` is replaced by the container actually used (see ``writer.path``)."""
    if container not in ("mp4", "mkv"):
        raise ValueError(f"depth container must be 'mp4' or 'mkv', got {container!r}")
    path = Path(path)
    blank = np.zeros((height, width), np.uint16)

    def checked(encode: Callable[[np.ndarray], av.VideoFrame]) -> Callable[[np.ndarray], av.VideoFrame]:
        return lambda frame: encode(check_frame(frame, height, width, np.uint16, (0,), "depth in mm (HxW)"))

    if container == "mp4":
        if not hevc12_available():
            log.warning("libx265 cannot encode gray12le here; depth %s is written as lossless FFV1 .mkv", path.stem)
        else:
            try:
                return VideoFileWriter(path.with_suffix(".mp4"), width, height, fps, hevc_depth_settings(threads),
                                       checked(code_frame), blank, crash_safe=crash_safe)
            except av.error.FFmpegError as exc:
                log.warning("libx265 gray12le failed to open (%s); depth %s is written as lossless FFV1 .mkv",
                            exc, path.stem)
    return VideoFileWriter(path.with_suffix(".mkv"), width, height, fps, ffv1_depth_settings(threads),
                           checked(mm_frame), blank, crash_safe=crash_safe)


def _frame_mm(frame: av.VideoFrame, path: str | Path) -> np.ndarray:
    fmt = frame.format.name
    if fmt == "gray12le":
        return code_to_mm(frame.to_ndarray())
    if fmt == "gray16le":
        return frame.to_ndarray()
    raise ValueError(f"{path}: not a depth video (pixel format {fmt}, expected gray12le or gray16le)")


def iter_depth_mm(path: str | Path) -> Iterator[np.ndarray]:
    """HxW uint16 mm frames (0 = invalid) of a depth file, HEVC code or FFV1 mm alike."""
    for frame in decode_frames(path):
        yield _frame_mm(frame, path)


def read_depth_mm(path: str | Path, index: int) -> np.ndarray:
    """Depth frame ``index`` in mm (random access, as ``probe.read_frame``)."""
    return _frame_mm(decode_frame_at(path, index), path)
