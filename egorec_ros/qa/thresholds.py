"""QA thresholds: defaults for any rig, overridden per rig by a ``qa:`` block in its YAML, e.g.

    qa:
      gap_redo_ms: 1000        # a camera showing one frame this long: redo
      black_warn_frames: 15

Unknown keys are refused with the list of known ones (a typo must not silently keep a default)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping


@dataclass(frozen=True)
class QaThresholds:
    # drop_stats per stream, as a share of the episode's rows
    repeated_warn: float = 0.05       # rows repeating an earlier frame / sample
    repeated_redo: float = 0.25
    late_warn: float = 0.05           # samples that arrived after their row's deadline
    invalid_warn: float = 0.05        # undecodable messages (of the samples received)
    # cameras: the longest stretch one frame stays on screen (repeats or identical content)
    gap_warn_ms: float = 200.0
    gap_redo_ms: float = 1000.0
    frozen_warn_frames: int = 10      # consecutive identical frames (same content hash)
    frozen_redo_frames: int = 30
    black_luma: float = 16.0          # mean luma at or below: black (lens cap, camera off)
    blown_luma: float = 240.0         # mean luma at or above: blown out
    black_warn_frames: int = 15       # consecutive black / blown frames
    black_redo_frames: int = 60
    # SLAM trajectory
    slam_gap_warn_ms: float = 200.0   # no new pose for this long (tracking lost)
    slam_gap_redo_ms: float = 1000.0
    slam_jump_m: float = 0.5          # one step longer than this: relocalisation / tracking jump
    # devices with a status.<id> column (gloves, gripper sensors): "disconnected" rows mean the
    # device was silent for the assembler's silence time (1 s) and more
    silent_warn_ms: float = 300.0
    silent_redo_ms: float = 1000.0
    glove_zero_rows: int = 60         # a glove whose pressure is all zero in every row of an episode
                                      # this long: warn (dead sensor; an open hand also reads zero)
    # force sensors
    force_saturated_warn: float = 0.05   # share of non-zero samples pinned at the column's extreme value
    force_flat_min_rows: int = 60        # a force column constant over the whole episode (this long): flat
    # IMU
    imu_gap_warn_ms: float = 100.0
    # live (while recording): a stream silent this long raises a /diagnostics WARN
    live_silent_s: float = 1.0


def thresholds_from(doc: Mapping[str, Any] | None, where: str = "rig") -> QaThresholds:
    """A rig file's ``qa:`` block -> thresholds; ValueError naming the key for bad input."""
    if doc is None:
        return QaThresholds()
    if not isinstance(doc, Mapping):
        raise ValueError(f"{where}: 'qa' must be a mapping of threshold -> number")
    fields = {f.name: f for f in dataclasses.fields(QaThresholds)}
    unknown = sorted(set(doc) - set(fields))
    if unknown:
        raise ValueError(f"{where}: qa: unknown keys {unknown}; known: {sorted(fields)}")
    values: dict[str, Any] = {}
    for key, value in doc.items():
        kind = int if fields[key].type in (int, "int") else float
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise ValueError(f"{where}: qa: {key} must be a non-negative number, got {value!r}")
        values[key] = kind(value)
    return QaThresholds(**values)
