"""meta/info.json (§6): what one episode contributes, and the task-level merge (§6.7).

Merge rules: features / cameras / video_extensions are unions where the newest
episode wins; devices merge by key; ``total_episodes`` never goes down (deletions
don't roll it back); ``created_at`` is the task's creation time. ``slam_frames`` and
``gripper_slam_frame`` are derived from the merged features, so they cannot
disagree with them (§6.6).
"""
from __future__ import annotations

import time
from typing import Iterable, Mapping

from egorec_ros.layout import paths
from egorec_ros.layout.numbering import DEFAULT_CHUNKS_SIZE
from egorec_ros.schema.declaration import Declaration
from egorec_ros.version import __version__

FORMAT = "pooled_episodes_v1"
CODEBASE_VERSION = "v3.0"
SENSOR_DIM = 256
KEY_ORDER = (
    "format", "chunks_size", "data_path", "video_path", "episodes_path", "codebase_version",
    "app_version", "fps", "video", "task_name", "features", "cameras", "video_extensions",
    "devices", "device_names", "sensors", "sensor_dim", "created_at", "calibration",
    "total_episodes", "gripper_slam_frame", "slam_frames",
)


def episode_contribution(decl: Declaration, present: Iterable[str], video_extensions: Mapping[str, str]) -> dict:
    """The parts of info.json one episode declares: only what it really recorded (§6.8)."""
    present = set(present)
    features = {c.name: c.feature for c in decl.columns if c.declared and c.name in present}
    return {
        "features": features,
        "cameras": camera_entries(decl, video_extensions),
        "video_extensions": dict(video_extensions),
        "devices": [dict(d) for d in decl.devices],
        "device_names": dict(decl.device_names),
        "sensors": [s for s in decl.sensors if f"observation.{s}" in present],
        "calibration": {k: dict(v) for k, v in decl.calibration.items()},
    }


def camera_entries(decl: Declaration, keys: Iterable[str]) -> dict:
    """info.json ``cameras`` entries of the RGB streams ``keys`` (§6.3: fps only when not the task's)."""
    keys = set(keys)
    cameras = {}
    for v in decl.videos:
        if v.kind == "rgb" and v.key in keys:
            cam: dict[str, float] = {"height": v.height, "width": v.width}
            if v.fps and v.fps != decl.fps:
                cam["fps"] = v.fps
            cameras[v.key] = cam
    return cameras


def camera_changes(existing: Mapping | None, cameras: Mapping[str, Mapping]) -> list[str]:
    """How ``cameras`` (an episode's contribution) would change the task's entries: a task
    keeps one {height, width, fps} per camera slot, so info.json describes every episode's
    frames (§6.3; §6.1: an existing value may not change its meaning)."""
    old = (existing or {}).get("cameras") or {}
    return [f"{key!r} is {_describe(old[key])} in this task but {_describe(cam)} in this episode"
            for key, cam in sorted(cameras.items())
            if key in old and _shape(old[key]) != _shape(cam)]


def _shape(cam: Mapping) -> tuple:
    return cam.get("width"), cam.get("height"), cam.get("fps")


def _describe(cam: Mapping) -> str:
    return f"{cam.get('width')}x{cam.get('height')}" + (f" at {cam['fps']} fps" if cam.get("fps") else "")


def merge_info(existing: Mapping | None, contribution: Mapping, *, episode_index: int, task_name: str,
               fps: float, chunks_size: int = DEFAULT_CHUNKS_SIZE) -> dict:
    old = dict(existing or {})
    features = {**old.get("features", {}), **contribution["features"]}
    devices = {d["key"]: d for d in old.get("devices", [])}
    for d in contribution["devices"]:
        devices[d["key"]] = d
    sensors = list(old.get("sensors", []))
    sensors += [s for s in contribution["sensors"] if s not in sensors]
    video_extensions = {**old.get("video_extensions", {}), **contribution["video_extensions"]}
    info = {
        "format": FORMAT,
        "chunks_size": int(old.get("chunks_size", chunks_size)),
        "data_path": old.get("data_path", paths.DATA_PATH),
        "video_path": old.get("video_path", paths.VIDEO_PATH),
        "episodes_path": old.get("episodes_path", paths.EPISODES_PATH),
        "codebase_version": CODEBASE_VERSION,
        "app_version": __version__,
        "fps": float(fps),
        "video": bool(video_extensions),
        "task_name": old.get("task_name", task_name),
        "features": features,
        "cameras": {**old.get("cameras", {}), **contribution["cameras"]},
        "video_extensions": video_extensions,
        "devices": list(devices.values()),
        "device_names": {**old.get("device_names", {}), **contribution["device_names"]},
        "sensors": sorted(sensors, key=_sensor_order),
        "sensor_dim": SENSOR_DIM,
        "created_at": float(old.get("created_at", time.time())),
        "calibration": contribution["calibration"] or old.get("calibration", {}),
        "total_episodes": max(int(old.get("total_episodes", 0)), episode_index),
    }
    info.update(slam_frame_keys(features))
    # keep keys we do not know (a newer writer's additions) instead of dropping them
    info.update({k: v for k, v in old.items() if k not in info and k not in ("gripper_slam_frame", "slam_frames")})
    return {k: info[k] for k in KEY_ORDER if k in info} | {k: v for k, v in info.items() if k not in KEY_ORDER}


def slam_frame_keys(features: Mapping[str, Mapping]) -> dict:
    """``slam_frames`` for every trajectory column, and ``gripper_slam_frame`` (the first
    gripper's frame) only when a gripper trajectory exists (§6.1, §8.1.6)."""
    trajectories = {name: f for name, f in features.items()
                    if name.endswith("slam_trajectory") and "frame" in f}
    if not trajectories:
        return {}
    out: dict = {}
    grippers = sorted((f.get("owner", {}).get("rig", 1), f["frame"]) for f in trajectories.values()
                      if f.get("owner", {}).get("role") == "gripper")
    if grippers:
        out["gripper_slam_frame"] = grippers[0][1]
    out["slam_frames"] = {name: f["frame"] for name, f in sorted(trajectories.items())}
    return out


def _sensor_order(name: str) -> tuple[int, str]:
    return ({"left_glove": 0, "right_glove": 1}.get(name, 2), name)
