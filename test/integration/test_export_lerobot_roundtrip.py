"""The export opened by the real `lerobot` package, 0.6.1 (.venv-lerobot-0.6, Python 3.12)
and 0.4.4 (.venv-lerobot, Python 3.11), both made by scripts/lerobot_venv.sh VERSION:
length, features, every state value, sampled RGB and depth frames against our reader,
timestamps, delta_timestamps windows at episode edges, a DataLoader with workers,
lerobot-dataset-viz --save, lerobot-edit-dataset delete_episodes; and (0.6.1) our files
against a dataset LeRobot's own recorder writes. Skips when a venv is absent (CI: they are
several GB)."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from egorec_ros.codecs.probe import iter_frames
from egorec_ros.dataset import open_task
from egorec_ros.export.lerobot import layout, videos
from egorec_ros.export.lerobot.export import export_lerobot, provenance

REPO = Path(__file__).resolve().parents[2]
VENVS = {"0.6.1": Path(os.environ.get("LEROBOT_VENV_06", REPO / ".venv-lerobot-0.6")),
         "0.4.4": Path(os.environ.get("LEROBOT_VENV", REPO / ".venv-lerobot"))}
SCRIPT = Path(__file__).resolve().parents[1] / "helpers" / "lerobot_roundtrip_check.py"
TIMEOUT_S = 300


def _venv(version: str) -> Path:
    venv = VENVS[version]
    py = venv / "bin" / "python"
    if not py.exists():
        pytest.skip(f"no {py}: run `scripts/lerobot_venv.sh {version}` to create the lerobot {version} venv")
    r = subprocess.run([str(py), "-c", "import lerobot, lerobot.datasets.lerobot_dataset; print(lerobot.__version__)"],
                       capture_output=True, text=True, timeout=TIMEOUT_S)
    if r.returncode != 0:
        pytest.skip(f"lerobot does not import in {py}: {r.stderr[-300:]}")
    if r.stdout.strip() != version:
        pytest.skip(f"{py} has lerobot {r.stdout.strip()}, not {version}: rerun scripts/lerobot_venv.sh {version}")
    return venv


def _env(tmp_path: Path) -> dict:
    return {**os.environ, "HF_HUB_OFFLINE": "1", "HF_LEROBOT_HOME": str(tmp_path / "hf_home"),
            "HF_HOME": str(tmp_path / "hf_home")}


def _run(venv: Path, tmp_path: Path, *args: str) -> dict:
    r = subprocess.run([str(venv / "bin" / "python"), str(SCRIPT), *args], capture_output=True, text=True,
                       timeout=TIMEOUT_S, env=_env(tmp_path))
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def _expected(task_dir: Path, out: Path, path: Path, video: str) -> list[int]:
    """Our reader's values, in LeRobot's row order, for the script to compare with. Frames:
    ours (copy: the exported file is ours, byte for byte) or, re-encoded, the exported file
    decoded by PyAV, so that only LeRobot's choice of frame is compared. Depth: our mm."""
    info = json.loads((out / "meta" / "info.json").read_text())
    source = provenance(info)
    cols = source["features"]["observation.state"]
    arrays: dict[str, np.ndarray] = {}
    states, timestamps, sample_rows, starts, lengths, start = [], [], [], [], [], 0
    for k, ep in enumerate(open_task(task_dir)):
        n = len(ep)
        width = {c: sum(1 for nm in info["features"]["observation.state"]["names"]
                        if nm.rsplit(".", 1)[0] == c.removeprefix("observation.")) for c in cols}
        states.append(np.concatenate([np.stack(ep.column(c).to_numpy(zero_copy_only=False)).astype(np.float32)
                                      if ep.has(c) else np.zeros((n, width[c]), np.float32) for c in cols], axis=1))
        timestamps.append(np.arange(n) / info["fps"])
        picks = sorted({0, 1, n // 2, n - 1})
        for key in source["cameras"]:
            exported = out / info["video_path"].format(video_key=f"observation.images.{key}", chunk_index=0,
                                                       file_index=k)
            frames = list(ep.frames(key) if video == "copy" or key in source["depth"] else iter_frames(exported))
            for i in picks:
                for d in (0, -1, 1):
                    if 0 <= i + d < n and (d == 0 or key not in source["depth"]):
                        arrays[f"observation.images.{key}/{start + i}{'' if d == 0 else f'{d:+d}'}"] = frames[i + d]
        sample_rows += [start + i for i in picks]
        starts.append(start)
        lengths.append(n)
        start += n
    np.savez(path, state=np.concatenate(states), timestamp=np.concatenate(timestamps).astype(np.float32),
             sample_rows=np.array(sample_rows), episode_starts=np.array(starts), episode_lengths=np.array(lengths),
             depth_hole_below_mm=np.array(videos.DEPTH_HOLE_BELOW_MM), **arrays)
    return sample_rows


class Exports:
    """Exports made on first use (none when every test skips: CI has no lerobot venv)."""

    def __init__(self, task: Path, base: Path) -> None:
        self.task, self.base, self.done = task, base, set()

    def __getitem__(self, name: str) -> Path:
        """"copy", "reencode" (--video), "rgb": copy without the depth stream."""
        out = self.base / name
        if name not in self.done:
            video = "copy" if name == "rgb" else name
            cameras = list(open_task(self.task).info["cameras"]) if name == "rgb" else None
            export_lerobot(self.task, out, video=video, cameras=cameras)
            _expected(self.task, out, self.base / f"expected_{name}.npz", video)
            self.done.add(name)
        return out


@pytest.fixture(scope="module")
def exports(appendix_b_task: Path, tmp_path_factory: pytest.TempPathFactory) -> Exports:
    return Exports(appendix_b_task, tmp_path_factory.mktemp("lerobot_roundtrip"))


@pytest.mark.parametrize("version", ["0.6.1", "0.4.4"])
@pytest.mark.parametrize("video", ["copy", "reencode"])
def test_lerobot_opens_and_iterates_the_export(exports: Exports, appendix_b_task: Path,
                                              tmp_path: Path, version: str, video: str) -> None:
    venv = _venv(version)
    out = exports[video]
    got = _run(venv, tmp_path, "check", str(out), str(out.parent / f"expected_{video}.npz"))
    print(json.dumps({k: v for k, v in got.items() if k not in ("episode_index", "provenance")}))
    task, info = open_task(appendix_b_task), json.loads((out / "meta" / "info.json").read_text())
    assert got["lerobot"] == version
    assert got["warnings"] == []
    assert got["len"] == sum(len(ep) for ep in task) and got["num_episodes"] == len(task)
    assert got["features"] == {k: {"dtype": v["dtype"], "shape": v["shape"]} for k, v in info["features"].items()}
    assert got["task"] == task.info["task_name"]
    assert got["state_equal_all_rows"] and got["timestamps_ok"] and got["timestamps_are_frame_index_over_fps"]
    assert got["episode_index"] == [k for k, ep in enumerate(task) for _ in range(len(ep))]
    assert got["provenance"] == [ep.index for ep in task for _ in range(len(ep))]
    assert got["depth_keys"] == ["observation.images.stereo_depth"]
    assert [s["row"] for s in got["samples"]] == [s for s in np.load(out.parent / f"expected_{video}.npz")
                                                  ["sample_rows"].tolist()]
    for s in got["samples"]:
        for key, d in s.items():
            if key == "row":
                continue
            if key in got["depth_keys"]:
                if version == "0.4.4":       # no depth feature: the 12-bit codes decoded as RGB
                    assert d["shape"][1:] == info["features"][key]["shape"][:2], (s["row"], d)
                    continue
                assert d["shape"] == [1, *info["features"][key]["shape"][:2]]
                assert d["max_abs_mm_valid"] <= 1.0, (s["row"], d)   # float32 vs float64 rounding
                assert d["valid_read_as_valid"] and d["holes_read_as_holes"], (s["row"], d)
                continue
            # the same frame (decoders' colour conversion may differ by a level or two) ...
            assert d["mean_abs_diff"] < 2.0, (s["row"], key, d)
            # ... and not a neighbour: LeRobot picked frame i by its timestamp
            assert all(d["mean_abs_diff"] < n for n in d["neighbours"].values()), (s["row"], key, d)
    assert len(got["delta"]) >= 4 * len(task) - 2
    for w in got["delta"]:
        assert w["state_ok"] and w["state_pad"] == w["state_pad_expected"], w
        assert w["cam_pad"] == w["cam_pad_expected"] and w["cam_max_diff"] == 0.0, w
    assert any(any(w["state_pad"]) for w in got["delta"]) and any(any(w["cam_pad"]) for w in got["delta"])
    loaded = _run(venv, tmp_path, "dataloader", str(out), str(out.parent / f"expected_{video}.npz"))
    assert loaded == {"rows": got["len"], "index_in_order": True, "state_equal": True}


@pytest.mark.parametrize("version", ["0.6.1", "0.4.4"])
def test_lerobot_dataset_viz_saves_a_recording(exports: Exports, tmp_path: Path, version: str) -> None:
    venv = _venv(version)
    viz = tmp_path / "viz"
    r = subprocess.run([str(venv / "bin" / "lerobot-dataset-viz"), "--repo-id", "egorec/roundtrip",
                        "--root", str(exports["copy"]), "--episode-index", "1", "--save", "1",
                        "--output-dir", str(viz), "--num-workers", "0"],
                       capture_output=True, text=True, timeout=TIMEOUT_S, env=_env(tmp_path))
    assert r.returncode == 0, r.stderr[-3000:]
    saved = list(viz.glob("*.rrd"))
    assert len(saved) == 1 and saved[0].stat().st_size > 10_000, (saved, r.stderr[-1000:])


@pytest.mark.parametrize("version", ["0.6.1", "0.4.4"])
def test_lerobot_edit_dataset_delete_episodes_keeps_a_loadable_dataset(
        exports: Exports, appendix_b_task: Path, tmp_path: Path, version: str) -> None:
    venv = _venv(version)
    # lerobot 0.4.4's edit tool reshapes every video feature's stats to 3 channels
    # (dataset_tools.py: reshape(3, 1, 1)) and fails on a depth feature: give it RGB only
    export = exports["copy" if version != "0.4.4" else "rgb"]
    src = tmp_path / "src"
    subprocess.run(["cp", "-r", str(export), str(src)], check=True, timeout=60)
    args = ["--repo_id", "egorec/roundtrip", "--root", str(src), "--new_repo_id", "egorec/edited",
            "--operation.type", "delete_episodes", "--operation.episode_indices", "[0]"]
    edited = tmp_path / "edited"
    if version == "0.4.4":
        edited = src / "egorec" / "edited"       # 0.4.4 writes to ROOT/NEW_REPO_ID
    else:
        args += ["--new_root", str(edited)]
    r = subprocess.run([str(venv / "bin" / "lerobot-edit-dataset"), *args], capture_output=True, text=True,
                       timeout=TIMEOUT_S, env=_env(tmp_path))
    assert r.returncode == 0, r.stderr[-3000:]
    got = _run(venv, tmp_path, "load", str(edited))
    task = open_task(appendix_b_task)
    kept = task.episodes[1:]
    assert got["warnings"] == []
    assert got["num_episodes"] == len(kept) and got["len"] == sum(len(ep) for ep in kept)
    assert got["episode_index"] == list(range(len(kept)))
    # the trace back survives: our episode number on every row, the source in the feature info
    assert got["provenance"] == [ep.index for ep in kept]
    source = provenance(json.loads((export / layout.INFO_PATH).read_text()))
    assert got["provenance_info"] == source
    assert got["provenance_info"]["source_episodes"][str(kept[0].index)] == str(
        kept[0].data_path.relative_to(task.root))


def test_our_files_match_what_lerobots_recorder_writes(exports: Exports, tmp_path: Path) -> None:
    """Same info keys per video feature (RGB and depth), same episodes-table column types
    (stats of integer columns included), same tasks parquet, as lerobot 0.6.1 itself."""
    import pyarrow.parquet as pq

    venv = _venv("0.6.1")
    ref = _run(venv, tmp_path, "reference", str(tmp_path / "reference"))
    out = exports["copy"]
    info = json.loads((out / layout.INFO_PATH).read_text())
    assert sorted(info) == ref["info_keys"]
    for ours, theirs in (("observation.images.gripper_rgb", "observation.images.rgb"),
                         ("observation.images.stereo_depth", "observation.images.depth")):
        assert set(info["features"][ours]["info"]) == set(ref["features"][theirs]["info"]), ours
        assert info["features"][ours]["names"] == ref["features"][theirs]["names"]
        assert len(info["features"][ours]["shape"]) == 3
        assert info["features"][ours]["shape"][2] == ref["features"][theirs]["shape"][2]
    assert info["features"][layout.PROVENANCE] | {"info": None} == ref["features"][layout.PROVENANCE] | {"info": None}
    types = {f.name: str(f.type) for f in pq.read_schema(out / layout.EPISODES_PATH.format(chunk_index=0,
                                                                                           file_index=0))}
    rename = {"observation.images.gripper_rgb": "observation.images.rgb",
              "observation.images.stereo_depth": "observation.images.depth"}
    compared = 0
    for name, typ in types.items():
        parts = name.split("/")
        theirs = "/".join(rename.get(p, p) for p in parts)
        if theirs in ref["episodes_types"]:
            assert typ == ref["episodes_types"][theirs], name
            compared += 1
    assert compared > 60                       # every default, state, provenance, RGB and depth column
    data = {f.name: str(f.type) for f in pq.read_schema(next((out / "data").rglob("*.parquet")))}
    for name in ("timestamp", "frame_index", "episode_index", "index", "task_index", layout.PROVENANCE):
        assert data[name] == ref["data_types"][name], name
    tasks = pq.read_schema(out / layout.TASKS_PATH)
    assert tasks.names == ref["tasks_columns"]
    assert json.loads(tasks.metadata[b"pandas"])["index_columns"] == ref["tasks_index"]
