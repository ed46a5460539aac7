"""Cost of simulated devices: per-payload generation time and whole-rig throughput.

    .venv/bin/python bench/bench_sim.py [--frames N] [--seconds S]

The recorder benchmark feeds simulated frames as fast as they can be made, so the
simulator must cost a small fraction of what it simulates. Payloads are rendered
and dropped, as a consumer would (keeping them all measures page faults instead).
Each payload's cost is also given against a baseline measured in the same run: the
recorder row-diff coding one 250x250x3 force matrix (``encode_row_diff``), so figures
from a loaded machine and from another commit compare.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from egorec_ros.codecs.force_matrix import SHAPE, encode_row_diff
from egorec_ros.rig.kinds import StreamKind
from egorec_ros.rig.load import load_rig
from egorec_ros.sim.devices import rig_sources
from egorec_ros.sim.gripper import MAX_GRIP_MN, ContactPatches
from egorec_ros.sim.plan import Plan
from egorec_ros.sim.replay import simulate

RIGS = ("uvc_pair", "d435_single", "gripper_single", "appendix_b")
PAYLOAD_KINDS = (StreamKind.VIDEO, StreamKind.DEPTH)


def payload_costs(frames: int, sizes: tuple[int, int] | None) -> list[tuple[str, str, float]]:
    """(stream, shape, ms per payload) for every video/depth stream and the force matrices."""
    rows, seen = [], set()
    for name in RIGS:
        rig = load_rig(name)
        specs, kinds = rig.streams, {d.id: d.kind for d in rig.devices}
        for sources in rig_sources(rig, Plan(0, sizes=sizes)).values():
            for source in sources:
                for out in source.outputs:
                    spec = specs[out.stream]
                    key = (kinds[spec.device], spec.role)
                    wanted = spec.kind in PAYLOAD_KINDS or spec.role.endswith("force_matrix")
                    if not wanted or key in seen:
                        continue
                    seen.add(key)
                    rng = np.random.default_rng(0)
                    payload = out.render(0, 0.0, rng)   # builds textures and sprites
                    t0 = time.perf_counter()
                    for k in range(frames):   # over 10 s: a whole grip cycle (contact ~1/4 of it)
                        payload = out.render(k, k * 10.0 / frames, rng)
                    ms = (time.perf_counter() - t0) / frames * 1e3
                    array = payload if isinstance(payload, np.ndarray) else next(iter(payload.values()))
                    rows.append((f"{key[0]}.{key[1]}", f"{'x'.join(map(str, array.shape))} {array.dtype}", ms))
    return rows


def baseline_ms(frames: int) -> float:
    """ms the recorder spends row-diff coding one force matrix with contact (the unit of the ratios)."""
    matrix = np.zeros(SHAPE, dtype=np.float32)
    matrix[60:180, 60:180] = np.random.default_rng(0).normal(0, 300, (120, 120, 3))
    encode_row_diff(matrix, 10)
    t0 = time.perf_counter()
    for _ in range(frames):
        encode_row_diff(matrix, 10)
    return (time.perf_counter() - t0) / frames * 1e3


def contact_matrix_ms(frames: int) -> float:
    """ms per force matrix while the gripper squeezes at full force (the worst case)."""
    pads, rng = ContactPatches(0), np.random.default_rng(0)
    pads.matrix(0.0, MAX_GRIP_MN, rng)
    t0 = time.perf_counter()
    for k in range(frames):
        pads.matrix(k / 30.0, MAX_GRIP_MN, rng)
    return (time.perf_counter() - t0) / frames * 1e3


def rig_throughput(seconds: float, sizes: tuple[int, int] | None) -> list[tuple[str, int, float]]:
    """(rig, samples, simulated seconds per wall second) after a warm-up run."""
    rows = []
    for name in RIGS:
        rig = load_rig(name)
        sum(1 for _ in simulate(rig, 0.2, sizes=sizes))
        t0 = time.perf_counter()
        n = sum(1 for _ in simulate(rig, seconds, sizes=sizes))
        rows.append((name, n, seconds / (time.perf_counter() - t0)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    base = baseline_ms(args.frames)
    print(f"baseline: row-diff coding one force matrix {base:.3f} ms")
    contact = contact_matrix_ms(args.frames)
    print(f"force matrix in full contact: {contact:.3f} ms = {contact / base:.2f}x baseline")
    for sizes in (None, (640, 480)):
        label = "rig sizes" if sizes is None else f"sizes={sizes[0]}x{sizes[1]}"
        print(f"\n## per payload ({label}, {args.frames} payloads each)")
        print(f"{'stream':28} {'payload':22} {'ms':>7} {'x baseline':>10}")
        for stream, shape, ms in payload_costs(args.frames, sizes):
            print(f"{stream:28} {shape:22} {ms:7.2f} {ms / base:10.2f}")
        print(f"\n## whole rig ({label}, {args.seconds:g} s simulated, one thread)")
        print(f"{'rig':16} {'samples':>8} {'x real time':>12}")
        for name, n, speed in rig_throughput(args.seconds, sizes):
            print(f"{name:16} {n:8d} {speed:12.1f}")


if __name__ == "__main__":
    main()
