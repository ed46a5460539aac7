"""Errors of the bag converter beyond reading and decoding (``egorec_ros.bags.errors``,
``egorec_ros.messages.errors``). Each message says what, where and what to do."""
from __future__ import annotations

from egorec_ros.errors import UserError


class ClockPolicyError(UserError, ValueError):
    """Streams of one episode stamped by different clocks (e.g. 2013 header stamps
    next to 2023 receive times) would be paired as if simultaneous."""


class ConvertOptionError(UserError, ValueError):
    """A convert option that cannot work: --jobs 0, overlapping --range pairs, --ray
    without ray installed..."""
