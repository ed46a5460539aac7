"""A bag farm on a real multi-node Ray cluster on this machine: a head without CPUs and two
1-CPU worker nodes (separate raylets, ``ray.cluster_utils.Cluster``), all on loopback.

The farm (12 generated bags, from a --from-list file and a glob) converts to the files of a
serial run (parquet byte for byte, video frame for frame) with both worker nodes doing work;
so it does when a worker node is killed mid-run, and when the driver is interrupted and the
command run again (only the missing bag windows are converted; no episode twice).
One cluster for the module (starting Ray is the expensive part on a shared 2-core machine)."""
from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from helpers.cli import EGOREC, egorec
from helpers.convert import RIG_ARGS, assert_same_videos, convert, hidden_entries, sim_bag, task_files
from helpers.export_files import dataset_files
from egorec_ros.export.lerobot.export import export_lerobot
from egorec_ros.layout.paths import TaskPaths
from egorec_ros.schema.episode_row import read_episode_row

ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'egorec_ros[ray]')")
cluster_utils = pytest.importorskip("ray.cluster_utils")

pytestmark = pytest.mark.slow
LOOPBACK = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
BAGS = 12
WAIT_S = 240.0
# fewer Ray processes a node on a shared 2-core machine: no log monitor (the CLI does not print
# workers' logs) and, on the head, no autoscaler monitor (nothing to scale)
LEAN = {"include_log_monitor": False}


@pytest.fixture(scope="module")
def farm(tmp_path_factory) -> tuple[Path, list[str]]:
    """12 small bags of three storage formats; a list file naming 8 of them (with a comment and
    a blank line) and a glob for the other 4; and the task a serial run makes of them."""
    root = tmp_path_factory.mktemp("farm")
    storages = ["rosbag2/mcap", "ros1", "rosbag2/sqlite3"]
    for i in range(BAGS):
        folder = root / ("listed" if i < 8 else "globbed")
        name = f"bag{i:02d}" + (".bag" if storages[i % 3] == "ros1" else "")
        sim_bag(folder / name, 0.3 + 0.05 * (i % 4), seed=i, storage=storages[i % 3])
    listing = root / "farm.txt"
    listing.write_text("# the first 8 bags\n\n" + "".join(f"listed/{p.name}\n" for p in
                                                         sorted((root / "listed").iterdir())))
    args = [str(root / "globbed" / "bag*"), "--from-list", str(listing)]     # bags of arguments come first
    convert([], root / "serial", *args)
    return root, args


@pytest.fixture(scope="module")
def cluster():
    saved = {k: os.environ.get(k) for k in LOOPBACK}
    os.environ.update(LOOPBACK)
    try:
        c = cluster_utils.Cluster(initialize_head=True, head_node_args={
            "num_cpus": 0, "node_ip_address": "127.0.0.1", "include_dashboard": False, **LEAN,
            "no_monitor": True, "_system_config": {"health_check_period_ms": 500,
                                                   "health_check_failure_threshold": 4}})
    except Exception as exc:
        _restore(saved)
        pytest.skip(f"Ray cannot start a cluster on this machine: {type(exc).__name__}: {exc}")
    try:
        workers = [c.add_node(num_cpus=1, node_ip_address="127.0.0.1", **LEAN) for _ in range(2)]
        c.wait_for_nodes()
        yield c, workers
    finally:
        c.shutdown()
        _restore(saved)


def _restore(saved: dict[str, str | None]) -> None:
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def _same_as_serial(root: Path, out: Path) -> None:
    assert task_files(out / "conv") == task_files(root / "serial" / "conv")
    assert_same_videos(out / "conv", root / "serial" / "conv")
    assert hidden_entries(out) == [] and hidden_entries(out / "conv") == []


def _node_work(farm_line: str) -> dict[str, tuple[int, int]]:
    """'nodes: 127.0.0.1/ab12cd34 5 bags 6 episodes 90 rows, ...' -> {node id prefix: (bags, episodes)}"""
    nodes = farm_line.split("; nodes: ", 1)[1].split(", ")
    return {n.split()[0].split("/")[1]: (int(n.split()[1]), int(n.split()[-4])) for n in nodes}


def _farm_line(stdout: str) -> str:
    return [line for line in stdout.splitlines() if line.startswith("farm: ")][-1]


def test_farm_on_two_nodes_equals_a_serial_run_and_a_rerun_adds_nothing(tmp_path, farm, cluster):
    root, args = farm
    c, workers = cluster
    done = convert([], tmp_path, *args, "--ray", c.address)
    line = _farm_line(done.stdout)
    assert f"farm: {BAGS} bags done, 0 failed, 0 left" in line
    worked = _node_work(line)         # each node credited with the bags it converted (none split here)
    assert set(worked) == {w.node_id[:8] for w in workers} and all(e for _, e in worked.values()), line
    assert sum(b for b, _ in worked.values()) == BAGS and "split" not in line, line
    _same_as_serial(root, tmp_path)
    paths = TaskPaths(tmp_path / "conv")
    source = read_episode_row(paths.episode_row(paths.number(1)))["source"]
    assert source["bag"] == str(root / "globbed" / "bag08") and source["hash"].startswith("blake2b-128:")
    assert "clean" in egorec("validate", tmp_path / "conv", timeout=120).stdout

    # the farm's task exported on the cluster: the shards of a serial export, byte for byte
    serial_shards, ray_shards = tmp_path / "shards-serial", tmp_path / "shards-ray"
    for out, mode in ((serial_shards, ["--jobs", "1"]), (ray_shards, ["--ray", c.address])):
        done = egorec("export", "egosmith", tmp_path / "conv", "--out", out, *mode, "--dataset-name", "farm",
                      timeout=WAIT_S)
        assert done.returncode == 0, done.stdout + done.stderr
    names = sorted(p.name for p in serial_shards.iterdir())
    assert names and names == sorted(p.name for p in ray_shards.iterdir())
    assert all((serial_shards / n).read_bytes() == (ray_shards / n).read_bytes() for n in names)

    again = convert([], tmp_path, *args, "--ray", c.address)
    assert f"farm: 0 bags done, 0 failed, 0 left, {BAGS} already converted" in _farm_line(again.stdout)
    assert task_files(tmp_path / "conv") == task_files(root / "serial" / "conv")


def test_a_lerobot_export_on_two_nodes_equals_a_serial_export(tmp_path, farm, cluster):
    """Workers on both nodes write their episodes' videos and parts on the shared disk; the
    driver assembles them in order: every file of the serial export, byte for byte (videos
    copied, so frame for frame too)."""
    root, _ = farm
    c, workers = cluster
    task, serial, on_ray = root / "serial" / "conv", tmp_path / "serial", tmp_path / "ray"
    export_lerobot(task, serial)
    done = egorec("export", "lerobot", task, "--out", on_ray, "--ray", c.address, "--json", timeout=WAIT_S)
    assert done.returncode == 0, done.stdout + done.stderr
    nodes = json.loads(done.stdout)["nodes"]
    assert {n.split("/")[1] for n in nodes} == {w.node_id[:8] for w in workers}, nodes
    assert sum(nodes.values()) == BAGS and all(nodes.values())
    files = dataset_files(serial)
    assert any(n.startswith("videos/") for n in files) and any(n.startswith("data/") for n in files)
    assert dataset_files(on_ray) == files
    assert hidden_entries(tmp_path) == []


class _Lines:
    """The lines of a child's stdout as they come (a thread reads them: no blocking read here)."""

    def __init__(self, process: subprocess.Popen) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        self.text: list[str] = []
        threading.Thread(target=self._read, args=(process.stdout,), daemon=True).start()

    def _read(self, stream) -> None:
        for line in stream:
            self.lines.put(line)

    def until_episode(self, number: int, timeout: float = WAIT_S) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                break
            self.text.append(line)
            if line.startswith(f"episode {number}:"):
                return
        raise AssertionError(f"episode {number} not committed within {timeout:.0f} s:\n{''.join(self.text)}")


def _start(out: Path, args: list[str], address: str) -> tuple[subprocess.Popen, _Lines]:
    p = subprocess.Popen([*EGOREC, "convert", *args, *RIG_ARGS, "--task", "conv", "--out", str(out),
                          "--ray", address], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p, _Lines(p)


def test_an_interrupted_driver_run_again_converts_only_what_is_missing(tmp_path, farm, cluster):
    root, args = farm
    c, _ = cluster
    p, lines = _start(tmp_path, args, c.address)
    try:
        lines.until_episode(3)
        p.send_signal(signal.SIGINT)
        assert p.wait(timeout=WAIT_S) != 0
    finally:
        p.kill()
        p.wait(timeout=30)
    committed = len(TaskPaths(tmp_path / "conv").list_episodes())
    assert 3 <= committed < BAGS
    again = convert([], tmp_path, *args, "--ray", c.address)
    line = _farm_line(again.stdout)
    assert f"farm: {BAGS - committed} bags done, 0 failed, 0 left, {committed} already converted" in line, line
    _same_as_serial(root, tmp_path)


def test_a_node_that_cannot_see_a_path_is_named_in_one_line(tmp_path, cluster):
    c, _ = cluster
    code = ("import sys; from egorec_ros.cluster.session import RaySession, check_paths_visible\n"
            "from egorec_ros.cluster.errors import ClusterError\n"
            f"s = RaySession({c.address!r})\n"
            "try:\n"
            f"    s.on_every_node(check_paths_visible, {str(tmp_path / 'absent')!r}, what='the bags')\n"
            "except ClusterError as e:\n"
            "    print(e)\n"
            "s.close()\n")
    done = subprocess.run([EGOREC[0], "-c", code], capture_output=True, text=True, timeout=WAIT_S)
    out = done.stdout.strip()
    assert len(out.splitlines()) == 1 and out.startswith("node 127.0.0.1/"), done.stdout + done.stderr
    assert f"cannot see {tmp_path / 'absent'}" in out


def test_a_worker_node_killed_mid_run_loses_nothing(tmp_path, farm, cluster):
    root, args = farm
    c, workers = cluster
    p, lines = _start(tmp_path, args, c.address)
    try:
        lines.until_episode(2)
        c.remove_node(workers[0], allow_graceful=False)     # its raylet and workers die mid-bag
        assert p.wait(timeout=WAIT_S) == 0, p.stderr.read() if p.stderr else ""
    finally:        # the module's last test: the cluster is not given its node back (slow to start)
        p.kill()
        p.wait(timeout=30)
    _same_as_serial(root, tmp_path)
