"""Simulated cameras: UVC, RealSense D435 (colour + depth) and S80C stereo (+ depth, IMU).

Each camera watches its own seeded ``Scene`` and moves with its device's
``Motion`` (the pan); all streams of one camera come from one clock (a ``Source``),
so a stereo pair, its depth and its SLAM pose share capture times, as on the
device. Canvases are built on the first frame: a stream that is never rendered
costs nothing.
"""
from __future__ import annotations

from functools import cache
from typing import Any, Callable

import numpy as np

from egorec_ros.rig.model import Device, StreamSpec
from egorec_ros.sim.depth import DepthCanvas
from egorec_ros.sim.imu import imu_source
from egorec_ros.sim.motion import Motion
from egorec_ros.sim.plan import Plan, one_clock, streams_by_role
from egorec_ros.sim.scene import RgbCanvas, Scene
from egorec_ros.sim.schedule import Output, Source
from egorec_ros.sim.slam import slam_output

FOCAL_PER_WIDTH = 0.7          # focal length / image width without a calibration (~71 deg HFOV)
D435_BASELINE_M = 0.05
S80C_BASELINE_M = 0.095
S80C_SENSOR_HZ = 50.0          # the S80C sensor runs at 50 fps; the SDK delivers 30 of them
STEREO_DEPTH_LATENCY_MS = 8.0  # the S80C depth engine runs after the stereo pair is captured


def focal_px(device: Device, width: int) -> float:
    """fx of the rig calibration scaled to ``width``, so sizes overrides keep the field of view."""
    cal = device.calibration or {}
    try:
        return float(cal["left_camera"]["intrinsic"][0]) * width / float(cal["resolution"][0])
    except (KeyError, IndexError, TypeError, ValueError, ZeroDivisionError):
        return FOCAL_PER_WIDTH * width


def baseline_m(device: Device, default: float) -> float:
    return float((device.calibration or {}).get("baseline", default))


def pan_rad(motion: Motion, t_s: float) -> np.ndarray:
    """Camera turn as image pan: yaw moves the view along x, pitch along y."""
    turn = motion.rotvec(t_s)
    return np.array([turn[1], turn[0]])


def world(device: Device, plan: Plan) -> tuple[Scene, Motion]:
    seed = plan.seed_of(device.id)
    return Scene(seed), Motion(seed)


def rgb_output(device: Device, spec: StreamSpec, plan: Plan, scene: Scene, motion: Motion, *,
               device_clock: bool, stereo_baseline_m: float = 0.0) -> Output:
    """RGB frames; ``stereo_baseline_m`` > 0 renders the right eye of a pair."""
    width, height = plan.size(spec)
    return _picture(spec, width * height * 3, motion,
                    lambda: RgbCanvas(scene, width, height, focal_px(device, width), stereo_baseline_m),
                    device_clock=device_clock)


def depth_output(device: Device, spec: StreamSpec, plan: Plan, scene: Scene, motion: Motion,
                 stereo_baseline_m: float, holes: bool, latency_ms: float = 0.0) -> Output:
    """Depth always comes with a device clock: the D435 and S80C are the depth cameras."""
    width, height = plan.size(spec)
    return _picture(spec, width * height * 2, motion,
                    lambda: DepthCanvas(scene, width, height, focal_px(device, width), stereo_baseline_m, holes),
                    latency_ms=latency_ms, device_clock=True)


def uvc(device: Device, plan: Plan) -> list[Source]:
    return [_camera(device, plan, *world(device, plan), "rgb", device_clock=False)]


def d435(device: Device, plan: Plan) -> list[Source]:
    return [_camera(device, plan, *world(device, plan), "rgb", device_clock=True,
                    depth_baseline_m=baseline_m(device, D435_BASELINE_M))]


def s80m(device: Device, plan: Plan) -> list[Source]:
    """Left (+ right, depth, SLAM) from one 50 fps sensor decimated to 30; the IMU on its own clock."""
    scene, motion = world(device, plan)
    stereo = baseline_m(device, S80C_BASELINE_M)
    sources = [_camera(device, plan, scene, motion, "left", device_clock=True, sensor_hz=S80C_SENSOR_HZ,
                       stereo_baseline_m=stereo, depth_baseline_m=stereo,
                       depth_latency_ms=STEREO_DEPTH_LATENCY_MS)]
    imu = streams_by_role(device).get("imu")
    if imu is not None:
        sources.append(imu_source(device, imu, motion, plan))
    return sources


def _picture(spec: StreamSpec, nbytes: int, motion: Motion, make_canvas: Callable[[], RgbCanvas | DepthCanvas],
             **output: Any) -> Output:
    canvas = cache(make_canvas)   # built on the first frame

    def render(index: int, t_s: float, rng: np.random.Generator) -> np.ndarray:
        return canvas().paint(t_s, pan_rad(motion, t_s), rng)

    return Output(spec.id, nbytes, render, **output)


def _camera(device: Device, plan: Plan, scene: Scene, motion: Motion, main_role: str, *, device_clock: bool,
            sensor_hz: float | None = None, stereo_baseline_m: float = 0.0, depth_baseline_m: float = 0.0,
            depth_latency_ms: float = 0.0) -> Source:
    """One camera clock: the main video, then right eye, depth and SLAM pose when the rig has them."""
    roles = streams_by_role(device)
    outputs = [rgb_output(device, roles[main_role], plan, scene, motion, device_clock=device_clock)]
    if "right" in roles:
        outputs.append(rgb_output(device, roles["right"], plan, scene, motion, device_clock=device_clock,
                                  stereo_baseline_m=stereo_baseline_m))
    if "depth" in roles:
        holes = plan.flaws_of(device, (roles[main_role].id, roles["depth"].id)).depth_holes
        outputs.append(depth_output(device, roles["depth"], plan, scene, motion, depth_baseline_m, holes,
                                    depth_latency_ms))
    if "slam" in roles:
        outputs.append(slam_output(roles["slam"], motion, plan.seed_of(device.id)))
    return one_clock(device, plan, outputs, sensor_hz=sensor_hz)
