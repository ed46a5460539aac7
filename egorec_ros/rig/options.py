"""Typed options of a rig stream, one record per stream kind, checked when the rig is
compiled: an unknown key or a value of the wrong type is refused naming the rig file,
the device, the stream and the key.

``StreamSpec.source`` keeps the checked mapping (what the rig file said, plus what the
compiler adds); ``StreamSpec.options`` is its typed view. A new option is a field here.
QoS (reliability/depth of a live subscription) will be a field of ``StreamOptions``
when the live recorder subscribes with one.
"""
from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from egorec_ros.rig.kinds import StreamKind


class OptionError(ValueError):
    """An unknown option or a value of the wrong type (the compiler adds where)."""


@dataclass(frozen=True)
class StreamOptions:
    """Options every stream takes."""

    topic: str | None = None                          # ROS topic (bag or live)
    stamp: Literal["header", "receive"] | None = None  # the clock of its samples (default: header)
    fps: float | None = None                          # its rate, when not the kind's usual one
    msg_type: str | None = None                       # live ROS type, when not the first the kind accepts
                                                      # (e.g. sensor_msgs/msg/CompressedImage from an MJPEG camera)


@dataclass(frozen=True)
class VideoOptions(StreamOptions):
    width: int | None = None
    height: int | None = None
    camera_info: str | None = None                    # CameraInfo topic, when not <image ns>/camera_info


@dataclass(frozen=True)
class ImuOptions(StreamOptions):
    pass


@dataclass(frozen=True)
class TrajectoryOptions(StreamOptions):
    frame: str | None = None                          # rig.frames.FRAMES
    epoch: str | None = None                          # rig.frames.EPOCHS
    clock: str | None = None                          # rig.frames.CLOCKS
    child_frame: str | None = None                    # tf2_msgs/TFMessage: which transform is this stream


@dataclass(frozen=True)
class LatestOptions(StreamOptions):
    encoding: str | None = None                       # force matrix column codec
    scale: int | None = None                          # force matrix quantisation
    field: str | None = None                          # joint_state: position / velocity / effort
    column: str | None = None                         # joint_state: column name
    dim: int | None = None                            # joint_state: joint count
    frame: str | None = None                          # hand_pose: frame of the keypoints (rig.frames.HAND_FRAMES)


OPTIONS: dict[StreamKind, type[StreamOptions]] = {
    StreamKind.VIDEO: VideoOptions, StreamKind.DEPTH: VideoOptions, StreamKind.IMU: ImuOptions,
    StreamKind.TRAJECTORY: TrajectoryOptions, StreamKind.LATEST: LatestOptions,
}
INTERNAL = ("slam_spec",)      # added by the compiler, not written in rig files
_HINTS = {cls: typing.get_type_hints(cls) for cls in OPTIONS.values()}     # field -> its type, resolved once


def option_names(kind: StreamKind) -> list[str]:
    return sorted(f.name for f in dataclasses.fields(OPTIONS[kind]))


def parse_options(kind: StreamKind, opts: Mapping[str, Any]) -> StreamOptions:
    """The typed options of a stream of ``kind``; OptionError naming the key if one is wrong."""
    cls = OPTIONS[kind]
    hints = _HINTS[cls]
    unknown = sorted(set(opts) - set(hints) - set(INTERNAL))
    if unknown:
        raise OptionError(f"unknown option {', '.join(map(repr, unknown))}; a {kind.value} stream takes "
                          f"{', '.join(option_names(kind))}")
    values = {k: v for k, v in opts.items() if k in hints}
    for key, value in values.items():
        if value is not None and not _fits(value, hints[key]):
            raise OptionError(f"option {key!r} must be {_describe(hints[key])}, got {value!r}")
    return cls(**values)


def _choices(hint: Any) -> tuple[Any, ...]:
    """The non-None members of ``X | None`` / ``Literal[...] | None``."""
    return tuple(a for a in typing.get_args(hint) if a is not type(None))


def _fits(value: Any, hint: Any) -> bool:
    (inner,) = _choices(hint)
    if typing.get_origin(inner) is Literal:
        return value in typing.get_args(inner)
    if inner is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if inner is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, inner)


def _describe(hint: Any) -> str:
    (inner,) = _choices(hint)
    if typing.get_origin(inner) is Literal:
        return " or ".join(repr(a) for a in typing.get_args(inner))
    return {str: "a string", int: "an integer", float: "a number"}[inner]
