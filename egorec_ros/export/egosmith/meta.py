"""Per-sample meta.json (compact JSON) with the keys of EgoSmith's shard writer
(manifest_build/writer.py ``build_manifest_meta_prefix``), in its order, ``presence`` last.

Values that differ from a HaWoR clip, and why:
* ``native_feature_source``: null, as the writer writes for every clip that is not a
  re-ingested WebDataset (its descriptor has no such extra).
* ``mano_*``: the writer's ``mano_meta_fields()`` (it writes them for every clip). We have
  no MANO parameters (gloves give keypoints), so the ``.mano.npy`` member is left out, as
  EgoSmith's own ``write_sample_to_tar`` leaves it out of a sample without MANO bytes;
  writing zeros would claim a flat mean-shape hand at every wrist.
* ``wrist_rotation_source`` (ours, the only key EgoSmith does not write): how the rot6d was
  made, since it is not MANO's root rotation here. Just before ``presence``."""
from __future__ import annotations

import json

LOWDIM_SCHEMA = "hawor_wrist_world_v2"
DEPTH_SCHEMA = "metric_depth_uint16_mm_v1"
DEPTH_ENCODING = "uint16_mm"
PLACEHOLDERS = frozenset({"none", "unknown", "n/a", "null", "todo"})   # the trainer drops these
MANO_FIELDS = {                                 # EgoSmith exporters/mano_codec.py mano_meta_fields()
    "mano_schema": "manopth_pca45_flatmean_center0_v1",
    "mano_pose_representation": "per_hand_pca_45d",
    "mano_betas_representation": "per_hand_betas_10d",
    "mano_flat_hand_mean": True,
    "mano_center_idx": 0,
    "mano_root_rotation_source": "lowdim_root_rot6d",
    "mano_wrist_translation_source": "lowdim_wrist_world",
}


def usable_instructions(texts: list[str]) -> list[str]:
    """Non-empty, non-placeholder instructions, de-duplicated, in order."""
    out: list[str] = []
    for t in texts:
        t = str(t).strip()
        if t and t.lower() not in PLACEHOLDERS and t not in out:
            out.append(t)
    return out


def meta_prefix(*, dataset_name: str, clip_id: str, episode_index: int, instruction: list[str],
                depth: bool, wrist_rotation_source: str, split: str = "train") -> dict:
    """Everything but ``presence`` (the same for every frame of an episode)."""
    meta = {"dataset_name": dataset_name, "clip_id": clip_id, "episode_index": episode_index, "split": split,
            "instruction": list(instruction), "instruction_num": len(instruction), "language": instruction[0],
            "lowdim_schema": LOWDIM_SCHEMA, "native_feature_source": None,
            "wrist_translation_semantics": "mano_joint_0_world", "camera_extrinsic_convention": "w2c",
            **MANO_FIELDS}
    if depth:
        meta |= {"depth_schema": DEPTH_SCHEMA, "depth_encoding": DEPTH_ENCODING}
    meta["wrist_rotation_source"] = wrist_rotation_source
    return meta


def encode(prefix: dict, presence: int) -> bytes:
    """As the writer: the prefix's JSON, then ``"presence":N}`` appended."""
    head = json.dumps(prefix, ensure_ascii=False, separators=(",", ":"))[:-1]
    return (head + ',"presence":').encode("utf-8") + str(int(presence)).encode("ascii") + b"}"
