"""JPEG at IJG quality 95, what EgoSmith shards carry.

Pillow (libjpeg) rather than PyAV: "quality 95" is a libjpeg scale of the standard
quantisation tables (scale factor 200 - 2*95 = 10 %); FFmpeg's mjpeg encoder quantises with
the standard tables times qscale, and qscale cannot go below 1 (= libjpeg quality 50), so no
``-q:v`` reproduces quality 95 (measured in bench/bench_export_egosmith.py)."""
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
