"""What the store, validator and reader tests share (no tests here; the fixtures built
from it are in conftest.py):

* ``small_appendix_b`` / ``record_episode``: the spec's Appendix B rig (videos at a quarter
  of their size) through the real pipeline: simulated devices -> assembler -> writer
  -> real codecs;
* ``Tiny``: a hand-written declaration whose row values and frames are known exactly,
  for tests that must compare what comes back with what went in.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from egorec_ros.codecs import force_matrix as fm
from egorec_ros.recorder.replay import record_samples
from egorec_ros.rig.frames import FRAMES
from egorec_ros.rig.load import load_rig
from egorec_ros.rig.model import Rig
from egorec_ros.rig.resize import with_video_sizes
from egorec_ros.schema import columns as col
from egorec_ros.schema.declaration import Declaration, VideoSpec
from egorec_ros.sim.flaws import DEFAULT, FlawsChoice
from egorec_ros.sim.replay import simulate
from egorec_ros.store import EpisodeResult, TaskWriter

START_NS = 1_800_000_000_000_000_000
TASK_NAME = "示例任务"
# a quarter of Appendix B's 1280x800 stereo and 1280x960 gripper cameras
SMALL_SIZES = {"stereo_left": (320, 200), "stereo_right": (320, 200), "stereo_depth": (320, 200), "*": (320, 240)}
RIGHT_GLOVE_OFF = {"right_glove": dataclasses.replace(DEFAULT, outages=((0.0, 3600.0),)), "*": DEFAULT}


def read_info(task: Path) -> dict:
    return json.loads((task / "meta" / "info.json").read_text(encoding="utf-8"))


def small_appendix_b() -> Rig:
    return with_video_sizes(load_rig("appendix_b"), SMALL_SIZES)


def record_episode(writer: TaskWriter, rig: Rig, seconds: float, *, seed: int = 0,
                   flaws: FlawsChoice = DEFAULT) -> EpisodeResult:
    """One episode of simulated devices through the assembler into ``writer``."""
    samples = simulate(rig, seconds + 0.5, seed=seed, start_ns=START_NS, flaws=flaws)
    result, _ = record_samples(writer, rig, samples, start_ns=START_NS, stop_ns=START_NS + int(seconds * 1e9))
    assert result is not None, "the simulated rig produced no row"
    return result


# ---- a declaration with exactly known content --------------------------------------------

TRAJECTORY_SPEC = {"frame": "down_left_forward", "frame_axes": dict(FRAMES["down_left_forward"]),
                   "time": {"t": "sensor_s", "clock": "camera_sensor", "epoch": "enter_press"},
                   "owner": {"role": "gripper", "rig": 1}, "source_slot": "gripper_stereo_left"}
MATRIX = "observation.gripper_left_force_matrix"
TRAJ = "observation.slam_trajectory"
PERIOD_NS = 33_333_333


@dataclass(frozen=True)
class Tiny:
    """Row i: gripper_state [i, 1, -i]; a force matrix on even rows only (matrix(i), scale 10);
    i % 3 trajectory points with host stamps; an RGB frame of gray level 8*i % 256 and a
    depth frame of 500 + 10*i mm everywhere."""

    decl: Declaration

    @staticmethod
    def matrix(i: int) -> np.ndarray:
        rng = np.random.default_rng(i)
        return rng.uniform(-300.0, 300.0, fm.SHAPE).astype(np.float32)

    @staticmethod
    def stamp(i: int) -> int:
        return START_NS + i * PERIOD_NS

    def row(self, i: int) -> dict:
        points = [[100.0 + i + j / 10, i, j, 0.0, 0.0, 0.0, 0.0, 1.0] for j in range(i % 3)]
        return {
            "hardware_ns": self.stamp(i),
            "observation.gripper_state": np.array([i, 1.0, -i], np.float32),
            MATRIX: self.matrix(i) if i % 2 == 0 else None,
            MATRIX + "_ns": self.stamp(i) - 5_000_000 if i % 2 == 0 else None,
            TRAJ: np.array(points, np.float64).reshape(-1) if points else None,
            TRAJ + "_ns": np.array([self.stamp(i) - 1000 * j for j in range(i % 3)], np.int64) if points else None,
            "status.gripper_pose": "connected",
        }

    def frames(self, i: int) -> dict[str, np.ndarray]:
        out = {}
        for v in self.decl.videos:
            if v.kind == "rgb":
                out[v.key] = np.full((v.height, v.width, 3), 8 * i % 256, np.uint8)
            else:
                out[v.key] = np.full((v.height, v.width), 500 + 10 * i, np.uint16)
        return out

    def write(self, writer: TaskWriter, rows: int) -> EpisodeResult:
        episode = writer.begin(self.decl)
        for i in range(rows):
            episode.append(self.row(i), self.frames(i))
        return episode.end()


def tiny_declaration(videos: bool = True) -> Declaration:
    points, ns = col.trajectory(TRAJ, TRAJECTORY_SPEC)
    columns = (*col.key_columns(), col.vector("observation.gripper_state", (3,), semantic_suffix="_state"),
               col.force_matrix(MATRIX, scale=10), col.sample_ns(MATRIX + "_ns", "_force_matrix_ns"),
               points, ns, col.status("gripper_pose"))
    video_specs = (VideoSpec("gripper_rgb", "rgb", 64, 48), VideoSpec("gripper_depth", "depth", 64, 48,
                                                                       master="gripper_rgb"))
    return Declaration(fps=30.0, columns=columns, videos=video_specs if videos else ())


