"""Depth maps of a ``Scene``: uint16 millimetres, 0 = invalid, with the holes real sensors have.

Depth is what the depth codec and the depth/RGB pairing are tested with, so it must
look like sensor output: a far wall, nearer objects in front (balls bulge toward
the camera), and holes where active/stereo depth fails: an occlusion shadow beside
each near object (the part of the background one of the two views cannot see) and
small speckle clusters. Like ``RgbCanvas`` everything is prepared once per
resolution; a frame is a slice copy, a few pastes and one multiply.
"""
from __future__ import annotations

import numpy as np

from egorec_ros.sim.scene import NOISE_ROWS, Scene, Shape, margin_px, paste, shape_grid, smooth_noise

SPECKLE_FRACTION = 0.004   # seed pixels of speckle holes, each grown to a 2x2 cluster


class DepthCanvas:
    """Renders a scene at one resolution as HxW uint16 mm, seen from the reference (left) eye."""

    def __init__(self, scene: Scene, width: int, height: int, focal_px: float, baseline_m: float,
                 holes: bool):
        self.scene, self.width, self.height, self.focal = scene, width, height, focal_px
        self.holes = holes
        margin = margin_px(focal_px, scene.wall_m)
        rng = np.random.default_rng([scene.seed, 0x44455054, height, width])
        bumps = smooth_noise(rng, height + 2 * margin, width + 2 * margin, max(8, height // 6), 1)[..., 0]
        self._wall = np.ascontiguousarray(scene.wall_m * 1000.0 + 50.0 * (bumps - 0.5), dtype=np.uint16)
        seeds = rng.random((height + NOISE_ROWS, width)) < SPECKLE_FRACTION
        seeds[1:] |= seeds[:-1]
        seeds[:, 1:] |= seeds[:, :-1]
        self._keep = (~seeds).astype(np.uint16)
        self._sprites = [self._sprite(s, baseline_m) for s in scene.shapes]

    def _sprite(self, shape: Shape, baseline_m: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
        """(depth mm, object mask, shadow mask, half, left pad): the shadow is the strip of
        wall left of the object that the other eye cannot see, as wide as the disparity step."""
        step = self.focal * baseline_m * (1.0 / shape.depth_m - 1.0 / self.scene.wall_m)
        pad = int(round(min(step, 0.5 * shape.size * self.height)))
        u, v, inside, half = shape_grid(shape, self.height, pad_left=pad)
        if shape.ball:
            radius_m = shape.size * self.height * shape.depth_m / self.focal
            bulge = np.sqrt(np.clip(1.0 - u * u - v * v, 0.0, 1.0)) * radius_m
        else:
            bulge = np.zeros_like(u)
        mm = np.clip(np.rint((shape.depth_m - bulge) * 1000.0), 1, 65535).astype(np.uint16)
        shifted = np.zeros_like(inside)
        shifted[:, :inside.shape[1] - pad] = inside[:, pad:]  # the object moved `pad` px to the left
        shadow = shifted & ~inside
        return mm, inside, shadow, half, pad

    def paint(self, t_s: float, pan_rad: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        (wx, wy), centres = self.scene.place(t_s, pan_rad, self.width, self.height, self.focal)
        out = self._wall[wy:wy + self.height, wx:wx + self.width].copy()
        for (mm, inside, shadow, half, pad), (cx, cy) in zip(self._sprites, centres):
            x0, y0 = cx - half - pad, cy - half
            if self.holes:
                paste(out, 0, shadow, x0, y0)
            paste(out, mm, inside, x0, y0)
        if self.holes:
            row = int(rng.integers(0, NOISE_ROWS))
            np.multiply(out, self._keep[row:row + self.height], out=out)
        return out
