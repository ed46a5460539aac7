"""The validator on deliberately broken task dirs: copy a good Appendix B task, break one
thing, and expect the finding that names it (file, where, rule); `egorec validate`
exits 0 on the clean dir, 1 on each broken one, and its --json output parses."""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from helpers.cli import egorec
from egorec_ros.cli import main as egorec_main
from egorec_ros.codecs import force_matrix as fm
from egorec_ros.codecs.probe import count_frames, trim_video
from egorec_ros.schema.episode_row import episode_row_table, read_episode_row

INFO = "meta/info.json"
DATA = "data/chunk-000/episode-000.parquet"
ROW = "meta/episodes/chunk-000/episode-000.parquet"
STEREO_LEFT = "videos/chunk-000/stereo_left/episode-000.mp4"
DEPTH = "videos/chunk-000/stereo_depth/episode-000.mp4"
MATRIX = "observation.gripper_left_force_matrix"
STATE = "observation.gripper_state"
EGO = "observation.ego_slam_trajectory"


# ---- ways to break a task dir ------------------------------------------------------------

def edit_info(change: Callable[[dict], None]) -> Callable[[Path], None]:
    def apply(task: Path) -> None:
        doc = json.loads((task / INFO).read_text(encoding="utf-8"))
        change(doc)
        (task / INFO).write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return apply


def write_data(table: pa.Table, task: Path) -> None:
    pq.write_table(table, task / DATA, compression="zstd", use_dictionary=False, write_statistics=False)


def edit_column(name: str, change: Callable[[list], list], type_: pa.DataType | None = None) -> Callable[[Path], None]:
    """Rewrite one column of episode 1's data parquet, as Python values."""
    def apply(task: Path) -> None:
        table = pq.read_table(task / DATA)
        new_type = type_ or table.schema.field(name).type
        values = pa.array(change(table.column(name).to_pylist()), new_type)
        write_data(table.set_column(table.column_names.index(name), pa.field(name, new_type), values), task)
    return apply


def edit_row(change: Callable[[dict], None]) -> Callable[[Path], None]:
    """Rewrite episode 1's meta/episodes row."""
    def apply(task: Path) -> None:
        row = read_episode_row(task / ROW)
        change(row)
        pq.write_table(episode_row_table(row), task / ROW)
    return apply


def shorten_matrix_row(task: Path) -> None:
    """Row 3 of a force matrix column loses its last value (Arrow offsets, no Python lists)."""
    table = pq.read_table(task / DATA)
    column = table.column(MATRIX).combine_chunks()
    offsets = column.offsets.to_numpy().copy()
    cut = offsets[4] - 1
    values = pa.concat_arrays([column.values.slice(0, cut), column.values.slice(cut + 1)])
    offsets[4:] -= 1
    shortened = pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), values)
    write_data(table.set_column(table.column_names.index(MATRIX), MATRIX, shortened), task)


def replace_at(i: int, value: object) -> Callable[[list], list]:
    """values[i] = value, or value(values[i]) if it is a function."""
    def change(values: list) -> list:
        values[i] = value(values[i]) if callable(value) else value
        return values
    return change


def drop_one_stamp(values: list) -> list:
    i = next(i for i, v in enumerate(values) if v)
    values[i] = values[i][:-1]
    return values


def shorten_video(task: Path) -> None:
    rows = pq.read_metadata(task / DATA).num_rows
    trim_video(task / STEREO_LEFT, task / STEREO_LEFT, rows - 1)


def only_ego_trajectory(doc: dict) -> None:
    for name in list(doc["features"]):
        if name.endswith(("slam_trajectory", "slam_trajectory_ns")) and "ego" not in name:
            del doc["features"][name]
    doc["slam_frames"] = {EGO: "ego_cam_optical"}


def orphan_video(task: Path) -> None:
    shutil.copy(task / STEREO_LEFT, task / "videos/chunk-000/stereo_left/episode-007.mp4")


def stage_leftover(task: Path) -> None:
    (task / ".staging-episode-000003").mkdir()


def recycle_committed(task: Path) -> None:
    (task / "meta/recycled_episode.json").write_text('{"episode_index": 2, "freed_at": "2026-01-01T00:00:00+00:00"}')


CASES = {
    # id: (break, expected finding (file, where, rule))
    "format missing": (edit_info(lambda d: d.pop("format")), (INFO, "format", "§8.2.1")),
    "format unknown": (edit_info(lambda d: d.update(format="lerobot_v2")), (INFO, "format", "§8.2.1")),
    "info key missing": (edit_info(lambda d: d.pop("sensor_dim")), (INFO, "sensor_dim", "§6.1")),
    "info key wrong type": (edit_info(lambda d: d.update(total_episodes="2")), (INFO, "total_episodes", "§6.1")),
    "total_episodes behind": (edit_info(lambda d: d.update(total_episodes=1)), (INFO, "total_episodes", "§6.1")),
    "feature missing": (edit_info(lambda d: d["features"].pop(STATE)), (DATA, STATE, "§6.8.2")),
    "status column declared": (
        edit_info(lambda d: d["features"].update({"status.left_glove": {"dtype": "string", "shape": [1]}})),
        (INFO, "features.status.left_glove", "§6.8.2")),
    "force matrix feature without scale": (edit_info(lambda d: d["features"][MATRIX].pop("scale")),
                                           (INFO, f"features.{MATRIX}", "§4.6")),
    "trajectory feature without frame": (edit_info(lambda d: d["features"][EGO].pop("frame")),
                                         (INFO, f"features.{EGO}", "§8.1.6")),
    "depth slot in cameras": (edit_info(lambda d: d["cameras"].update(stereo_depth={"height": 200, "width": 320})),
                              (DEPTH, "stereo_depth", "§4.8")),
    "gripper_slam_frame without gripper trajectory": (edit_info(only_ego_trajectory),
                                                      (INFO, "gripper_slam_frame", "§8.1.6")),
    "slam_frames disagree with features": (edit_info(lambda d: d["slam_frames"].update({EGO: "down_left_forward"})),
                                           (INFO, "slam_frames", "§6.6")),
    "feature dtype unknown": (edit_info(lambda d: d["features"][STATE].update(dtype="real")), (DATA, STATE, "§6.2")),
    "trajectory _ns not in lockstep": (edit_column("observation.slam_trajectory_ns", drop_one_stamp),
                                       (DATA, "observation.slam_trajectory_ns", "§8.1.3")),
    "frame_index hole": (edit_column("frame_index", lambda v: v[:10] + [i + 1 for i in v[10:]]),
                         (DATA, "frame_index", "§3")),
    "episode_index not k + 1": (edit_column("episode_index", lambda v: [0] * len(v)), (DATA, "episode_index", "§1.3")),
    "wall_time not increasing": (edit_column("wall_time", replace_at(5, lambda w: w - 1.0)), (DATA, "wall_time", "§3")),
    "timestamp of the wrong type": (edit_column("timestamp", lambda v: v, pa.float64()), (DATA, "timestamp", "App. C")),
    "action not a list": (edit_column("action", lambda v: [0.0] * len(v), pa.float32()), (DATA, "action", "App. C")),
    "trajectory not a list": (edit_column(EGO, lambda v: [0.0] * len(v), pa.float64()), (DATA, EGO, "App. C")),
    "vector column of wrong width": (edit_column(STATE, replace_at(2, [1.0, 2.0])), (DATA, STATE, "§5.5")),
    "imu sample of wrong width": (edit_column("observation.imu", replace_at(3, lambda s: [x[:5] for x in s])),
                                  (DATA, "observation.imu", "§4.4")),
    "status value unknown": (edit_column("status.left_glove", replace_at(0, "unplugged")),
                             (DATA, "status.left_glove", "§3")),
    "force matrix row of wrong length": (shorten_matrix_row, (DATA, MATRIX, "§4.6")),
    "force_matrix_specs missing": (edit_row(lambda r: r.update(force_matrix_specs={})), (DATA, MATRIX, "§8.1.4")),
    "JSON column does not parse": (edit_row(lambda r: r.update(drop_stats="{not json")), (ROW, "drop_stats", "§7.1")),
    "episode row length wrong": (edit_row(lambda r: r.update(length=r["length"] + 1)), (ROW, "length", "§7.1")),
    "frame marks past the last row": (edit_row(lambda r: r.update(frame_marks={"max_ranges": 100, "streams": {
        "ego.left": {"video": "stereo_left", "repeated": {"rows": 2, "ranges": [[r["length"], r["length"] + 1]]}}}})),
        (ROW, "frame_marks", "DESIGN:frame_marks")),
    "video frames != rows": (shorten_video, (STEREO_LEFT, "stereo_left", "DESIGN:video-integrity")),
    "orphan file": (orphan_video, ("videos/chunk-000/stereo_left/episode-007.mp4", "", "§1.2.1")),
    "staged leftover": (stage_leftover, (".staging-episode-000003", "", "DESIGN:commit")),
    "recycled number in use": (recycle_committed, ("meta/recycled_episode.json", "episode_index", "§1.3")),
}


def validate_json(task: Path, capsys: pytest.CaptureFixture) -> tuple[int, dict]:
    """`egorec validate --json --quick` in this process (the real CLI code, without a fork)."""
    capsys.readouterr()
    code = egorec_main(["validate", "--json", "--quick", str(task)])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("case", list(CASES))
def test_validator_names_the_defect(appendix_b_copy: Path, capsys: pytest.CaptureFixture, case: str) -> None:
    breaker, expected = CASES[case]
    breaker(appendix_b_copy)
    code, report = validate_json(appendix_b_copy, capsys)
    found = {(f["file"], f["where"], f["rule"]) for f in report["findings"]}
    assert expected in found, f"{case}: expected {expected}, got {sorted(found)}"
    assert code == 1 and report["clean"] is False
    for f in report["findings"]:
        assert f["message"], f


def test_clean_task_validates_through_the_real_cli(appendix_b_copy: Path, capsys: pytest.CaptureFixture) -> None:
    proc = egorec("validate", "--json", str(appendix_b_copy))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout) == {"task_dir": str(appendix_b_copy), "clean": True, "findings": []}
    assert egorec_main(["validate", "--quick", str(appendix_b_copy)]) == 0
    assert capsys.readouterr().out.strip() == f"{appendix_b_copy}: clean"


def test_broken_task_fails_through_the_real_cli(appendix_b_copy: Path) -> None:
    shorten_video(appendix_b_copy)
    proc = egorec("validate", "--quick", str(appendix_b_copy))
    assert proc.returncode == 1
    assert f"{STEREO_LEFT} [stereo_left] (DESIGN:video-integrity)" in proc.stdout
    assert "finding(s) in" in proc.stdout


def test_undecodable_frame_needs_full_decode(appendix_b_copy: Path) -> None:
    """--quick counts packets; the default decodes, and catches a packet that does not decode."""
    video = appendix_b_copy / STEREO_LEFT
    data = bytearray(video.read_bytes())
    mdat = data.find(b"mdat") + 8
    rng = np.random.default_rng(0)
    data[mdat + 200: mdat + 20000] = rng.integers(0, 256, 19800, dtype=np.uint8).tobytes()
    video.write_bytes(bytes(data))
    rows = pq.read_metadata(appendix_b_copy / DATA).num_rows
    if count_frames(video, decode=True) == rows:
        pytest.skip("the decoder concealed the damage; nothing to tell apart")
    proc = egorec("validate", "--json", str(appendix_b_copy))
    assert proc.returncode == 1
    assert any(f["file"] == STEREO_LEFT for f in json.loads(proc.stdout)["findings"])


def test_force_matrix_values_of_a_clean_episode_decode(appendix_b_task: Path) -> None:
    """Guards the breakers above: the untouched column really has 0 or FLAT values per row."""
    lengths = [len(v) for v in pq.read_table(appendix_b_task / DATA, columns=[MATRIX]).column(0).to_pylist()]
    assert set(lengths) <= {0, fm.FLAT} and fm.FLAT in lengths
