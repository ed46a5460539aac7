"""Can this machine encode the rig in real time? A short encoder probe before recording.

A recorder that cannot keep up does not crash: its encoders fall behind, rows are built
late and frames are repeated (Appendix B at its real sizes on 2 cores repeated 167 of 180
master frames). So before recording, every distinct (encoder, size) of the rig encodes a
few frames of a moving textured scene with the episode's own settings; its frames per
second, against what the rig needs (one encoder per stream, all sharing the machine),
give the fraction of the machine the rig needs. Above ``OVERLOAD`` the user is told
before the first episode, with what to change.

Hardware encoders (NVENC, Quick Sync, AMF, V4L2 M2M, VA-API) that PyAV's FFmpeg carries
are tried first for the chosen codec: the first that opens and encodes a frame at the
rig's size is used; otherwise software is used and each candidate's reason is reported
(on a machine without the hardware FFmpeg refuses to open them: "Operation not
permitted", "Invalid argument", or the encoder is not in the build).

Results are cached per process; the whole check takes well under a second on 2 cores
(frames capped by ``PROBE_FRAMES`` and ``PROBE_BUDGET_S`` per configuration).
"""
from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

import av
import numpy as np

from egorec_ros.errors import UserError
from egorec_ros.codecs import depth
from egorec_ros.codecs.video import CODECS, EncoderSettings, VideoCodec, encoder_settings

log = logging.getLogger(__name__)

HARDWARE_ENCODERS: dict[str, tuple[str, ...]] = {
    "h264": ("h264_nvenc", "h264_qsv", "h264_amf", "h264_vaapi", "h264_v4l2m2m"),
    "hevc": ("hevc_nvenc", "hevc_qsv", "hevc_amf", "hevc_vaapi", "hevc_v4l2m2m"),
    "av1": ("av1_nvenc", "av1_qsv", "av1_amf", "av1_vaapi"),
}
PROBE_FRAMES = 8        # frames encoded per configuration, at most ...
PROBE_BUDGET_S = 0.15   # ... or fewer when they take longer than this (at least 1)
PROBE_MAX_PIXELS = 640 * 400   # larger streams are probed at a reduced size, fps scaled by the pixel ratio
OVERLOAD = 0.85         # fraction of the machine above which recording will fall behind


class EncoderUnavailableError(UserError, RuntimeError):
    """An encoder the rig needs cannot be opened on this machine; the message names the stream."""


@dataclass(frozen=True)
class EncoderProbe:
    encoder: str
    ok: bool
    fps: float = 0.0     # frames per second this encoder managed at the probed size
    reason: str = ""     # why it cannot be used (ok False)


@dataclass(frozen=True)
class StreamNeed:
    """One recorded video stream: what it is encoded with and how fast it must go."""
    key: str
    kind: str            # "rgb" or "depth"
    width: int
    height: int
    fps: float


@dataclass(frozen=True)
class EncodingPlan:
    codec: VideoCodec                    # the RGB codec to record with (``encoder`` set for hardware)
    load: float                          # fraction of the machine the rig's encoders need
    per_stream: dict[str, float]         # stream key -> its share of ``load``
    notes: tuple[str, ...]               # what was tried and decided, for the log

    @property
    def overloaded(self) -> bool:
        return self.load > OVERLOAD


def stream_settings(need: StreamNeed, codec: VideoCodec, depth_container: str) -> EncoderSettings:
    if need.kind == "depth":
        if depth_container == "mp4" and depth.hevc12_available():
            return depth.hevc_depth_settings(codec.threads)
        return depth.ffv1_depth_settings(codec.threads)
    return encoder_settings(codec)


def probe(settings: EncoderSettings, width: int, height: int, frames: int = PROBE_FRAMES,
          budget_s: float = PROBE_BUDGET_S) -> EncoderProbe:
    """Open ``settings.encoder`` and encode up to ``frames`` frames at this size; fps
    measured from the first frame to the flushed last one. Cached per process."""
    key = (settings.encoder, settings.pix_fmt, tuple(sorted(settings.options.items())), settings.thread_count,
           settings.thread_type, width, height, frames, budget_s)
    if key not in _CACHE:
        _CACHE[key] = _probe(settings, width, height, frames, budget_s)
    return _CACHE[key]


_CACHE: dict[tuple, EncoderProbe] = {}


def _probe(settings: EncoderSettings, width: int, height: int, frames: int, budget_s: float) -> EncoderProbe:
    try:
        ctx: Any = av.CodecContext.create(settings.encoder, "w")   # a video encoder context
    except Exception as exc:   # UnknownCodecError: not in this FFmpeg build
        return EncoderProbe(settings.encoder, False, reason=f"not in this FFmpeg build ({type(exc).__name__})")
    try:
        ctx.width, ctx.height, ctx.pix_fmt = width, height, settings.pix_fmt
        ctx.time_base = Fraction(1, 30)
        ctx.framerate = Fraction(30)
        ctx.options = dict(settings.options)
        ctx.thread_count = settings.thread_count
        ctx.thread_type = settings.thread_type
        for name, value in settings.color.items():
            setattr(ctx, name, value)
        ctx.open()
    except Exception as exc:
        return EncoderProbe(settings.encoder, False, reason=f"does not open: {_why(exc)}")
    make = _frame_maker(settings.pix_fmt, width, height)
    started, n = time.perf_counter(), 0
    try:
        while n < frames and (n < 1 or time.perf_counter() - started < budget_s):
            frame = make(n)
            frame.pts = n
            ctx.encode(frame)
            n += 1
        ctx.encode(None)
    except Exception as exc:
        return EncoderProbe(settings.encoder, False, reason=f"opens but fails to encode: {_why(exc)}")
    elapsed = max(time.perf_counter() - started, 1e-6)
    return EncoderProbe(settings.encoder, True, fps=n / elapsed)


def _why(exc: Exception) -> str:
    """FFmpeg's reason without the option dump PyAV appends."""
    return f"{type(exc).__name__}: {getattr(exc, 'strerror', None) or exc}"


def probe_size(width: int, height: int) -> tuple[int, int]:
    """The size a stream is probed at: its own, or reduced by an integer factor (even sides)."""
    factor = 1
    while width * height / factor**2 > PROBE_MAX_PIXELS:
        factor += 1
    return max(16, width // factor // 2 * 2), max(16, height // factor // 2 * 2)


def _frame_maker(pix_fmt: str, width: int, height: int) -> Callable[[int], av.VideoFrame]:
    """Frames of a textured scene panning 4 px per frame: far cheaper to encode than noise,
    dearer than a flat image, like a camera moving over a table."""
    base = _texture(height, width)
    if pix_fmt.startswith("gray1"):   # depth: millimetres 300..4000 with the same texture
        mm = (300 + base.astype(np.uint16) * 14).astype(np.uint16)
        to = depth.code_frame if pix_fmt == "gray12le" else depth.mm_frame
        return lambda i: to(np.roll(mm, 4 * i, axis=1))
    rgb = np.stack([base, np.roll(base, 7, axis=0), np.roll(base, 13, axis=1)], axis=2)
    return lambda i: av.VideoFrame.from_ndarray(np.ascontiguousarray(np.roll(rgb, 4 * i, axis=1)), format="rgb24")


@functools.lru_cache(maxsize=8)
def _texture(height: int, width: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    y, x = np.mgrid[0:height, 0:width]
    smooth = 96 + 60 * np.sin(x / 37.0) * np.cos(y / 23.0) + 40 * np.sin((x + y) / 91.0)
    return np.clip(smooth + rng.normal(0, 6, (height, width)), 0, 255).astype(np.uint8)


def hardware_probes(codec: VideoCodec, width: int, height: int) -> dict[str, EncoderProbe]:
    """Try every hardware encoder of the codec's family at this size (one frame)."""
    return {name: probe(encoder_settings(replace(codec, encoder=name)), width, height, frames=1, budget_s=0.0)
            for name in HARDWARE_ENCODERS.get(codec.name, ())}


def choose_codec(codec: VideoCodec, hardware: Mapping[str, EncoderProbe]) -> tuple[VideoCodec, list[str]]:
    """The first hardware encoder that worked, else the software one; notes say why."""
    software = CODECS[codec.name].encoder
    for name, result in hardware.items():
        if result.ok:
            return replace(codec, encoder=name), [f"{codec.name}: using hardware encoder {name} "
                                                  f"({result.fps:.0f} fps in the probe) instead of {software}"]
    notes = [f"{codec.name}: no hardware encoder, using {software} (software)"]
    notes += [f"    {name}: {result.reason}" for name, result in hardware.items()]
    return codec, notes


def plan_encoding(streams: Sequence[StreamNeed], codec: VideoCodec, depth_container: str = "mp4", *,
                  probe_fn: Callable[[EncoderSettings, int, int], EncoderProbe] = probe,
                  hardware_fn: Callable[[VideoCodec, int, int], Mapping[str, EncoderProbe]] = hardware_probes,
                  ) -> EncodingPlan:
    """Pick the RGB encoder (hardware if the machine has one) and estimate the load.
    ``probe_fn``/``hardware_fn`` are injectable so the decision can be tested with given
    probe results."""
    rgb = [s for s in streams if s.kind != "depth"]
    notes: list[str] = []
    if rgb and not codec.encoder:
        biggest = max(rgb, key=lambda s: s.width * s.height)
        codec, notes = choose_codec(codec, hardware_fn(codec, *probe_size(biggest.width, biggest.height)))
    per_stream: dict[str, float] = {}
    for s in streams:
        settings = stream_settings(s, codec, depth_container)
        w, h = probe_size(s.width, s.height)
        result = probe_fn(settings, w, h)
        if not result.ok:   # the writer would fail the same way: say so now
            raise EncoderUnavailableError(f"stream {s.key}: encoder {settings.encoder} at {s.width}x{s.height} "
                                          f"cannot be used: {result.reason}; choose another --codec")
        fps = result.fps * (w * h) / (s.width * s.height)
        per_stream[s.key] = s.fps / fps
        notes.append(f"{s.key}: {settings.encoder} {s.width}x{s.height} encodes ~{fps:.0f} fps, needs {s.fps:g}"
                     + (f" (probed at {w}x{h})" if (w, h) != (s.width, s.height) else ""))
    load = sum(per_stream.values())
    for line in notes:
        log.info("%s", line)
    return EncodingPlan(codec, load, per_stream, tuple(notes))


def advice(plan: EncodingPlan) -> str:
    """What to tell the user when the plan does not fit the machine."""
    worst = max(plan.per_stream, key=plan.per_stream.__getitem__)
    return (f"this machine can encode about {100 / plan.load:.0f} % of what the rig needs in real time "
            f"(encoders need {plan.load:.2f}x the machine; {worst} alone {plan.per_stream[worst]:.2f}x): "
            f"frames will be repeated. Record at a smaller --size, with a faster codec or preset "
            f"(--codec h264), or with --depth mkv for depth streams")
