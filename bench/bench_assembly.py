"""Cost of the tick assembler per row, encoding excluded.

    .venv/bin/python bench/bench_assembly.py [--seconds S] [--rigs appendix_b uvc_pair ...]

Each rig's samples are simulated once (``bench_record.pooled_samples``: default flaws,
pictures of the real sizes rendered once and cycled, force matrices cycled through 32
rendered ones per stream so the NaN check reads memory that is not in cache, as on a
recorder) and then pushed through the assembler in replay mode into an output that
drops the rows: what is timed is intake checks, queues, row building and status.

Printed per rig: rows, samples per row, milliseconds per row, and that cost as a share
of one core at 30 rows/s. The baseline measured in the same run is the intake check
alone (``intake.problem`` on the same samples): the part of the cost that is
validating payloads, which any recorder must pay. Best of ``--repeats`` runs (the
machine may be shared).
"""
from __future__ import annotations

import argparse
import time
from typing import Any

from bench_record import pooled_samples
from egorec_ros.assembly import intake
from egorec_ros.assembly.assembler import Assembler
from egorec_ros.assembly.sample import Sample
from egorec_ros.rig.load import load_rig
from egorec_ros.rig.model import Rig
from egorec_ros.sim.replay import DEFAULT_START_NS

RIGS = ("appendix_b", "gripper_single", "d435_single", "uvc_pair")
TARGET_MS = 2.0


class DropRows:
    def begin(self, video_keys: list[str]) -> None:
        pass

    def row(self, values: dict[str, Any], frames: dict[str, Any]) -> None:
        pass


def assemble(rig: Rig, samples: list[Sample], stop_ns: int) -> tuple[float, int]:
    """(seconds, rows) for one replay of ``samples``."""
    assembler = Assembler(rig, DropRows(), start_ns=DEFAULT_START_NS)
    t = time.perf_counter()
    for s in samples:
        if s.arrival_ns > stop_ns + assembler.latency_ns:
            break
        assembler.push(s)
    report = assembler.finish(stop_ns)
    return time.perf_counter() - t, report.rows


def intake_only(rig: Rig, samples: list[Sample]) -> float:
    kinds = {d.id: d.kind for d in rig.devices}
    specs = {sid: (spec, intake.field_shapes(spec, kinds[spec.device])) for sid, spec in rig.streams.items()}
    t = time.perf_counter()
    for s in samples:
        spec, shapes = specs[s.stream]
        intake.problem(s, spec, shapes)
    return time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="simulated seconds per rig")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rigs", nargs="+", default=list(RIGS))
    args = parser.parse_args()
    stop = DEFAULT_START_NS + int(args.seconds * 1e9)
    print(f"## assembly cost per row (replay mode, encoding excluded, {args.seconds:g} s per rig, "
          f"best of {args.repeats})")
    print(f"{'rig':16} {'rows':>5} {'samples/row':>11} {'ms/row':>7} {'us/sample':>9} {'core share':>10} "
          f"{'intake ms/row':>13} {'intake share':>12}")
    for name in args.rigs:
        rig = load_rig(name)
        samples = pooled_samples(rig, args.seconds)
        assemble(rig, samples[: len(samples) // 10], stop)   # warm-up
        took, rows = min(assemble(rig, samples, stop) for _ in range(args.repeats))
        checks = min(intake_only(rig, samples) for _ in range(args.repeats))
        per_row = took / rows * 1e3
        print(f"{name:16} {rows:5d} {len(samples) / rows:11.1f} {per_row:7.3f} {took / len(samples) * 1e6:9.1f} "
              f"{per_row / (1e3 / rig.fps):9.1%} {checks / rows * 1e3:13.3f} {checks / took:12.0%}"
              + ("" if per_row < TARGET_MS or name != "appendix_b" else f"   ABOVE the {TARGET_MS} ms target"))


if __name__ == "__main__":
    main()
