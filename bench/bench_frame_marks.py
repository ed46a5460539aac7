"""Cost of keeping frame_marks (where each camera's rows were repeated or late) in the assembler.

    .venv/bin/python bench/bench_frame_marks.py [--seconds 600] [--repeats 3]

The worst case that is also a real one: a ``uvc_pair`` rig whose second camera delivers 15 fps in
a 30 fps rig, so every other row of it is repeated (one run a mark) for the whole episode. Its
samples (``bench_record.pooled_samples``, default flaws) are replayed through the assembler into an
output that drops the rows, three ways, best of ``--repeats``:

* baseline: marks switched off (``RowRuns.add`` a no-op, no checkpoint);
* marks kept (what every row now pays);
* marks kept and the row's ``frame_marks`` built at every checkpoint (every 60 rows, as the writer's
  accounting does for a salvage; each one caps the runs so far to 100 ranges).

Printed: milliseconds per row of each and the ratios to the baseline, and the cost of the last
checkpoint (the biggest: every run of the episode so far).
"""
from __future__ import annotations

import argparse
import time
from typing import Any

from bench_record import pooled_samples
from egorec_ros.assembly.assembler import Assembler
from egorec_ros.assembly.sample import Sample
from egorec_ros.qa import frame_marks
from egorec_ros.rig.load import load_rig
from egorec_ros.rig.model import Rig
from egorec_ros.sim.replay import DEFAULT_START_NS

CHECKPOINT_ROWS = 60


class Rows:
    """Drops the rows; calls ``checkpoint`` every CHECKPOINT_ROWS rows (when set)."""

    def __init__(self) -> None:
        self.rows = 0
        self.checkpoint: Any = None

    def begin(self, video_keys: list[str]) -> None:
        pass

    def row(self, values: dict[str, Any], frames: dict[str, Any]) -> None:
        self.rows += 1
        if self.checkpoint is not None and self.rows % CHECKPOINT_ROWS == 0:
            self.checkpoint()


def assemble(rig: Rig, samples: list[Sample], stop_ns: int, checkpoints: bool) -> tuple[float, int, dict]:
    """(seconds, rows, frame_marks) for one replay of ``samples``."""
    out = Rows()
    assembler = Assembler(rig, out, start_ns=DEFAULT_START_NS)
    if checkpoints:
        out.checkpoint = assembler.frame_marks
    t = time.perf_counter()
    for s in samples:
        if s.arrival_ns > stop_ns + assembler.latency_ns:
            break
        assembler.push(s)
    report = assembler.finish(stop_ns)
    return time.perf_counter() - t, report.rows, report.frame_marks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rig = load_rig("uvc_pair")
    samples, kept = [], 0
    for s in pooled_samples(rig, args.seconds):
        if s.stream == "cam1.rgb":
            kept += 1
            if kept % 2:
                continue                    # a 15 fps camera
        samples.append(s)
    stop = DEFAULT_START_NS + int(args.seconds * 1e9)
    add = frame_marks.RowRuns.add
    try:
        frame_marks.RowRuns.add = lambda self, row: None    # type: ignore[method-assign]
        base = min(assemble(rig, samples, stop, False)[0] for _ in range(args.repeats))
    finally:
        frame_marks.RowRuns.add = add                       # type: ignore[method-assign]
    kept_s, rows, marks = min(assemble(rig, samples, stop, False) for _ in range(args.repeats))
    with_checkpoints = min(assemble(rig, samples, stop, True)[0] for _ in range(args.repeats))
    cam1 = marks["streams"]["cam1.rgb"]["repeated"]
    assembler = Assembler(rig, Rows(), start_ns=DEFAULT_START_NS)
    for s in samples:
        assembler.push(s)
    t = time.perf_counter()
    assembler.frame_marks()
    last = time.perf_counter() - t
    print(f"## frame_marks cost: uvc_pair, cam1 at 15 fps in a 30 fps rig, {args.seconds:g} s, {rows} rows, "
          f"cam1 repeated {cam1['rows']} rows in {cam1.get('merged_from', len(cam1['ranges']))} runs "
          f"(stored as {len(cam1['ranges'])} ranges), best of {args.repeats}")
    print(f"{'':28} {'ms/row':>7} {'ratio':>6}")
    for name, took in (("baseline (marks off)", base), ("marks kept", kept_s),
                       (f"+ checkpoint every {CHECKPOINT_ROWS} rows", with_checkpoints)):
        print(f"{name:28} {took / rows * 1e3:7.4f} {took / base:6.3f}x")
    print(f"last checkpoint (every run so far): {last * 1e3:.2f} ms, {last * rig.fps / CHECKPOINT_ROWS:.2%} of "
          f"the {CHECKPOINT_ROWS / rig.fps:g} s between checkpoints")


if __name__ == "__main__":
    main()
