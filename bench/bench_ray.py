"""`egorec convert --ray` on a real multi-node Ray cluster on this machine, against `--jobs`.

    .venv/bin/python bench/bench_ray.py [--bags N] [--seconds S]

Setup (not timed): N simulated Appendix B bags (320x240, S seconds each, rosbag2 mcap) and a
Ray cluster of a head without CPUs and worker nodes of 1 CPU each, all on loopback
(``ray.cluster_utils.Cluster``, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0).

Timed, each the real CLI in a child process, into a fresh output root:
  jobs1   --jobs 1 (serial: the baseline)        jobs2   --jobs 2
  ray1    --ray ADDRESS with 1 worker node        ray2    --ray ADDRESS with 2 worker nodes
  join    --ray ADDRESS with 1 bag: what joining the cluster and the per-node checks cost a run

Printed: wall seconds, ratios against jobs1 / jobs2, per-bag overhead of Ray
((ray1 - join - jobs1) / N, a 1-CPU node against one local process), and per bag the CPU
seconds (the serial run's children) and bytes read / written, the figures of the cost model in
the notes. The machine is shared: `uptime` load is printed with the figures.
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


def _run(bags: list[Path], out: Path, *extra: str) -> tuple[float, float]:
    """(wall s, CPU s of the child and its children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    done = subprocess.run([*EGOREC, "convert", *map(str, bags), *RIG_ARGS, "--task", "b", "--out", str(out), *extra],
                          capture_output=True, text=True, timeout=1800)
    wall = time.monotonic() - t0
    if done.returncode != 0:
        sys.exit(f"convert {' '.join(extra)} failed:\n{done.stdout}\n{done.stderr}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else path.stat().st_size


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bags", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=2.0)
    args = ap.parse_args()
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    from ray.cluster_utils import Cluster

    with tempfile.TemporaryDirectory(prefix="bench_ray_") as tmp:
        root = Path(tmp)
        bags = [sim_bag(root / "bags" / f"b{i:03d}", args.seconds, seed=i) for i in range(args.bags)]
        print(f"{args.bags} bags of {args.seconds:g} s, {sum(map(_size, bags)) / len(bags) / 1e6:.2f} MB each; "
              f"load {_load()}", flush=True)
        figures: dict[str, tuple[float, float]] = {}
        figures["jobs1"] = _run(bags, root / "jobs1")
        figures["jobs2"] = _run(bags, root / "jobs2", "--jobs", "2")
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "node_ip_address": "127.0.0.1",
                                                               "include_dashboard": False})
        try:
            cluster.add_node(num_cpus=1, node_ip_address="127.0.0.1")
            cluster.wait_for_nodes()
            figures["join"] = _run(bags[:1], root / "join", "--ray", cluster.address)
            figures["ray1"] = _run(bags, root / "ray1", "--ray", cluster.address)
            cluster.add_node(num_cpus=1, node_ip_address="127.0.0.1")
            cluster.wait_for_nodes()
            figures["ray2"] = _run(bags, root / "ray2", "--ray", cluster.address)
        finally:
            cluster.shutdown()
        written = _size(root / "jobs1")
        n = args.bags
        for name, (wall, cpu) in figures.items():
            print(f"{name:6s} wall {wall:7.1f} s  driver-side CPU {cpu:7.1f} s")
        j1, j2, r1, r2, join = (figures[k][0] for k in ("jobs1", "jobs2", "ray1", "ray2", "join"))
        print(f"ray1 / jobs1 {r1 / j1:.2f}   ray2 / jobs2 {r2 / j2:.2f}   ray2 / ray1 {r2 / r1:.2f}   "
              f"jobs2 / jobs1 {j2 / j1:.2f}")
        print(f"per-bag overhead of Ray (1 node vs 1 process): {(r1 - join - j1) / n:+.2f} s a bag; "
              f"joining the cluster: {join - j1 / n:.1f} s a run")
        print(f"per bag: serial wall {j1 / n:.2f} s, CPU {figures['jobs1'][1] / n:.2f} s, "
              f"read {sum(map(_size, bags)) / n / 1e6:.2f} MB, written {written / n / 1e6:.2f} MB; load {_load()}")


if __name__ == "__main__":
    main()
