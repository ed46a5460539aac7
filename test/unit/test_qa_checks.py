"""QA checks on hand-made figures: each check fires on its defect, names the stream and the
stretch, and stays quiet on clean input; thresholds and live alarms."""
from __future__ import annotations

import numpy as np
import pytest

from egorec_ros.codecs.frame_stats import FrameSeries, FrameStats, frame_figures
from egorec_ros.qa.live import live_alarms
from egorec_ros.qa.runs import longest_equal, longest_true
from egorec_ros.qa.sensors import glove_checks
from egorec_ros.qa.streams import stream_checks
from egorec_ros.qa.thresholds import QaThresholds, thresholds_from
from egorec_ros.qa.verdict import Finding, judge
from egorec_ros.qa.video import video_checks

T = QaThresholds()


def series(n: int, *, repeat=(), frozen=(), black=()) -> FrameSeries:
    """n rows of distinct mid-grey frames; rows in ``repeat`` repeat the previous payload, rows in
    ``frozen`` are new frames identical to the first of them, rows in ``black`` are black."""
    luma = np.full(n, 120.0, np.float32)
    digest = np.arange(1, n + 1, dtype=np.uint32)
    rep = np.zeros(n, bool)
    for i in repeat:
        rep[i], digest[i] = True, digest[i - 1]
    frozen = list(frozen)
    for i in frozen:
        digest[i] = digest[frozen[0]]
    for i in black:
        luma[i], digest[i] = 2.0, 999_999
    return FrameSeries(luma, digest, rep)


def test_runs():
    assert longest_true(np.array([0, 1, 1, 0, 1, 1, 1, 0], bool)) == (3, 4)
    assert longest_true(np.zeros(4, bool)) == (0, 0)
    assert longest_equal(np.array([5, 5, 1, 2, 2, 2])) == (3, 3)
    assert longest_equal(np.array([], np.uint32)) == (0, 0)


def test_clean_camera_has_no_finding():
    findings: list[Finding] = []
    figures = video_checks({"cam": ("rgb", series(90))}, 30.0, T, findings)
    assert findings == [] and figures["cam"]["longest_gap_ms"] == pytest.approx(33.3, abs=0.1)


def test_gap_frozen_and_black_each_named():
    findings: list[Finding] = []
    figures = video_checks({"gap": ("rgb", series(120, repeat=range(11, 71))),       # 2 s without a new frame
                            "frozen": ("rgb", series(120, frozen=range(20, 80))),    # 60 new, identical frames
                            "black": ("rgb", series(120, black=range(30, 50)))}, 30.0, T, findings)
    by = {f.reason.split(":")[0]: f for f in findings}
    assert set(by) == {"gap", "frozen", "black"}, findings
    assert by["gap"].level == "redo" and by["gap"].check == "gap" and "2033 ms (rows 10..70)" in by["gap"].reason
    assert by["frozen"].level == "redo" and by["frozen"].check == "frozen" and "60 new frames" in by["frozen"].reason
    assert by["black"].level == "warn" and by["black"].check == "black" and "20 frames" in by["black"].reason
    assert figures["gap"]["frozen_frames"] == 0          # repeats are a gap, not frozen content
    assert figures["black"]["frozen_frames"] == 0        # black frames are alike: reported as black only


def test_depth_is_not_judged_by_luma():
    findings: list[Finding] = []
    near = FrameSeries(np.full(90, 2.0, np.float32), np.arange(90, dtype=np.uint32), np.zeros(90, bool))
    video_checks({"d": ("depth", near)}, 30.0, T, findings)      # close objects: low codes, not "black"
    assert findings == []


def test_drop_stats_shares_judged_like_the_summaries():
    findings: list[Finding] = []
    stats = {"streams": {"cam.rgb": {"used": 60, "repeated": 40, "received": 60},       # 40 % of rows: redo
                         "f.force": {"received": 100, "used": 90, "late": 10},          # 10 %: warn
                         "g.pressure": {"received": 100, "used": 98, "late": 2}}}      # 2 %: fine
    figures = stream_checks(stats, T, findings)
    assert [(f.level, f.reason) for f in findings] == [("redo", "cam.rgb: repeated 40 (40.0 %)"),
                                                        ("warn", "f.force: late 10 (10.0 %)")]
    assert figures["g.pressure"] == {"late": 0.02}
    verdict = judge(findings, {})
    assert verdict.verdict == "redo" and verdict.reasons[0].startswith("redo: ")


def test_thresholds_from_a_rig_block():
    assert thresholds_from(None) == QaThresholds()
    t = thresholds_from({"gap_redo_ms": 500, "frozen_warn_frames": 5}, "r.yaml")
    assert t.gap_redo_ms == 500.0 and t.frozen_warn_frames == 5 and isinstance(t.frozen_warn_frames, int)
    with pytest.raises(ValueError, match="r.yaml: qa: unknown keys \\['gap'\\]"):
        thresholds_from({"gap": 1}, "r.yaml")
    with pytest.raises(ValueError, match="must be a non-negative number"):
        thresholds_from({"gap_redo_ms": -1}, "r.yaml")
    with pytest.raises(ValueError, match="must be a mapping"):
        thresholds_from([1], "r.yaml")


def test_live_alarms():
    kinds = {"cam.rgb": "video", "g.slam": "slam", "lg.pressure": "glove", "imu": "imu"}
    ages = {"cam.rgb": 0.03, "g.slam": 1.4, "lg.pressure": 2.5}
    alarms = live_alarms(kinds, ages, T, recording=True)
    assert alarms == ["g.slam: SLAM lost for 1.4 s", "lg.pressure: glove silent for 2.5 s",
                      "imu: no sample received yet"]
    assert live_alarms(kinds, ages, T, recording=False) == []


def test_frame_figures_and_repeats():
    rgb = np.zeros((48, 64, 3), np.uint8)
    rgb[..., 1] = 200
    luma, digest = frame_figures(rgb)
    assert luma == pytest.approx(0.587 * 200, abs=0.01)
    assert frame_figures(rgb.copy())[1] == digest                 # same content, same hash
    other = rgb.copy()
    other[16, 16, 0] = 1                                          # a pixel of the subsample differs
    assert frame_figures(other)[1] != digest
    stats = FrameStats()
    stats.add(rgb, rgb)
    stats.add(rgb, rgb)              # the same payload object: a repeated row
    stats.add(other, other)
    stats.add(other, None)           # a substituted frame keeps the previous figures
    s = stats.series()
    assert s.repeat.tolist() == [False, True, False, True] and s.hash[0] == s.hash[1] != s.hash[2] == s.hash[3]


def test_glove_all_zero_from_the_episode_statistics():
    zero = {"count": 90, "mean": [0.0] * 256, "std": [0.0] * 256, "min": [0.0] * 256, "max": [0.0] * 256}
    touched = dict(zero, max=[0.0] * 255 + [12.5])
    findings: list[Finding] = []
    figures = glove_checks({"observation.left_glove": zero, "observation.right_glove": touched}, 90, T, findings)
    assert [(f.level, f.check) for f in findings] == [("warn", "glove_zero")]
    assert "observation.left_glove: pressure all zero in all 90 rows" in findings[0].reason
    assert figures == {"observation.left_glove": {"all_zero": True}}
    assert glove_checks({"observation.left_glove": zero}, 30, T, []) == {}     # too short to judge
