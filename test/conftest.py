"""Fixtures shared by all tests (their helpers live in ``helpers/``, importable because
pyproject.toml puts test/ on pytest's pythonpath).

* ``appendix_b_task``: two episodes of the spec's Appendix B rig through the real pipeline.
  Read-only: ``appendix_b_copy`` is a copy to break;
* ``tiny`` / ``tiny_no_video``: the exactly known declaration of ``helpers.store.Tiny``;
* ``ros2_install``: a colcon build of the checkout (the rclpy tests; skipped without ROS 2).
"""
from __future__ import annotations

import os
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from egorec_ros.store import TaskWriter
from helpers.store import RIGHT_GLOVE_OFF, TASK_NAME, Tiny, record_episode, small_appendix_b, tiny_declaration

# A run started in the background by a shell without job control (`pytest ... &` in a script) has
# SIGINT ignored, and children inherit that: the tests that Ctrl-C a recorder or a convert then saw it
# run on. A handled signal is reset to the default in a child, so handle it here.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _children() -> list[int]:
    """Pids of this process's live children (from /proc: no dependency for a safety net)."""
    me, found = str(os.getpid()), []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                status = (entry / "status").read_text()
            except OSError:
                continue
            if f"\nPPid:\t{me}\n" in status:
                found.append(int(entry.name))
    return found


@pytest.fixture(scope="session", autouse=True)
def no_process_outlives_the_run() -> Iterator[None]:
    """A test that failed before reaping its children (a simulated device that did not stop) leaves
    them publishing; they must not outlive the run, loading the machine and its DDS domains."""
    yield
    for pid in _children():
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.fixture(scope="session")
def ros2_install(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One colcon build of this checkout for every rclpy test of the run (skip with the reason
    without a sourced ROS 2 and colcon)."""
    from helpers import ros2
    reason = ros2.missing()
    if reason:
        pytest.skip(reason)
    return ros2.build(tmp_path_factory.mktemp("colcon_ws"))


@pytest.fixture(scope="session")
def appendix_b_task(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Episode 1: every device; episode 2: the right glove never sends (§5.5 sparse columns)."""
    root = tmp_path_factory.mktemp("appendix_b") / "task"
    rig = small_appendix_b()
    with TaskWriter(root, task_name=TASK_NAME) as writer:
        record_episode(writer, rig, 1.0, seed=1)
        record_episode(writer, rig, 1.0, seed=2, flaws=RIGHT_GLOVE_OFF)
    return root


@pytest.fixture
def appendix_b_copy(appendix_b_task: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(appendix_b_task, tmp_path / "task"))


@pytest.fixture(scope="session")
def tiny() -> Tiny:
    return Tiny(tiny_declaration())


@pytest.fixture(scope="session")
def tiny_no_video() -> Tiny:
    return Tiny(tiny_declaration(videos=False))
