"""Run inside a lerobot venv (.venv-lerobot-0.6: lerobot 0.6.1, .venv-lerobot: 0.4.4; made by
scripts/lerobot_venv.sh) by test_export_lerobot_roundtrip.py. Prints one JSON object.

  check ROOT EXPECTED.npz   open an export with the real LeRobotDataset, offline: iterate
                            every item, compare sampled items (RGB, depth) and every state
                            row with what our reader wrote to EXPECTED.npz, delta_timestamps
                            windows at episode edges
  dataloader ROOT EXPECTED.npz   every row through torch's DataLoader with 2 worker processes,
                            in a process that has decoded nothing before (as a training
                            script): lerobot 0.6.1's decoder cache is process-global, and
                            workers forked after the parent decoded read corrupt packets
  load ROOT                 open a dataset (e.g. one lerobot-edit-dataset wrote): length,
                            episodes, our provenance column, warnings
  reference OUT             record a small dataset with LeRobot's own recorder and describe
                            its files (video info keys, episodes-table column types, tasks
                            parquet) for the test to hold our export against
"""
from __future__ import annotations

import json
import logging
import os
import sys
import warnings

os.environ["HF_HUB_OFFLINE"] = "1"
PROVENANCE = "egorec.episode_index"
DATALOADER_TIMEOUT_S = 120


def _collecting() -> list[str]:
    records: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.levelno >= logging.WARNING:
                records.append(f"log {record.name}: {record.getMessage()}")

    logging.getLogger().addHandler(Collect())
    return records


def _open(root: str, **kwargs):
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    records = _collecting()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds = LeRobotDataset("egorec/roundtrip", root=root, **kwargs)
        items = [ds[i] for i in range(len(ds))]
    records += [f"warning {w.category.__name__}: {w.message}" for w in caught]
    return ds, items, records


def _depth_keys(ds) -> list[str]:
    """Features our export marks as depth (``is_depth_map``); 0.4.4 knows no depth feature
    and reads them as RGB video."""
    return [k for k in ds.meta.video_keys if (ds.meta.features[k].get("info") or {}).get("is_depth_map")]


def check(root: str, expected_path: str) -> dict:
    import lerobot
    import numpy as np

    expected = np.load(expected_path)
    ds, items, records = _open(root)
    depth = _depth_keys(ds)
    cams = [k for k in ds.meta.video_keys if k not in depth]
    out = {"lerobot": lerobot.__version__, "len": len(ds), "num_episodes": ds.num_episodes, "fps": ds.fps,
           "video_backend": getattr(ds, "video_backend", getattr(ds, "_video_backend", None)), "depth_keys": depth,
           "features": {k: {"dtype": v["dtype"], "shape": list(v["shape"])} for k, v in ds.features.items()},
           "warnings": records, "task": items[0]["task"], "samples": []}
    out["state_equal_all_rows"] = bool(all(np.array_equal(items[i]["observation.state"].numpy(), expected["state"][i])
                                           for i in range(len(items))))
    out["episode_index"] = [int(it["episode_index"]) for it in items]
    out["provenance"] = [int(it[PROVENANCE]) for it in items]
    # timestamps: exactly frame_index / fps (float32, as LeRobot writes them)
    got_ts = np.array([float(it["timestamp"]) for it in items])
    frame_index = np.array([int(it["frame_index"]) for it in items])
    out["timestamps_are_frame_index_over_fps"] = bool(np.array_equal(
        got_ts.astype(np.float32), (frame_index / ds.fps).astype(np.float32)))
    out["timestamps_ok"] = bool(np.allclose(got_ts, expected["timestamp"], atol=1e-6))
    for i in expected["sample_rows"].tolist():
        sample: dict = {"row": i}
        for key in cams:
            got = (items[i][key].numpy().transpose(1, 2, 0) * 255).round().astype(np.int16)
            ours = expected[f"{key}/{i}"].astype(np.int16)
            near = {d: float(np.abs(got - expected[f"{key}/{i}{d:+d}"].astype(np.int16)).mean())
                    for d in (-1, 1) if f"{key}/{i}{d:+d}" in expected.files}
            sample[key] = {"mean_abs_diff": float(np.abs(got - ours).mean()),
                           "max_abs_diff": int(np.abs(got - ours).max()), "neighbours": near}
        for key in depth:
            got = items[i][key].numpy()                       # (1, H, W) float32 millimetres
            if not hasattr(ds.meta, "depth_keys"):            # 0.4.4: RGB of the 12-bit codes
                sample[key] = {"shape": list(got.shape)}
                continue
            ours = expected[f"{key}/{i}"].astype(np.float64)  # (H, W) uint16 mm, 0 = no depth
            valid, hole_below = ours > 0, float(expected["depth_hole_below_mm"])
            sample[key] = {"shape": list(got.shape),
                           "max_abs_mm_valid": float(np.abs(got[0][valid] - ours[valid]).max()) if valid.any() else 0.0,
                           "valid_read_as_valid": bool((got[0][valid] >= hole_below).all()),
                           "holes": int((~valid).sum()),
                           "holes_read_as_holes": bool((got[0][~valid] < hole_below).all())}
        out["samples"].append(sample)
    out["delta"] = _delta_windows(root, expected, ds.fps, cams[0] if cams else None)
    return out


def _delta_windows(root: str, expected, fps: int, cam: str | None) -> list[dict]:
    """delta_timestamps at the first, second, middle and last rows of every episode: the
    window's rows clamped into the episode, ``*_is_pad`` true exactly where clamped."""
    import numpy as np

    state_offsets, cam_offsets = [-2, -1, 0, 1], [-1, 0, 1]
    delta = {"observation.state": [k / fps for k in state_offsets]}
    if cam:
        delta[cam] = [k / fps for k in cam_offsets]
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    ds = LeRobotDataset("egorec/roundtrip", root=root, delta_timestamps=delta)
    plain = LeRobotDataset("egorec/roundtrip", root=root)
    out = []
    for start, length in zip(expected["episode_starts"].tolist(), expected["episode_lengths"].tolist()):
        for i in sorted({start, start + 1, start + length // 2, start + length - 1}):
            item = ds[i]
            rows = [min(max(i + k, start), start + length - 1) for k in state_offsets]
            pads = [not (start <= i + k < start + length) for k in state_offsets]
            r = {"row": i,
                 "state_ok": bool(np.array_equal(item["observation.state"].numpy(), expected["state"][rows])),
                 "state_pad": item["observation.state_is_pad"].tolist(), "state_pad_expected": pads}
            if cam:
                crow = [min(max(i + k, start), start + length - 1) for k in cam_offsets]
                frames = item[cam].numpy()
                r["cam_pad"] = item[f"{cam}_is_pad"].tolist()
                r["cam_pad_expected"] = [not (start <= i + k < start + length) for k in cam_offsets]
                r["cam_max_diff"] = float(max(np.abs(frames[j] - plain[c][cam].numpy()).max()
                                              for j, c in enumerate(crow)))
            out.append(r)
    return out


def dataloader(root: str, expected_path: str) -> dict:
    """Every row once through torch's DataLoader with 2 worker processes."""
    import numpy as np
    import torch
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    expected = np.load(expected_path)
    ds = LeRobotDataset("egorec/roundtrip", root=root)
    loader = torch.utils.data.DataLoader(ds, batch_size=16, num_workers=2, shuffle=False,
                                         timeout=DATALOADER_TIMEOUT_S)
    index, state = [], []
    for batch in loader:
        index += batch["index"].tolist()
        state.append(batch["observation.state"].numpy())
    states = np.concatenate(state)
    return {"rows": len(index), "index_in_order": index == list(range(len(ds))),
            "state_equal": bool(np.array_equal(states, expected["state"]))}


def load(root: str) -> dict:
    ds, items, records = _open(root)
    feature = ds.meta.features.get(PROVENANCE, {})
    return {"len": len(ds), "num_episodes": ds.num_episodes, "warnings": records,
            "episode_index": sorted({int(it["episode_index"]) for it in items}),
            "provenance": sorted({int(it[PROVENANCE]) for it in items}) if PROVENANCE in items[0] else None,
            "provenance_info": feature.get("info"),
            "features": sorted(ds.meta.features)}


def reference(out: str) -> dict:
    """A dataset recorded by LeRobot itself: one RGB and one depth camera, a float32 state,
    an int64 scalar like our provenance column."""
    import shutil
    from pathlib import Path

    import numpy as np
    import pyarrow.parquet as pq
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    root = Path(out)
    shutil.rmtree(root, ignore_errors=True)
    names = ["height", "width", "channels"]
    features = {"observation.images.rgb": {"dtype": "video", "shape": (48, 64, 3), "names": names},
                "observation.images.depth": {"dtype": "video", "shape": (48, 64, 1), "names": names,
                                             "info": {"is_depth_map": True}},
                "observation.state": {"dtype": "float32", "shape": (3,), "names": ["a", "b", "c"]},
                PROVENANCE: {"dtype": "int64", "shape": (1,), "names": None}}
    ds = LeRobotDataset.create("egorec/reference", fps=30, features=features, root=root, use_videos=True)
    for e in range(2):
        for i in range(6):
            ds.add_frame({"observation.images.rgb": np.full((48, 64, 3), 10 * i, np.uint8),
                          "observation.images.depth": np.full((48, 64, 1), 500 + 10 * i, np.uint16),
                          "observation.state": np.arange(3, dtype=np.float32) + i, PROVENANCE: np.array([7 + e]),
                          "task": "pick"})
        ds.save_episode()
    ds.finalize()
    info = json.loads((root / "meta" / "info.json").read_text())
    episodes = pq.read_schema(next((root / "meta" / "episodes").rglob("*.parquet")))
    tasks = pq.read_schema(root / "meta" / "tasks.parquet")
    data = pq.read_schema(next((root / "data").rglob("*.parquet")))
    return {"info_keys": sorted(info), "features": info["features"],
            "episodes_types": {f.name: str(f.type) for f in episodes},
            "data_types": {f.name: str(f.type) for f in data},
            "tasks_columns": tasks.names, "tasks_index": json.loads(tasks.metadata[b"pandas"])["index_columns"]}


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    result = {"check": check, "dataloader": dataloader, "load": load, "reference": reference}[mode](*args)
    print(json.dumps(result))
