"""Run inside .venv-lerobot (by test_export_lerobot_roundtrip.py): open an export with the
real lerobot.datasets.LeRobotDataset, offline, iterate every item, and compare sampled
items with what our reader wrote to expected.npz. Prints one JSON object."""
from __future__ import annotations

import json
import logging
import os
import sys
import warnings

os.environ["HF_HUB_OFFLINE"] = "1"


def main(root: str, expected_path: str) -> dict:
    import numpy as np
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    records: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.levelno >= logging.WARNING:
                records.append(f"log {record.name}: {record.getMessage()}")

    logging.getLogger().addHandler(Collect())
    expected = np.load(expected_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds = LeRobotDataset("egorec/roundtrip", root=root)
        items = [ds[i] for i in range(len(ds))]
    records += [f"warning {w.category.__name__}: {w.message}" for w in caught]

    cams = [k for k in ds.meta.video_keys]
    out = {"len": len(ds), "num_episodes": ds.num_episodes, "fps": ds.fps, "video_backend": ds.video_backend,
           "features": {k: {"dtype": v["dtype"], "shape": list(v["shape"])} for k, v in ds.features.items()},
           "warnings": records, "task": items[0]["task"], "samples": []}
    state_ok = all(np.array_equal(items[i]["observation.state"].numpy(), expected["state"][i])
                   for i in range(len(items)))
    out["state_equal_all_rows"] = bool(state_ok)
    out["episode_index"] = [int(it["episode_index"]) for it in items]
    out["timestamps_ok"] = bool(np.allclose([float(it["timestamp"]) for it in items], expected["timestamp"], atol=1e-6))
    for i in expected["sample_rows"].tolist():
        sample = {"row": i}
        for key in cams:
            got = (items[i][key].numpy().transpose(1, 2, 0) * 255).round().astype(np.int16)
            ours = expected[f"{key}/{i}"].astype(np.int16)
            near = {d: float(np.abs(got - expected[f"{key}/{i}{d:+d}"].astype(np.int16)).mean())
                    for d in (-1, 1) if f"{key}/{i}{d:+d}" in expected.files}
            sample[key] = {"mean_abs_diff": float(np.abs(got - ours).mean()),
                           "max_abs_diff": int(np.abs(got - ours).max()), "neighbours": near}
        out["samples"].append(sample)
    return out


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2])))
