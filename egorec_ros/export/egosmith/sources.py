"""Where an episode's EgoSmith inputs come from, decided (and refused) before anything is
written: head camera slot and its depth, the ego SLAM trajectory and its frame, intrinsics,
hand keypoints and their frame, instruction."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from egorec_ros.dataset import Episode
from egorec_ros.export.egosmith.axes import OLD_AXES, OLD_FRAME, FrameError, body_from_optical
from egorec_ros.export.egosmith.errors import ExportRefused
from egorec_ros.export.egosmith.meta import usable_instructions
from egorec_ros.rig.frames import HAND_FRAMES
from egorec_ros.schema.tasks import read_tasks

HANDS = ("left", "right")
WORLD_FRAMES = ("ego_slam_world", "ego_cam_optical")   # hand frames we can put in the world
KEYPOINTS_FILE = "hand_keypoints.parquet"


@dataclass(frozen=True)
class HandSource:
    columns: tuple[str, str]         # left, right: (N, 63) per row
    frame: str                       # one of WORLD_FRAMES
    path: Path | None                # a keypoints_output file, None = the episode's own columns


@dataclass(frozen=True)
class EpisodeSources:
    episode_index: int
    rows: int
    head_slot: str
    depth_slot: str | None
    trajectory: str
    body_optical: np.ndarray         # 3x3, p_body = R p_optical
    intrinsic: np.ndarray            # [fx, fy, cx, cy] at the video's size
    hands: HandSource
    instruction: list[str]


def trajectory_column(ep: Episode) -> str:
    """The ego SLAM trajectory, by its declared owner role (§6.6), not by name guessing."""
    ego = [c for c in ep.trajectory_columns() if ep.slam_spec(c).get("owner", {}).get("role") == "ego"
           or (c.startswith("observation.ego") and "owner" not in ep.slam_spec(c))]
    if not ego:
        have = ", ".join(ep.trajectory_columns()) or "none"
        raise ExportRefused(f"episode {ep.index}: no ego SLAM trajectory (trajectories: {have}); EgoSmith needs the "
                            "head camera pose of every frame. Record the ego device's slam stream, or leave this "
                            "episode out with --episodes")
    return ego[0]


def head_slot(ep: Episode, spec: dict) -> str:
    slot = spec.get("source_slot")
    cameras = ep.task.info.get("cameras", {})
    if not isinstance(slot, str) or slot not in cameras or ep.video_path(slot) is None:
        raise ExportRefused(f"episode {ep.index}: the ego trajectory's source_slot {slot!r} is not a recorded RGB "
                            f"video of this episode (videos: {ep.video_keys}); cannot tell which video is the head camera")
    return slot


def depth_slot(ep: Episode, owner_key: str | None, head: str) -> str | None:
    """The depth stream of the head camera's device (a slot in video_extensions, not in cameras)."""
    for dev in ep.task.info.get("devices", []):
        slots = dev.get("slots", [])
        if head in slots or (owner_key and dev.get("key") == owner_key):
            found = [s for s in slots if ep.is_depth(s) and ep.video_path(s) is not None]
            return found[0] if found else None
    return None


def intrinsic(ep: Episode, head: str, owner_key: str | None) -> np.ndarray:
    """[fx, fy, cx, cy] of the head camera from the episode's calibration (§6.5), scaled to the
    recorded video size."""
    cal = ep.row.get("calibration") or ep.task.info.get("calibration") or {}
    base = re.sub(r"_\d+$", "", head)
    names = [f"{base}_calibration", "head_stereo"]
    for dev in ep.task.info.get("devices", []):
        if dev.get("key") == owner_key and dev.get("slots"):
            names.insert(0, f"{re.sub(r'_[0-9]+$', '', dev['slots'][0])}_calibration")
    entry: dict = next((cal[n] for n in names if n in cal), {})
    side = "right_camera" if head.endswith("right") else "left_camera"
    try:
        fx, fy, cx, cy = (float(v) for v in entry[side]["intrinsic"])
        width0, height0 = (float(v) for v in entry["resolution"])
    except (TypeError, KeyError, ValueError):
        raise ExportRefused(f"episode {ep.index}: no usable calibration for the head camera {head!r} "
                            f"(looked for {names} with {side}.intrinsic and resolution in the episode row's "
                            f"calibration; found keys {sorted(cal)})") from None
    size = ep.task.info["cameras"][head]
    sx, sy = float(size["width"]) / width0, float(size["height"]) / height0
    return np.array([fx * sx, fy * sy, cx * sx, cy * sy])


def keypoints_dir(ep: Episode) -> Path:
    """§1.4: keypoints_output/<task>/episode_{episode_index:06d}/ beside the task directory."""
    root = ep.task.root.resolve()
    return root.parent / "keypoints_output" / root.name / f"episode_{ep.index:06d}"


def hand_source(ep: Episode, hand_frame: str | None) -> HandSource:
    file = keypoints_dir(ep) / KEYPOINTS_FILE
    columns = tuple(f"observation.{h}_hand_pose" for h in HANDS)
    if file.exists():
        declared = (pq.read_schema(file).metadata or {}).get(b"frame", b"").decode() or None
        where, have = str(file), set(pq.read_schema(file).names)
    else:
        features = ep.task.features
        frames = {features.get(c, {}).get("frame") for c in columns if ep.has(c)}
        where, have = f"episode {ep.index}", set(ep.columns)
        if len(frames) > 1 and hand_frame is None:
            raise ExportRefused(f"{where}: the hand pose columns declare different frames {sorted(map(str, frames))}; "
                                "give --hand-frame")
        declared = next(iter(frames)) if len(frames) == 1 else None
    if not any(c in have for c in columns):
        raise ExportRefused(f"{where}: no hand keypoints (neither {' nor '.join(columns)}, nor "
                            f"{file}); EgoSmith samples are hand trajectories")
    frame = hand_frame or declared
    if frame is None:
        raise ExportRefused(f"{where}: the frame of the hand keypoints is not declared (features[...].frame, or "
                            f"'frame' metadata in {KEYPOINTS_FILE}); give --hand-frame "
                            f"{' or '.join(WORLD_FRAMES)} if you know it")
    if frame not in WORLD_FRAMES:
        known = "; ".join(f"{k}: {v}" for k, v in HAND_FRAMES.items())
        raise ExportRefused(f"{where}: hand keypoints are in frame {frame!r}, which has no place in the SLAM world "
                            f"(known frames — {known}); export keypoints in {' or '.join(WORLD_FRAMES)}")
    return HandSource(columns, frame, file if file.exists() else None)  # type: ignore[arg-type]


def instructions(ep: Episode) -> list[str]:
    tasks = {i: t for t, i in read_tasks(ep.task.paths.tasks).items()}
    index = ep.column("task_index").combine_chunks()
    texts = [tasks.get(int(i), "") for i in np.unique(index.to_numpy(zero_copy_only=False))]
    extra = ep.row.get("instructions") or ep.row.get("instruction") or []
    texts += [extra] if isinstance(extra, str) else list(extra)
    usable = usable_instructions(texts)
    if not usable:
        raise ExportRefused(f"episode {ep.index}: no instruction (task text {texts!r} in {ep.task.paths.tasks} is "
                            "empty or a placeholder); the trainer drops every frame without one. Name the task "
                            "when recording (--task), or fix meta/tasks.jsonl")
    return usable


def episode_sources(ep: Episode, *, hand_frame: str | None = None) -> EpisodeSources:
    traj = trajectory_column(ep)
    spec = ep.slam_spec(traj)
    if not ep.has(traj + "_ns"):
        raise ExportRefused(f"episode {ep.index}: {traj} has no {traj}_ns column: its points cannot be paired "
                            "with frames (§3.1 forbids using the sensor-clock t)")
    axes = spec.get("frame_axes") or (OLD_AXES if spec.get("frame", OLD_FRAME) == OLD_FRAME else None)
    if axes is None:
        raise ExportRefused(f"episode {ep.index}: {traj} declares frame {spec.get('frame')!r} without frame_axes")
    try:
        body_optical = body_from_optical(axes, where=f"episode {ep.index} {traj}")
    except FrameError as exc:
        raise ExportRefused(str(exc)) from None
    owner_key = spec.get("owner", {}).get("device_key")
    head = head_slot(ep, spec)
    return EpisodeSources(ep.index, len(ep), head, depth_slot(ep, owner_key, head), traj, body_optical,
                          intrinsic(ep, head, owner_key), hand_source(ep, hand_frame), instructions(ep))
