"""Errors of the bag converter. Each message says what, where (bag, topic, bag
time) and, where there is one, what to do."""
from __future__ import annotations


class BagError(Exception):
    """A bag that cannot be read: missing, truncated, corrupt, or an unreadable message."""


class StreamMappingError(ValueError):
    """A rig stream mapped to a topic whose message type cannot feed it."""


class PayloadError(ValueError):
    """One message whose content does not fit its stream (wrong array sizes, ...).

    Raised by the payload functions; the sample reader counts it as a dropped
    sample in its report instead of stopping the conversion.
    """


class FrameError(ValueError):
    """An image that cannot be decoded; raised by ``LazyFrame.array()`` so the
    writer can count a substituted frame."""


class ClockPolicyError(ValueError):
    """Streams of one episode stamped by different clocks (e.g. 2013 header stamps
    next to 2023 receive times) would be paired as if simultaneous."""
