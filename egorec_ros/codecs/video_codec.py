"""Which codec compresses RGB streams, at what quality: the user's choice, checked.
Kept apart from ``video`` (which imports PyAV) so the CLI can offer the choices cheaply."""
from __future__ import annotations

from dataclasses import dataclass

from egorec_ros.errors import UserError


class CodecOptionError(UserError, ValueError):
    """A codec, crf, encoder or GOP that cannot be used (--codec, --crf, --gop)."""


@dataclass(frozen=True)
class _Family:
    encoder: str
    crf: int
    crf_range: tuple[int, int]
    preset: str


CODECS: dict[str, _Family] = {
    "h264": _Family("libx264", crf=23, crf_range=(0, 51), preset="veryfast"),
    "hevc": _Family("libx265", crf=28, crf_range=(0, 51), preset="ultrafast"),
    "av1": _Family("libsvtav1", crf=35, crf_range=(1, 63), preset="8"),
}


@dataclass(frozen=True)
class VideoCodec:
    """How RGB streams are compressed. ``crf``/``preset`` None: the codec's default
    (h264: 23/veryfast, hevc: 28/ultrafast, av1: 35/8), filled in at construction."""

    name: str = "h264"
    crf: int | None = None
    preset: str | None = None
    gop: int = 15
    threads: int = 2
    encoder: str | None = None   # a hardware encoder of the family (h264_nvenc ...); None: the software one

    def __post_init__(self) -> None:
        family = CODECS.get(self.name)
        if family is None:
            raise CodecOptionError(f"unknown video codec {self.name!r}; choose one of {', '.join(CODECS)}")
        if self.crf is None:
            object.__setattr__(self, "crf", family.crf)
        if self.preset is None:
            object.__setattr__(self, "preset", family.preset)
        lo, hi = family.crf_range
        if not lo <= self.crf <= hi:
            raise CodecOptionError(f"{self.name} crf must be in {lo}..{hi}, got {self.crf}")
        if self.encoder is not None and not self.encoder.startswith(self.name + "_"):
            raise CodecOptionError(f"encoder {self.encoder!r} does not encode {self.name}")
        if self.gop < 1 or self.threads < 1:
            raise CodecOptionError(f"gop and threads must be >= 1, got gop={self.gop} threads={self.threads}")
