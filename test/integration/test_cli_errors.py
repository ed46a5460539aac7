"""Errors a user can fix are printed as one `egorec: ...` line saying what, where and what
to do, without a traceback (issue 10 item 13); a bug keeps its traceback; `egorec --help`
imports nothing heavy."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from egorec_ros import cli
from egorec_ros.errors import UserError
from egorec_ros.layout.lock import TaskLock
from helpers.cli import egorec

UVC = "devices:\n  cam: {kind: uvc, key: \"uvc:test-cam\", streams: {rgb: {topic: /c, width: 64, height: 48%s}}}\n"


def record(rig: Path, out: Path) -> subprocess.CompletedProcess:
    return egorec("record", "--sim", "--rig", rig, "--out", out, "--seconds", "0.5", "--task", "t")


@pytest.mark.parametrize("text, message", [
    ("name: t\nfps: thirty\n" + UVC % "",
     "fps must be a number of frames per second (e.g. fps: 30), got 'thirty'"),
    ("name: t\n" + UVC % ", fps: fast",
     "device 'cam': stream 'rgb': option 'fps' must be a number, got 'fast'"),
    ("name: t\n" + UVC % ", scale: 10",
     "device 'cam': stream 'rgb': unknown option 'scale'; a video stream takes camera_info, fps, height, msg_type, "
     "stamp, topic, width"),
    ("name: t\n" + UVC % ", stamp: gps",
     "device 'cam': stream 'rgb': option 'stamp' must be 'header' or 'receive', got 'gps'"),
])
def test_a_bad_rig_is_one_line_naming_file_and_field_without_traceback(tmp_path, text, message):
    rig = tmp_path / "bad.yaml"
    rig.write_text(text)
    done = record(rig, tmp_path / "out")
    assert done.returncode == 1
    assert done.stderr == f"egorec: {rig}: {message}\n"
    assert not (tmp_path / "out" / "t").exists()


def test_a_locked_task_is_a_message_not_a_traceback(tmp_path):
    rig = tmp_path / "rig.yaml"
    rig.write_text("name: t\n" + UVC % "")
    with TaskLock(tmp_path / "out" / "t"):
        done = record(rig, tmp_path / "out")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1].startswith(
        f"egorec: task directory {tmp_path / 'out' / 't'} is already being written by pid ")
    assert "stop the other recorder/converter or write to another task" in done.stderr


def test_an_unwritable_out_is_a_message_not_a_traceback(tmp_path):
    rig = tmp_path / "rig.yaml"
    rig.write_text("name: t\n" + UVC % "")
    blocker = tmp_path / "file"
    blocker.write_text("a file where the dataset root should go")
    done = record(rig, blocker)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1] == (f"egorec: {blocker / 't'}: cannot create the task folder (Not a "
                                            "directory); record into a folder you can write (--out)")


@pytest.mark.parametrize("command", ["record", "demo"])
@pytest.mark.parametrize("option, value, message", [
    ("--episodes", "0", "must be at least 1, got 0"),
    ("--episodes", "two", "a whole number like 3, got 'two'"),
    ("--seconds", "0", "must be more than 0 s, got 0"),
    ("--seconds", "-2", "must be more than 0 s, got -2"),
])
def test_episode_counts_and_lengths_below_one_are_refused_before_recording(tmp_path, command, option, value,
                                                                           message):
    extra = ["--sim", "--rig", "appendix_b"] if command == "record" else []
    done = egorec(command, *extra, "--out", tmp_path, option, value)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1] == f"egorec {command}: error: argument {option}: {message}"
    assert not any(tmp_path.iterdir()), "nothing is recorded"


def test_a_bad_qos_profile_is_a_message_not_a_traceback():
    done = egorec("recorder", "--rig", "appendix_b", "--qos", "fastest")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1] == ("egorec: unknown QoS profile 'fastest'; known: default, sensor_data, "
                                            "recorder, latched")


def test_a_user_error_is_printed_and_a_bug_raises(monkeypatch, capsys, tmp_path):
    from egorec_ros.cli import validate_cmd

    def user_error(args):
        raise UserError(f"{args.task_dir}: what, where, what to do")

    monkeypatch.setattr(validate_cmd, "run", user_error)
    assert cli.main(["validate", str(tmp_path)]) == 1
    assert capsys.readouterr().err == f"egorec: {tmp_path}: what, where, what to do\n"

    def bug(args):
        raise KeyError("a bug")

    monkeypatch.setattr(validate_cmd, "run", bug)
    with pytest.raises(KeyError):
        cli.main(["validate", str(tmp_path)])


def test_building_the_command_line_imports_nothing_heavy():
    code = ("import sys; from egorec_ros.cli import build_parser; build_parser().format_help(); "
            "print(sorted({'numpy', 'pyarrow', 'av', 'rosbags', 'yaml', 'tqdm'} & set(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[]\n"
