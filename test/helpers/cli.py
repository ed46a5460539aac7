"""The real `egorec` command and Python in child processes."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EGOREC = [sys.executable, "-m", "egorec_ros.cli"]


def egorec(*args: str | Path, timeout: float = 300, env: dict | None = None) -> subprocess.CompletedProcess:
    """`egorec ARGS` in a child process (the real entry point, stdout/stderr captured)."""
    return subprocess.run([*EGOREC, *map(str, args)], capture_output=True, text=True, timeout=timeout, env=env)


def egorec_ok(*args: str | Path, timeout: float = 300, env: dict | None = None) -> str:
    """`egorec ARGS` that must succeed; its stdout."""
    out = egorec(*args, timeout=timeout, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def assert_clean(task_dir: str | Path, env: dict | None = None) -> None:
    """`egorec validate TASK_DIR` finds nothing wrong."""
    assert "clean" in egorec_ok("validate", task_dir, timeout=120, env=env)


def run_python(args: list[str], timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=timeout)
