"""JPEG at IJG quality 95, what EgoSmith shards carry.

Pillow (libjpeg) rather than PyAV: "quality 95" means the IJG standard tables scaled to 10 %
(luma DC step 2, a separate chroma table). FFmpeg's mjpeg encoder, the one PyAV has, writes its
own single table for luma and chroma with DC step 8 and scales it by qscale (>= 1); qscale 1
comes close in size and PSNR but is not quality 95 (tables and figures printed by
bench/bench_export_egosmith.py)."""
from __future__ import annotations

import io

import numpy as np
from PIL import Image

QUALITY = 95


def encode(rgb: np.ndarray, quality: int = QUALITY) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(rgb)).save(buf, format="JPEG", quality=quality)
    return buf.getvalue()


def decode(data: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def decode_or_none(data: bytes) -> np.ndarray | None:
    """The image, or None where Pillow cannot decode it (a damaged member)."""
    try:
        return decode(data)
    except (OSError, ValueError, SyntaxError):      # what Pillow raises for damaged or unknown data
        return None
