"""The export opened by the real `lerobot` package (in .venv-lerobot, made by
scripts/lerobot_venv.sh): length, features, every state value and sampled frames against
our reader. Skips when that venv is absent."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from egorec_ros.codecs.probe import iter_frames
from egorec_ros.dataset import open_task
from egorec_ros.export.lerobot.export import export_lerobot

REPO = Path(__file__).resolve().parents[2]
LEROBOT_PY = Path(os.environ.get("LEROBOT_VENV", REPO / ".venv-lerobot")) / "bin" / "python"
SCRIPT = Path(__file__).resolve().parents[1] / "helpers" / "lerobot_roundtrip_check.py"


def _lerobot_ready() -> str | None:
    if not LEROBOT_PY.exists():
        return f"no {LEROBOT_PY}: run scripts/lerobot_venv.sh to create the lerobot venv"
    r = subprocess.run([str(LEROBOT_PY), "-c", "import lerobot.datasets.lerobot_dataset"], capture_output=True,
                       text=True, timeout=300)
    return None if r.returncode == 0 else f"lerobot does not import in {LEROBOT_PY}: {r.stderr[-300:]}"


def _expected(task_dir: Path, out: Path, path: Path, video: str) -> list[int]:
    """Our reader's values, in LeRobot's row order, for the script to compare with. Frames:
    ours (copy: the exported file is ours, byte for byte) or, re-encoded, the exported file
    decoded by PyAV, so that only LeRobot's choice of frame is compared."""
    info = json.loads((out / "meta" / "info.json").read_text())
    cols = info["egorec"]["features"]["observation.state"]
    cams = list(info["egorec"]["cameras"])
    arrays: dict[str, np.ndarray] = {}
    states, timestamps, sample_rows, start = [], [], [], 0
    for k, ep in enumerate(open_task(task_dir)):
        n = len(ep)
        width = {c: sum(1 for nm in info["features"]["observation.state"]["names"]
                        if nm.rsplit(".", 1)[0] == c.removeprefix("observation.")) for c in cols}
        states.append(np.concatenate([np.stack(ep.column(c).to_numpy(zero_copy_only=False)).astype(np.float32)
                                      if ep.has(c) else np.zeros((n, width[c]), np.float32) for c in cols], axis=1))
        timestamps.append(np.arange(n) / info["fps"])
        picks = sorted({0, 1, n // 2, n - 1})
        for key in cams:
            exported = out / info["video_path"].format(video_key=f"observation.images.{key}", chunk_index=0,
                                                       file_index=k)
            frames = list(ep.frames(key) if video == "copy" else iter_frames(exported))
            for i in picks:
                for d in (0, -1, 1):
                    if 0 <= i + d < n:
                        arrays[f"observation.images.{key}/{start + i}{'' if d == 0 else f'{d:+d}'}"] = frames[i + d]
        sample_rows += [start + i for i in picks]
        start += n
    np.savez(path, state=np.concatenate(states), timestamp=np.concatenate(timestamps).astype(np.float32),
             sample_rows=np.array(sample_rows), **arrays)
    return sample_rows


@pytest.mark.parametrize("video", ["copy", "reencode"])
def test_lerobot_opens_and_iterates_the_export(appendix_b_task: Path, tmp_path: Path, video: str) -> None:
    reason = _lerobot_ready()
    if reason:
        pytest.skip(reason)
    out = tmp_path / f"lerobot_{video}"
    export_lerobot(appendix_b_task, out, video=video)
    sample_rows = _expected(appendix_b_task, out, tmp_path / "expected.npz", video)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_LEROBOT_HOME": str(tmp_path / "hf_home"),
           "HF_HOME": str(tmp_path / "hf_home")}
    r = subprocess.run([str(LEROBOT_PY), str(SCRIPT), str(out), str(tmp_path / "expected.npz")],
                       capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    print(json.dumps({k: v for k, v in got.items() if k != "episode_index"}))
    task, info = open_task(appendix_b_task), json.loads((out / "meta" / "info.json").read_text())
    assert got["warnings"] == []
    assert got["len"] == sum(len(ep) for ep in task) and got["num_episodes"] == len(task)
    assert got["features"] == {k: {"dtype": v["dtype"], "shape": v["shape"]} for k, v in info["features"].items()}
    assert got["task"] == task.info["task_name"]
    assert got["state_equal_all_rows"] and got["timestamps_ok"]
    assert got["episode_index"] == [k for k, ep in enumerate(task) for _ in range(len(ep))]
    assert [s["row"] for s in got["samples"]] == sample_rows
    for s in got["samples"]:
        for key, d in s.items():
            if key == "row":
                continue
            # the same frame (decoders' colour conversion may differ by a level or two) ...
            assert d["mean_abs_diff"] < 2.0, (s["row"], key, d)
            # ... and not a neighbour: LeRobot picked frame i by its timestamp
            assert all(d["mean_abs_diff"] < n for n in d["neighbours"].values()), (s["row"], key, d)
