"""The preview's pixels (issue 21): the cheap depth colouring (range from a 1/16 subsample, colours
from a table) looks like the full-frame percentile it replaced, and the RGB fast path takes the
same pixels as plain slicing."""
from __future__ import annotations

import time

import numpy as np

from egorec_ros.live.preview import depth_colours, preview_rgb


def _reference(mm: np.ndarray) -> np.ndarray:
    """The colouring before issue 21's cost work: 2..98 % over every valid pixel, float maths."""
    valid = mm > 0
    t = np.zeros(mm.shape, np.float32)
    if valid.any():
        lo, hi = np.percentile(mm[valid], [2, 98])
        t = np.clip((mm.astype(np.float32) - lo) / max(float(hi - lo), 1.0), 0, 1)
    rgb = np.stack([255 * (1 - t), 255 * (1 - np.abs(2 * t - 1)), 255 * t], axis=-1)
    rgb[~valid] = 0
    return rgb.astype(np.uint8)


def _scene(h: int = 240, w: int = 320) -> np.ndarray:
    """A room-like depth frame: a sloping floor, a box in front, sensor noise, holes (0)."""
    rng = np.random.default_rng(7)
    yy, xx = np.mgrid[0:h, 0:w]
    mm = 4000 - 2500 * yy / h + rng.normal(0, 15, (h, w))
    mm[h // 3:2 * (h // 3), w // 3:w // 2] = 700 + rng.normal(0, 5, (h // 3, w // 2 - w // 3))
    mm = np.clip(mm, 1, 65535).astype(np.uint16)
    mm[rng.random((h, w)) < 0.08] = 0          # speckle holes
    mm[:, :12] = 0                             # the invalid band at a stereo camera's left edge
    return mm


def test_cheap_depth_colours_look_like_the_full_percentile() -> None:
    mm = _scene()
    new, ref = depth_colours(mm).astype(int), _reference(mm).astype(int)
    assert new.shape == ref.shape and new.dtype == int
    assert (new[mm == 0] == 0).all(), "invalid depth is black"
    diff = np.abs(new - ref)[mm > 0]
    assert diff.mean() < 3 and np.percentile(diff, 99) <= 12, (diff.mean(), np.percentile(diff, 99))
    near, far = new[mm == mm[mm > 0].min()][0], new[mm == mm.max()][0]
    assert near[0] > 200 and near[2] < 50 and far[2] > 200 and far[0] < 50, (near, far)


def test_depth_edge_cases() -> None:
    assert not depth_colours(np.zeros((10, 10), np.uint16)).any()
    few = np.zeros((40, 40), np.uint16)
    few[1, 1], few[2, 3] = 500, 3000          # valid pixels the 1/16 subsample misses
    out = depth_colours(few)
    assert out[1, 1, 0] > 200 and out[2, 3, 2] > 200 and out[0, 0].max() == 0
    flat = np.full((8, 8), 1234, np.uint16)   # one distance: no division by zero
    assert depth_colours(flat).shape == (8, 8, 3)


def test_rgb_fast_path_is_plain_slicing() -> None:
    rng = np.random.default_rng(1)
    rgb = rng.integers(0, 255, (480, 640, 3), np.uint8)
    for pixels in (rgb, rgb[:, :, ::-1], rgb[10:, 7:]):     # contiguous, reversed channels, an offset view
        step = -(-pixels.shape[1] // 320)
        out = preview_rgb(pixels)
        assert out.flags.c_contiguous and out.shape[2] == 3
        assert np.array_equal(out, pixels[::step, ::step, :3])
    gray = rgb[:, :, 0]
    assert np.array_equal(preview_rgb(gray)[:, :, 1], gray[::2, ::2])


def test_depth_preview_is_cheaper_than_the_full_percentile() -> None:
    mm = _scene(480, 640)[::2, ::2]

    def cpu_ms(f, n: int = 20) -> float:
        f(mm)
        t0 = time.process_time()
        for _ in range(n):
            f(mm)
        return (time.process_time() - t0) / n * 1e3
    new, ref = min(cpu_ms(depth_colours) for _ in range(3)), min(cpu_ms(_reference) for _ in range(3))
    assert new < ref / 1.5, f"cheap colouring {new:.2f} ms vs full percentile {ref:.2f} ms"
