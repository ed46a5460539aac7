"""The colcon build the rclpy tests run (test/helpers/ros2.py), checked without ROS: ROS's Python goes to
CMake under both names (Humble's rosidl reads Python3_EXECUTABLE; with only PYTHON_EXECUTABLE a pyenv
python3 first on PATH ran rosidl_adapter: "No module named 'em'")."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from helpers import ros2


def test_colcon_passes_ros_python_under_both_cmake_names(tmp_path: Path) -> None:
    args = ros2.colcon_build_args(tmp_path, "/usr/bin/python3")
    assert args[:2] == ["colcon", "--log-base"] and "build" in args
    cmake = args[args.index("--cmake-args") + 1:]   # colcon hands everything after --cmake-args to CMake
    assert sorted(cmake) == ["-DPYTHON_EXECUTABLE=/usr/bin/python3", "-DPython3_EXECUTABLE=/usr/bin/python3"]
    assert args[args.index("--packages-select") + 1] == "egorec_ros"
    assert args[args.index("--install-base") + 1] == str(tmp_path / "install")


def _script(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(0o755)


@pytest.mark.parametrize("shebang", ["#!/opt/ros/humble/venv/bin/python3.10", "#!/usr/bin/env python3"])
def test_ros_python_is_the_ros2_scripts_interpreter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     shebang: str) -> None:
    ros_bin, pyenv_bin = tmp_path / "ros", tmp_path / "pyenv"
    ros_bin.mkdir(), pyenv_bin.mkdir()
    _script(ros_bin / "ros2", f"{shebang}\nimport sys\n")
    _script(ros_bin / "python3", "#!/bin/sh\n")
    _script(pyenv_bin / "python3", "#!/bin/sh\n")
    # pyenv first on PATH: an `env python3` shebang resolves like the shell would, to an absolute path
    monkeypatch.setenv("PATH", os.pathsep.join([str(pyenv_bin), str(ros_bin)]))
    want = shebang[2:] if shebang.startswith("#!/opt") else str(pyenv_bin / "python3")
    assert ros2.ros_python() == want


def test_ros_python_of_another_version_skips_the_rclpy_tests_saying_how_to_run_them(tmp_path: Path) -> None:
    assert ros2.python_mismatch(sys.executable) is None
    other = tmp_path / "python3"
    _script(other, "#!/bin/sh\necho 3.9\n")          # ROS's Python answers for another version
    reason = ros2.python_mismatch(str(other))
    ours = "%d.%d" % sys.version_info[:2]
    assert reason == (f"ROS's Python is 3.9 ({other}), this suite runs on {ours}: rclpy would not import in the "
                      f"nodes; run it on ROS's Python: PYTHON={other} VENV=.venv-3.9 ./scripts/test.sh "
                      f"(.ci/run does when a ROS 2 is sourced)")
    gone = ros2.python_mismatch(str(tmp_path / "nowhere" / "python3"))
    assert gone is not None and gone.startswith(f"ROS's Python {tmp_path}/nowhere/python3 (the `ros2` script's")
