"""Per-sample meta.json (compact JSON), keys in the EgoSmith writer's order, then ours."""
from __future__ import annotations

import json

LOWDIM_SCHEMA = "hawor_wrist_world_v2"
DEPTH_SCHEMA = "metric_depth_uint16_mm_v1"
DEPTH_ENCODING = "uint16_mm"
PLACEHOLDERS = frozenset({"none", "unknown", "n/a", "null", "todo"})   # the trainer drops these


def usable_instructions(texts: list[str]) -> list[str]:
    """Non-empty, non-placeholder instructions, de-duplicated, in order."""
    out: list[str] = []
    for t in texts:
        t = str(t).strip()
        if t and t.lower() not in PLACEHOLDERS and t not in out:
            out.append(t)
    return out


def meta_prefix(*, dataset_name: str, clip_id: str, episode_index: int, instruction: list[str],
                depth: bool, split: str = "train") -> dict:
    """Everything but ``presence`` and our trailing keys (the same for every frame of an episode)."""
    meta = {"dataset_name": dataset_name, "clip_id": clip_id, "episode_index": episode_index, "split": split,
            "instruction": list(instruction), "instruction_num": len(instruction), "language": instruction[0],
            "lowdim_schema": LOWDIM_SCHEMA, "wrist_translation_semantics": "mano_joint_0_world",
            "camera_extrinsic_convention": "w2c"}
    if depth:
        meta |= {"depth_schema": DEPTH_SCHEMA, "depth_encoding": DEPTH_ENCODING}
    return meta


def encode(prefix: dict, presence: int, wrist_rotation_source: str) -> bytes:
    doc = {**prefix, "presence": int(presence), "wrist_rotation_source": wrist_rotation_source}
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
