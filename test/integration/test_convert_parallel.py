"""`--jobs N` gives the dataset of a serial run (numbering, parquet and metadata byte for
byte, the same video frames); a corrupt or truncated bag, or Ctrl-C, leaves no trace in
the task dir."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from egorec_ros.converter.work_dir import PREFIX, WorkDir, check_shared, remove_stale
from egorec_ros.converter.failures import SharedFilesystemError
from egorec_ros.validate.validate import validate_task
from helpers.convert import RIG_ARGS, assert_same_videos, convert, data_table, hidden_entries, sim_bag, task_files


@pytest.fixture(scope="module")
def bags(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("bags")
    out = {"a": sim_bag(root / "a", 1.5, seed=1, storage="rosbag2/mcap"),
           "b": sim_bag(root / "b.bag", 1.2, seed=2, storage="ros1", compression="lz4"),
           "c": sim_bag(root / "c", 1.0, seed=3, storage="rosbag2/sqlite3")}
    corrupt = sim_bag(root / "corrupt", 1.2, seed=4, storage="rosbag2/mcap", compression="storage")
    data = next(corrupt.glob("*.mcap"))
    raw = bytearray(data.read_bytes())
    raw[len(raw) // 2:len(raw) // 2 + 4096] = bytes(4096)      # a zeroed block in a zstd chunk
    data.write_bytes(bytes(raw))
    out["corrupt"] = corrupt
    truncated = root / "truncated.bag"
    whole = out["b"].read_bytes()
    truncated.write_bytes(whole[:len(whole) // 2])
    out["truncated"] = truncated
    out["a_copy"] = copy_bag(out["a"], root / "a_copy")     # the same bag twice in one run is refused
    return out


def copy_bag(bag: Path, to: Path) -> Path:
    (shutil.copytree if bag.is_dir() else shutil.copyfile)(bag, to)
    return to


@pytest.fixture(scope="module")
def serial(tmp_path_factory, bags) -> Path:
    out = tmp_path_factory.mktemp("serial")
    convert([bags["a"], bags["b"], bags["c"], bags["a_copy"]], out)
    return out / "conv"


def assert_no_trace(out: Path) -> None:
    assert hidden_entries(out) == []                 # no work folder left
    assert hidden_entries(out / "conv") == []        # nothing staged in the task dir


def test_jobs_2_writes_the_same_files_as_a_serial_run(tmp_path, bags, serial):
    done = convert([bags["a"], bags["b"], bags["c"], bags["a_copy"]], tmp_path, "--jobs", "2")
    assert [line.split(" from ")[0] for line in done.stdout.splitlines() if line.startswith("episode ")] == \
        ["episode 1: 45 rows", "episode 2: 36 rows", "episode 3: 30 rows", "episode 4: 45 rows"]
    assert task_files(tmp_path / "conv") == task_files(serial)           # parquet and metadata, byte for byte
    assert_same_videos(tmp_path / "conv", serial)
    assert_no_trace(tmp_path)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_corrupt_bag_with_keep_going_leaves_no_trace_and_is_summarised(tmp_path, bags, serial, jobs):
    done = convert([bags["a"], bags["corrupt"], bags["truncated"], bags["c"]], tmp_path, "--keep-going",
                   "--jobs", jobs, expect=3)
    task = tmp_path / "conv"
    assert_no_trace(tmp_path)
    assert validate_task(task) == []
    # the good bags are episodes 1 and 2 (the failures' numbers went to the next ones)
    assert data_table(task, 1).equals(data_table(serial, 1))
    assert data_table(task, 2).drop_columns("episode_index").equals(data_table(serial, 3).drop_columns("episode_index"))
    assert not (task / "data/chunk-000/episode-002.parquet").exists()
    failures = done.stderr.split("failure(s):")[1]
    # nothing but progress lines (every 10 s when stderr is not a terminal) before the failures
    assert [line for line in done.stderr.splitlines() if not line.startswith("converting ")][0] == "2 failure(s):"
    assert f"{bags['corrupt']}: reading failed after /" in failures and "at bag time" in failures
    assert "Data corruption" in failures and "mcap recover" in failures
    assert f"{bags['truncated']}: cannot open this ros1 bag" in failures and "rosbag reindex" in failures


def test_corrupt_bag_stops_the_run_after_the_episodes_before_it(tmp_path, bags, serial):
    done = convert([bags["a"], bags["corrupt"], bags["c"]], tmp_path, expect=1)
    assert "stopped: an episode failed" in done.stderr
    assert data_table(tmp_path / "conv", 1).equals(data_table(serial, 1))
    assert sorted(p.name for p in (tmp_path / "conv/data/chunk-000").iterdir()) == ["episode-000.parquet"]
    assert_no_trace(tmp_path)


def test_a_bag_that_cannot_be_planned_stops_before_any_work(tmp_path, bags):
    done = convert([bags["a"], bags["truncated"]], tmp_path, expect=1)
    assert "nothing was converted" in done.stderr and "truncated.bag" in done.stderr
    assert not (tmp_path / "conv").exists() and hidden_entries(tmp_path) == []


def test_ctrl_c_leaves_only_complete_episodes(tmp_path, tmp_path_factory, bags):
    """SIGINT while workers are converting: the run stops, staged work is removed."""
    copies = tmp_path_factory.mktemp("copies")
    bag_list = [copy_bag(bags[k], copies / f"{i}_{bags[k].name}") for i in range(3) for k in "abc"]
    command = [sys.executable, "-m", "egorec_ros.cli", "convert", *map(str, bag_list), *RIG_ARGS,
               "--task", "conv", "--out", str(tmp_path), "--jobs", "2"]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    staging = f"{PREFIX}*/job-*/attempt-*/.staging-episode-*"       # episode_job._attempt_dir
    while not list(tmp_path.glob(staging)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list(tmp_path.glob(staging)), "no staged episode seen: where do workers stage now?"
    time.sleep(0.5)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=120)
    assert child.returncode == 130, err
    assert "interrupted" in err
    assert hidden_entries(tmp_path) == []
    task = tmp_path / "conv"
    if task.exists():                          # episodes committed before the interrupt are complete
        assert hidden_entries(task) == []
        assert validate_task(task) == []


def test_work_folders_of_killed_runs_are_removed_and_live_ones_kept(tmp_path):
    dead = tmp_path / f"{PREFIX}999-dead"
    (dead / "job-000000").mkdir(parents=True)
    (dead / "lock").touch()
    with WorkDir(tmp_path) as live:
        assert not dead.exists()
        assert remove_stale(tmp_path) == [] and live.path.is_dir()
        check_shared(*live.probe)
    assert hidden_entries(tmp_path) == []


def test_a_worker_that_cannot_see_the_output_folder_says_so(tmp_path):
    with pytest.raises(SharedFilesystemError, match="must be on a filesystem shared by the driver and every worker"):
        check_shared(str(tmp_path / "elsewhere" / "probe"), "token")
    assert os.listdir(tmp_path) == []
