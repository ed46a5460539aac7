"""The EgoSteer trainer's drop rules, applied to EgoSmith shards before training does.

Thresholds are the trainer's (src/dataset/sanity_checks.py and src/config/data/unified_wds.yaml
of egosteer/egosteer): extrinsic |det R - 1| > 0.1 or last row not [0,0,0,1] (atol 1e-3);
focal not in (0, 10000); instruction None, empty, all placeholders, instruction_num <= 0 (and,
as the issue asks, instruction_num != len(instruction)); image per-channel mean outside
[5, 250] or std < 3; depth valid (> 0) fraction < 5 %; rot6d |c1.c2| > 0.1; wrist translation
(norm over both wrists) > 2.5 m, wrist rotation > 10 rad or mean fingertip displacement > 2.5 m
between consecutive frames or between a state and its action; a non-finite value; a
normalised state/action value beyond 10. The trainer normalises with its own q01/q99 stats;
here they are the stats of the shards checked (an approximation, said in the report)."""
from __future__ import annotations

import io
import json
import tarfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Iterator

import numpy as np

from egorec_ros.export.egosmith import jpeg, lowdim
from egorec_ros.export.egosmith.meta import PLACEHOLDERS

TRANSLATION_M, ROTATION_RAD, FINGERTIPS_M = 2.5, 10.0, 2.5
NORMALISED_MAX = 10.0
REQUIRED = ("image.jpg", "lowdim.npy", "meta.json")


def samples(shard: Path) -> Iterator[tuple[str, dict[str, bytes]]]:
    """(key, {suffix: bytes}) in tar order; members grouped by the text before the first '.'."""
    key, members = None, {}
    with tarfile.open(shard, "r|") as tar:
        for info in tar:
            member = tar.extractfile(info) if info.isfile() else None
            if member is None:
                continue
            k, _, suffix = info.name.partition(".")
            if k != key and key is not None:
                yield key, members
                members = {}
            key = k
            members[suffix] = member.read()
    if key is not None:
        yield key, members


def _rot6d_matrix(r6: np.ndarray) -> np.ndarray:
    c1 = r6[..., :3] / (np.linalg.norm(r6[..., :3], axis=-1, keepdims=True) + 1e-8)
    c2 = r6[..., 3:] / (np.linalg.norm(r6[..., 3:], axis=-1, keepdims=True) + 1e-8)
    c3 = np.cross(c1, c2)
    c3 = c3 / (np.linalg.norm(c3, axis=-1, keepdims=True) + 1e-8)
    return np.stack([c1, c2, c3], axis=-1)


def _angle(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    rel = _rot6d_matrix(a) @ np.swapaxes(_rot6d_matrix(b), -1, -2)
    return np.arccos(np.clip((np.clip(np.trace(rel, axis1=-2, axis2=-1), -1, 3) - 1) / 2, -1, 1))


def deltas(a: np.ndarray, b: np.ndarray) -> list[str]:
    """Reasons the trainer's state/action delta check gives for 48-d states a -> b (N, 48)."""
    a, b = a.astype(np.float64), b.astype(np.float64)
    translation = np.linalg.norm(np.abs(b[:, :6] - a[:, :6]), axis=1)
    rotation = np.maximum(_angle(b[:, 6:12], a[:, 6:12]), _angle(b[:, 12:18], a[:, 12:18]))
    tips = np.linalg.norm((b[:, 18:48] - a[:, 18:48]).reshape(-1, 10, 3), axis=2).mean(axis=1)
    return [("wrist jumps > 2.5 m" if t > TRANSLATION_M else "") or ("wrist rotates > 10 rad" if r > ROTATION_RAD else "")
            or ("fingertips jump > 2.5 m" if f > FINGERTIPS_M else "") for t, r, f in zip(translation, rotation, tips)]


def sample_reasons(members: dict[str, bytes]) -> tuple[list[str], np.ndarray | None]:
    """Reasons this one sample is dropped, and its lowdim (None if unreadable)."""
    reasons = [f"missing {m}" for m in REQUIRED if m not in members]
    if reasons:
        return reasons, None
    x = np.load(io.BytesIO(members["lowdim.npy"]), allow_pickle=False)
    if x.shape != (lowdim.SIZE,) or x.dtype != np.float32:
        return [f"lowdim is {x.dtype}{x.shape}, not float32(116,)"], None
    if not np.isfinite(x).all():
        return ["non-finite lowdim value"], x
    ext = x[lowdim.EXTRINSIC].astype(np.float64).reshape(4, 4)
    if not np.allclose(ext[3], [0, 0, 0, 1], atol=1e-3):
        reasons.append("extrinsic last row is not [0,0,0,1]")
    if abs(np.linalg.det(ext[:3, :3]) - 1.0) > 0.1:
        reasons.append("extrinsic |det R - 1| > 0.1")
    fx, fy = x[lowdim.INTRINSIC][:2]
    if not (0 < fx < 10000 and 0 < fy < 10000):
        reasons.append("focal length outside (0, 10000)")
    r6 = np.concatenate([x[6:18], x[54:66]]).reshape(4, 6).astype(np.float64)
    c1 = r6[:, :3] / (np.linalg.norm(r6[:, :3], axis=1, keepdims=True) + 1e-8)
    c2 = r6[:, 3:] / (np.linalg.norm(r6[:, 3:], axis=1, keepdims=True) + 1e-8)
    if (np.abs((c1 * c2).sum(axis=1)) > 0.1).any():
        reasons.append("rot6d orthogonality error > 0.1")
    meta = json.loads(members["meta.json"])
    instr, num = meta.get("instruction"), meta.get("instruction_num")
    texts = instr if isinstance(instr, list) else [instr]
    if instr is None or not isinstance(num, int) or num <= 0 or all(
            not isinstance(t, str) or not t.strip() or t.strip().lower() in PLACEHOLDERS for t in texts):
        reasons.append("instruction empty or a placeholder")
    elif isinstance(instr, list) and num != len(instr):
        reasons.append("instruction_num != len(instruction)")
    img = jpeg.decode(members["image.jpg"]).reshape(-1, 3).astype(np.float64)
    mean, std = img.mean(axis=0), img.std(axis=0)
    if mean.min() < 5 or mean.max() > 250:
        reasons.append("image channel mean outside [5, 250]")
    elif std.min() < 3:
        reasons.append("image channel std < 3")
    if "depth.npy" in members:
        depth = np.load(io.BytesIO(members["depth.npy"]), allow_pickle=False)
        if not np.isfinite(depth).all() or (depth > 0).mean() < 0.05:
            reasons.append("fewer than 5 % valid depth pixels")
    return reasons, x


def check_shards(directory: str | Path) -> dict:
    """Per episode: frames, frames the trainer would drop and why; plus layout problems."""
    shards = sorted(Path(directory).glob("shard-*.tar"))
    keys: list[str] = []
    episode_of: list[str] = []
    reasons: list[list[str]] = []
    values: list[np.ndarray | None] = []
    problems: list[str] = []
    seen_in: dict[str, str] = {}
    for shard in shards:
        last: tuple[str, int] | None = None
        for key, members in samples(shard):
            episode, _, frame = key.rpartition("_f")
            if not episode or not frame.isdigit():
                problems.append(f"{shard.name}: key {key!r} is not <dataset>_ep<episode>_f<frame>")
                continue
            if seen_in.setdefault(episode, shard.name) != shard.name:
                problems.append(f"{shard.name}: episode {episode} is split across {seen_in[episode]} and {shard.name}")
            if last is not None and last[0] == episode and int(frame) <= last[1]:
                problems.append(f"{shard.name}: {key} is not after frame {last[1]} (time order)")
            if last is not None and last[0] != episode and any(e == episode for e in episode_of[:-1]):
                problems.append(f"{shard.name}: samples of episode {episode} are not contiguous")
            last = (episode, int(frame))
            why, x = sample_reasons(members)
            keys.append(key)
            episode_of.append(episode)
            reasons.append(why)
            values.append(x)
    _delta_and_normalised(episode_of, reasons, values)
    per: dict[str, dict] = defaultdict(lambda: {"frames": 0, "dropped": 0, "reasons": Counter()})
    for episode, why in zip(episode_of, reasons):
        e = per[episode]
        e["frames"] += 1
        if why:
            e["dropped"] += 1
            e["reasons"].update(set(why))
    return {"directory": str(directory), "shards": [s.name for s in shards], "samples": len(keys),
            "dropped": sum(1 for r in reasons if r), "problems": problems,
            "episodes": {k: {**v, "reasons": dict(sorted(v["reasons"].items()))} for k, v in per.items()},
            "note": "normalised-value rule uses q01/q99 of these shards, not the trainer's stats file"}


def _delta_and_normalised(episode_of: list[str], reasons: list[list[str]], values: list[np.ndarray | None]) -> None:
    kept = [(i, v) for i, v in enumerate(values) if v is not None and np.isfinite(v).all()]
    if not kept:
        return
    ok = [i for i, _ in kept]
    x = np.stack([v for _, v in kept]).astype(np.float64)
    for i, why in zip(ok, deltas(x[:, lowdim.STATE], x[:, lowdim.ACTION])):    # a state and its action
        if why:
            reasons[i].append(why)
    for j in range(1, len(ok)):                                                 # consecutive frames
        a, b = ok[j - 1], ok[j]
        if episode_of[a] == episode_of[b]:
            why = deltas(x[j - 1:j, lowdim.STATE], x[j:j + 1, lowdim.STATE])[0]
            if why:
                reasons[b].append(why)
    sa = x[:, :96]
    q01, q99 = np.quantile(sa, 0.01, axis=0), np.quantile(sa, 0.99, axis=0)
    span = q99 - q01
    live = span > 1e-6
    norm = np.zeros_like(sa)
    norm[:, live] = 2 * (sa[:, live] - q01[live]) / span[live] - 1
    for i, bad in zip(ok, np.abs(norm).max(axis=1) > NORMALISED_MAX):
        if bad:
            reasons[i].append("normalised state/action value beyond 10")
