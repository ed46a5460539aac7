"""Column-name rules of §2.2/§2.4, enforced where columns are declared.

Video slot names are cleaned (§2.4: illegal characters -> ``_``); column names
are not cleaned, they are refused, because a silently renamed column leaves two
keys in the task's features forever (§2.4 last bullet).
"""
from __future__ import annotations

import re

_SEGMENT = re.compile(r"[a-z0-9_]+")
_SLOT_ILLEGAL = re.compile(r"[^\w]+", re.UNICODE)

# Suffixes that give a column its type in the reference writer (§2.4), longest first
# so that "_force_matrix_ns" is not mistaken for "_ns" of "_force_matrix".
RESERVED_SUFFIXES = (
    "slam_trajectory_ns",
    "slam_trajectory",
    "_force_matrix_ns",
    "_force_matrix",
    "_force_ns",
    "_force",
    "_imu_quat",
    "_imu_valid",
    "_hand_pose",
    "_state",
)

KEY_COLUMNS = (
    "episode_index", "frame_index", "timestamp", "task_index", "wall_time",
    "hardware_ns", "raw_hw_ns", "action",
)


class ColumnNameError(ValueError):
    """A column name that breaks §2.4."""


def reserved_suffix(name: str) -> str | None:
    for suffix in RESERVED_SUFFIXES:
        if name.endswith(suffix):
            return suffix
    return None


def check_observation_name(name: str, semantic_suffix: str | None = None) -> str:
    """Refuse names that break §2.4; ``semantic_suffix`` is the reserved suffix the
    column legitimately carries (e.g. ``"_force"`` for a force column)."""
    if not name.startswith("observation."):
        raise ColumnNameError(f"column {name!r}: observation columns start with 'observation.' (§2.2)")
    signal = name[len("observation."):]
    for part in signal.split("."):
        if not _SEGMENT.fullmatch(part):
            raise ColumnNameError(
                f"column {name!r}: segment {part!r} must match [a-z0-9_]+ "
                "(lower-case ASCII, digits, underscore; §2.4)")
    if signal == "slam_pose" or signal.endswith("slam_pose"):
        raise ColumnNameError(f"column {name!r}: slam_pose is abolished (§2.4); use *slam_trajectory")
    if signal.startswith("gripper_1_"):
        raise ColumnNameError(
            f"column {name!r}: the first gripper has an empty prefix, never gripper_1_ (§2.3)")
    if signal.startswith("images.") or signal == "images":
        raise ColumnNameError(f"column {name!r}: videos are not columns (observation.images.* is banned, §2.4)")
    found = reserved_suffix("_" + signal)
    if found is not None and found != semantic_suffix:
        raise ColumnNameError(
            f"column {name!r}: ends with the reserved suffix {found!r}, which gives the column "
            f"another type (§2.4); rename the signal")
    return name


def clean_slot_name(name: str) -> str:
    """Video slot names are cleaned rather than refused (§2.4): illegal characters -> '_'."""
    cleaned = _SLOT_ILLEGAL.sub("_", name.strip()).strip("_")
    if not cleaned:
        raise ColumnNameError(f"slot name {name!r} is empty after cleaning")
    return cleaned
