"""One episode -> a run of EgoSmith samples (tar members, in time order) appended to a shard
or a part file.

Frames are numbered by their row's frame_index, episodes by their place in the export from 0
(as EgoSmith numbers them). A frame is exported when it has a head pose and the hands of it
and of the next frame are known in the world (the action is the next frame's state); every
other frame is counted with its reason. A hand not seen in a frame gets EgoSmith's infilled
pose (infill.py); its presence bit stays 0."""
from __future__ import annotations

import io
from collections import Counter
from dataclasses import dataclass, field
from typing import BinaryIO, Callable

import numpy as np
import pyarrow.parquet as pq

from egorec_ros.dataset import Episode
from egorec_ros.export.egosmith import jpeg, lowdim, meta
from egorec_ros.export.egosmith.infill import infill
from egorec_ros.export.egosmith.axes import world_to_camera
from egorec_ros.export.egosmith.head_pose import DEFAULT_TOLERANCE_NS, interpolate
from egorec_ros.export.egosmith.sources import EpisodeSources
from egorec_ros.export.egosmith.tar_members import member
from egorec_ros.export.egosmith.wrist import CONVENTION, palm_rotation

LAST_FRAME = "last frame: its action would be the next frame"
NEXT_UNKNOWN = "next frame's hands are not in the world (no head pose there; keypoints are camera-relative)"
BAD_KEYPOINTS = "non-finite hand keypoints"


@dataclass
class EpisodeResult:
    episode_index: int        # the task's (parquet) episode_index
    number: int               # EgoSmith's episode_index: its place in this export, from 0
    rows: int
    frames: int = 0
    bytes: int = 0
    dropped: Counter = field(default_factory=Counter)
    presence: Counter = field(default_factory=Counter)


@dataclass(frozen=True)
class Options:
    dataset_name: str
    depth: bool = False
    tolerance_ns: int = DEFAULT_TOLERANCE_NS


def clip_id(dataset: str, number: int) -> str:
    return f"{dataset}_ep{number:06d}"


def sample_key(dataset: str, number: int, frame_index: int) -> str:
    """EgoSmith's ``<clip_id>_f<frame>`` (its readers parse ``_ep(\\d+)_f(\\d+)$``)."""
    return f"{clip_id(dataset, number)}_f{frame_index:06d}"


def _hand_joints(ep: Episode, src: EpisodeSources, frame_index: np.ndarray) -> np.ndarray:
    """(N, 2, 21, 3) float64 per row; zeros where a hand is missing."""
    n = len(frame_index)
    out = np.zeros((n, 2, 21, 3))
    if src.hands.path is None:
        table = ep.read([c for c in src.hands.columns if ep.has(c)])
        rows: np.ndarray = np.arange(n)
    else:
        table = pq.read_table(src.hands.path)
        keyed = table.column("frame_index").to_numpy(zero_copy_only=False).astype(np.int64)
        rows = np.searchsorted(frame_index, keyed).clip(0, max(n - 1, 0))
        rows = np.where((n > 0) & (frame_index[rows] == keyed), rows, -1)   # frames the episode has
        table = table.filter(rows >= 0)
        rows = rows[rows >= 0]
    for h, name in enumerate(src.hands.columns):
        if name in table.column_names:
            col = table.column(name).combine_chunks()
            values = col.flatten().to_numpy(zero_copy_only=False).astype(np.float64)
            out[rows, h] = values.reshape(len(rows), 21, 3)
    return out


@dataclass(frozen=True)
class EpisodePlan:
    """What will be written, known before any video is decoded (so a shard can be chosen)."""

    take: np.ndarray          # (K,) row numbers to export
    lowdim: np.ndarray        # (K, 116) float32
    presence: np.ndarray      # (K,) bitmask
    dropped: Counter          # reason -> frames not exported
    frame_index: np.ndarray   # (N,) of every row


def plan_episode(ep: Episode, src: EpisodeSources, opts: Options) -> EpisodePlan:
    table = ep.read(["frame_index", "hardware_ns"])
    frame_index = table.column("frame_index").to_numpy()
    stamps = table.column("hardware_ns").to_numpy().astype(np.int64)
    traj = ep.trajectory(src.trajectory)
    assert traj.ns is not None, "sources.py refuses a trajectory without its _ns column"
    poses = interpolate(traj.points, traj.ns, stamps, opts.tolerance_ns)
    w2c = world_to_camera(poses.rotation, poses.translation, src.body_optical)
    joints = _hand_joints(ep, src, frame_index)
    finite = np.isfinite(joints).all(axis=(1, 2, 3))
    joints = np.where(finite[:, None, None, None], joints, 0.0)
    present = np.abs(joints).sum(axis=(2, 3)) > 0                          # all-zero row = no hand
    known = finite.copy()
    if src.hands.frame == "ego_cam_optical":                               # camera-relative -> world
        c2w = np.linalg.inv(w2c)
        joints = np.einsum("nij,nhkj->nhki", c2w[:, :3, :3], joints) + c2w[:, None, None, :3, 3]
        known &= poses.valid
    rotations = np.stack([palm_rotation(joints[:, h], left=(h == 0)) for h in range(2)], axis=1)
    seen = present & known[:, None]                                        # observed and placed in the world
    proper = np.abs(np.linalg.det(rotations) - 1.0) < 1e-3                 # not a degenerate palm
    joints, rotations = infill(joints, rotations, seen, seen & proper)
    state = lowdim.hand_state(joints, rotations)

    n = len(frame_index)
    why = np.where(poses.valid, "", poses.why).astype(object)
    why[(why == "") & ~finite] = BAD_KEYPOINTS
    nxt = np.append(known[1:], False)
    why[(why == "") & ~nxt] = NEXT_UNKNOWN
    if n:
        why[n - 1] = LAST_FRAME
    take = np.flatnonzero(why == "")
    dropped = Counter(str(w) for w in why[why != ""])
    return EpisodePlan(take, lowdim.assemble(state, w2c, src.intrinsic, take), lowdim.presence(present)[take],
                       dropped, frame_index)


def export_episode(ep: Episode, src: EpisodeSources, opts: Options, plan: EpisodePlan, out: BinaryIO,
                   number: int, progress: Callable[[int], object] | None = None) -> EpisodeResult:
    """Append the episode's samples to ``out`` as tar members (no end blocks: the shard adds them);
    ``number`` is its EgoSmith episode_index."""
    take, rows, presence, frame_index = plan.take, plan.lowdim, plan.presence, plan.frame_index
    result = EpisodeResult(ep.index, number, src.rows, dropped=plan.dropped)
    prefix = meta.meta_prefix(dataset_name=opts.dataset_name, clip_id=clip_id(opts.dataset_name, number),
                              episode_index=number, instruction=src.instruction, depth=opts.depth,
                              wrist_rotation_source=CONVENTION)
    wanted = dict(zip(take.tolist(), range(len(take))))
    streams = {"image": ep.frames(src.head_slot)}
    if opts.depth:
        assert src.depth_slot is not None, "run.py refuses --depth for an episode without a depth video"
        streams["depth"] = ep.frames(src.depth_slot)
    for i in range(src.rows):
        frames: dict[str, np.ndarray] = {}
        for name, it in streams.items():
            frame = next(it, None)
            if frame is None:
                raise ValueError(f"episode {ep.index}: the {name} video ends at frame {i} but the episode has "
                                 f"{src.rows} rows (run egorec validate)")
            frames[name] = frame
        if progress is not None and i % 30 == 29:
            progress(30)
        k = wanted.get(i)
        if k is None:
            continue
        key = sample_key(opts.dataset_name, number, int(frame_index[i]))
        blob = [member(f"{key}.image.jpg", jpeg.encode(frames["image"])),
                member(f"{key}.lowdim.npy", _npy(rows[k]))]
        if opts.depth:
            blob.append(member(f"{key}.depth.npy", _npy(frames["depth"].astype(np.uint16))))
        blob.append(member(f"{key}.meta.json", meta.encode(prefix, int(presence[k]))))
        data = b"".join(blob)
        out.write(data)
        result.frames += 1
        result.bytes += len(data)
        result.presence[int(presence[k])] += 1
    if progress is not None:
        progress(src.rows % 30)
    return result


def _npy(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=False)
    return buf.getvalue()
