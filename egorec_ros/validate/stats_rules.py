"""meta/stats.json block shape (DESIGN "stats.json"): per feature ``{count, mean, std, min,
max}``, ``count`` a plain integer >= 0 (the reference reader does ``int(count)``), the other
four lists of numbers, one per dimension of the feature (the product of its shape)."""
from __future__ import annotations

import json
from typing import Mapping

import numpy as np

from egorec_ros.validate.findings import Findings

STATS = "meta/stats.json"
RULE = "DESIGN:stats"
LISTS = ("mean", "std", "min", "max")


def check_stats_blocks(doc: object, features: Mapping[str, object], out: Findings) -> None:
    if not isinstance(doc, dict):
        out.add(STATS, "", RULE, f"must be a JSON object of feature -> block, found {type(doc).__name__}")
        return
    for name, block in doc.items():
        _check_block(name, block, features.get(name), out)


def _check_block(name: str, block: object, feature: object, out: Findings) -> None:
    if not isinstance(block, dict) or not all(k in block for k in ("count", *LISTS)):
        out.add(STATS, name, RULE, "needs count, mean, std, min, max")
        return
    count = block["count"]
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        out.add(STATS, f"{name}.count", RULE, f"is {json.dumps(count)}; must be a plain integer >= 0 "
                "(an older egorec wrote [N]: recording or recovering an episode rewrites it)")
    lengths = {}
    for key in LISTS:
        values = block[key]
        if not isinstance(values, list) or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                   for v in values):
            out.add(STATS, f"{name}.{key}", RULE, "must be a list of numbers, one per dimension")
        else:
            lengths[key] = len(values)
    if len(set(lengths.values())) > 1:
        out.add(STATS, name, RULE, "mean, std, min and max have different lengths "
                f"({', '.join(f'{k} {n}' for k, n in lengths.items())})")
        return
    if not isinstance(feature, dict) or not isinstance(feature.get("shape"), list):
        out.add(STATS, name, RULE, "no feature of that name (with a shape) in info.json features")
        return
    dim = int(np.prod(feature["shape"]))
    if lengths and next(iter(lengths.values())) != dim:
        out.add(STATS, name, RULE, f"holds {next(iter(lengths.values()))} values per list but the feature has "
                f"{dim} dimension(s) (shape {feature['shape']})")

