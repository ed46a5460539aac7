"""Reading a bag streams it: memory stays flat however many frames the bag holds."""
from __future__ import annotations

import shutil
import tracemalloc

import numpy as np
import pytest

from egorec_ros.assembly.sample import Sample
from egorec_ros.bags.bagfile import open_bag
from egorec_ros.bags.bagwrite import write_bag
from egorec_ros.converter.plan import plan_topics
from egorec_ros.converter.samples import iter_samples
from egorec_ros.rig.kinds import StreamKind
from egorec_ros.rig.model import StreamSpec

CAM = StreamSpec(id="c.rgb", device="c", role="rgb", kind=StreamKind.VIDEO, topic="/cam")
IMU = StreamSpec(id="c.imu", device="c", role="imu", kind=StreamKind.IMU, topic="/imu")
T0 = 1_700_000_000 * 10**9
FRAME = np.random.default_rng(0).integers(0, 256, (480, 640, 3), dtype=np.uint8)   # 0.92 MB
MB = 1 << 20


def samples(frames: int):
    """30 fps VGA frames with a 210 Hz IMU in between (generated lazily, like a recorder)."""
    for i in range(frames):
        t = T0 + i * 33_333_333
        yield Sample(CAM.id, t, t + 1_000, FRAME)
        for k in range(7):
            yield Sample(IMU.id, t + k * 4_761_904, t + k * 4_761_904 + 500, np.full(6, k, np.float32))


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def iterate_and_measure(path) -> tuple[int, int, int]:
    """(frames read, peak Python allocation while iterating, RSS growth while iterating)."""
    with open_bag(path) as bag:
        plan = plan_topics(bag, [CAM, IMU])
        tracemalloc.start()
        rss0, rss_max, frames = rss_bytes(), 0, 0
        try:
            for s in iter_samples(bag, plan):
                if s.stream == CAM.id:
                    frames += 1
                    assert s.payload.array()[0, 0, 0] == FRAME[0, 0, 0]
                    rss_max = max(rss_max, rss_bytes())
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    return frames, peak, rss_max - rss0


@pytest.mark.parametrize("storage, name", [("rosbag2/sqlite3", "big"), ("rosbag2/mcap", "big"),
                                           ("ros1", "big.bag")])
def test_memory_stays_flat_while_iterating(tmp_path, storage, name):
    try:
        small = write_bag(tmp_path / f"small_{name}", samples(40), [CAM, IMU], storage=storage)
        large = write_bag(tmp_path / name, samples(240), [CAM, IMU], storage=storage)     # ~ 220 MB
        n_small, peak_small, _ = iterate_and_measure(small)
        n_large, peak_large, rss_growth = iterate_and_measure(large)
    finally:
        shutil.rmtree(tmp_path, ignore_errors=True)      # pytest keeps old tmp dirs; these are big
    assert (n_small, n_large) == (40, 240)
    assert peak_large < 24 * MB                        # a few frames and one storage chunk, not the bag
    assert peak_large < peak_small + 4 * MB            # six times the frames, the same memory
    assert rss_growth < 64 * MB
