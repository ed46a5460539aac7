"""EgoSmith shards read by their real consumers: EgoSmith's own ``iter_shard_samples`` and
``quality/wds_sanity.analyze_webdataset``, EgoSteer's ``VLAWdsDataset`` with its normaliser and
``DataChecker`` (test/helpers/egosmith_consumers_check.py, run in .venv-consumers made by
scripts/consumers_venv.sh). Their code is public and checked out beside this repository,
never copied into it: EGOSMITH_SRC / EGOSTEER_SRC (default /work/ext/egosmith, /work/ext/egosteer),
CONSUMERS_VENV (default .venv-consumers). Skips, saying which, when any is absent.

On Appendix B tasks where the hands leave the view and come back: nothing dropped by
either consumer, and ``--check`` agreeing with both sample by sample, also on shards broken
on purpose. The first test needs no consumer and runs everywhere."""
from __future__ import annotations

import dataclasses
import io
import json
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import numpy as np
import pytest

from egorec_ros.export.egosmith import jpeg
from egorec_ros.export.egosmith.rules import check_shards
from egorec_ros.export.egosmith.run import export
from egorec_ros.sim.flaws import DEFAULT
from egorec_ros.store import TaskWriter
from helpers.store import TASK_NAME, record_episode, small_appendix_b

REPO = Path(__file__).resolve().parents[2]
VENV_PY = Path(os.environ.get("CONSUMERS_VENV", REPO / ".venv-consumers")) / "bin" / "python"
EGOSMITH = Path(os.environ.get("EGOSMITH_SRC", "/work/ext/egosmith"))
EGOSTEER = Path(os.environ.get("EGOSTEER_SRC", "/work/ext/egosteer"))
SCRIPT = REPO / "test" / "helpers" / "egosmith_consumers_check.py"
# hands out of view: left in the middle, right at the start and at the end (then back, in episode 2)
HANDS_LEAVE = [
    {"left_glove": dataclasses.replace(DEFAULT, outages=((0.6, 0.5),)),
     "right_glove": dataclasses.replace(DEFAULT, outages=((0.0, 0.4), (1.5, 9.0))), "*": DEFAULT},
    {"left_glove": dataclasses.replace(DEFAULT, outages=((0.0, 0.3), (0.9, 0.2))),
     "right_glove": dataclasses.replace(DEFAULT, outages=((1.2, 0.4),)), "*": DEFAULT},
]


def _missing() -> str | None:
    if not (EGOSMITH / "src" / "lib" / "pipeline" / "quality" / "wds_sanity.py").exists():
        return f"no EgoSmith checkout at {EGOSMITH} (set EGOSMITH_SRC to a checkout of egosteer/egosmith)"
    if not (EGOSTEER / "src" / "dataset" / "vla_dataset.py").exists():
        return f"no EgoSteer checkout at {EGOSTEER} (set EGOSTEER_SRC to a checkout of egosteer/egosteer)"
    if not VENV_PY.exists():
        return f"no {VENV_PY}: run scripts/consumers_venv.sh (or set CONSUMERS_VENV)"
    return None


needs_consumers = pytest.mark.skipif(_missing() is not None, reason=_missing() or "")


def consumers(shards: Path) -> dict:
    r = subprocess.run([str(VENV_PY), str(SCRIPT), str(shards), str(EGOSMITH), str(EGOSTEER)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def leaving_task(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hands_leave") / "task"
    with TaskWriter(root, task_name=TASK_NAME) as writer:
        for seed, flaws in enumerate(HANDS_LEAVE, start=5):
            record_episode(writer, small_appendix_b(), 2.0, seed=seed, flaws=flaws)
    return root


@pytest.fixture(scope="module")
def leaving_shards(leaving_task: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hands_leave_out") / "shards"
    export(leaving_task, out, name="leave", frames_per_shard=70)
    return out


def test_hands_leaving_the_view_pass_our_check(leaving_task: Path, leaving_shards: Path) -> None:
    """Runs without the consumers: presence exact, every rot6d sane, nothing dropped by --check."""
    from egorec_ros.dataset import open_task
    seen = {}
    for k, ep in enumerate(open_task(leaving_task)):
        t = ep.read(["frame_index", "observation.left_hand_pose", "observation.right_hand_pose"])
        bits = sum((np.abs(np.array(t.column(f"observation.{h}_hand_pose").to_pylist(), float)).sum(axis=1) > 0) << b
                   for b, h in enumerate(("left", "right")))
        seen.update({f"leave_ep{k:06d}_f{f:06d}": int(p) for f, p in zip(t.column("frame_index").to_pylist(), bits)})
    presence = {}
    for shard in leaving_shards.glob("shard-*.tar"):
        with tarfile.open(shard) as tar:
            presence |= {m.name.split(".")[0]: json.loads(tar.extractfile(m).read())["presence"]
                         for m in tar if m.name.endswith(".meta.json")}
    assert set(presence.values()) == {1, 2, 3}, "each hand is out of view for a while"
    assert presence == {k: seen[k] for k in presence}, "presence is what was seen"
    ours = check_shards(leaving_shards)
    assert ours["dropped"] == 0 and ours["egosmith_qa"]["hard_filter_drop_episodes"] == 0 and not ours["problems"]
    assert ours["egosmith_qa"]["rules"] == {}


@needs_consumers
def test_hands_leaving_the_view_are_dropped_by_neither_consumer(leaving_shards: Path) -> None:
    ours = check_shards(leaving_shards)
    got = consumers(leaving_shards)
    smith, steer = got["egosmith"], got["egosteer"]
    assert smith["samples_read"] == ours["samples"] > 100
    assert smith["summary"]["hard_filter_drop_episodes"] == 0, smith
    assert smith["summary"]["valid_lowdim_frames"] == ours["samples"]
    assert steer["seen"] == steer["emitted"] == ours["samples"] and steer["skipped"] == 0, steer["skips"][:5]
    assert steer["normaliser_fit_skips"] == []
    assert ours["dropped"] == 0 and ours["egosmith_qa"]["hard_filter_drop_episodes"] == 0 and not ours["problems"]


def _rewrite(shard: Path, edits: dict[str, object]) -> None:
    """edits[key](suffix, bytes) -> bytes for the samples named."""
    with tarfile.open(shard) as src:
        members = [(m, src.extractfile(m).read()) for m in src.getmembers()]
    with tarfile.open(shard, "w") as dst:
        for m, data in members:
            key, _, suffix = m.name.partition(".")
            if key in edits:
                data = edits[key](suffix, data)       # type: ignore[operator]
            m.size = len(data)
            dst.addfile(m, io.BytesIO(data))


def _lowdim(change):
    def edit(suffix: str, data: bytes) -> bytes:
        if suffix != "lowdim.npy":
            return data
        x = np.load(io.BytesIO(data)).copy()
        change(x)
        buf = io.BytesIO()
        np.save(buf, x, allow_pickle=False)
        return buf.getvalue()
    return edit


def _zero_left(x):
    x[0:3], x[6:12], x[18:33] = 0.0, 0.0, 0.0      # an absent hand as the old export wrote it


def _jump(x):
    x[3:6] += 4.0


def _spin(x):
    x[6:12] = [1.0, 0.5, 0.0, 0.0, 1.0, 0.0]         # not orthogonal: both consumers' rot6d rules


def _far(x):
    x[18:21] += 0.4        # the left thumb tip 0.4 m off its wrist: no jump (10-tip mean), an outlier once normalised


def _bad_extrinsic(x):
    x[96:107] *= 1.3


def _black(suffix: str, data: bytes) -> bytes:
    return jpeg.encode(np.zeros((200, 320, 3), np.uint8)) if suffix == "image.jpg" else data


def _placeholder(suffix: str, data: bytes) -> bytes:
    if suffix != "meta.json":
        return data
    meta = json.loads(data)
    meta["instruction"] = ["TODO"]
    return json.dumps(meta, ensure_ascii=False).encode()


@needs_consumers
def test_check_agrees_with_both_consumers_on_broken_shards(leaving_shards: Path, tmp_path: Path) -> None:
    out = Path(shutil.copytree(leaving_shards, tmp_path / "broken"))
    shards = sorted(out.glob("shard-*.tar"))
    k0 = [f"leave_ep000000_f{f:06d}" for f in range(60)]
    k1 = [f"leave_ep000001_f{f:06d}" for f in range(60)]
    _rewrite(shards[0], {k0[5]: _lowdim(_zero_left), k0[20]: _lowdim(_jump), k0[33]: _black,
                         k0[40]: _lowdim(_spin), k0[45]: _lowdim(_far)})
    _rewrite(shards[-1], {k1[2]: _placeholder, k1[10]: _lowdim(_bad_extrinsic)})
    ours = check_shards(out)
    got = consumers(out)
    steer = got["egosteer"]
    theirs = {key: why for key, why in steer["skips"]}
    assert steer["skipped"] == ours["dropped"] > 0
    assert ours["dropped_samples"] == theirs, sorted(set(ours["dropped_samples"].items()) ^ set(theirs.items()))[:10]
    assert {"ImageQualityError", "ExtremeStateActionDeltaError", "Rot6DInvalidError", "InstructionInvalidError",
            "ExtrinsicInvalidError", "OutlierDataError"} <= set(theirs.values())
    smith = got["egosmith"]
    qa = ours["egosmith_qa"]
    assert smith["summary"]["hard_filter_drop_episodes"] == qa["hard_filter_drop_episodes"] == 2
    assert smith["hard_filter_reason_counts"] == {n: r["episodes"] for n, r in qa["rules"].items() if r["hard_filter"]}
    assert smith["checks"]["invalid_rot6d_frames"] == qa["rules"]["invalid_rot6d"]["samples"] == 2
    assert qa["rules"]["invalid_extrinsic"]["samples"] == smith["checks"]["invalid_extrinsic_frames"] == 1

