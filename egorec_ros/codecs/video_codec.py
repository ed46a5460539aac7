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


@dataclass(frozen=True, init=False)
class VideoCodec:
    """How RGB streams are compressed. ``crf``/``preset`` None: the codec's default
    (h264: 23/veryfast, hevc: 28/ultrafast, av1: 35/8), filled in at construction."""

    name: str
    crf: int
    preset: str
    gop: int
    threads: int
    encoder: str | None          # a hardware encoder of the family (h264_nvenc ...); None: the software one

    def __init__(self, name: str = "h264", crf: int | None = None, preset: str | None = None,
                 gop: int = 15, threads: int = 2, encoder: str | None = None) -> None:
        family = CODECS.get(name)
        if family is None:
            raise CodecOptionError(f"unknown video codec {name!r}; choose one of {', '.join(CODECS)}")
        crf = family.crf if crf is None else crf
        lo, hi = family.crf_range
        if not lo <= crf <= hi:
            raise CodecOptionError(f"{name} crf must be in {lo}..{hi}, got {crf}")
        if encoder is not None and not encoder.startswith(name + "_"):
            raise CodecOptionError(f"encoder {encoder!r} does not encode {name}")
        if gop < 1 or threads < 1:
            raise CodecOptionError(f"gop and threads must be >= 1, got gop={gop} threads={threads}")
        fields = {"name": name, "crf": crf, "preset": family.preset if preset is None else preset,
                  "gop": gop, "threads": threads, "encoder": encoder}
        for key, value in fields.items():
            object.__setattr__(self, key, value)   # frozen: the dataclass's __setattr__ refuses
