"""sensor_msgs/Image and sensor_msgs/CompressedImage <-> video and depth frames.

Reading keeps only the message bytes and the few header fields; pixels are
decoded when ``array()`` is called, so frames the assembler never puts in a row
cost nothing. Anything wrong with a frame (sizes that do not add up, an encoding
we cannot read, a corrupt JPEG) raises ``FrameError`` from ``array()`` naming the
topic and bag time, so the writer can count a substituted frame.

Video frames come out as HxWx3 uint8 RGB or HxW uint8 gray; depth frames as HxW
uint16 millimetres with 0 = invalid. JPEG and PNG are decoded with PyAV.
"""
from __future__ import annotations

import struct
import threading
from dataclasses import dataclass
from fractions import Fraction

import av
import numpy as np
from rosbags.typesys.store import Typestore

from egorec_ros.codecs.lazy_frame import LazyFrame, frame_array
from egorec_ros.messages.errors import FrameError
from egorec_ros.messages.context import MessageContext
from egorec_ros.messages.msg import Msg

IMAGE = "sensor_msgs/msg/Image"
COMPRESSED_IMAGE = "sensor_msgs/msg/CompressedImage"

# encoding -> (bytes per pixel, channel order giving RGB, or None for one channel)
_COLOR = {"rgb8": (3, (0, 1, 2)), "bgr8": (3, (2, 1, 0)), "8UC3": (3, (2, 1, 0)),
          "rgba8": (4, (0, 1, 2)), "bgra8": (4, (2, 1, 0)), "8UC4": (4, (2, 1, 0)),
          "mono8": (1, None), "8UC1": (1, None)}
_DEPTH = {"16UC1": (2, "u2"), "mono16": (2, "u2"), "32FC1": (4, "f4")}
_YUV422 = {"yuv422": "uyvy", "uyvy": "uyvy", "yuv422_yuy2": "yuyv", "yuyv": "yuyv"}
SUPPORTED_VIDEO = tuple(_COLOR) + tuple(_YUV422)
SUPPORTED_DEPTH = tuple(_DEPTH)

_JPEG_MAGIC = b"\xff\xd8"
_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
_COMPRESSED_DEPTH_HEADER = struct.Struct("<iff")   # compressed_depth_image_transport ConfigHeader
_GRAY_FORMATS = {"gray", "gray8", "yuvj400p"}
_MAX_MM = 65535


# ---- lazy frames ----------------------------------------------------------------------------

@dataclass(frozen=True, slots=True, eq=False)
class RawImageFrame:
    """A sensor_msgs/Image not yet turned into pixels."""

    data: np.ndarray          # uint8 view of the message bytes
    width: int
    height: int
    step: int
    encoding: str
    bigendian: bool
    depth: bool               # True: the stream wants uint16 mm
    where: MessageContext

    def array(self) -> np.ndarray:
        try:
            return _raw_depth(self) if self.depth else _raw_video(self)
        except ValueError as exc:
            raise FrameError(f"{self.where}: Image {self.width}x{self.height} {self.encoding!r}: {exc}") from None


@dataclass(frozen=True, slots=True, eq=False)
class CompressedFrame:
    """A sensor_msgs/CompressedImage not yet decoded."""

    data: np.ndarray          # uint8 view of the compressed bytes
    format: str
    depth: bool
    where: MessageContext

    def array(self) -> np.ndarray:
        try:
            return _compressed_depth(self) if self.depth else _compressed_video(self)
        except (ValueError, av.FFmpegError) as exc:
            raise FrameError(f"{self.where}: CompressedImage (format {self.format!r}, {self.data.size} bytes): "
                             f"{exc}") from None


def image_frame(msg: Msg, ctx: MessageContext, *, depth: bool) -> RawImageFrame:
    return RawImageFrame(np.asarray(msg.data, dtype=np.uint8), int(msg.width), int(msg.height), int(msg.step),
                         str(msg.encoding), bool(msg.is_bigendian), depth, ctx)


def compressed_frame(msg: Msg, ctx: MessageContext, *, depth: bool) -> CompressedFrame:
    return CompressedFrame(np.asarray(msg.data, dtype=np.uint8), str(msg.format), depth, ctx)


def video_frame(msg: Msg, ctx: MessageContext) -> RawImageFrame:
    return image_frame(msg, ctx, depth=False)


def depth_frame(msg: Msg, ctx: MessageContext) -> RawImageFrame:
    return image_frame(msg, ctx, depth=True)


def compressed_video_frame(msg: Msg, ctx: MessageContext) -> CompressedFrame:
    return compressed_frame(msg, ctx, depth=False)


def compressed_depth_frame(msg: Msg, ctx: MessageContext) -> CompressedFrame:
    return compressed_frame(msg, ctx, depth=True)


# ---- raw images -----------------------------------------------------------------------------

def _rows(f: RawImageFrame, bytes_per_pixel: int) -> np.ndarray:
    """(height, width * bytes_per_pixel) uint8 pixels, row padding (step) removed."""
    if f.width <= 0 or f.height <= 0:
        raise ValueError("empty image")
    row = f.width * bytes_per_pixel
    if f.step < row:
        raise ValueError(f"step {f.step} is shorter than a row ({f.width} px x {bytes_per_pixel} bytes = {row})")
    if f.data.size != f.step * f.height:
        raise ValueError(f"data has {f.data.size} bytes, step {f.step} x {f.height} rows needs {f.step * f.height}")
    return f.data.reshape(f.height, f.step)[:, :row]


def _raw_video(f: RawImageFrame) -> np.ndarray:
    if f.encoding in _COLOR:
        bpp, order = _COLOR[f.encoding]
        pixels = _rows(f, bpp)
        if order is not None:
            pixels = pixels.reshape(f.height, f.width, bpp)
            if order != (0, 1, 2) or bpp != 3:
                pixels = pixels[:, :, order]
        return np.ascontiguousarray(pixels)
    if f.encoding in _YUV422:
        if f.width % 2:
            raise ValueError("4:2:2 images need an even width")
        pixels = _rows(f, 2).reshape(f.height, f.width // 2, 4)
        if _YUV422[f.encoding] == "uyvy":
            pixels = pixels[:, :, (1, 0, 3, 2)]      # UYVY -> YUYV byte order
        yuyv = np.ascontiguousarray(pixels).reshape(f.height, f.width, 2)
        return av.VideoFrame.from_ndarray(yuyv, format="yuyv422").to_ndarray(format="rgb24")
    if f.encoding in _DEPTH:
        raise ValueError("a depth encoding on a video stream; map this topic to a depth stream")
    raise ValueError(f"unsupported encoding for video; supported: {', '.join(SUPPORTED_VIDEO)}")


def _raw_depth(f: RawImageFrame) -> np.ndarray:
    if f.encoding not in _DEPTH:
        raise ValueError(f"unsupported encoding for depth; supported: {', '.join(SUPPORTED_DEPTH)}")
    bpp, kind = _DEPTH[f.encoding]
    values = _rows(f, bpp).view((">" if f.bigendian else "<") + kind).reshape(f.height, f.width)
    if kind == "u2":
        return values.astype(np.uint16)
    return metres_to_mm(values)


def metres_to_mm(metres: np.ndarray) -> np.ndarray:
    """float metres -> uint16 mm; NaN, inf, <= 0 and beyond 65.535 m become 0 (invalid)."""
    with np.errstate(invalid="ignore", over="ignore"):
        mm = np.rint(np.asarray(metres, dtype=np.float64) * 1000.0)
        valid = np.isfinite(mm) & (mm > 0) & (mm <= _MAX_MM)
    return np.where(valid, mm, 0).astype(np.uint16)


# ---- compressed images ------------------------------------------------------------------------

_decoders = threading.local()   # per thread: codec name -> an open decoder


def _decoder(codec: str) -> av.CodecContext:
    """This thread's decoder for ``codec``: opening one per picture allocated and freed its
    buffers every frame (page-fault churn, issue 13); JPEG and PNG pictures are each complete,
    so one decoder serves a stream's frames in turn. Encoder threads each get their own."""
    cache: dict[str, av.CodecContext] = _decoders.__dict__
    ctx = cache.get(codec)
    if ctx is None:
        ctx = cache[codec] = av.CodecContext.create(codec, "r")
        ctx.options = {"err_detect": "explode"}      # a truncated picture is an error, not a grey half
    return ctx


def _decode_one(codec: str, data: bytes) -> av.VideoFrame:
    ctx = _decoder(codec)
    try:
        frames = ctx.decode(av.Packet(data))  # type: ignore[attr-defined]  # PyAV stubs: a reader
        if len(frames) != 1:        # a picture held back: drain (the decoder is then spent)
            frames += ctx.decode(None)  # type: ignore[attr-defined]
            del _decoders.__dict__[codec]
    except av.FFmpegError:
        _decoders.__dict__.pop(codec, None)   # start the next picture from a fresh decoder
        raise
    if len(frames) != 1:
        raise ValueError(f"{codec} data gave {len(frames)} pictures, expected 1")
    if frames[0].is_corrupt:
        raise ValueError(f"{codec} picture is corrupt")
    return frames[0]


def _compressed_video(f: CompressedFrame) -> np.ndarray:
    if "compresseddepth" in f.format.lower():
        raise ValueError("compressedDepth on a video stream; map this topic to a depth stream")
    data = f.data.tobytes()
    if data.startswith(_JPEG_MAGIC):
        picture = _decode_one("mjpeg", data)
    elif data.startswith(_PNG_MAGIC):
        picture = _decode_one("png", data)
    else:
        raise ValueError("the data is neither JPEG nor PNG")
    return picture.to_ndarray(format="gray" if picture.format.name in _GRAY_FORMATS else "rgb24")


def _compressed_depth(f: CompressedFrame) -> np.ndarray:
    fmt = f.format.lower()
    data = f.data.tobytes()
    if "compresseddepth" in fmt:
        if len(data) < _COMPRESSED_DEPTH_HEADER.size:
            raise ValueError("shorter than the compressedDepth header")
        _, quant_a, quant_b = _COMPRESSED_DEPTH_HEADER.unpack_from(data)
        data = data[_COMPRESSED_DEPTH_HEADER.size:]
    if not data.startswith(_PNG_MAGIC):
        raise ValueError("depth images must be 16-bit PNG (compressedDepth png); this data is not PNG")
    picture = _decode_one("png", data)
    if picture.format.name not in ("gray16be", "gray16le"):
        raise ValueError(f"depth PNG must be 16-bit gray, got {picture.format.name}")
    values = picture.to_ndarray(format="gray16le")
    if "32fc1" not in fmt:
        return values
    # 32FC1 compressedDepth stores quantised inverse depth: d = a / (v - b), v = 0 invalid
    with np.errstate(divide="ignore", invalid="ignore"):
        metres = np.where(values > 0, quant_a / (values.astype(np.float64) - quant_b), np.nan)
    return metres_to_mm(metres)


# ---- sizes (for rig suggestions) --------------------------------------------------------------

def frame_size(msgtype: str, msg: Msg, ctx: MessageContext) -> tuple[int, int]:
    """(width, height) of an Image or CompressedImage, decoded once: FrameError when the
    message does not decode as a frame (an Image whose data does not fit its fields)."""
    depth = is_depth_image(msgtype, msg)
    frame = image_frame(msg, ctx, depth=depth) if msgtype == IMAGE else compressed_frame(msg, ctx, depth=depth)
    pixels = frame.array()
    return int(pixels.shape[1]), int(pixels.shape[0])


def is_depth_image(msgtype: str, msg: Msg) -> bool:
    if msgtype == IMAGE:
        return str(msg.encoding) in _DEPTH
    return "compresseddepth" in str(msg.format).lower()


# ---- writing ----------------------------------------------------------------------------------

def image_message(store: Typestore, frame: np.ndarray | LazyFrame, header: Msg) -> Msg:
    """HxWx3 uint8 -> rgb8, HxW uint8 -> mono8, HxW uint16 -> 16UC1 (mm)."""
    pixels = np.ascontiguousarray(frame_array(frame))
    if pixels.dtype == np.uint8 and pixels.ndim == 3 and pixels.shape[2] == 3:
        encoding = "rgb8"
    elif pixels.dtype == np.uint8 and pixels.ndim == 2:
        encoding = "mono8"
    elif pixels.dtype == np.uint16 and pixels.ndim == 2:
        encoding = "16UC1"
        pixels = pixels.astype("<u2", copy=False)
    else:
        raise ValueError(f"no Image encoding for an array of shape {pixels.shape} and dtype {pixels.dtype}")
    height, width = pixels.shape[:2]
    return store.types[IMAGE](header=header, height=height, width=width, encoding=encoding, is_bigendian=0,
                              step=pixels.nbytes // height, data=pixels.view(np.uint8).reshape(-1))


def jpeg_message(store: Typestore, frame: np.ndarray | LazyFrame, header: Msg) -> Msg:
    """HxWx3 uint8 RGB -> CompressedImage jpeg (4:4:4, encoded with PyAV)."""
    pixels = frame_array(frame)
    if pixels.dtype != np.uint8 or pixels.ndim != 3 or pixels.shape[2] != 3:
        raise ValueError(f"JPEG needs an HxWx3 uint8 RGB frame, got {pixels.shape} {pixels.dtype}")
    ctx = av.CodecContext.create("mjpeg", "w")
    assert isinstance(ctx, av.VideoCodecContext)             # mjpeg is a video codec (PyAV 17's stubs say CodecContext)
    ctx.width, ctx.height, ctx.pix_fmt = pixels.shape[1], pixels.shape[0], "yuvj444p"
    ctx.time_base = Fraction(1, 30)
    picture = av.VideoFrame.from_ndarray(np.ascontiguousarray(pixels), format="rgb24").reformat(format="yuvj444p")
    packets = ctx.encode(picture) + ctx.encode(None)
    data = np.frombuffer(b"".join(bytes(p) for p in packets), dtype=np.uint8)
    return store.types[COMPRESSED_IMAGE](header=header, format="jpeg", data=data)
