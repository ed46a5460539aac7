"""``egorec export egosmith --check``: what the shards' two consumers would drop.

* The EgoSteer trainer (trainer.py): every training sample (a window anchored at each frame)
  that its DataChecker drops, under the name of the error that drops it, computed on the
  values the trainer computes (wrist in the camera frame, fingertips in the wrist frame,
  relative actions, normalised with stats fitted on these shards).
* EgoSmith's producer-side QA (producer_qa.py, quality/wds_sanity.py): each rule's hits under
  its issue name, and the episodes its hard filter drops whole.
* Layout problems (a split or interleaved episode, time order, unreadable samples)."""
from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from egorec_ros.export.egosmith import jpeg, lowdim, producer_qa, trainer

REQUIRED = ("image.jpg", "lowdim.npy", "meta.json")
NOTE = ("trainer: val-mode windows (6 states / 6 images 30 frames apart, 32 actions), normaliser fitted on "
        "these shards' processed rows; no colour augmentation, no 384x384 resize before the image check")


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


def _frame(key: str, members: dict[str, bytes], image: np.ndarray | None, load_depth: bool) -> trainer.Frame | str:
    """The trainer's view of one sample, or why the trainer would stop on it."""
    missing = [m for m in ("lowdim.npy", "meta.json", "image.jpg") if m not in members]
    if missing:
        return f"{key}: no {', '.join(missing)} (the trainer stops with an error on it)"
    try:
        x = np.load(io.BytesIO(members["lowdim.npy"]), allow_pickle=False)
        meta = json.loads(members["meta.json"])
    except ValueError as exc:
        return f"{key}: unreadable lowdim.npy or meta.json ({exc}; the trainer stops with an error on it)"
    if x.shape != (lowdim.SIZE,) or not isinstance(meta, dict) or "episode_index" not in meta:
        return f"{key}: lowdim {x.dtype}{x.shape} or meta without episode_index (the trainer stops on it)"
    if image is None:
        return f"{key}: image.jpg does not decode (the trainer stops with an error on it)"
    depth_bad = None
    if load_depth and "depth.npy" in members:
        depth_bad = trainer.depth_problem(np.load(io.BytesIO(members["depth.npy"]), allow_pickle=False))
    return trainer.Frame(key, (str(meta.get("dataset_name", "")), int(meta["episode_index"])), x.astype(np.float32),
                         meta.get("instruction"), meta.get("instruction_num"), trainer.image_problem(image), depth_bad)


def check_shards(directory: str | Path, *, load_depth: bool = False,
                 progress: Callable[[int], object] = lambda n: None) -> dict:
    """Trainer drops per episode, EgoSmith QA per rule, and layout problems."""
    shards = sorted(Path(directory).glob("shard-*.tar"))
    problems: list[str] = []
    frames: list[trainer.Frame] = []
    qa_items: list[tuple[str, str | None, list[str]]] = []
    seen_in: dict[str, str] = {}
    order: list[str] = []
    for shard in shards:
        last: tuple[str, int] | None = None
        for key, members in samples(shard):
            image = jpeg.decode_or_none(members["image.jpg"]) if "image.jpg" in members else None
            clip, issues = producer_qa.sample_issues(members, image_decodes=image is not None)
            qa_items.append((key, clip, issues))
            progress(1)
            episode, _, frame = key.rpartition("_f")
            if not episode or not frame.isdigit():
                problems.append(f"{shard.name}: key {key!r} is not <clip_id>_f<frame>")
                continue
            if seen_in.setdefault(episode, shard.name) != shard.name:
                problems.append(f"{shard.name}: episode {episode} is split across {seen_in[episode]} and {shard.name}")
            if last is not None and last[0] == episode and int(frame) <= last[1]:
                problems.append(f"{shard.name}: {key} is not after frame {last[1]} (time order)")
            if last is not None and last[0] != episode and episode in order:
                problems.append(f"{shard.name}: samples of episode {episode} are not contiguous")
            if last is None or last[0] != episode:
                order.append(episode)
            last = (episode, int(frame))
            got = _frame(key, members, image, load_depth)
            if isinstance(got, str):
                problems.append(f"{shard.name}: {got}")
            else:
                frames.append(got)
    result = trainer.check(frames, load_depth=load_depth)
    reasons = result["reasons"]
    counts: dict[str, int] = {}
    for why in reasons:
        if why:
            counts[why] = counts.get(why, 0) + 1
    return {"directory": str(directory), "shards": [s.name for s in shards], "samples": len(qa_items),
            "dropped": int(sum(1 for r in reasons if r)), "reasons": dict(sorted(counts.items())),
            "episodes": trainer.summary(frames, reasons), "normaliser_rows": result["normaliser_rows"],
            "dropped_samples": {f.key: str(r) for f, r in zip(frames, reasons) if r},
            "egosmith_qa": producer_qa.analyse(qa_items), "problems": problems, "note": NOTE}
