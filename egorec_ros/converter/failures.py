"""Why a bag or an episode could not be converted, beyond the reading and decoding errors
(``egorec_ros.bags.errors``, ``egorec_ros.messages.errors``) and ``errors.py``; each message
names the bag and says what to do."""
from __future__ import annotations

from egorec_ros.bags.errors import BagError
from egorec_ros.messages.errors import FrameError, StreamMappingError
from egorec_ros.converter.errors import ClockPolicyError
from egorec_ros.errors import UserError


class NothingToConvertError(StreamMappingError):
    """None of the rig's topics is in the bag."""


class MissingTopicError(StreamMappingError):
    """A video stream of the rig has no topic in the bag: the episode would lack a camera."""


class NoRowsError(UserError, ValueError):
    """An episode window in which not one row could be built."""


class DuplicateBagError(UserError, ValueError):
    """The same bag given twice in one run (it would make two identical episodes)."""


class SharedFilesystemError(UserError, RuntimeError):
    """A Ray worker cannot see the output folder the driver created."""


# what stops one bag or episode with a clear message (anything else is a bug, reported as such)
CONVERSION_ERRORS = (BagError, StreamMappingError, ClockPolicyError, FrameError, NoRowsError,
                     SharedFilesystemError, ValueError)
