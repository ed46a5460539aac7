"""First frames of an episode's videos as small inline PNGs (depth false-coloured)."""
from __future__ import annotations

import base64

import av
import numpy as np

from egorec_ros.dataset import Episode

THUMB_WIDTH = 240


def thumbnail_png(episode: Episode, key: str) -> str:
    """data: URL of the first frame of stream ``key``, about THUMB_WIDTH pixels wide."""
    frame = next(episode.frames(key))
    step = max(1, frame.shape[1] // THUMB_WIDTH)
    small = frame[::step, ::step]
    if small.ndim == 2:  # depth in mm: near = warm, far = cool, invalid = black
        small = _depth_colours(small)
    small = np.ascontiguousarray(small[: small.shape[0] // 2 * 2, : small.shape[1] // 2 * 2])
    codec = av.CodecContext.create("png", "w")
    codec.width, codec.height, codec.pix_fmt = small.shape[1], small.shape[0], "rgb24"
    packets = codec.encode(av.VideoFrame.from_ndarray(small, format="rgb24")) + codec.encode(None)
    return "data:image/png;base64," + base64.b64encode(b"".join(bytes(p) for p in packets)).decode()


def _depth_colours(mm: np.ndarray) -> np.ndarray:
    valid = mm > 0
    t = np.zeros(mm.shape, np.float32)
    if valid.any():
        lo, hi = np.percentile(mm[valid], [2, 98])
        t = np.clip((mm.astype(np.float32) - lo) / max(hi - lo, 1.0), 0, 1)
    rgb = np.stack([255 * (1 - t), 255 * (1 - np.abs(2 * t - 1)), 255 * t], axis=-1)
    rgb[~valid] = 0
    return rgb.astype(np.uint8)
