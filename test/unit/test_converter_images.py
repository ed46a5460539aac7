"""Image and CompressedImage messages -> lazy video/depth frames, and their errors."""
from __future__ import annotations

import struct
from fractions import Fraction

import av
import numpy as np
import pytest

from egorec_ros.codecs.lazy_frame import LazyFrame
from egorec_ros.messages.errors import FrameError
from egorec_ros.messages.payloads import images
from egorec_ros.messages.context import MessageContext
from egorec_ros.messages.payloads.stamps import header_message
from egorec_ros.messages.typestores import ros2_typestore

STORE = ros2_typestore()
CTX = MessageContext("cam.bag", "/cam/image", 1_700_000_001_500_000_000, 1_700_000_000_000_000_000)
RNG = np.random.default_rng(7)


def image_msg(data: np.ndarray | bytes, width: int, height: int, encoding: str, step: int,
              bigendian: bool = False) -> object:
    return STORE.types[images.IMAGE](
        header=header_message(STORE, 1), height=height, width=width, encoding=encoding,
        is_bigendian=int(bigendian), step=step, data=np.frombuffer(bytes(data), dtype=np.uint8))


def compressed_msg(data: bytes, fmt: str) -> object:
    return STORE.types[images.COMPRESSED_IMAGE](header=header_message(STORE, 1), format=fmt,
                                                data=np.frombuffer(data, dtype=np.uint8))


def png_bytes(pixels: np.ndarray, pix_fmt: str) -> bytes:
    ctx = av.CodecContext.create("png", "w")
    ctx.width, ctx.height, ctx.pix_fmt = pixels.shape[1], pixels.shape[0], pix_fmt
    ctx.time_base = Fraction(1, 30)
    src = "gray16le" if pixels.dtype == np.uint16 else "rgb24"
    frame = av.VideoFrame.from_ndarray(pixels, format=src).reformat(format=pix_fmt)
    return b"".join(bytes(p) for p in ctx.encode(frame) + ctx.encode(None))


# ---- raw images ----------------------------------------------------------------------------------

@pytest.mark.parametrize("encoding, channels, order", [
    ("rgb8", 3, (0, 1, 2)), ("bgr8", 3, (2, 1, 0)), ("rgba8", 4, (0, 1, 2)), ("bgra8", 4, (2, 1, 0))])
def test_colour_encodings_give_rgb(encoding, channels, order):
    rgb = RNG.integers(0, 255, (5, 7, 3), dtype=np.uint8)
    stored = np.zeros((5, 7, channels), dtype=np.uint8)
    stored[:, :, list(order)] = rgb
    frame = images.video_frame(image_msg(stored.tobytes(), 7, 5, encoding, 7 * channels), CTX)
    assert isinstance(frame, LazyFrame)
    out = frame.array()
    assert out.shape == (5, 7, 3) and out.dtype == np.uint8
    np.testing.assert_array_equal(out, rgb)


def test_mono8_and_row_padding_are_honoured():
    gray = RNG.integers(0, 255, (4, 6), dtype=np.uint8)
    padded = np.zeros((4, 8), dtype=np.uint8)       # step 8 for a 6-pixel row
    padded[:, :6] = gray
    out = images.video_frame(image_msg(padded.tobytes(), 6, 4, "mono8", 8), CTX).array()
    np.testing.assert_array_equal(out, gray)


def test_uyvy_and_yuyv_give_the_same_rgb():
    y = np.array([[16, 80, 160, 235]], dtype=np.uint8).repeat(2, axis=0)
    u, v = np.full((2, 2), 128, np.uint8), np.full((2, 2), 128, np.uint8)
    yuyv = np.stack([y[:, 0::2], u, y[:, 1::2], v], axis=-1).reshape(2, 8)
    uyvy = np.stack([u, y[:, 0::2], v, y[:, 1::2]], axis=-1).reshape(2, 8)
    a = images.video_frame(image_msg(yuyv.tobytes(), 4, 2, "yuv422_yuy2", 8), CTX).array()
    b = images.video_frame(image_msg(uyvy.tobytes(), 4, 2, "yuv422", 8), CTX).array()
    np.testing.assert_array_equal(a, b)
    assert a.shape == (2, 4, 3)
    assert (a[..., 0] == a[..., 1]).all() and (a[..., 1] == a[..., 2]).all()   # no chroma -> grey
    assert list(a[0, :, 0]) == sorted(a[0, :, 0]) and a[0, 0, 0] < 5 and a[0, 3, 0] > 245


@pytest.mark.parametrize("encoding", ["16UC1", "mono16"])
@pytest.mark.parametrize("bigendian", [False, True])
def test_16bit_depth_in_both_byte_orders(encoding, bigendian):
    mm = RNG.integers(0, 60000, (3, 5), dtype=np.uint16)
    raw = mm.astype(">u2" if bigendian else "<u2").tobytes()
    out = images.depth_frame(image_msg(raw, 5, 3, encoding, 10, bigendian), CTX).array()
    assert out.dtype == np.uint16
    np.testing.assert_array_equal(out, mm)


def test_32fc1_metres_become_mm_with_invalid_pixels_zero():
    metres = np.array([[0.5, 1.2344, np.nan, np.inf], [-1.0, 0.0, 70.0, 0.0004]], dtype=np.float32)
    out = images.depth_frame(image_msg(metres.astype("<f4").tobytes(), 4, 2, "32FC1", 16), CTX).array()
    np.testing.assert_array_equal(out, [[500, 1234, 0, 0], [0, 0, 0, 0]])
    big = images.depth_frame(image_msg(metres.astype(">f4").tobytes(), 4, 2, "32FC1", 16, True), CTX).array()
    np.testing.assert_array_equal(big, out)


@pytest.mark.parametrize("data_len, step, what", [
    (30, 1920, "data has 30 bytes"),
    (640 * 480 * 3, 1000, "step 1000 is shorter than a row"),
])
def test_size_mismatch_raises_a_clear_error_on_array(data_len, step, what):
    frame = images.video_frame(image_msg(bytes(data_len), 640, 480, "rgb8", step), CTX)
    with pytest.raises(FrameError) as err:
        frame.array()
    text = str(err.value)
    assert what in text and "/cam/image" in text and "1700000001.500000" in text and "+1.500 s" in text


def test_wrong_encodings_raise_on_array():
    with pytest.raises(FrameError, match="unsupported encoding for video"):
        images.video_frame(image_msg(bytes(12), 2, 2, "bayer_rggb8", 6), CTX).array()
    with pytest.raises(FrameError, match="map this topic to a depth stream"):
        images.video_frame(image_msg(bytes(8), 2, 2, "16UC1", 4), CTX).array()
    with pytest.raises(FrameError, match="unsupported encoding for depth"):
        images.depth_frame(image_msg(bytes(12), 2, 2, "rgb8", 6), CTX).array()


# ---- compressed images ---------------------------------------------------------------------------

def smooth_rgb(h: int = 48, w: int = 64) -> np.ndarray:
    yy, xx = np.mgrid[0:h, 0:w]
    return np.stack([xx * 4, yy * 5, (xx + yy) * 2], axis=-1).astype(np.uint8)


def test_jpeg_round_trip_is_close():
    rgb = smooth_rgb()
    msg = images.jpeg_message(STORE, rgb, header_message(STORE, 1))
    out = images.compressed_video_frame(msg, CTX).array()
    assert out.shape == rgb.shape and out.dtype == np.uint8
    assert np.abs(out.astype(int) - rgb).mean() < 2.0


def test_png_colour_and_16bit_depth():
    rgb = smooth_rgb(6, 8)
    out = images.compressed_video_frame(compressed_msg(png_bytes(rgb, "rgb24"), "png"), CTX).array()
    np.testing.assert_array_equal(out, rgb)
    mm = RNG.integers(0, 65535, (6, 8), dtype=np.uint16)
    header = struct.pack("<iff", 0, 0.0, 0.0)
    msg = compressed_msg(header + png_bytes(mm, "gray16be"), "16UC1; compressedDepth png")
    np.testing.assert_array_equal(images.compressed_depth_frame(msg, CTX).array(), mm)


def test_compressed_depth_32fc1_inverse_depth():
    # compressed_depth_image_transport: v = a / d + b (depthQuantA = 100, depthQuantB = 0 here)
    a, b = 100.0, 0.0
    metres = np.array([[0.5, 1.0], [2.0, 4.0]])
    v = np.rint(a / metres + b).astype(np.uint16)
    v[1, 1] = 0                                    # invalid pixel
    msg = compressed_msg(struct.pack("<iff", 0, a, b) + png_bytes(v, "gray16be"), "32FC1; compressedDepth png")
    np.testing.assert_array_equal(images.compressed_depth_frame(msg, CTX).array(), [[500, 1000], [2000, 0]])


def test_corrupt_compressed_frames_raise_on_array():
    jpeg = images.jpeg_message(STORE, smooth_rgb(), header_message(STORE, 1)).data.tobytes()
    cases = [(jpeg[: len(jpeg) // 2], "jpeg"), (b"\x00" * 50, "jpeg"), (jpeg, "16UC1; compressedDepth png")]
    for data, fmt in cases[:2]:
        with pytest.raises(FrameError, match="/cam/image at bag time"):
            images.compressed_video_frame(compressed_msg(data, fmt), CTX).array()
    with pytest.raises(FrameError, match="not PNG"):
        images.compressed_depth_frame(compressed_msg(*cases[2]), CTX).array()
