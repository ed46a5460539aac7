"""Why a bag or an episode could not be converted, beyond the reading errors of
``errors.py``; each message names the bag and says what to do."""
from __future__ import annotations

from egorec_ros.converter.errors import BagError, ClockPolicyError, FrameError, StreamMappingError


class NothingToConvertError(StreamMappingError):
    """None of the rig's topics is in the bag."""


class MissingTopicError(StreamMappingError):
    """A video stream of the rig has no topic in the bag: the episode would lack a camera."""


class NoRowsError(ValueError):
    """An episode window in which not one row could be built."""


class DuplicateBagError(ValueError):
    """The same bag given twice in one run (it would make two identical episodes)."""


class SharedFilesystemError(RuntimeError):
    """A Ray worker cannot see the output folder the driver created."""


# what stops one bag or episode with a clear message (anything else is a bug, reported as such)
CONVERSION_ERRORS = (BagError, StreamMappingError, ClockPolicyError, FrameError, NoRowsError,
                     SharedFilesystemError, ValueError)
