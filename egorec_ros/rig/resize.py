"""A rig with other video sizes (benchmarks and quick demos record the same rig at
640x480); the declaration, the assembler's checks and the simulator all follow."""
from __future__ import annotations

import dataclasses
from typing import Mapping

from egorec_ros.rig.compile import RigError
from egorec_ros.rig.kinds import StreamKind
from egorec_ros.rig.model import Rig

Size = tuple[int, int]


def parse_size(text: str) -> Size:
    """``"640x480"`` -> (640, 480); the one reading of WxH for the CLI and node parameters."""
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise RigError(f"a video size looks like 640x480, got {text!r}") from None
    return w, h


def with_video_sizes(rig: Rig, sizes: Size | Mapping[str, Size]) -> Rig:
    """``sizes``: one (width, height) for every video/depth stream, or a mapping from slot
    name to size ("*" for the rest)."""
    def size_of(slot: str) -> Size | None:
        if isinstance(sizes, Mapping):
            return sizes.get(slot, sizes.get("*"))
        w, h = sizes
        return w, h

    devices = []
    for d in rig.devices:
        streams = []
        for s in d.streams:
            size = size_of(s.slot) if s.kind in (StreamKind.VIDEO, StreamKind.DEPTH) and s.slot else None
            if size is not None:
                w, h = int(size[0]), int(size[1])
                if w <= 0 or h <= 0 or w % 2 or h % 2:
                    raise ValueError(f"video size {w}x{h} for {s.slot}: width and height must be even and > 0")
                s = dataclasses.replace(s, source={**s.source, "width": w, "height": h})
            streams.append(s)
        devices.append(dataclasses.replace(d, streams=tuple(streams)))
    videos = []
    for v in rig.videos:
        size = size_of(v.key)
        videos.append(v if size is None else dataclasses.replace(v, width=int(size[0]), height=int(size[1])))
    return dataclasses.replace(rig, devices=tuple(devices), videos=tuple(videos))
