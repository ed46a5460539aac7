"""Checks of the non-video columns, found by their reserved names (§2.4): SLAM trajectories
(tracking lost = a gap between poses, or a jump), device silence (status.<id> "disconnected"),
gloves reading zero pressure throughout, force sensors saturated or flat, IMU gaps."""
from __future__ import annotations

from typing import Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from egorec_ros.qa.runs import longest_true
from egorec_ros.qa.thresholds import QaThresholds
from egorec_ros.qa.verdict import REDO, WARN, Finding

SLAM_SUFFIX = "slam_trajectory"
POINT = 8                        # [t, x, y, z, qx, qy, qz, qw]
SILENCE_S = 1.0                  # status.<id> turns "disconnected" after this silence (AssemblyConfig)


def qa_columns(names: list[str]) -> list[str]:
    """The data columns the checks read (a small part of the episode's bytes: no images)."""
    return [n for n in names if n.endswith((SLAM_SUFFIX, "_force")) or n.startswith("status.") or n == "imu_ts_ns"]


def sensor_checks(table: pa.Table, fps: float, t: QaThresholds, findings: list[Finding]) -> dict:
    figures: dict[str, dict] = {}
    for name in table.column_names:
        col = table.column(name)
        if name.endswith(SLAM_SUFFIX):
            figures[name] = _slam(name, col, fps, t, findings)
        elif name.startswith("status."):
            figures[name] = _silence(name, col, fps, t, findings)
        elif name.endswith("_force"):
            figures[name] = _force(name, col, t, findings)
        elif name == "imu_ts_ns":
            figures[name] = _imu(col, t, findings)
    return {k: v for k, v in figures.items() if v}


def glove_checks(feature_stats: Mapping[str, Mapping], rows: int, t: QaThresholds, findings: list[Finding]) -> dict:
    """Gloves whose pressure is zero in every row, from the episode's own feature statistics
    (max of every cell 0): the 256 values a row are never read back for this."""
    figures = {}
    for name in ("observation.left_glove", "observation.right_glove"):
        block = feature_stats.get(name)
        if not block or rows < t.glove_zero_rows:
            continue
        if int(block.get("count", 0)) and not np.any(block.get("max", [1])) and not np.any(block.get("min", [1])):
            findings.append(Finding(WARN, "glove_zero", f"{name}: pressure all zero in all {rows} rows "
                                                        "(sensor dead, or the hand never touched anything)"))
            figures[name] = {"all_zero": True}
    return figures


def _flat(col: pa.ChunkedArray) -> np.ndarray:
    return pc.list_flatten(col).to_numpy(zero_copy_only=False) if len(col) else np.zeros(0)


def _slam(name: str, col: pa.ChunkedArray, fps: float, t: QaThresholds, findings: list[Finding]) -> dict:
    points = _flat(col).reshape(-1, POINT)
    rows = len(col)
    if points.shape[0] == 0:
        findings.append(Finding(REDO, "slam_lost", f"{name}: no pose in the whole episode (tracking lost)"))
        return {"poses": 0}
    # a gap: rows without a pose (the trajectory's window was empty); ends of the episode included
    counts = pc.list_value_length(col).to_numpy(zero_copy_only=False)
    gap_rows, at = longest_true(np.asarray(counts) == 0)
    gap_ms = (gap_rows + 1) * 1000.0 / fps if gap_rows else 0.0
    step = np.linalg.norm(np.diff(points[:, 1:4], axis=0), axis=1) if points.shape[0] > 1 else np.zeros(0)
    jumps = int(np.count_nonzero(step > t.slam_jump_m))
    level = REDO if gap_ms >= t.slam_gap_redo_ms else WARN if gap_ms >= t.slam_gap_warn_ms else None
    if level:
        findings.append(Finding(level, "slam_lost", f"{name}: no pose for {gap_ms:.0f} ms (rows {at}.."
                                                    f"{at + gap_rows - 1}): tracking lost"))
    if jumps:
        findings.append(Finding(WARN, "slam_jump", f"{name}: {jumps} jump(s) over {t.slam_jump_m:g} m between "
                                                   f"poses (largest {float(step.max()):.2f} m): relocalisation"))
    return {"poses": int(points.shape[0]), "longest_gap_ms": round(gap_ms, 1), "jumps": jumps,
            "rows_without_pose": int(np.count_nonzero(np.asarray(counts) == 0)), "rows": rows}


def _silence(name: str, col: pa.ChunkedArray, fps: float, t: QaThresholds, findings: list[Finding]) -> dict:
    down = pc.equal(col, "disconnected").to_numpy(zero_copy_only=False).astype(bool)
    rows, at = longest_true(down)
    if not rows:
        return {}
    # leading rows: no sample yet at the episode's start; later ones: silent for SILENCE_S before
    silent_ms = rows * 1000.0 / fps + (0.0 if at == 0 else SILENCE_S * 1000.0)
    device = name.split(".", 1)[1]
    what = "glove silent" if "glove" in device else "device silent"
    level = REDO if silent_ms >= t.silent_redo_ms else WARN if silent_ms >= t.silent_warn_ms else None
    if level:
        findings.append(Finding(level, "silent", f"{device}: {what} for {silent_ms:.0f} ms (disconnected rows "
                                                 f"{at}..{at + rows - 1})"))
    return {"silent_ms": round(silent_ms, 1)}


def _force(name: str, col: pa.ChunkedArray, t: QaThresholds, findings: list[Finding]) -> dict:
    rows = len(col)
    counts = pc.list_value_length(col).to_numpy(zero_copy_only=False)
    width = int(counts.max()) if rows else 0
    if not width or np.any(counts != width):
        return {}
    values = _flat(col).reshape(rows, width)
    if rows >= t.force_flat_min_rows and np.all(values == values[0]):
        findings.append(Finding(WARN, "force_flat", f"{name}: the same value in all {rows} rows (sensor stuck or "
                                                    "unplugged)"))
        return {"flat": True}
    nonzero = np.abs(values[values != 0])
    if nonzero.size == 0:
        return {}
    pinned = float(np.count_nonzero(nonzero == nonzero.max())) / nonzero.size
    if pinned > t.force_saturated_warn and np.count_nonzero(nonzero == nonzero.max()) > 2:
        findings.append(Finding(WARN, "force_saturated", f"{name}: {100 * pinned:.1f} % of the readings at "
                                                         f"{float(nonzero.max()):g} (saturated)"))
    return {"saturated_share": round(pinned, 4)}


def _imu(col: pa.ChunkedArray, t: QaThresholds, findings: list[Finding]) -> dict:
    stamps = _flat(col).astype(np.int64)
    stamps = stamps[stamps != 0]
    if stamps.size < 2:
        return {}
    gap_ms = float(np.diff(np.sort(stamps)).max()) / 1e6
    if gap_ms >= t.imu_gap_warn_ms:
        findings.append(Finding(WARN, "imu_gap", f"IMU: no sample for {gap_ms:.0f} ms"))
    return {"longest_gap_ms": round(gap_ms, 1)}
