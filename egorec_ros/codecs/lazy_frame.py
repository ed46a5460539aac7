"""A frame that is decoded only when a row uses it (e.g. a JPEG from a bag).

Lives with the codecs so that producers (message decoding, drivers) and consumers
(the assembler, the encoder threads) share it without importing each other.
"""
from __future__ import annotations

from typing import Protocol, TypeGuard, runtime_checkable

import numpy as np


@runtime_checkable
class LazyFrame(Protocol):
    """An image that is decoded only if a row uses it (e.g. a JPEG from a bag)."""

    def array(self) -> np.ndarray:
        """Decoded pixels: HxWx3 uint8 RGB, HxW uint8 gray, or HxW uint16 depth in mm."""


def is_lazy_frame(payload: object) -> TypeGuard[LazyFrame]:
    """``isinstance(payload, LazyFrame)`` at a fraction of the cost: a runtime Protocol check
    walks the protocol's members through ``typing`` machinery (~4 % of the converter's main
    thread when it ran on every sample, issue 13); an ndarray has no ``array`` method."""
    return callable(getattr(payload, "array", None))


def frame_array(payload: np.ndarray | LazyFrame) -> np.ndarray:
    """Pixels of a video/depth payload, decoding a lazy frame if needed."""
    return payload if isinstance(payload, np.ndarray) else payload.array()
