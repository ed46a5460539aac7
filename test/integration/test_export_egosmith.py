"""egorec export egosmith: shards read back as a training loader reads them (webdataset),
numbers checked against the source rows, refusals leave nothing behind, and the trainer's
drop rules find what we break on purpose."""
from __future__ import annotations

import io
import json
import shutil
import tarfile
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from helpers.cli import egorec
from egorec_ros.dataset import open_task
from egorec_ros.export.egosmith.errors import ExportRefused
from egorec_ros.export.egosmith.rules import check_shards
from egorec_ros.export.egosmith.run import export

wds = pytest.importorskip("webdataset")

NAME = "demo"
META_KEYS = ["dataset_name", "clip_id", "episode_index", "split", "instruction", "instruction_num", "language",
             "lowdim_schema", "native_feature_source", "wrist_translation_semantics", "camera_extrinsic_convention",
             "mano_schema", "mano_pose_representation", "mano_betas_representation", "mano_flat_hand_mean",
             "mano_center_idx", "mano_root_rotation_source", "mano_wrist_translation_source", "depth_schema",
             "depth_encoding", "wrist_rotation_source", "presence"]
TIPS = [4, 8, 12, 16, 20]


@pytest.fixture(scope="module")
def shards(appendix_b_task: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """Both episodes (29 samples each) with depth; a 40-frame budget puts them in two shards."""
    out = tmp_path_factory.mktemp("egosmith") / "shards"
    summary = export(appendix_b_task, out, depth=True, name=NAME, frames_per_shard=40)
    return out, summary


def loader(out: Path) -> list[dict]:
    urls = [str(p) for p in sorted(out.glob("shard-*.tar"))]
    return list(wds.WebDataset(urls, shardshuffle=False).decode("rgb8"))


def source_rows(ep) -> dict[str, np.ndarray]:
    t = ep.read(["frame_index", "hardware_ns", "observation.left_hand_pose", "observation.right_hand_pose"])
    hands = np.stack([np.array(t.column(f"observation.{h}_hand_pose").to_pylist(), np.float64).reshape(-1, 21, 3)
                      for h in ("left", "right")], axis=1)
    return {"frame_index": t.column("frame_index").to_numpy(), "ns": t.column("hardware_ns").to_numpy(), "hands": hands}


def palm(j: np.ndarray, left: bool) -> np.ndarray:
    """palm_keypoints_v1 written out by hand: y wrist->middle MCP, z back-of-hand normal, x = y x z."""
    y = j[9] - j[0]
    y /= np.linalg.norm(y)
    across = (j[17] - j[5]) if left else (j[5] - j[17])
    z = np.cross(across, y)
    z /= np.linalg.norm(z)
    return np.column_stack([np.cross(y, z), y, z])


def quat_matrix(q: np.ndarray) -> np.ndarray:
    x, y, z, w = q / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return float(10 * np.log10(255.0 ** 2 / max(mse, 1e-12)))


def test_shards_hold_whole_episodes_in_time_order(shards, appendix_b_task: Path) -> None:
    out, summary = shards
    assert sorted(p.name for p in out.iterdir()) == ["shard-000000.tar", "shard-000001.tar"], "no tmp/part left"
    assert [s["episodes"] for s in summary["shards"]] == [[1], [2]]
    assert [e["egosmith_episode_index"] for e in summary["episodes"]] == [0, 1], "numbered from 0, as EgoSmith does"
    for shard, ep in (("shard-000000.tar", 1), ("shard-000001.tar", 2)):
        names = tarfile.open(out / shard).getnames()
        keys = list(dict.fromkeys(n.split(".", 1)[0] for n in names))
        rows = len(open_task(appendix_b_task).episode(ep))
        assert keys == [f"{NAME}_ep{ep - 1:06d}_f{f:06d}" for f in range(rows - 1)], "in time order, last frame left out"
        assert names[:4] == [f"{keys[0]}.image.jpg", f"{keys[0]}.lowdim.npy", f"{keys[0]}.depth.npy", f"{keys[0]}.meta.json"]
    assert [e["dropped"] for e in summary["episodes"]] == [{"last frame: its action would be the next frame": 1}] * 2


def test_every_member_reads_back_with_its_dtype_shape_and_values(shards, appendix_b_task: Path) -> None:
    out, _ = shards
    task = open_task(appendix_b_task)
    samples = loader(out)
    assert len(samples) == len(task.episode(1)) + len(task.episode(2)) - 2
    by_ep = {1: source_rows(task.episode(1)), 2: source_rows(task.episode(2))}
    traj = {i: task.episode(i).trajectory("observation.ego_slam_trajectory") for i in (1, 2)}
    depth = {i: list(task.episode(i).frames("stereo_depth")) for i in (1, 2)}
    video = {i: list(task.episode(i).frames("stereo_left")) for i in (1, 2)}
    for s in samples:
        ep, f = int(s["__key__"][len(NAME) + 3:len(NAME) + 9]) + 1, int(s["__key__"][-6:])
        meta, x, img, d = s["meta.json"], s["lowdim.npy"], s["image.jpg"], s["depth.npy"]
        assert list(meta) == META_KEYS and meta["episode_index"] == ep - 1 and meta["instruction"] == ["示例任务"]
        assert meta["native_feature_source"] is None and "mano.npy" not in s
        assert meta["instruction_num"] == 1 and meta["language"] == "示例任务" and meta["split"] == "train"
        assert meta["presence"] == (3 if ep == 1 else 1), "episode 2: the right glove never sent"
        assert x.dtype == np.float32 and x.shape == (116,)
        assert img.dtype == np.uint8 and img.shape == (200, 320, 3)
        assert d.dtype == np.uint16 and d.shape == (200, 320)
        assert np.array_equal(d, depth[ep][f]), "depth = the decoded depth video, mm"
        assert psnr(img, video[ep][f]) > 35.0

        src = by_ep[ep]
        for t, part in ((f, x[:48]), (f + 1, x[48:96])):          # state, then next-frame action
            hands = src["hands"][t]
            for h in range(2):        # episode 2's right hand is never seen: origin, identity (EgoSmith's unseen hand)
                present = hands[h].any()
                np.testing.assert_array_equal(part[3 * h:3 * h + 3], hands[h, 0].astype(np.float32))
                np.testing.assert_array_equal(part[18 + 15 * h:33 + 15 * h], hands[h, TIPS].reshape(-1).astype(np.float32))
                want = palm(hands[h], left=h == 0) if present else np.eye(3)
                np.testing.assert_allclose(part[6 + 6 * h:12 + 6 * h], want[:, :2].T.reshape(-1), atol=2e-6)
        # the frame's stamp is a SLAM point of the same camera clock: w2c = inverse of that pose
        point = traj[ep].points[np.flatnonzero(traj[ep].ns == src["ns"][f])[0]]
        c2w = np.eye(4)
        c2w[:3, :3], c2w[:3, 3] = quat_matrix(point[4:8]), point[1:4]   # ego_cam_optical: body = optical
        np.testing.assert_allclose(x[96:112].reshape(4, 4), np.linalg.inv(c2w), atol=2e-6)
        np.testing.assert_allclose(x[112:], [150.0, 150.0, 160.0, 100.0])   # 600/640/400 px at 1280x800, video 320x200


def test_parallel_export_writes_the_same_bytes(shards, appendix_b_task: Path, tmp_path: Path, monkeypatch) -> None:
    """Workers are spawned: a forked child of a process running decoder threads can hang for ever."""
    import egorec_ros.cluster.executor as run_module      # where the exporter's worker pool is made
    methods = []

    class Recording(run_module.ProcessPoolExecutor):        # type: ignore[misc, valid-type]
        def __init__(self, *args, **kwargs):
            methods.append(kwargs["mp_context"].get_start_method())
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(run_module, "ProcessPoolExecutor", Recording)
    out, _ = shards
    frames = list(open_task(appendix_b_task).episode(1).frames("stereo_left"))   # decoder threads in this process
    assert frames
    export(appendix_b_task, tmp_path / "j2", depth=True, name=NAME, frames_per_shard=40, jobs=2)
    assert methods == ["spawn"]
    for p in sorted(out.glob("shard-*.tar")):
        assert (tmp_path / "j2" / p.name).read_bytes() == p.read_bytes()


def test_the_cli_exports_and_checks(appendix_b_task: Path, tmp_path: Path) -> None:
    r = egorec("export", "egosmith", str(appendix_b_task), "--out", str(tmp_path / "o"), "--dataset-name", NAME,
               "--episodes", "2", "--json")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert [e["episode_index"] for e in s["episodes"]] == [2] and s["check"]["dropped"] == 0
    frames = len(open_task(appendix_b_task).episode(2)) - 1
    assert s["episodes"][0]["egosmith_episode_index"] == 0
    assert s["check"]["episodes"] == {f"{NAME}_ep000000": {"frames": frames, "dropped": 0, "reasons": {}}}
    assert s["check"]["egosmith_qa"]["hard_filter_drop_episodes"] == 0
    r = egorec("export", "egosmith", "--check", str(tmp_path / "o"))
    assert r.returncode == 0 and f"0 of {frames} samples would be dropped" in r.stdout
    assert "0 of 1 episode(s) dropped by its hard filter" in r.stdout


def test_help_shows_the_shard_pattern_once_escaped() -> None:
    r = egorec("export", "egosmith", "--help")
    assert r.returncode == 0 and "shard-%06d.tar" in r.stdout and "%%" not in r.stdout


# ---- refusals: a clear message, exit 2, nothing written ------------------------------------------

def rewrite_parquet(task: Path, drop: tuple[str, ...]) -> None:
    for p in (task / "data").rglob("*.parquet"):
        t = pq.read_table(p)
        pq.write_table(t.drop_columns([c for c in drop if c in t.column_names]), p)


def refuse(task: Path, out: Path, *extra: str) -> str:
    r = egorec("export", "egosmith", str(task), "--out", str(out), "--dataset-name", NAME, *extra)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    assert not out.exists() or not any(out.iterdir()), "nothing written"
    return r.stderr


def test_a_task_without_ego_slam_is_refused(appendix_b_copy: Path, tmp_path: Path) -> None:
    rewrite_parquet(appendix_b_copy, ("observation.ego_slam_trajectory", "observation.ego_slam_trajectory_ns"))
    assert "no ego SLAM trajectory" in refuse(appendix_b_copy, tmp_path / "o")


def test_a_task_without_hands_is_refused(appendix_b_copy: Path, tmp_path: Path) -> None:
    rewrite_parquet(appendix_b_copy, ("observation.left_hand_pose", "observation.right_hand_pose"))
    assert "no hand keypoints" in refuse(appendix_b_copy, tmp_path / "o")


@pytest.mark.parametrize("text", ["", "TODO"])
def test_a_task_without_instruction_is_refused(appendix_b_copy: Path, tmp_path: Path, text: str) -> None:
    (appendix_b_copy / "meta" / "tasks.jsonl").write_text(json.dumps({"task_index": 0, "task": text}) + "\n")
    assert "no instruction" in refuse(appendix_b_copy, tmp_path / "o")


def test_hand_keypoints_in_an_unknown_frame_are_refused_unless_told(appendix_b_copy: Path, tmp_path: Path) -> None:
    info_path = appendix_b_copy / "meta" / "info.json"
    info = json.loads(info_path.read_text())
    for h in ("left", "right"):
        del info["features"][f"observation.{h}_hand_pose"]["frame"]
    info_path.write_text(json.dumps(info, ensure_ascii=False))
    assert "--hand-frame" in refuse(appendix_b_copy, tmp_path / "o")
    assert "wrist" in refuse(appendix_b_copy, tmp_path / "o", "--hand-frame", "wrist")
    r = egorec("export", "egosmith", str(appendix_b_copy), "--out", str(tmp_path / "o"), "--dataset-name", NAME,
               "--hand-frame", "ego_slam_world")
    assert r.returncode == 0, r.stderr


def test_a_failure_mid_export_leaves_no_partial_shard(appendix_b_copy: Path, tmp_path: Path) -> None:
    """Episode 2's head video is cut short: no .tar.tmp or part file stays; only complete shards do."""
    from egorec_ros.codecs.probe import trim_video
    ep = open_task(appendix_b_copy).episode(2)
    video = ep.video_path("stereo_left")
    trim_video(video, tmp_path / "short.mp4", 10)
    shutil.move(tmp_path / "short.mp4", video)
    with pytest.raises(ValueError, match="ends at frame 10"):       # episode 2 fails in shard 1
        export(appendix_b_copy, tmp_path / "j1", name=NAME, frames_per_shard=40)
    assert sorted(p.name for p in (tmp_path / "j1").iterdir()) == ["shard-000000.tar"]
    rows = len(open_task(appendix_b_copy).episode(1))
    assert len(tarfile.open(tmp_path / "j1" / "shard-000000.tar").getnames()) == 3 * (rows - 1), "episode 1, whole"
    with pytest.raises(ValueError, match="ends at frame 10"):       # workers: episode 1's shard was still open
        export(appendix_b_copy, tmp_path / "j2", name=NAME, frames_per_shard=40, jobs=2)
    assert list((tmp_path / "j2").iterdir()) == []
    with pytest.raises(ValueError, match="ends at frame 10"):       # both in one open shard: nothing stays
        export(appendix_b_copy, tmp_path / "one", name=NAME, jobs=1)
    assert list((tmp_path / "one").iterdir()) == []
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "shard-000000.tar").write_bytes(b"")
    with pytest.raises(ExportRefused, match="already holds"):
        export(appendix_b_copy, tmp_path / "o", name=NAME)


# ---- the trainer's drop rules on shards we break on purpose ------------------------------------

def corrupt(shard: Path, edits: dict[int, callable]) -> None:
    """Rewrite ``shard`` with edits[frame](suffix, bytes) -> bytes applied to that frame's members."""
    src = tarfile.open(shard)
    members = [(m, src.extractfile(m).read()) for m in src.getmembers()]
    src.close()
    with tarfile.open(shard, "w") as dst:
        for m, data in members:
            frame = int(m.name.split(".", 1)[0][-6:])
            if frame in edits:
                data = edits[frame](m.name.split(".", 1)[1], data)
            m.size = len(data)
            dst.addfile(m, io.BytesIO(data))


def npy(a: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=False)
    return buf.getvalue()


def edit_lowdim(change):
    def edit(suffix: str, data: bytes) -> bytes:
        if suffix != "lowdim.npy":
            return data
        x = np.load(io.BytesIO(data)).copy()
        change(x)
        return npy(x)
    return edit


def test_check_reports_what_the_trainer_would_drop(shards, tmp_path: Path, monkeypatch) -> None:
    out = Path(shutil.copytree(shards[0], tmp_path / "bad"))
    from egorec_ros.export.egosmith import jpeg

    def scale_extrinsic(x):
        x[96:107] *= 2.0                                   # det R = 8

    def black(suffix, data):
        return jpeg.encode(np.zeros((200, 320, 3), np.uint8)) if suffix == "image.jpg" else data

    def no_instruction(suffix, data):
        if suffix != "meta.json":
            return data
        meta = json.loads(data)
        meta["instruction"], meta["instruction_num"] = ["n/a"], 1
        return json.dumps(meta).encode()

    def no_depth(suffix, data):
        return npy(np.zeros((200, 320), np.uint16)) if suffix == "depth.npy" else data

    def jump(x):
        x[0:3] += 5.0                                      # the left wrist jumps 5 m (and back)

    def bad_focal(x):
        x[112] = 0.0

    corrupt(out / "shard-000000.tar", {3: edit_lowdim(scale_extrinsic), 5: black, 7: no_instruction,
                                       9: no_depth, 11: edit_lowdim(jump), 13: edit_lowdim(bad_focal)})
    report = check_shards(out)
    ep1, ep2 = report["episodes"][f"{NAME}_ep000000"], report["episodes"][f"{NAME}_ep000001"]
    assert ep2["dropped"] == 0 and ep2["reasons"] == {}
    # one training sample each: the one anchored there (frame 5's image is in no later window's
    # 30-frame-stride history; the jump is between frame 11's state and its own action)
    assert ep1["reasons"] == {"ExtrinsicInvalidError": 1, "ImageQualityError": 1, "InstructionInvalidError": 1,
                              "ExtremeStateActionDeltaError": 1, "IntrinsicInvalidError": 1}, ep1
    assert report["dropped_samples"][f"{NAME}_ep000000_f000011"] == "ExtremeStateActionDeltaError"
    assert check_shards(out, load_depth=True)["episodes"][f"{NAME}_ep000000"]["reasons"]["DepthQualityError"] == 1
    from egorec_ros.export.egosmith import trainer
    monkeypatch.setattr(trainer, "CHUNK", 7)                # windows in chunks: the same answer
    assert check_shards(out)["dropped_samples"] == report["dropped_samples"]
    qa = report["egosmith_qa"]          # EgoSmith's hard filter drops episode 1 whole
    assert qa["dropped_episodes"] == {f"{NAME}_ep000000": ["invalid_extrinsic", "invalid_intrinsic"]}
    assert qa["rules"]["invalid_extrinsic"] == {"samples": 1, "episodes": 1, "hard_filter": True}
    r = egorec("export", "egosmith", "--check", str(out))
    assert r.returncode == 1 and f"5 of {ep1['frames']} dropped" in r.stdout
    assert "invalid_intrinsic: 1 sample(s) in 1 episode(s) (hard filter)" in r.stdout


def test_check_finds_a_split_episode_and_time_order(shards, tmp_path: Path) -> None:
    out = tmp_path / "mixed"
    out.mkdir()
    src = tarfile.open(shards[0] / "shard-000000.tar")
    members = [(m, src.extractfile(m).read()) for m in src.getmembers()]
    half = len(members) // 2 // 4 * 4
    for name, part in (("shard-000000.tar", members[half:]), ("shard-000001.tar", members[:half])):
        with tarfile.open(out / name, "w") as dst:
            for m, data in part:
                dst.addfile(m, io.BytesIO(data))
    problems = check_shards(out)["problems"]
    assert any("split across" in p for p in problems)



def test_an_ego_trajectory_without_host_stamps_is_refused(appendix_b_copy: Path, tmp_path: Path) -> None:
    """A trajectory that lost its ``_ns`` column (an older writer, a hand-edited file): its points
    cannot be placed in time (§3.1), so the export says so instead of guessing."""
    rewrite_parquet(appendix_b_copy, ("observation.ego_slam_trajectory_ns",))
    assert "has no observation.ego_slam_trajectory_ns column" in refuse(appendix_b_copy, tmp_path / "o")
