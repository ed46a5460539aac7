"""Errors of message decoding. Each message says what, where (source, topic,
receive time) and, where there is one, what to do."""
from __future__ import annotations

from egorec_ros.errors import UserError


class StreamMappingError(UserError, ValueError):
    """A rig stream mapped to a topic whose message type cannot feed it."""


class PayloadError(ValueError):
    """One message whose content does not fit its stream (wrong array sizes, ...).

    Raised by the payload functions; the sample reader counts it as a dropped
    sample in its report instead of stopping the conversion.
    """


class FrameError(UserError, ValueError):
    """An image that cannot be decoded; raised by ``LazyFrame.array()`` so the
    writer can count a substituted frame."""
