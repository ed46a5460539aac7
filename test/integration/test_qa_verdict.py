"""The QA verdict at commit, on Appendix B episodes made bad on purpose through the real pipeline
(simulated devices -> assembler -> writer -> real codecs): a camera frozen for 2 s, a black stretch,
a SLAM gap, a silent glove; a clean episode gets ok. Thresholds come from the rig's qa: block."""
from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np
import pytest
import yaml

from egorec_ros.assembly.sample import Sample
from egorec_ros.codecs.lazy_frame import frame_array
from egorec_ros.dataset.task import Task
from egorec_ros.recorder.replay import record_samples
from egorec_ros.rig.compile import RigError
from egorec_ros.rig.load import load_rig
from egorec_ros.sim.flaws import CLEAN
from egorec_ros.sim.replay import simulate
from egorec_ros.store import TaskWriter
from helpers.cli import assert_clean, egorec_ok
from helpers.store import START_NS, small_appendix_b

S = 1_000_000_000
SECONDS = 4.0


def record(task: Path, samples: Iterable[Sample], rig=None):
    rig = rig or small_appendix_b()
    with TaskWriter(task) as writer:
        result, _ = record_samples(writer, rig, samples, start_ns=START_NS, stop_ns=START_NS + int(SECONDS * S))
    assert result is not None
    return result


def clean(rig=None, flaws=CLEAN) -> Iterator[Sample]:
    return simulate(rig or small_appendix_b(), SECONDS + 0.5, seed=3, start_ns=START_NS, flaws=flaws)


def in_window(sample: Sample, start_s: float, end_s: float) -> bool:
    return START_NS + start_s * S <= sample.stamp_ns < START_NS + end_s * S


def spoiled(samples: Iterable[Sample]) -> Iterator[Sample]:
    """gripper_a's camera frozen (new frames, one picture) 1.0..3.0 s; gripper_b's camera black
    1.0..2.0 s; gripper_a's SLAM silent 1.0..2.5 s."""
    held = None
    for s in samples:
        if s.stream == "gripper_a.rgb" and in_window(s, 1.0, 3.0):
            held = frame_array(s.payload).copy() if held is None else held
            s = dataclasses.replace(s, payload=held.copy())
        elif s.stream == "gripper_b.rgb" and in_window(s, 1.0, 2.0):
            s = dataclasses.replace(s, payload=np.zeros_like(frame_array(s.payload)))
        elif s.stream == "gripper_a.slam" and in_window(s, 1.0, 2.5):
            continue
        yield s


def reasons_of(qa: dict, needle: str) -> list[str]:
    return [r for r in qa["reasons"] if needle in r]


def test_clean_episode_is_ok(tmp_path):
    result = record(tmp_path / "t", clean())
    assert result.qa["verdict"] == "ok", result.qa["reasons"]
    assert result.qa["reasons"] == []
    videos = result.qa["figures"]["videos"]
    assert set(videos) == {"gripper_rgb", "gripper_2_rgb", "stereo_left", "stereo_right", "stereo_depth"}
    assert all(v["longest_gap_ms"] < 100 and v["frozen_frames"] <= 1 for v in videos.values()), videos
    assert 40 < videos["gripper_rgb"]["mean_luma"] < 220
    row = Task(tmp_path / "t").episodes[0].row
    assert row["qa"] == result.qa          # stored as the episode row's qa key
    assert_clean(tmp_path / "t")


def test_spoiled_episode_gets_redo_with_the_right_reasons(tmp_path):
    left_glove_gap = {"left_glove": dataclasses.replace(CLEAN, outages=((1.5, 1.6),)), "*": CLEAN}
    result = record(tmp_path / "t", spoiled(clean(flaws=left_glove_gap)))
    qa = result.qa
    assert qa["verdict"] == "redo", qa
    frozen = reasons_of(qa, "frozen")
    assert len(frozen) == 1 and frozen[0].startswith("redo: gripper_rgb:"), qa["reasons"]
    assert 55 <= qa["figures"]["videos"]["gripper_rgb"]["frozen_frames"] <= 62
    black = reasons_of(qa, "black")
    assert len(black) == 1 and black[0].startswith("warn: gripper_2_rgb:"), qa["reasons"]
    assert 28 <= qa["figures"]["videos"]["gripper_2_rgb"]["black_frames"] <= 31
    slam = reasons_of(qa, "tracking lost")
    assert len(slam) == 1 and "observation.slam_trajectory:" in slam[0] and slam[0].startswith("redo"), qa["reasons"]
    glove = reasons_of(qa, "glove silent")
    assert len(glove) == 1 and glove[0].startswith("redo: left_glove:"), qa["reasons"]
    # nothing else was spoiled: no reason names another camera or trajectory
    for other in ("stereo_left", "stereo_right", "stereo_depth", "gripper_2_slam", "ego_slam", "right_glove"):
        assert not reasons_of(qa, other), qa["reasons"]
    assert result.qa_seconds < 1.0
    out = egorec_ok("inspect", tmp_path / "t")
    assert "QA redo" in out and "redo: gripper_rgb: picture frozen" in out
    listed = json.loads(egorec_ok("inspect", tmp_path / "t", "--json"))["episodes"][0]["qa"]
    assert listed == {"verdict": "redo", "reasons": qa["reasons"]}
    egorec_ok("inspect", tmp_path / "t", "--html", tmp_path / "r.html")
    page = (tmp_path / "r.html").read_text()
    assert "<span class='qa redo'>QA redo</span>" in page and "tracking lost" in page


def test_rig_qa_block_sets_thresholds(tmp_path):
    doc = yaml.safe_load((Path(load_rig.__code__.co_filename).parents[2] / "config/rigs/uvc_pair.yaml").read_text())
    doc["qa"] = {"gap_warn_ms": 1, "gap_redo_ms": 2}     # any single repeated row is a redo now
    path = tmp_path / "strict.yaml"
    path.write_text(yaml.safe_dump(doc))
    rig = load_rig(path)
    assert rig.qa.gap_redo_ms == 2.0 and rig.qa.frozen_redo_frames == 30
    doc["qa"] = {"gap_redo": 5}
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(RigError, match="unknown keys \\['gap_redo'\\]"):
        load_rig(path)
    doc["qa"] = {"gap_redo_ms": "long"}
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(RigError, match="gap_redo_ms must be a non-negative number"):
        load_rig(path)
