"""Shared by bench_preview and bench_console: a recorder + simulated devices recording one long
episode, measured in alternating windows (A B A B ...) so a shared machine's load drifts into both
alike, with the CPU of every process that takes part (recorder, devices, console, each chromium's
browser / GPU / renderer / utility processes) from /proc: CPU seconds per wall second, which on a
busy machine say more than wall times do. A window where the recorder built fewer rows than the
rig's frame rate did not keep real time and is flagged so."""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test"))     # helpers/, as pytest has them

from helpers.dds_recorder import RunningRecorder, dds_env_for, running_recorder  # noqa: E402

from egorec_ros.live.node import START, STOP  # noqa: E402
from egorec_ros.messages.typestores import ros2_typestore  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")
REAL_TIME = 0.95          # rows/s below this share of the rig's fps: the window did not keep real time


def ab_args(doc: str, window: float) -> argparse.Namespace:
    """--rig, --size, --window, --rounds: what every A/B bench takes."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--rig", default="appendix_b")
    ap.add_argument("--size", default="640x480")
    ap.add_argument("--window", type=float, default=window, help="seconds per measuring window")
    ap.add_argument("--rounds", type=int, default=2, help="A/B pairs")
    return ap.parse_args()


def load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def cpu_seconds(pid: int) -> float:
    """user + sys CPU seconds of process ``pid`` (all its threads); 0 once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK


def machine_busy() -> float:
    """CPU seconds all cores spent busy since boot (everyone's, not only ours)."""
    parts = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = parts[3] + (parts[4] if len(parts) > 4 else 0)
    return (sum(parts[:8]) - idle) / TICK


def descendants(pid: int) -> list[int]:
    """``pid`` and every process below it (chromedriver -> chromium -> zygotes -> renderers)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (FileNotFoundError, ProcessLookupError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children.get(p, [])
    return out


def chromium_role(pid: int) -> str:
    """browser / gpu / renderer / network / storage / zygote / chromedriver, from the command line
    (chromium rewrites its children's as one space-separated string: searched as text)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except (FileNotFoundError, ProcessLookupError):
        return "gone"
    if "chromedriver" in Path(cmdline.split(" ", 1)[0]).name:
        return "chromedriver"
    kind = re.search(r"--type=(\S+)", cmdline)
    if kind is None:
        return "browser"
    if kind.group(1) == "utility":
        sub = re.search(r"--utility-sub-type=(\w+)", cmdline)
        return sub.group(1) if sub else "utility"
    return {"gpu-process": "gpu"}.get(kind.group(1), kind.group(1))


@dataclass
class Processes:
    """Who to measure: fixed pids by label, and process trees (a chromedriver) whose members are
    found at each reading and labelled ``<tree> <role>``."""
    fixed: dict[str, int] = field(default_factory=dict)
    trees: dict[str, int] = field(default_factory=dict)

    def read(self) -> dict[tuple[str, int], float]:
        out = {(label, pid): cpu_seconds(pid) for label, pid in self.fixed.items()}
        for label, root in self.trees.items():
            for pid in descendants(root):
                out[(f"{label} {chromium_role(pid)}", pid)] = cpu_seconds(pid)
        return out


@dataclass
class Window:
    """One measuring window: CPU s/s per label, the recorder's rows/s, the machine's busy cores."""
    cpu: dict[str, float]
    rows_per_s: float
    machine: float
    fps: float

    @property
    def recorder(self) -> float:
        return self.cpu.get("recorder", 0.0)

    @property
    def real_time(self) -> bool:
        return self.rows_per_s >= REAL_TIME * self.fps

    def line(self) -> str:
        """rows/s (flagged when not real time) and the per-process CPU, biggest first."""
        rt = "real time" if self.real_time else \
            f"NOT REAL TIME: {self.rows_per_s / self.fps:.0%} of {self.fps:g} rows/s"
        trees: dict[str, float] = {}
        for label, v in self.cpu.items():
            if " " in label:              # "<tree> <role>": also summed per tree
                trees[label.split(" ")[0]] = trees.get(label.split(" ")[0], 0.0) + v
        parts = ", ".join(f"{k} {v:.3f}" for k, v in sorted(self.cpu.items(), key=lambda kv: -kv[1]) if v >= 0.005)
        sums = ", ".join(f"{k} {v:.3f}" for k, v in trees.items())
        return (f"{self.rows_per_s:.1f} rows/s ({rt}); CPU s/s: {parts}" + (f" (per tree: {sums})" if sums else "")
                + f"; ours {sum(self.cpu.values()):.2f}, whole machine {self.machine:.2f} of {os.cpu_count()} cores")


def measure(rec: RunningRecorder, seconds: float, procs: Processes, fps: float) -> Window:
    """CPU s/s of every process in ``procs`` (plus the recorder) over ``seconds``, and the rows the
    recorder built per second (``fps`` in real time). On a starved machine the recorder gets fewer
    frames and builds fewer rows: CPU per row is the figure that compares fairly then."""
    fixed = {"recorder": rec.procs["recorder"].pid, **procs.fixed}
    procs = Processes(fixed, procs.trees)
    r0 = rec.watch.status.rows if rec.watch.status is not None else 0
    c0, m0, t0 = procs.read(), machine_busy(), time.monotonic()
    time.sleep(seconds)
    c1, m1, t1 = procs.read(), machine_busy(), time.monotonic()
    r1 = rec.watch.status.rows if rec.watch.status is not None else 0
    wall = t1 - t0
    cpu: dict[str, float] = {}
    for (label, pid), v in c1.items():
        cpu[label] = cpu.get(label, 0.0) + (v - c0.get((label, pid), 0.0)) / wall
    return Window(cpu, max(0, r1 - r0) / seconds, (m1 - m0) / wall, fps)


def start_episode(rec: RunningRecorder, instruction: str) -> None:
    store = ros2_typestore()
    req = store.serialize_cdr(store.types[f"{START}_Request"](task="", instruction=instruction), f"{START}_Request")
    rec.transport.call(f"/{rec.name}/start", START, bytes(req), 30.0)


@contextmanager
def recording(rig: str, size: str, name: str, bench: str) -> Iterator[RunningRecorder]:
    """A recorder + simulated devices recording one long episode until the block ends, on a DDS
    domain of ``bench``'s own (test/helpers/dds_domains.py). The episode is aborted at the end: its
    commit (encoding a backlog on a busy machine) is not what is measured."""
    measured = False
    with tempfile.TemporaryDirectory(prefix="egorec-bench-") as tmp:
        try:
            with running_recorder(Path(tmp), dds_env_for(bench), rig=rig, size=size, name=name) as rec:
                start_episode(rec, "bench")
                time.sleep(2.0)                 # the encoders are up
                try:
                    yield rec
                    measured = True
                finally:
                    rec.call("abort", STOP, 120.0, structure_needs_at_least_one_member=0)
                    rec.watch.wait(lambda s: s.state == "idle", 120.0)
        except (subprocess.TimeoutExpired, AssertionError) as exc:
            if not measured:
                raise
            # a starved recorder can take minutes to drain its queues: not what is measured
            print(f"(the recorder did not end cleanly after the bench: {str(exc).splitlines()[0][:200]})")


def preview_topics(rec: RunningRecorder, timeout: float = 20.0) -> list[str]:
    head, end = f"/{rec.name}/preview/", time.monotonic() + timeout
    while time.monotonic() < end:
        found = [t for t in rec.transport.topics() if t.startswith(head)]
        if found:
            time.sleep(1.0)
            return sorted(t for t in rec.transport.topics() if t.startswith(head))
        time.sleep(0.2)
    raise SystemExit(f"no preview topic under {head} within {timeout} s: {rec.log_text()}")


def summary(what: str, without: list[Window], with_: list[Window]) -> str:
    """Mean recorder CPU s/s and CPU per row, without vs with, their ratios, and how many windows
    kept real time (a ratio from windows that did not is no proof of anything)."""
    a, b = (sum(w.recorder for w in x) / len(x) for x in (without, with_))
    ra, rb = (sum(w.rows_per_s for w in x) / len(x) for x in (without, with_))
    rt = [sum(w.real_time for w in x) for x in (without, with_)]
    if min(ra, rb) > 0:
        per_a, per_b = a / ra * 1e3, b / rb * 1e3
        per_row = f"{per_a:.2f} / {per_b:.2f} CPU ms (ratio {per_b / per_a:.3f}x; rows/s {ra:.1f} / {rb:.1f})"
    else:
        per_row = f"n/a (rows/s {ra:.1f} / {rb:.1f})"
    return (f"recorder CPU without / with {what}: {a:.3f} / {b:.3f} CPU s/s (ratio {b / max(a, 1e-9):.3f}x); per row "
            f"{per_row}; "
            f"windows in real time {rt[0]}/{len(without)} without, {rt[1]}/{len(with_)} with")


def mean_breakdown(windows: list[Window]) -> str:
    """Mean CPU s/s per process label over ``windows``, biggest first."""
    labels = sorted({k for w in windows for k in w.cpu})
    means = {k: sum(w.cpu.get(k, 0.0) for w in windows) / len(windows) for k in labels}
    return ", ".join(f"{k} {v:.3f}" for k, v in sorted(means.items(), key=lambda kv: -kv[1]) if v >= 0.005)
