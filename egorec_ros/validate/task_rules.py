"""Task-level rules: info.json (§6, §8.1), stats.json, tasks.jsonl, markers, leftovers."""
from __future__ import annotations

import json
from pathlib import Path

from egorec_ros.codecs import force_matrix as fm
from egorec_ros.layout.paths import TaskPaths
from egorec_ros.rig.frames import FRAMES
from egorec_ros.schema import info as info_json
from egorec_ros.schema.names import ColumnNameError, check_observation_name, reserved_suffix
from egorec_ros.validate.findings import Findings
from egorec_ros.validate.stats_rules import check_stats_blocks

REQUIRED_KEYS: dict[str, type | tuple[type, ...]] = {
    "format": str, "chunks_size": int, "data_path": str, "video_path": str, "episodes_path": str,
    "codebase_version": str, "app_version": str, "fps": (int, float), "video": bool, "task_name": str,
    "features": dict, "cameras": dict, "video_extensions": dict, "devices": list, "device_names": dict,
    "sensors": list, "sensor_dim": int, "calibration": dict, "total_episodes": int, "created_at": (int, float),
}
INFO = "meta/info.json"
LAYOUT_KEYS = ("chunks_size", "data_path", "video_path", "episodes_path")


def check_info(info: dict, out: Findings) -> None:
    for key, types in REQUIRED_KEYS.items():
        if key not in info:
            out.add(INFO, key, "§6.1", "required key is missing")
        elif not isinstance(info[key], types) or (types is int and isinstance(info[key], bool)):
            out.add(INFO, key, "§6.1", f"has type {type(info[key]).__name__}")
    if isinstance(info.get("chunks_size"), int) and info["chunks_size"] < 1:
        out.add(INFO, "chunks_size", "§1.3", f"is {info['chunks_size']}, must be >= 1")
    if info.get("sensor_dim", 256) != 256:
        out.add(INFO, "sensor_dim", "§6.4", f"is {info.get('sensor_dim')}, must be 256")
    for name, feature in (info.get("features") or {}).items():
        _check_feature(name, feature, out)
    _check_slam_frames(info, out)
    cameras, exts = info.get("cameras") or {}, info.get("video_extensions") or {}
    for key in cameras:
        if key not in exts:
            out.add(INFO, f"cameras.{key}", "§6.3", "camera slot has no video_extensions entry")
        cam = cameras[key]
        if not (isinstance(cam, dict) and isinstance(cam.get("height"), int) and isinstance(cam.get("width"), int)):
            out.add(INFO, f"cameras.{key}", "§6.3", "needs integer height and width")
    for key, ext in exts.items():
        if ext not in ("mp4", "mkv"):
            out.add(INFO, f"video_extensions.{key}", "§6.3", f"extension {ext!r} is not mp4 or mkv")
    slots: list[str] = []
    for i, dev in enumerate(info.get("devices") or []):
        if not isinstance(dev, dict) or not all(k in dev for k in ("key", "kind", "name", "slots")):
            out.add(INFO, f"devices[{i}]", "§6.4", "a device entry needs key, kind, name, slots")
            continue
        slots += list(dev["slots"])
    names = info.get("device_names") or {}
    for slot in slots:
        if slot not in names:
            out.add(INFO, f"device_names.{slot}", "§6.4/§8.1.7", "slot of devices[].slots has no device name")
    for dup in {s for s in slots if slots.count(s) > 1}:
        out.add(INFO, f"devices.slots.{dup}", "§5.2.1", "slot registered by two devices")
    for sensor in info.get("sensors") or []:
        if f"observation.{sensor}" not in (info.get("features") or {}):
            out.add(INFO, f"sensors.{sensor}", "§6.4", "sensor listed but its column is not declared")


def _check_feature(name: str, feature: object, out: Findings) -> None:
    where = f"features.{name}"
    if name.startswith("status.") or name in ("episode_index", "frame_index", "timestamp", "task_index",
                                               "wall_time", "hardware_ns", "raw_hw_ns", "imu_ts_ns"):
        out.add(INFO, where, "§6.8.2", "status and key columns are not declared in features")
        return
    if name != "action":
        try:
            check_observation_name(name, semantic_suffix=_suffix_of(name))
        except ColumnNameError as exc:
            out.add(INFO, where, "§2.4", str(exc))
    if not isinstance(feature, dict) or "dtype" not in feature or not isinstance(feature.get("shape"), list):
        out.add(INFO, where, "§6.2/§8.1.5", "a feature needs dtype and shape")
        return
    if name.endswith("_force_matrix"):
        if feature.get("encoding") not in fm.ENCODINGS or "scale" not in feature:
            out.add(INFO, where, "§4.6", "a force matrix feature needs encoding (row_diff_quantized|row_flat_raw) and scale")
    if name.endswith("slam_trajectory"):
        if feature.get("encoding") != "flat_points_8_txyz_qxyzw" or feature.get("shape") != [8]:
            out.add(INFO, where, "§6.2", "trajectory feature needs shape [8] and encoding flat_points_8_txyz_qxyzw")
        if "frame" not in feature or "frame_axes" not in feature:
            out.add(INFO, where, "§8.1.6", "each trajectory declares its own frame and frame_axes")
        elif feature["frame"] in FRAMES and feature["frame_axes"] != FRAMES[feature["frame"]]:
            out.add(INFO, where, "§6.6", f"frame_axes {feature['frame_axes']} contradict frame {feature['frame']!r}")
    if name.endswith("slam_trajectory_ns") and feature.get("encoding") != "flat_parallel_to_slam_trajectory":
        out.add(INFO, where, "§6.2", "trajectory time feature needs encoding flat_parallel_to_slam_trajectory")


def _suffix_of(name: str) -> str | None:
    return reserved_suffix("_" + name[len("observation."):])


def _check_slam_frames(info: dict, out: Findings) -> None:
    features = info.get("features") or {}
    expected = info_json.slam_frame_keys(features)
    for key in ("slam_frames", "gripper_slam_frame"):
        if key in expected and info.get(key) != expected[key]:
            out.add(INFO, key, "§6.6", f"is {info.get(key)!r} but the trajectory features say {expected[key]!r}")
        if key not in expected and key in info:
            reason = "no gripper trajectory is declared" if key == "gripper_slam_frame" else "no trajectory is declared"
            out.add(INFO, key, "§8.1.6", f"present although {reason}")


def check_side_files(paths: TaskPaths, episode_indices: set[int], out: Findings,
                     features: dict | None = None) -> dict[str, int]:
    """tasks.jsonl, stats.json, recycled marker and staged leftovers; returns task indices."""
    tasks: dict[str, int] = {}
    if paths.tasks.exists():
        for lineno, line in enumerate(paths.tasks.read_text(encoding="utf-8").splitlines(), 1):
            try:
                doc = json.loads(line)
                tasks[doc["task"]] = int(doc["task_index"])
            except (ValueError, KeyError, TypeError):
                out.add("meta/tasks.jsonl", f"line {lineno}", "DESIGN:tasks", "not a {task_index, task} JSON object")
    elif episode_indices:
        out.add("meta/tasks.jsonl", "", "§1.1", "missing")
    if paths.stats.exists():
        try:
            stats = json.loads(paths.stats.read_text(encoding="utf-8"))
        except ValueError as exc:
            out.add("meta/stats.json", "", "DESIGN:stats", f"not valid JSON: {exc}")
        else:
            check_stats_blocks(stats, features or {}, out)
    elif episode_indices:
        out.add("meta/stats.json", "", "§1.1", "missing")
    if paths.recycled.exists():
        try:
            n = json.loads(paths.recycled.read_text())["episode_index"]
            if n in episode_indices:
                out.add("meta/recycled_episode.json", "episode_index", "§1.3",
                        f"recycles number {n}, which belongs to a committed episode")
        except (ValueError, KeyError, TypeError):
            out.add("meta/recycled_episode.json", "", "§1.3", "not {episode_index, freed_at}")
    for index, folder in paths.list_staged():
        out.add(folder.name, "", "DESIGN:commit",
                f"unfinished episode {index} from an interrupted run; run `egorec recover` to finish, "
                "salvage or set it aside")
    return tasks


def check_strays(paths: TaskPaths, known: set[Path], out: Findings) -> None:
    """Files under data/, videos/ and meta/episodes/ that no committed episode owns."""
    for top in ("data", "videos", "meta/episodes"):
        base = paths.root / top
        if not base.is_dir():
            continue
        for p in base.rglob("*"):
            rel = p.relative_to(paths.root)
            if p.is_file() and not any(part.startswith(".") for part in rel.parts) and p not in known:
                out.add(str(rel), "", "§1.2.1", "file belongs to no committed episode (orphan or misnamed)")
