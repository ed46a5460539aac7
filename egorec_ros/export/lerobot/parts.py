"""Episode parts on storage, for exports whose episodes run in other processes (``--jobs N``)
or on other nodes (``--ray ADDRESS``).

A worker writes its episode's videos into the dataset folder being built (``.OUT.partial``,
on storage every node sees), then the episode's data rows (``.parts/episode-K.arrow``, Arrow
IPC) and, last and atomically, ``.parts/episode-K.json``: the episodes-table row, stats,
frame sizes, zero-filled columns, its video files, and the key of what it was made from. The
JSON's presence is the part's completeness. Workers return a few words (node, error), never
rows or frames. The exporter reads the parts in episode order and assembles the dataset as a
serial export would, byte for byte.

Resume: a stopped export (Ctrl-C, a failed episode, a lost driver) leaves ``.OUT.partial``;
the same command run again keeps every part whose key still matches (same source files,
sizes and times, same mapping and options, same place in the dataset) and makes the rest.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc

from egorec_ros.cluster.session import node_label
from egorec_ros.dataset import Episode, open_task
from egorec_ros.errors import UserError
from egorec_ros.export.lerobot.episode import EpisodePart, Shared, episode_part
from egorec_ros.layout import atomic

PARTS = ".parts"


@dataclass(frozen=True)
class PartDone:
    """A worker's answer: where it ran, and the error that stopped its episode (None: written)."""

    node: str
    error: Exception | None = None


def part_key(ep: Episode, k: int, first: int, shared: Shared) -> str:
    """What a part was made from: a part whose key differs from the current one is remade."""
    files = [ep.data_path] + [p for key in shared.plan.cameras if (p := ep.video_path(key)) is not None]
    stamps = [[str(p.resolve()), (s := p.stat()).st_size, s.st_mtime_ns] for p in files]
    return json.dumps({"episode": ep.index, "k": k, "first": first, "files": stamps, "plan": repr(shared.plan),
                       "video": shared.video, "remap": sorted(shared.remap.items()),
                       "names": sorted(shared.names.items())})


def _paths(root: Path, k: int) -> tuple[Path, Path]:
    return root / PARTS / f"episode-{k:06d}.arrow", root / PARTS / f"episode-{k:06d}.json"


def make_part(task_root: str, episode: int, k: int, first: int, shared: Shared, root: str, key: str,
              remote: bool) -> PartDone:
    """Worker entry point (picklable arguments; the task is reopened where it runs). A user
    error (bad video, missing column, unreadable file) comes back as the answer, naming the
    node on a cluster; the exporter raises it when it reaches this episode."""
    here = node_label() if remote else ""
    try:
        ep = open_task(task_root).episode(episode)
        write_part(Path(root), episode_part(ep, k, first, shared, Path(root)), key)
    except (UserError, OSError, KeyError) as exc:
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return PartDone(here, UserError(f"on node {here}: {text}" if remote else text))
    return PartDone(here)


def write_part(root: Path, part: EpisodePart, key: str) -> None:
    arrow, meta = _paths(root, part.k)
    arrow.parent.mkdir(parents=True, exist_ok=True)
    with pa.OSFile(str(arrow), "wb") as f, ipc.new_file(f, part.table.schema) as w:
        w.write_table(part.table)
    doc = {"key": key, "k": part.k, "source": part.source, "row": part.row,
           "stats": {n: {s: np.asarray(v).tolist() for s, v in fs.items()} for n, fs in part.stats.items()},
           "sizes": part.sizes, "missing": part.missing, "videos": part.videos}
    atomic.write_json(meta, doc, indent=None)


def _meta(root: Path, k: int, key: str | None) -> dict | None:
    """Part k's JSON when the part is complete and (``key`` given) made from that key."""
    arrow, meta = _paths(root, k)
    try:
        doc = atomic.read_json(meta)
    except (OSError, ValueError):
        return None
    return doc if arrow.exists() and (key is None or doc.get("key") == key) else None


def read_part(root: Path, k: int, key: str | None = None) -> EpisodePart | None:
    """Part k as its worker made it; None when it is absent, incomplete or (``key`` given) made
    from something else."""
    doc = _meta(root, k, key)
    if doc is None:
        return None
    try:
        with pa.OSFile(str(_paths(root, k)[0]), "rb") as f:
            table = ipc.open_file(f).read_all()
    except (OSError, pa.ArrowInvalid):
        return None
    st = {n: {s: np.asarray(v) for s, v in fs.items()} for n, fs in doc["stats"].items()}
    return EpisodePart(doc["k"], doc["source"], table, doc["row"], st,
                       {c: (int(h), int(w)) for c, (h, w) in doc["sizes"].items()}, doc["missing"], doc["videos"])


def keep_only(root: Path, keys: dict[int, str]) -> set[int]:
    """Resume: the episodes (k) whose part in ``root`` matches ``keys[k]``; everything else in
    ``root`` (other parts, videos of no kept part, data and meta files) is removed."""
    kept: set[int] = set()
    keep: set[Path] = set()
    for k, key in keys.items():
        doc = _meta(root, k, key)
        if doc is not None:
            kept.add(k)
            keep |= {*_paths(root, k), *(root / v for v in doc["videos"])}
    for dirpath, _, filenames in os.walk(root, topdown=False):
        folder = Path(dirpath)
        for name in filenames:
            if folder / name not in keep:
                (folder / name).unlink()
        if folder != root and not any(folder.iterdir()):
            folder.rmdir()
    return kept


def finished(root: Path) -> int:
    """How many complete parts ``root`` holds (a stopped export keeps its folder when any)."""
    return sum(1 for _ in (root / PARTS).glob("episode-*.json"))


def remove_parts(root: Path) -> None:
    for p in (root / PARTS).glob("*"):
        p.unlink()
    (root / PARTS).rmdir()
