"""A rig file with several mistakes reports all of them at once (issue 24 item 9): one line when
there is one, else a line naming the file and the count, then one line per problem."""
from __future__ import annotations

from pathlib import Path

import pytest

from egorec_ros.rig.compile import RigError
from egorec_ros.rig.load import load_rig

SEVERAL = """\
name: several
fps: thirty
devices:
  cam0: {kind: uvc, key: "uvc:a", colour: red, streams: {rgb: {topic: /c0, width: 640, height: 480, fps: fast}}}
  cam1: {kind: uvc, key: "uvc:b", streams: {rgb: {topic: /c1, width: 641, height: 480}}}
  lidar: {kind: velodyne, key: "vlp:1"}
  left: {kind: usb_glove, key: "glove:l", sensor: left_glove, streams: {pressure: {topic: /l}}}
  right: {kind: usb_glove, key: "glove:r", sensor: left_glove, streams: {pressure: {topic: /r}}}
  grip: {kind: gripper, key: "grip:1", streams: {rgb: {topic: /g, width: 64, height: 48}, smell: {topic: /s}}}
"""


def test_every_problem_of_a_rig_file_is_reported_at_once(tmp_path: Path) -> None:
    rig = tmp_path / "several.yaml"
    rig.write_text(SEVERAL)
    with pytest.raises(RigError) as caught:
        load_rig(rig)
    lines = str(caught.value).splitlines()
    expected = [
        "fps must be a number of frames per second (e.g. fps: 30), got 'thirty'",
        "device 'lidar' has unknown kind 'velodyne'; known kinds: ",
        "device 'cam0': unknown keys ['colour']",
        "device 'cam0': stream 'rgb': option 'fps' must be a number, got 'fast'",
        "video stream 'cam1.rgb' is 641x480; 4:2:0 video needs even sizes",
        "device 'right': sensor column 'left_glove' already belongs to another glove",
        "device 'grip': kind 'gripper' has no stream 'smell'",
    ]
    assert lines[0] == f"{rig}: {len(expected)} problems:", lines
    assert len(lines) == 1 + len(expected), lines
    for want in expected:
        assert sum(line.startswith(f"  - {want}") for line in lines[1:]) == 1, (want, lines)


def test_one_problem_is_one_line_naming_the_file(tmp_path: Path) -> None:
    rig = tmp_path / "one.yaml"
    rig.write_text(SEVERAL.split("  cam1:")[0].replace("fps: thirty", "fps: 30").replace("colour: red, ", ""))
    with pytest.raises(RigError) as caught:
        load_rig(rig)
    assert str(caught.value) == f"{rig}: device 'cam0': stream 'rgb': option 'fps' must be a number, got 'fast'"


def test_a_rig_without_problems_still_compiles() -> None:
    rig = load_rig("appendix_b")
    assert rig.master_slot and len(rig.devices) == 5
