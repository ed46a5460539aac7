"""The video encoders of one episode: one background encoder per recorded stream,
writing into the staging folder, so appending a row never waits for an encoder."""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Mapping, Sequence

from egorec_ros.codecs.depth import open_depth_writer
from egorec_ros.codecs.frame_stats import FrameSeries
from egorec_ros.codecs.encoder_thread import MAX_BACKLOG, BackgroundEncoder
from egorec_ros.codecs.probe import count_frames
from egorec_ros.codecs.video import open_video_writer
from egorec_ros.codecs.video_codec import VideoCodec
from egorec_ros.schema.declaration import VideoSpec


class VideoIntegrityError(RuntimeError):
    """A video whose frame count differs from the episode's rows (DESIGN "Video integrity")."""


@dataclass(frozen=True)
class VideoResult:
    key: str
    path: Path
    frames: int
    substituted: int
    reasons: tuple[str, ...] = ()   # why frames were substituted (first few)
    stats: FrameSeries | None = None  # per-frame QA figures (codecs.frame_stats)
    kind: str = "rgb"                 # rgb | depth


class EpisodeVideos:
    def __init__(self, folder: Path, videos: Sequence[VideoSpec], fps: float, codec: VideoCodec,
                 depth_container: str = "mp4", max_backlog: int = MAX_BACKLOG, crash_safe: bool = True) -> None:
        """``crash_safe``: files a killed process leaves readable (codecs.video.VideoFileWriter)."""
        self.encoders: dict[str, BackgroundEncoder] = {}
        self.extensions: dict[str, str] = {}
        self.kinds = {v.key: v.kind for v in videos}
        try:
            for v in videos:
                rate = v.fps or fps
                opener = (partial(open_depth_writer, folder / f"{v.key}.{depth_container}", v.width, v.height, rate,
                                  container=depth_container, crash_safe=crash_safe) if v.kind == "depth"
                          else partial(open_video_writer, folder / f"{v.key}.mp4", v.width, v.height, rate, codec,
                                       crash_safe=crash_safe))
                self.encoders[v.key] = BackgroundEncoder(opener, name=v.key, max_backlog=max_backlog)
                self.extensions[v.key] = self.encoders[v.key].writer.extension
        except BaseException:
            self.abort()
            raise

    @property
    def keys(self) -> frozenset[str]:
        return frozenset(self.encoders)

    @property
    def backlog(self) -> dict[str, int]:
        return {k: e.backlog for k, e in self.encoders.items()}

    def submit(self, frames: Mapping[str, Any]) -> None:
        for key, encoder in self.encoders.items():
            encoder.submit(frames[key])

    def close(self, rows: int) -> dict[str, VideoResult]:
        """Drain and close every encoder, then check frames == rows on disk."""
        results: dict[str, VideoResult] = {}
        errors: list[str] = []
        for key, encoder in self.encoders.items():
            try:
                written = encoder.close()
            except Exception as exc:  # keep closing the others; report all
                errors.append(f"{key}: {exc}")
                continue
            path = encoder.writer.path
            on_disk = count_frames(path)
            if written != rows or on_disk != rows:
                errors.append(f"{key}: {rows} rows but {written} frames encoded and {on_disk} in {path.name}")
            results[key] = VideoResult(key, path, on_disk, encoder.substituted,
                                       tuple(encoder.substitution_reasons[:5]), encoder.stats.series(),
                                       self.kinds.get(key, "rgb"))
        if errors:
            raise VideoIntegrityError("video integrity check failed: " + "; ".join(errors))
        return results

    def abort(self) -> None:
        for encoder in self.encoders.values():
            encoder.abort()
