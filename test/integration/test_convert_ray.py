"""`--ray` (a local Ray instance, as in CI) gives the dataset of a serial run: the same
numbering, parquet and metadata byte for byte, the same video frames."""
from __future__ import annotations

import pytest

from helpers.convert import assert_same_videos, convert, hidden_entries, sim_bag, task_files

ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'egorec_ros[ray]')")


@pytest.fixture(scope="module")
def ray_starts() -> None:
    """Skip (saying why) only when Ray itself cannot start a local instance here."""
    try:
        ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False, configure_logging=False)
    except Exception as exc:
        pytest.skip(f"Ray cannot start a local instance on this machine: {type(exc).__name__}: {exc}")
    finally:
        if ray.is_initialized():
            ray.shutdown()


@pytest.mark.slow
def test_ray_writes_the_same_files_as_a_serial_run(tmp_path, ray_starts):
    folder = tmp_path / "bags"
    bags = [sim_bag(folder / "a", 1.2, seed=1), sim_bag(folder / "b.bag", 1.0, seed=2, storage="ros1"),
            sim_bag(folder / "c", 1.5, seed=3, storage="rosbag2/sqlite3")]
    convert(bags, tmp_path / "serial", "--gap", "0.5")
    done = convert(bags, tmp_path / "ray", "--gap", "0.5", "--ray")
    assert [line.split(" from ")[0] for line in done.stdout.splitlines() if line.startswith("episode ")] == \
        ["episode 1: 36 rows", "episode 2: 30 rows", "episode 3: 45 rows"]
    assert task_files(tmp_path / "ray" / "conv") == task_files(tmp_path / "serial" / "conv")
    assert_same_videos(tmp_path / "ray" / "conv", tmp_path / "serial" / "conv")
    assert hidden_entries(tmp_path / "ray") == [] and hidden_entries(tmp_path / "ray" / "conv") == []
