"""Command-line options shared by recording and converting: rig, sizes, codecs (cheap to import:
the rig compiler is imported when a rig is loaded)."""
from __future__ import annotations

import argparse
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

from egorec_ros.codecs.video_codec import CODECS, VideoCodec
from egorec_ros.resources import builtin_rigs

if TYPE_CHECKING:
    from egorec_ros.rig.model import Rig


def given(**values: Any) -> dict[str, Any]:
    """The options the user gave (not None): the rest keep their dataclass defaults, which the
    CLI does not import at parser build time (it must start fast) nor restate."""
    return {k: v for k, v in values.items() if v is not None}


def seconds(text: str) -> Decimal:
    """A time in seconds, kept exact (epoch seconds with 9 decimals do not fit a float)."""
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise argparse.ArgumentTypeError(f"a time in seconds looks like 12.5, got {text!r}") from None
    if not value.is_finite():
        raise argparse.ArgumentTypeError(f"a time in seconds must be finite, got {text!r}")
    return value


def positive_int(text: str) -> int:
    """A count that must be at least 1 (--episodes)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a whole number like 3, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def positive_seconds(text: str) -> float:
    """A length in seconds that must be more than 0 (--seconds)."""
    value = float(seconds(text))
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 s, got {text}")
    return value


def size(text: str) -> tuple[int, int]:
    from egorec_ros.rig.resize import parse_size
    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_rig_options(p: argparse.ArgumentParser, *, required: bool = True) -> None:
    p.add_argument("--rig", required=required, help=f"rig file, or a built-in rig: {', '.join(builtin_rigs())}")
    p.add_argument("--size", type=size, metavar="WxH", help="record every video stream at this size instead of the rig's")


def add_recording_options(p: argparse.ArgumentParser) -> None:
    """Latency budget and codecs: what a live recorder needs."""
    p.add_argument("--latency-ms", type=float, help="latency budget D: a row waits this long for its samples "
                   "(default: AssemblyConfig's)")
    add_codec_options(p)


def add_codec_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--codec", default="h264", choices=sorted(CODECS), help="RGB video codec (default h264)")
    p.add_argument("--crf", type=int, help="quality (codec default if omitted)")
    p.add_argument("--gop", type=int, default=VideoCodec().gop, help="keyframe interval in frames")
    p.add_argument("--depth", default="mp4", choices=("mp4", "mkv"),
                   help="depth storage: mp4 = 12-bit log-depth HEVC (spec default), mkv = lossless FFV1 "
                        "(cheaper to encode, ~4x larger)")


def rig_from(args: argparse.Namespace) -> Rig:
    from egorec_ros.rig.load import load_rig
    from egorec_ros.rig.resize import with_video_sizes

    rig = load_rig(args.rig)
    return with_video_sizes(rig, args.size) if args.size else rig


def codec_from(args: argparse.Namespace) -> VideoCodec:
    return VideoCodec(name=args.codec, crf=args.crf, gop=args.gop)


def parse_subcommand(module, argv: list[str]) -> argparse.Namespace:
    """Parse one subcommand's arguments on their own (``egorec demo`` chains subcommands)."""
    sub = argparse.ArgumentParser(prog="egorec").add_subparsers()
    module.add_parser(sub)
    return next(iter(sub.choices.values())).parse_args(argv)
