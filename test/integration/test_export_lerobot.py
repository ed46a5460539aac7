"""`egorec export lerobot` checked against LeRobot v3.0's rules without lerobot itself
(the round trip through the real package is test_export_lerobot_roundtrip.py)."""
from __future__ import annotations

import json
from pathlib import Path

import av
import numpy as np
import pyarrow.parquet as pq
import pytest

from helpers.cli import egorec
from egorec_ros.dataset import open_task
from egorec_ros.codecs import depth as depth_codec
from egorec_ros.export.lerobot import layout, videos
from egorec_ros.export.lerobot.export import export_lerobot, provenance
from egorec_ros.export.lerobot.mapping import MappingError
from egorec_ros.export.lerobot.stats import Q_KEYS

STAT_KEYS = {"min", "max", "mean", "std", "count", *Q_KEYS}
# what lerobot 0.6.1's recorder writes in a video feature's info (get_video_info with its
# encoder config; test_export_lerobot_roundtrip.py compares with a live recording)
RGB_INFO_KEYS = {"video.height", "video.width", "video.codec", "video.pix_fmt", "video.fps", "video.channels",
                 "has_audio", "video.g", "video.crf", "video.preset", "video.fast_decode", "video.video_backend",
                 "video.extra_options", "is_depth_map"}
DEPTH_INFO_KEYS = RGB_INFO_KEYS | {"depth_unit", "video.depth_min", "video.depth_max", "video.shift", "video.use_log"}


@pytest.fixture(scope="module")
def exported(appendix_b_task: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("lerobot") / "copy"
    export_lerobot(appendix_b_task, out, video="copy", extras="flatten")
    return out


def _info(root: Path) -> dict:
    return json.loads((root / layout.INFO_PATH).read_text())


def _data(root: Path):
    return pq.ParquetDataset(sorted(str(p) for p in (root / "data").glob("*/*.parquet"))).read()


def _episodes(root: Path) -> list[dict]:
    return pq.read_table(root / layout.EPISODES_PATH.format(chunk_index=0, file_index=0)).to_pylist()


def test_info_follows_v3_rules(exported: Path, appendix_b_task: Path) -> None:
    info, task = _info(exported), open_task(appendix_b_task)
    assert info["codebase_version"] == "v3.0" and info["fps"] == 30 and isinstance(info["fps"], int)
    assert info["chunks_size"] == 1000
    assert info["data_files_size_in_mb"] > 0 and info["video_files_size_in_mb"] > 0
    assert info["data_path"] == "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
    assert info["video_path"] == "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"
    assert info["total_episodes"] == len(task) and info["total_frames"] == sum(len(ep) for ep in task)
    assert info["total_tasks"] == 1 and info["splits"] == {"train": f"0:{len(task)}"}
    features = info["features"]
    for name, ft in layout.DEFAULT_FEATURES.items():
        assert features[name]["dtype"] == ft["dtype"] and features[name]["shape"] == [1]
    cams = {k: v for k, v in features.items() if v["dtype"] == "video"}
    assert set(cams) == {f"observation.images.{k}" for k in task.video_extensions}   # depth included
    codecs = task.episodes[0].row["video_codec"]
    for key, ft in cams.items():
        if key == "observation.images.stereo_depth":
            continue
        cam = task.info["cameras"][key.removeprefix("observation.images.")]
        assert ft["shape"] == [cam["height"], cam["width"], 3] and ft["names"] == ["height", "width", "channels"]
        assert set(ft["info"]) == RGB_INFO_KEYS            # 0.6 keys; no legacy video.is_depth_map
        assert ft["info"]["video.codec"] == "h264" and ft["info"]["video.fps"] == 30
        assert ft["info"]["is_depth_map"] is False and ft["info"]["has_audio"] is False
        assert ft["info"]["video.channels"] == 3 and ft["info"]["video.pix_fmt"] == "yuv420p"
        ours = codecs[key.removeprefix("observation.images.")]     # what our recorder encoded with
        assert (ft["info"]["video.g"], ft["info"]["video.crf"], ft["info"]["video.preset"]) == (
            ours["gop"], ours["crf"], ours["preset"])
    state = features["observation.state"]
    assert state["dtype"] == "float32" and len(state["names"]) == state["shape"][0]
    assert state["names"][:3] == ["gripper_left_force.0", "gripper_left_force.1", "gripper_left_force.2"]
    assert "action" not in features    # the appendix_b rig records no action: the placeholder is left out
    assert "egorec" not in info        # lerobot 0.6 warns about unknown info.json keys and edits drop them
    source = provenance(info)
    assert features[layout.PROVENANCE] == {"dtype": "int64", "shape": [1], "names": None, "info": source}
    assert "stereo_depth" not in source["left_out"] and source["depth"] == ["stereo_depth"]
    assert source["source_task"] == str(appendix_b_task.resolve())
    assert source["source_episodes"] == {str(ep.index): str(ep.data_path.relative_to(task.root)) for ep in task}


def test_depth_is_lerobot_06s_depth_feature(exported: Path, appendix_b_task: Path) -> None:
    """A depth stream as lerobot 0.6 declares one (dataset_metadata.depth_keys: info
    is_depth_map; DepthEncoderConfig fields as video.<field>), copied byte for byte."""
    info, task = _info(exported), open_task(appendix_b_task)
    ft = info["features"]["observation.images.stereo_depth"]
    ep = task.episodes[0]
    h, w = next(ep.frames("stereo_depth")).shape
    assert ft["dtype"] == "video" and ft["shape"] == [h, w, 1] and ft["names"] == ["height", "width", "channels"]
    assert set(ft["info"]) == DEPTH_INFO_KEYS
    i = ft["info"]
    assert i["is_depth_map"] is True and i["depth_unit"] == "mm" and i["video.channels"] == 1
    assert (i["video.codec"], i["video.pix_fmt"], i["video.g"]) == ("hevc", "gray12le", depth_codec.GOP)
    assert "qp=6" in i["video.extra_options"]["x265-params"]
    assert (i["video.depth_min"], i["video.depth_max"], i["video.shift"], i["video.use_log"]) == (0.1, 5.0, 0.0, True)
    for k, ep in enumerate(task):
        path = exported / info["video_path"].format(video_key="observation.images.stereo_depth", chunk_index=0,
                                                    file_index=k)
        assert path.read_bytes() == ep.video_path("stereo_depth").read_bytes()


def _lerobot_dequantize_mm(code: np.ndarray, depth_min: float, depth_max: float, shift: float) -> np.ndarray:
    """lerobot 0.6.1 depth_utils.dequantize_depth, log mode, output_unit "mm" (numpy path)."""
    log_min, log_max = np.log(depth_min + shift), np.log(depth_max + shift)
    m = np.clip(np.exp(code.astype(np.float32) * np.float32((log_max - log_min) / 4095) + np.float32(log_min))
                - np.float32(shift), depth_min, depth_max)
    return np.rint(m * 1000.0)


def test_the_depth_info_makes_lerobot_read_our_millimetres() -> None:
    codes = np.arange(depth_codec.CODE_MAX + 1)
    q = videos.DEPTH_QUANTIZER
    theirs = _lerobot_dequantize_mm(codes, q["depth_min"], q["depth_max"], q["shift"])
    ours = depth_codec.code_to_mm(codes).astype(np.float64)
    valid = codes >= depth_codec.INVALID_BELOW
    assert np.abs(theirs[valid] - ours[valid]).max() <= 1.0          # float32 vs float64 rounding
    hole, stored = codes < depth_codec.INVALID_BELOW, codes >= depth_codec.GUARD_CODE
    assert (theirs[hole] < videos.DEPTH_HOLE_BELOW_MM).all() and (theirs[stored] >= videos.DEPTH_HOLE_BELOW_MM).all()
    np.testing.assert_array_equal(videos.DEPTH_LEVELS[valid], ours[valid])


def test_data_rows(exported: Path, appendix_b_task: Path) -> None:
    info, table, task = _info(exported), _data(exported), open_task(appendix_b_task)
    non_video = [k for k, v in info["features"].items() if v["dtype"] != "video"]
    assert sorted(table.column_names) == sorted(non_video)
    assert str(table.schema.field("timestamp").type) == "float"
    assert table.schema.field("observation.state").type.list_size == info["features"]["observation.state"]["shape"][0]
    d = {c: table.column(c).to_numpy() for c in ("timestamp", "frame_index", "episode_index", "index", "task_index")}
    assert np.array_equal(d["index"], np.arange(table.num_rows))
    assert np.abs(d["timestamp"] - d["frame_index"] / 30).max() < 1e-4
    assert np.array_equal(np.unique(d["episode_index"]), np.arange(len(task)))
    assert set(d["task_index"]) == {0}
    state = np.stack(table.column("observation.state").to_numpy(zero_copy_only=False))
    cols = provenance(info)["features"]["observation.state"]
    assert str(table.schema.field(layout.PROVENANCE).type) == "int64"
    source = table.column(layout.PROVENANCE).to_numpy()
    for k, ep in enumerate(task):
        rows = d["episode_index"] == k
        assert np.array_equal(d["frame_index"][rows], np.arange(len(ep)))
        assert set(source[rows]) == {ep.index}
        expected = np.concatenate([np.stack(ep.column(c).to_numpy(zero_copy_only=False)).astype(np.float32)
                                   if ep.has(c) else np.zeros((len(ep), _width(info, c)), np.float32)
                                   for c in cols], axis=1)
        assert np.array_equal(state[rows], expected)


def _width(info: dict, column: str) -> int:
    return sum(1 for n in info["features"]["observation.state"]["names"]
               if n.rsplit(".", 1)[0] == column.removeprefix("observation."))


def test_flattened_trajectory_holds_the_newest_point(exported: Path, appendix_b_task: Path) -> None:
    table, task = _data(exported), open_task(appendix_b_task)
    col = "observation.slam_trajectory"
    last = np.stack(table.column(col + "_last").to_numpy(zero_copy_only=False))
    ep_of_row = table.column("episode_index").to_numpy()
    for k, ep in enumerate(task):
        traj = ep.trajectory(col)
        got = last[ep_of_row == k]
        for i in range(len(ep)):
            upto = np.flatnonzero(traj.row <= i)
            want = traj.points[upto[-1], 1:] if len(upto) else np.zeros(7)
            np.testing.assert_array_equal(got[i], want.astype(np.float32))


def test_episodes_table(exported: Path, appendix_b_task: Path) -> None:
    info, task, rows = _info(exported), open_task(appendix_b_task), _episodes(exported)
    assert [r["episode_index"] for r in rows] == list(range(len(task)))
    assert not [k for k in rows[0] if k.startswith("egorec/")]   # lerobot-edit-dataset drops such columns
    start = 0
    for r, ep in zip(rows, task):
        assert r["length"] == len(ep) and r["tasks"] == [task.info["task_name"]]
        assert (r["dataset_from_index"], r["dataset_to_index"]) == (start, start + len(ep))
        data = pq.read_table(exported / info["data_path"].format(chunk_index=r["data/chunk_index"],
                                                                 file_index=r["data/file_index"]))
        assert r["episode_index"] in set(data.column("episode_index").to_pylist())
        for key in (k for k, v in info["features"].items() if v["dtype"] == "video"):
            assert r[f"videos/{key}/from_timestamp"] == 0.0
            assert r[f"videos/{key}/to_timestamp"] == pytest.approx(len(ep) / 30)
            assert (exported / info["video_path"].format(video_key=key, chunk_index=r[f"videos/{key}/chunk_index"],
                                                         file_index=r[f"videos/{key}/file_index"])).exists()
        assert (r["meta/episodes/chunk_index"], r["meta/episodes/file_index"]) == (0, 0)
        for name in info["features"]:
            assert {k.rsplit("/", 1)[1] for k in r if k.startswith(f"stats/{name}/")} == STAT_KEYS, name
        start += len(ep)


def test_episode_stats_columns_have_lerobot_06s_types(exported: Path) -> None:
    """As lerobot 0.6.1's recorder: count list<int64>, every other stat float64, integer
    columns included (0.6 computes their min/max in float64; 0.4.4 kept int64)."""
    schema = pq.read_schema(exported / layout.EPISODES_PATH.format(chunk_index=0, file_index=0))
    info = _info(exported)
    for f in schema:
        if not f.name.startswith("stats/"):
            continue
        _, feature, stat = f.name.split("/")
        video = info["features"][feature]["dtype"] == "video"
        want = ("list<element: int64>" if stat == "count" else
                "list<element: list<element: list<element: double>>>" if video else "list<element: double>")
        assert str(f.type) == want, f.name
    for name in ("frame_index", "episode_index", "index", "task_index", layout.PROVENANCE):
        assert f"stats/{name}/min" in schema.names


def test_stats(exported: Path) -> None:
    info, stats, table = _info(exported), json.loads((exported / layout.STATS_PATH).read_text()), _data(exported)
    assert set(stats) == set(info["features"])
    for name, ft in info["features"].items():
        s = stats[name]
        assert set(s) == STAT_KEYS and s["count"] == [info["total_frames"]]
        shape = (ft["shape"][2], 1, 1) if ft["dtype"] == "video" else tuple(ft["shape"])
        for key in STAT_KEYS - {"count"}:
            assert np.asarray(s[key]).shape == shape, (name, key)
        if ft["dtype"] == "video" and ft["info"]["is_depth_map"]:   # millimetres, as LeRobot reads them
            assert 100 <= np.min(s["min"]) <= np.min(s["q50"]) <= np.max(s["max"]) <= 5000
        elif ft["dtype"] == "video":
            assert 0 <= np.min(s["min"]) <= np.max(s["max"]) <= 1
    state = np.stack(table.column("observation.state").to_numpy(zero_copy_only=False)).astype(np.float64)
    np.testing.assert_allclose(stats["observation.state"]["mean"], state.mean(0), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(stats["observation.state"]["std"], state.std(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(stats["observation.state"]["max"], state.max(0))


def test_tasks_parquet(exported: Path, appendix_b_task: Path) -> None:
    t = pq.read_table(exported / layout.TASKS_PATH)
    assert t.column("task_index").to_pylist() == [0]
    assert t.column_names == ["task_index", "task"]         # 0.6 names the index "task"
    assert t.column("task").to_pylist() == [open_task(appendix_b_task).info["task_name"]]
    assert json.loads(t.schema.metadata[b"pandas"])["index_columns"] == ["task"]


def test_copied_videos_decode_frame_exactly_at_their_timestamps(exported: Path, appendix_b_task: Path) -> None:
    info, task, rows = _info(exported), open_task(appendix_b_task), _episodes(exported)
    for r, ep in zip(rows, task):
        for key in ep.video_keys:
            if key not in task.info["cameras"]:
                continue
            feature = f"observation.images.{key}"
            path = exported / info["video_path"].format(video_key=feature, chunk_index=r[f"videos/{feature}/chunk_index"],
                                                        file_index=r[f"videos/{feature}/file_index"])
            assert path.read_bytes() == ep.video_path(key).read_bytes()
            with av.open(str(path)) as c:
                decoded = [(float(f.pts * f.time_base), f.to_ndarray(format="rgb24")) for f in c.decode(video=0)]
            assert len(decoded) == r["length"]
            ts = np.array([t for t, _ in decoded])
            want = r[f"videos/{feature}/from_timestamp"] + np.arange(r["length"]) / info["fps"]
            assert np.abs(ts - want).max() < 1e-4
            for (_, frame), ours in zip(decoded, ep.frames(key)):
                assert np.array_equal(frame, ours)


def test_reencode_uses_lerobot_defaults(appendix_b_task: Path, tmp_path: Path) -> None:
    out = tmp_path / "reencoded"
    export_lerobot(appendix_b_task, out, video="reencode", cameras=["gripper_rgb"], state=["gripper_state"])
    info, task = _info(out), open_task(appendix_b_task)
    ft = info["features"]["observation.images.gripper_rgb"]
    assert ft["info"]["video.codec"] == "av1" and ft["info"]["video.pix_fmt"] == "yuv420p"
    assert {k: ft["info"][f"video.{k}"] for k in ("g", "crf", "preset", "fast_decode", "video_backend",
                                                  "extra_options")} == videos.LEROBOT_ENCODER_FIELDS
    assert info["features"]["observation.state"]["names"] == ["gripper_state.0", "gripper_state.1", "gripper_state.2"]
    ep = task.episodes[0]
    path = out / info["video_path"].format(video_key="observation.images.gripper_rgb", chunk_index=0, file_index=0)
    with av.open(str(path)) as c:
        frames = [(float(f.pts * f.time_base), f.to_ndarray(format="rgb24")) for f in c.decode(video=0)]
    assert len(frames) == len(ep)
    assert np.abs(np.array([t for t, _ in frames]) - np.arange(len(ep)) / 30).max() < 1e-4
    for (_, got), ours in zip(frames, ep.frames("gripper_rgb")):
        assert np.abs(got.astype(int) - ours).mean() < 6     # lossy crf 30, but the same picture


def test_refusals(appendix_b_task: Path, exported: Path, tmp_path: Path) -> None:
    with pytest.raises(FileExistsError):
        export_lerobot(appendix_b_task, exported)
    with pytest.raises(MappingError, match="--cameras 'nope': no such video stream"):
        export_lerobot(appendix_b_task, tmp_path / "a", cameras=["nope"])
    with pytest.raises(MappingError, match="--state 'nope'"):
        export_lerobot(appendix_b_task, tmp_path / "b", state=["nope"])
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_cli(appendix_b_task: Path, tmp_path: Path) -> None:
    out = tmp_path / "cli"
    r = egorec("export", "lerobot", str(appendix_b_task), "--out", str(out), "--cameras", "gripper_rgb",
               "--state", "gripper_state,observation.left_hand_pose", "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["episodes"] == 2 and summary["cameras"] == {"gripper_rgb": "observation.images.gripper_rgb"}
    assert summary["features"]["observation.state"] == ["observation.gripper_state", "observation.left_hand_pose"]
    assert _info(out)["features"]["observation.state"]["shape"] == [3 + 63]
    r = egorec("export", "lerobot", str(appendix_b_task), "--out", str(out))
    assert r.returncode == 1 and "not empty" in r.stderr and "Traceback" not in r.stderr


def test_camera_size_changing_between_episodes_is_refused(tmp_path: Path, monkeypatch) -> None:
    from helpers.store import record_episode
    from egorec_ros.rig.load import load_rig
    from egorec_ros.rig.resize import with_video_sizes
    from egorec_ros.store import TaskWriter, metadata

    # today's writer refuses a size change in a task; older egorec versions wrote such tasks
    monkeypatch.setattr(metadata, "check_cameras", lambda paths, decl: None)
    task_dir = tmp_path / "task"
    with TaskWriter(task_dir, task_name="sizes") as writer:
        for size in ((64, 48), (96, 64)):
            record_episode(writer, with_video_sizes(load_rig("gripper_single"), {"*": size}), 0.3)
    with pytest.raises(MappingError, match="96x64 but 64x48 in earlier episodes"):
        export_lerobot(task_dir, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_separate_state_features_without_cameras(appendix_b_task: Path, tmp_path: Path) -> None:
    out = tmp_path / "separate"
    export_lerobot(appendix_b_task, out, cameras=[], state=["gripper_state", "left_hand_pose"],
                   state_layout="separate")
    info, table = _info(out), _data(out)
    assert info["video_path"] is None and not (out / "videos").exists()
    assert info["features"]["observation.gripper_state"] == {"dtype": "float32", "shape": [3],
                                                             "names": ["gripper_state.0", "gripper_state.1",
                                                                       "gripper_state.2"]}
    assert info["features"]["observation.left_hand_pose"]["shape"] == [63]
    assert "observation.state" not in info["features"]
    ep = open_task(appendix_b_task).episodes[0]
    rows = table.column("episode_index").to_numpy() == 0
    got = np.stack(table.column("observation.left_hand_pose").to_numpy(zero_copy_only=False))[rows]
    assert np.array_equal(got, np.stack(ep.column("observation.left_hand_pose").to_numpy(zero_copy_only=False)))


def test_action_from_chosen_columns(appendix_b_task: Path, tmp_path: Path) -> None:
    out = tmp_path / "action"
    export_lerobot(appendix_b_task, out, cameras=[], action=["gripper_state"])
    info, table = _info(out), _data(out)
    assert info["features"]["action"]["names"] == ["gripper_state.0", "gripper_state.1", "gripper_state.2"]
    assert "observation.gripper_state" not in provenance(info)["features"]["observation.state"]
    ep = open_task(appendix_b_task).episodes[0]
    rows = table.column("episode_index").to_numpy() == 0
    got = np.stack(table.column("action").to_numpy(zero_copy_only=False))[rows]
    assert np.array_equal(got, np.stack(ep.column("observation.gripper_state").to_numpy(zero_copy_only=False)))


def test_ffv1_depth_is_transcoded_to_lerobots_depth_video(appendix_b_copy: Path, tmp_path: Path) -> None:
    """Our lossless fallback (.mkv, raw mm) becomes the 12-bit code MP4 LeRobot reads."""
    if not depth_codec.hevc12_available():
        pytest.skip("this FFmpeg's libx265 cannot encode 12-bit gray")
    task = open_task(appendix_b_copy)
    for ep in task:
        src = ep.video_path("stereo_depth")
        with depth_codec.open_depth_writer(src.with_suffix(".mkv"), 320, 200, 30, "mkv") as writer:
            for mm in depth_codec.iter_depth_mm(src):
                writer.write(mm)
        src.unlink()
    info_path = appendix_b_copy / "meta" / "info.json"
    meta = json.loads(info_path.read_text())
    meta["video_extensions"]["stereo_depth"] = "mkv"
    info_path.write_text(json.dumps(meta))
    out = tmp_path / "out"
    export_lerobot(appendix_b_copy, out, cameras=["stereo_depth"], state=["gripper_state"])
    info, task = _info(out), open_task(appendix_b_copy)
    assert info["features"]["observation.images.stereo_depth"]["info"]["video.pix_fmt"] == "gray12le"
    for k, ep in enumerate(task):
        path = out / info["video_path"].format(video_key="observation.images.stereo_depth", chunk_index=0,
                                               file_index=k)
        got, ours = list(depth_codec.iter_depth_mm(path)), list(ep.frames("stereo_depth"))
        assert len(got) == len(ours) == len(ep)
        for g, o in zip(got, ours):
            assert np.array_equal(g == 0, o == 0)                          # holes stay holes
            valid = o > 0
            assert np.abs(g[valid].astype(float) / o[valid] - 1).max() < 0.06   # qp 6 code, as recorded
