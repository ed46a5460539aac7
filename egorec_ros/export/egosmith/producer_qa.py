"""EgoSmith's producer-side QA of a WebDataset (quality/wds_sanity.py ``analyze_webdataset`` with
quality/lowdim.py and quality/constants.py of egosteer/egosmith), rule by rule under its own
issue name. An episode (a run of samples with one clip_id) that has any issue in
``HARD_FILTER`` is dropped whole by EgoSmith's hard filter."""
from __future__ import annotations

import io
import json
from collections import Counter
from typing import Iterable

import numpy as np

from egorec_ros.export.egosmith import jpeg

HARD_FILTER = frozenset({"missing_image", "missing_lowdim", "missing_meta", "missing_depth", "invalid_meta",
                         "missing_meta_keys", "lowdim_decode_failure", "nonfinite_lowdim", "invalid_rot6d",
                         "invalid_state", "invalid_action", "invalid_extrinsic", "invalid_intrinsic",
                         "missing_instruction", "empty_instruction", "instruction_num_mismatch"})
REQUIRED_META_KEYS = ("clip_id", "instruction", "instruction_num", "presence")
ROT6D_SLICES = (slice(6, 12), slice(12, 18), slice(54, 60), slice(60, 66))
ROT6D_UNIT_NORM_TOL, ROT6D_ORTHOGONALITY_TOL, ROT6D_MIN_CROSS_NORM = 0.2, 0.2, 0.5
EXTRINSIC_BOTTOM_ROW_TOL, EXTRINSIC_ORTHO_FROB_TOL, EXTRINSIC_DET_TOL = 1e-3, 0.2, 0.2


def rot6d_sane(r6: np.ndarray) -> bool:
    """quality/lowdim.py ``_rot6d_is_sane``: both columns of norm 1 +- 0.2, near orthogonal."""
    a, b = r6[:3].astype(np.float32), r6[3:].astype(np.float32)
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    if not np.isfinite(r6).all() or na <= 1e-8 or nb <= 1e-8:
        return False
    if abs(na - 1.0) > ROT6D_UNIT_NORM_TOL or abs(nb - 1.0) > ROT6D_UNIT_NORM_TOL:
        return False
    ua, ub = a / na, b / nb
    return abs(float(np.dot(ua, ub))) <= ROT6D_ORTHOGONALITY_TOL and \
        float(np.linalg.norm(np.cross(ua, ub))) >= ROT6D_MIN_CROSS_NORM


def extrinsic_sane(m: np.ndarray) -> bool:
    m = m.astype(np.float32).reshape(4, 4)
    if not np.isfinite(m).all() or not np.allclose(m[3], np.array([0, 0, 0, 1], dtype=np.float32), atol=EXTRINSIC_BOTTOM_ROW_TOL):
        return False
    r = m[:3, :3].astype(np.float64)
    det = float(np.linalg.det(r))
    return np.isfinite(det) and abs(det - 1.0) <= EXTRINSIC_DET_TOL and \
        float(np.linalg.norm(r.T @ r - np.eye(3), ord="fro")) <= EXTRINSIC_ORTHO_FROB_TOL


def instruction_issue(meta: dict) -> str | None:
    """quality/lowdim.py ``parse_instruction_metadata`` flags, in wds_sanity's precedence."""
    try:
        num = max(0, int(meta.get("instruction_num", 0)))
    except (TypeError, ValueError):
        num = 0
    raw = meta.get("instruction", [])
    slots = [raw] if isinstance(raw, str) else list(raw) if isinstance(raw, (list, tuple)) else []
    effective = slots[:num]
    texts = [str(s).strip() for s in effective if str(s).strip()]
    if num <= 0:
        return "missing_instruction"
    if not texts:
        return "empty_instruction"
    if len(slots) < num or len(texts) != min(num, len(effective)):
        return "instruction_num_mismatch"
    return None


def sample_issues(members: dict[str, bytes], *, image_decodes: bool | None = None,
                  require_depth: bool = False) -> tuple[str | None, list[str]]:
    """(clip_id from meta or None, issue names) of one sample; ``image_decodes`` if the caller
    already tried (None: try here)."""
    issues: list[str] = []
    meta = None
    if "meta.json" not in members:
        issues.append("missing_meta")
    else:
        try:
            meta = json.loads(members["meta.json"].decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            issues.append("meta_parse_failure")
    if "image.jpg" not in members:
        issues.append("missing_image")
    else:
        if image_decodes is None:
            image_decodes = jpeg.decode_or_none(members["image.jpg"]) is not None
        if not image_decodes:
            issues.append("image_decode_failure")
    lowdim = None
    if "lowdim.npy" not in members:
        issues.append("missing_lowdim")
    else:
        try:
            lowdim = np.load(io.BytesIO(members["lowdim.npy"]), allow_pickle=False).astype(np.float32).reshape(-1)
            if lowdim.shape != (116,):
                raise ValueError(lowdim.shape)
        except ValueError:
            issues.append("lowdim_decode_failure")
            lowdim = None
    if require_depth and "depth.npy" not in members:
        issues.append("missing_depth")
    if isinstance(meta, dict):
        if any(k not in meta for k in REQUIRED_META_KEYS):
            issues.append("missing_meta_keys")
        if (why := instruction_issue(meta)) is not None:
            issues.append(why)
    else:
        issues.append("invalid_meta")
    if lowdim is not None:
        issues += _lowdim_issues(lowdim)
    clip = meta.get("clip_id") if isinstance(meta, dict) else None
    return (str(clip) if clip else None), issues


def _lowdim_issues(x: np.ndarray) -> list[str]:
    if not np.isfinite(x).all():
        return ["nonfinite_lowdim"]
    if x[112] <= 0 or x[113] <= 0:
        return ["invalid_intrinsic"]
    out = []
    if not all(rot6d_sane(x[s]) for s in ROT6D_SLICES):
        out.append("invalid_rot6d")
    if not extrinsic_sane(x[96:112]):
        out.append("invalid_extrinsic")
    return out


def analyse(samples: Iterable[tuple[str, str | None, list[str]]]) -> dict:
    """From (key, clip_id or None, issues) of every sample in stream order: per rule, samples and
    episodes with that issue; episodes the hard filter drops."""
    frames: Counter = Counter()
    episodes: dict[str, set[str]] = {}
    runs = 0
    current = None
    total = 0
    for key, clip, issues in samples:
        total += 1
        clip = clip or key.rsplit("_f", 1)[0]
        if clip != current:                 # a new run of one clip is a new episode, as wds_sanity counts
            current = clip
            runs += 1
            episodes.setdefault(clip, set())
        frames.update(issues)
        episodes[clip].update(issues)
    by_episode: Counter = Counter(i for issues in episodes.values() for i in issues)
    dropped = {c: sorted(i & HARD_FILTER) for c, i in episodes.items() if i & HARD_FILTER}
    return {"samples": total, "episodes": runs,
            "rules": {name: {"samples": frames[name], "episodes": by_episode[name], "hard_filter": name in HARD_FILTER}
                      for name in sorted(frames)},
            "hard_filter_drop_episodes": len(dropped), "dropped_episodes": dropped}
