"""One size per camera in a task (issue 10 item 2): recording or converting a camera at
another size into an existing task is refused before anything is written, so info.json
`cameras` describes every episode and the validator and readers agree with the writer."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from helpers.store import Tiny, read_info
from helpers.cli import egorec
from egorec_ros.schema.declaration import Declaration
from egorec_ros.store import TaskWriter
from egorec_ros.store.metadata import CameraShapeError
from egorec_ros.validate.validate import validate_task


def resized(decl: Declaration, width: int, height: int) -> Declaration:
    return dataclasses.replace(decl, videos=tuple(dataclasses.replace(v, width=width, height=height)
                                                  for v in decl.videos))


def test_an_episode_at_another_size_is_refused_before_it_starts(tmp_path: Path, tiny: Tiny) -> None:
    task = tmp_path / "task"
    with TaskWriter(task) as writer:
        tiny.write(writer, 3)
        before = read_info(task)
        with pytest.raises(CameraShapeError) as err:
            writer.begin(resized(tiny.decl, 128, 96))
        message = str(err.value)
        assert f"{task}: camera 'gripper_rgb' is 64x48 in this task but 128x96 in this episode" in message
        assert "record at the task's size (`--size`" in message and "another task" in message
        assert not list(task.glob(".staging-*")) and read_info(task) == before
        assert tiny.write(writer, 2).number.index == 2      # no number was used up
    assert validate_task(task) == []


def test_a_new_camera_joins_the_task(tmp_path: Path, tiny: Tiny, tiny_no_video: Tiny) -> None:
    task = tmp_path / "task"
    with TaskWriter(task) as writer:
        tiny_no_video.write(writer, 2)
        tiny.write(writer, 2)
    assert read_info(task)["cameras"] == {"gripper_rgb": {"height": 48, "width": 64}}
    assert validate_task(task) == []


def test_adopting_a_staged_episode_at_another_size_is_refused(tmp_path: Path, tiny: Tiny) -> None:
    task, worker = tmp_path / "task", tmp_path / ".work" / "w0"
    with TaskWriter(task) as writer:
        tiny.write(writer, 3)
    big = Tiny(resized(tiny.decl, 128, 96))
    with TaskWriter(worker) as staging:
        episode = staging.begin(big.decl, number=2)
        for i in range(3):
            episode.append(big.row(i), big.frames(i))
        staged = episode.end(commit=False).staged
    with TaskWriter(task) as writer, pytest.raises(CameraShapeError, match="'gripper_rgb' is 64x48 in this task"):
        writer.adopt(staged)
    assert staged.is_dir() and [p.name for p in (task / "data" / "chunk-000").iterdir()] == ["episode-000.parquet"]
    assert validate_task(task) == []


def test_record_at_another_size_is_refused_by_the_cli(tmp_path: Path) -> None:
    args = ["record", "--sim", "--rig", "uvc_pair", "--episodes", "1", "--seconds", "1", "--out", str(tmp_path),
            "--task", "t", "--clean"]
    first = egorec(*args, "--size", "320x240")
    assert first.returncode == 0, first.stdout + first.stderr
    # issue 24: the summary says where the episode's time went; the capacity check counts the simulator
    assert "rows cover 1.00 s of the " in first.stdout and "first frame of cam" in first.stdout, first.stdout
    assert "simulated devices: rendering takes" in first.stderr
    second = egorec(*args, "--size", "160x120")
    assert second.returncode == 1, second.stdout + second.stderr
    assert second.stderr.splitlines()[-1].startswith("egorec: ") and "is 320x240 in this task but 160x120 in this episode" in second.stderr
    assert "Traceback" not in second.stderr
    task = tmp_path / "t"
    assert {c["width"] for c in read_info(task)["cameras"].values()} == {320}
    assert validate_task(task) == [] and len(json.loads((task / "meta" / "info.json").read_text())["cameras"]) == 2
