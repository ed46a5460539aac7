"""A small world for simulated cameras: a textured wall with objects moving in front.

Encoders, depth codecs and bandwidth behave on rendered scenes as on real video,
unlike on noise: consecutive frames are close, motion is coherent. Rendering is
cheap because everything expensive is done once per (scene, resolution): the
wall texture (larger than the view, so panning is a slice), object sprites and a
sensor-noise plane (a random row offset per frame gives fresh noise). A frame is
then one slice copy, a few sprite pastes and one XOR.

Geometry is resolution-free (positions as fractions of the image, depths in
metres), so RGB, stereo right and depth views of one scene at any size agree.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from typing import cast

import numpy as np

MAX_PAN_RAD = 0.1        # bound of Motion's turn, with room to spare
MAX_BASELINE_M = 0.12    # widest stereo pair a canvas accepts
NOISE_ROWS = 97          # spare rows of the noise planes: random offsets give fresh noise


@dataclass(frozen=True)
class Shape:
    ball: bool              # ball (shaded disc, bulging depth) or box (flat)
    size: float             # radius / half side as a fraction of the image height
    depth_m: float
    colour: tuple[int, int, int]
    centre: tuple[float, float]   # fraction of width, height
    amp: tuple[float, float]
    freq_hz: tuple[float, float]
    phase: tuple[float, float]


class Scene:
    """Seeded geometry: ``shapes`` sorted far to near, a wall at ``wall_m``."""

    def __init__(self, seed: int, wall_m: float = 2.5, objects: int = 4):
        rng = np.random.default_rng([seed, 0x5343454E45])
        self.seed = seed
        self.wall_m = wall_m
        depths = np.sort(rng.uniform(0.55, 1.8, objects))[::-1]
        self.shapes = tuple(
            Shape(ball=bool(i % 2 == 0), size=float(rng.uniform(0.07, 0.16)), depth_m=float(z),
                  colour=_rgb(rng.integers(30, 230, 3)),
                  centre=(float(rng.uniform(0.25, 0.75)), float(rng.uniform(0.3, 0.7))),
                  amp=(float(rng.uniform(0.1, 0.3)), float(rng.uniform(0.05, 0.2))),
                  freq_hz=(float(rng.uniform(0.1, 0.5)), float(rng.uniform(0.1, 0.5))),
                  phase=(float(rng.uniform(0, 2 * np.pi)), float(rng.uniform(0, 2 * np.pi))))
            for i, z in enumerate(depths))

    def place(self, t_s: float, pan_rad: np.ndarray, width: int, height: int, focal_px: float,
              baseline_m: float = 0.0) -> tuple[tuple[int, int], list[tuple[int, int]]]:
        """Wall window offset (within the margin) and object centres in pixels for a camera
        turned by ``pan_rad`` (x right, y down) and displaced ``baseline_m`` to the right."""
        margin = margin_px(focal_px, self.wall_m)
        pan = focal_px * np.asarray(pan_rad, dtype=np.float64)
        wall_x = int(np.clip(round(margin + pan[0] + focal_px * baseline_m / self.wall_m), 0, 2 * margin))
        wall_y = int(np.clip(round(margin + pan[1]), 0, 2 * margin))
        centres = []
        for s in self.shapes:
            cx = s.centre[0] + s.amp[0] * np.sin(2 * np.pi * s.freq_hz[0] * t_s + s.phase[0])
            cy = s.centre[1] + s.amp[1] * np.sin(2 * np.pi * s.freq_hz[1] * t_s + s.phase[1])
            centres.append((round(cx * width - pan[0] - focal_px * baseline_m / s.depth_m),
                            round(cy * height - pan[1])))
        return (wall_x, wall_y), centres


def margin_px(focal_px: float, wall_m: float) -> int:
    """Extra wall around the view: room for the largest pan plus the widest stereo shift, the
    same for both eyes of a pair so they see the same wall texture."""
    return int(np.ceil(focal_px * (MAX_PAN_RAD + MAX_BASELINE_M / wall_m))) + 2


def paste(dst: np.ndarray, src: np.ndarray | int, mask: np.ndarray, x0: int, y0: int) -> None:
    """Copy ``src`` where ``mask`` into ``dst`` at top-left (x0, y0), clipped at the borders.

    ``mask`` has the full shape of the region (HxWx3 for RGB): a broadcast mask makes
    ``copyto`` ten times slower."""
    h, w = mask.shape[:2]
    ys, xs = max(0, -y0), max(0, -x0)
    ye, xe = min(h, dst.shape[0] - y0), min(w, dst.shape[1] - x0)
    if ys >= ye or xs >= xe:
        return
    np.copyto(dst[y0 + ys:y0 + ye, x0 + xs:x0 + xe], src if np.isscalar(src) else cast(np.ndarray, src)[ys:ye, xs:xe],
              where=mask[ys:ye, xs:xe])


def shape_grid(shape: Shape, height: int, pad_left: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Normalised coordinates over a shape's sprite box: (u, v, inside, half) with u, v in units
    of the size, ``inside`` the object mask; the box extends ``pad_left`` pixels to the left."""
    half = max(2, int(round(shape.size * height)))
    v, u = np.mgrid[-half:half + 1, -half - pad_left:half + 1].astype(np.float32) / half
    inside = (u * u + v * v <= 1.0) if shape.ball else (np.abs(u) <= 1.0) & (np.abs(v) <= 1.0)
    return u, v, inside, half


def smooth_noise(rng: np.random.Generator, height: int, width: int, cell: int, channels: int) -> np.ndarray:
    """Value noise in [0, 1): a random grid, one point per ``cell`` pixels, bilinearly upsampled."""
    gy, gx = height // cell + 2, width // cell + 2
    grid = rng.random((gy, gx, channels), dtype=np.float32)
    y = np.arange(height, dtype=np.float32) / cell
    x = np.arange(width, dtype=np.float32) / cell
    y0, x0 = y.astype(np.intp), x.astype(np.intp)
    fy, fx = (y - y0)[:, None, None], (x - x0)[None, :, None]
    rows = grid[y0] * (1 - fy) + grid[y0 + 1] * fy
    return rows[:, x0] * (1 - fx) + rows[:, x0 + 1] * fx


@lru_cache(maxsize=8)
def wall_texture(seed: int, height: int, width: int) -> np.ndarray:
    """Stone-and-poster wall: smooth colour, fine grain, tile joints and a few posters."""
    rng = np.random.default_rng([seed, 0x57414C4C, height, width])
    unit = max(8, height // 8)
    img = 45.0 + 160.0 * smooth_noise(rng, height, width, unit, 3)
    img += 50.0 * (smooth_noise(rng, height, width, max(2, unit // 12), 1) - 0.5)
    joints = np.zeros((height, width, 1), dtype=bool)
    joints[np.arange(height) % unit < max(1, unit // 20)] = True
    joints[:, np.arange(width) % unit < max(1, unit // 20)] = True
    img[np.broadcast_to(joints, img.shape)] *= 0.45
    for _ in range(10):
        ph, pw = rng.integers(unit // 2, 2 * unit, 2)
        y, x = int(rng.integers(0, max(1, height - ph))), int(rng.integers(0, max(1, width - pw)))
        stripes = 0.75 + 0.25 * np.sign(np.sin(np.arange(pw) * (2 * np.pi / max(4, pw // 5))))
        img[y:y + ph, x:x + pw] = rng.integers(20, 235, 3) * stripes[None, :, None]
    out = np.ascontiguousarray(np.clip(img, 0, 255), dtype=np.uint8)  # row-major: views slice fast
    out.flags.writeable = False
    return out


class RgbCanvas:
    """Renders a scene at one resolution as HxWx3 uint8 RGB."""

    def __init__(self, scene: Scene, width: int, height: int, focal_px: float, baseline_m: float = 0.0):
        self.scene, self.width, self.height, self.focal = scene, width, height, focal_px
        if not 0.0 <= baseline_m <= MAX_BASELINE_M:
            raise ValueError(f"stereo baseline {baseline_m} m is outside 0..{MAX_BASELINE_M} m")
        self.baseline = baseline_m
        margin = margin_px(focal_px, scene.wall_m)
        self._texture = wall_texture(scene.seed, height + 2 * margin, width + 2 * margin)
        rng = np.random.default_rng([scene.seed, 0x4E4F495345, height, width])
        self._noise = rng.integers(0, 4, (height + NOISE_ROWS, width * 3), dtype=np.uint8)
        self._sprites = [self._sprite(s) for s in scene.shapes]

    def _sprite(self, shape: Shape) -> tuple[np.ndarray, np.ndarray, int]:
        u, v, inside, half = shape_grid(shape, self.height)
        light: np.ndarray
        if shape.ball:
            light = 0.45 + 0.55 * np.sqrt(np.clip(1.0 - (u + 0.3) ** 2 - (v + 0.3) ** 2, 0.0, 1.0))
            pattern = 1.0 + 0.15 * np.sin(9.0 * (u + v))
        else:
            light = 0.8 + 0.2 * (np.abs(u) < 0.9) * (np.abs(v) < 0.9)
            pattern = 1.0 - 0.3 * ((np.floor(4 * u) + np.floor(4 * v)) % 2)
        rgb = np.asarray(shape.colour, np.float32) * (light * pattern)[..., None]
        return np.clip(rgb, 0, 255).astype(np.uint8), np.repeat(inside[..., None], 3, axis=2), half

    def paint(self, t_s: float, pan_rad: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        (wx, wy), centres = self.scene.place(t_s, pan_rad, self.width, self.height, self.focal, self.baseline)
        out = self._texture[wy:wy + self.height, wx:wx + self.width].copy()
        for (rgb, inside, half), (cx, cy) in zip(self._sprites, centres):
            paste(out, rgb, inside, cx - half, cy - half)
        row = int(rng.integers(0, NOISE_ROWS))
        noise = self._noise[row:row + self.height].reshape(self.height, self.width, 3)
        np.bitwise_xor(out, noise, out=out)
        return out


def _rgb(values: np.ndarray) -> tuple[int, int, int]:
    r, g, b = (int(v) for v in values)
    return r, g, b
