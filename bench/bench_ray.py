"""`egorec convert --ray` and `egorec export egosmith|lerobot --ray` on a real multi-node Ray
cluster on this machine, against `--jobs`.

    .venv/bin/python bench/bench_ray.py [--bags N] [--seconds S]

Setup (not timed): N simulated Appendix B bags (320x240, S seconds each, rosbag2 mcap) and a
Ray cluster of a head without CPUs and worker nodes of 1 CPU each, all on loopback
(``ray.cluster_utils.Cluster``, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0).

Timed, each the real CLI in a child process, into a fresh output, for each command (convert
the bags; export egosmith and export lerobot of the task the serial convert made):
  jobs1   --jobs 1 (serial: the baseline)        jobs2   --jobs 2
  ray1    --ray ADDRESS with 1 worker node        ray2    --ray ADDRESS with 2 worker nodes
  join    --ray ADDRESS with 1 bag / a 1-episode task: what joining the cluster and the
          per-node checks cost a run

Printed per command: wall seconds, ratios against jobs1 / jobs2, per-item overhead of Ray
((ray1 - join - jobs1) / N, a 1-CPU node against one local process), the fixed cost of a run
(join - jobs1 / N), and for convert per bag the CPU seconds (the serial run's children) and
bytes read / written, the figures of the cost model in the notes. The machine is shared:
`uptime` load is printed with the figures.
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test"))

from helpers.convert import RIG_ARGS, sim_bag  # noqa: E402

EGOREC = [sys.executable, "-m", "egorec_ros.cli"]


def _run(argv: list[str], what: str) -> tuple[float, float]:
    """(wall s, CPU s of the child and its children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    done = subprocess.run([*EGOREC, *argv], capture_output=True, text=True, timeout=1800)
    wall = time.monotonic() - t0
    if done.returncode != 0:
        sys.exit(f"{what} failed:\n{done.stdout}\n{done.stderr}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _convert(bags: list[Path], out: Path, *extra: str) -> tuple[float, float]:
    return _run(["convert", *map(str, bags), *RIG_ARGS, "--task", "b", "--out", str(out), *extra],
                f"convert {' '.join(extra)}")


def _export(kind: str, task: Path, out: Path, *extra: str) -> tuple[float, float]:
    args = ["--dataset-name", "bench"] if kind == "egosmith" else []
    return _run(["export", kind, str(task), "--out", str(out), *args, *extra], f"export {kind} {' '.join(extra)}")


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else path.stat().st_size


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


KINDS = ("convert", "egosmith", "lerobot")


def _modes(kind: str, root: Path, bags: list[Path], mode: str, *extra: str) -> tuple[float, float]:
    """One timed run of ``kind`` in ``mode`` (jobs1, jobs2, join, ray1, ray2)."""
    out = root / f"{kind}-{mode}"
    if kind == "convert":
        return _convert(bags[:1] if mode == "join" else bags, out, *extra)
    task = root / ("convert-join" if mode == "join" else "convert-jobs1") / "b"   # 1 episode / all of them
    return _export(kind, task, out, *extra)


def _report(kind: str, figures: dict[str, tuple[float, float]], n: int, unit: str) -> None:
    for name, (wall, cpu) in figures.items():
        print(f"{kind:8s} {name:6s} wall {wall:7.1f} s  driver-side CPU {cpu:7.1f} s")
    j1, j2, r1, r2, join = (figures[k][0] for k in ("jobs1", "jobs2", "ray1", "ray2", "join"))
    print(f"{kind:8s} ray1 / jobs1 {r1 / j1:.2f}   ray2 / jobs2 {r2 / j2:.2f}   ray2 / ray1 {r2 / r1:.2f}   "
          f"jobs2 / jobs1 {j2 / j1:.2f}")
    print(f"{kind:8s} per-{unit} overhead of Ray (1 node vs 1 process): {(r1 - join - j1) / n:+.2f} s per {unit} "
          f"(serial {j1 / n:.2f} s per {unit}); joining the cluster: {join - j1 / n:.1f} s a run")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bags", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=2.0)
    args = ap.parse_args()
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    from ray.cluster_utils import Cluster

    lean = {"include_log_monitor": False}
    with tempfile.TemporaryDirectory(prefix="bench_ray_") as tmp:
        root = Path(tmp)
        bags = [sim_bag(root / "bags" / f"b{i:03d}", args.seconds, seed=i) for i in range(args.bags)]
        print(f"{args.bags} bags of {args.seconds:g} s, {sum(map(_size, bags)) / len(bags) / 1e6:.2f} MB each; "
              f"load {_load()}", flush=True)
        figures: dict[str, dict[str, tuple[float, float]]] = {k: {} for k in KINDS}
        for kind in KINDS:                  # the exports read what convert jobs1 made
            for mode, extra in (("jobs1", ()), ("jobs2", ("--jobs", "2"))):
                figures[kind][mode] = _modes(kind, root, bags, mode, *extra)
        print(f"local runs done; load {_load()}", flush=True)
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "node_ip_address": "127.0.0.1",
                                                               "include_dashboard": False, "no_monitor": True,
                                                               **lean})
        try:
            cluster.add_node(num_cpus=1, node_ip_address="127.0.0.1", **lean)
            cluster.wait_for_nodes()
            for mode in ("join", "ray1"):
                for kind in KINDS:
                    figures[kind][mode] = _modes(kind, root, bags, mode, "--ray", cluster.address)
            cluster.add_node(num_cpus=1, node_ip_address="127.0.0.1", **lean)
            cluster.wait_for_nodes()
            for kind in KINDS:
                figures[kind]["ray2"] = _modes(kind, root, bags, "ray2", "--ray", cluster.address)
        finally:
            cluster.shutdown()
        n = args.bags
        episodes = len(list((root / "convert-jobs1" / "b").rglob("data/*/*.parquet")))
        for kind in KINDS:
            _report(kind, figures[kind], n if kind == "convert" else episodes, "bag" if kind == "convert" else "episode")
        written = _size(root / "convert-jobs1")
        print(f"per bag: serial wall {figures['convert']['jobs1'][0] / n:.2f} s, CPU "
              f"{figures['convert']['jobs1'][1] / n:.2f} s, read {sum(map(_size, bags)) / n / 1e6:.2f} MB, written "
              f"{written / n / 1e6:.2f} MB; {episodes} episodes; load {_load()}")
        for kind in ("egosmith", "lerobot"):
            print(f"{kind} export per episode: serial CPU {figures[kind]['jobs1'][1] / episodes:.2f} s, written "
                  f"{_size(root / f'{kind}-jobs1') / episodes / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
