"""A colcon build of this checkout and the environment of a ROS 2 user who sourced it.

The rclpy tests run the package the way a robot PC runs it: built by colcon (messages generated
by rosidl, our Python merged into the generated package, scripts under lib/egorec_ros), started by
``ros2 run`` / ``ros2 launch``, driven by ``ros2 service call``. ``None`` + a reason when the
machine has no sourced ROS 2 or no colcon.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from egorec_ros.transport.dds.loopback import loopback_env

CHECKOUT = Path(__file__).resolve().parents[2]


def missing() -> str | None:
    """Why the rclpy tests cannot run here, or None."""
    if not os.environ.get("AMENT_PREFIX_PATH"):
        return "no ROS 2 sourced (source /opt/ros/<distro>/setup.bash to run the rclpy tests)"
    for tool in ("ros2", "colcon"):
        if shutil.which(tool) is None:
            return f"`{tool}` is not on PATH (ROS 2 sourced without it?)"
    if os.environ.get("RMW_IMPLEMENTATION", "rmw_cyclonedds_cpp") != "rmw_cyclonedds_cpp":
        return "the DDS transport talks to rmw_cyclonedds_cpp (RMW_IMPLEMENTATION is set to another rmw)"
    return python_mismatch(ros_python())


def python_mismatch(ros_py: str) -> str | None:
    """Why this interpreter cannot run the nodes, or None: they run on the suite's Python (the venv
    first on PATH) and import rclpy, whose C extension is built for ROS's Python version only."""
    try:
        out = subprocess.run([ros_py, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True, timeout=60)
    except OSError as exc:
        return f"ROS's Python {ros_py} (the `ros2` script's interpreter) does not run: {exc}"
    ros_ver, ours = out.stdout.strip(), "%d.%d" % sys.version_info[:2]
    if out.returncode != 0 or not ros_ver:
        return f"ROS's Python {ros_py} (the `ros2` script's interpreter) does not run: {out.stderr.strip()[-200:]}"
    if ros_ver != ours:
        return (f"ROS's Python is {ros_ver} ({ros_py}), this suite runs on {ours}: rclpy would not import in "
                f"the nodes; run it on ROS's Python: PYTHON={ros_py} VENV=.venv-{ros_ver} ./scripts/test.sh "
                f"(.ci/run does when a ROS 2 is sourced)")
    return None


def ros_python() -> str:
    """The interpreter ROS runs on (the ``ros2`` script's shebang): rosidl's generators need it
    (CMake's own Python search may pick another one, e.g. a pyenv shim of an older Python)."""
    first = Path(shutil.which("ros2") or "ros2").read_text(errors="replace").splitlines()[0]
    if not first.startswith("#!"):
        return sys.executable
    name = first[2:].strip().split()[-1]   # `#!/usr/bin/python3` or `#!/usr/bin/env python3`
    return name if os.path.isabs(name) else shutil.which(name) or name


def colcon_build_args(base: Path, python: str) -> list[str]:
    """The ``colcon build`` command line for a workspace under ``base``. ROS's Python is passed
    under both CMake names: Humble's rosidl reads ``Python3_EXECUTABLE`` (with only
    ``PYTHON_EXECUTABLE``, a pyenv Python first on PATH runs the generators: "No module named 'em'"),
    older CMake code ``PYTHON_EXECUTABLE``."""
    return ["colcon", "--log-base", str(base / "log"), "build", "--merge-install",
            "--base-paths", str(base / "src"), "--build-base", str(base / "build"),
            "--install-base", str(base / "install"), "--packages-select", "egorec_ros",
            "--event-handlers", "console_direct-",
            "--cmake-args", f"-DPython3_EXECUTABLE={python}", f"-DPYTHON_EXECUTABLE={python}"]


def build(base: Path) -> Path:
    """``colcon build`` of the checkout in a workspace under ``base``; returns the install prefix.
    (colcon stops crawling at a package.xml, so the checkout's .venv is not searched.)"""
    (base / "src").mkdir(parents=True)
    (base / "src" / "egorec_ros").symlink_to(CHECKOUT)
    out = subprocess.run(colcon_build_args(base, ros_python()), cwd=base, capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        raise RuntimeError(f"colcon build failed:\n{out.stdout[-4000:]}\n{out.stderr[-4000:]}")
    return base / "install"


def sourced_env(install: Path, domain: int) -> dict[str, str]:
    """The environment after ``source install/local_setup.bash``, on loopback in ``domain``, with
    this interpreter's bin first on PATH (the venv holding pyarrow & co.: the README's venv)."""
    out = subprocess.run(["bash", "-c", f'source "{install}/local_setup.bash" && env -0'], capture_output=True,
                         check=True, timeout=60)
    env = dict(line.split("=", 1) for line in out.stdout.decode().split("\0") if "=" in line)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.update(rmw_env(domain), PYTHONUNBUFFERED="1")
    return env


def rmw_env(domain: int) -> dict[str, str]:
    """rmw_cyclonedds_cpp on loopback in ``domain`` (the tests' DDS traffic never leaves ``lo``)."""
    return dict(loopback_env(domain), RMW_IMPLEMENTATION="rmw_cyclonedds_cpp")
