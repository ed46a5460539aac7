"""The real `egorec` command and Python in child processes."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def egorec(*args: str | Path, timeout: float = 300) -> subprocess.CompletedProcess:
    """`egorec ARGS` in a child process (the real entry point, stdout/stderr captured)."""
    return subprocess.run([sys.executable, "-m", "egorec_ros.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)


def run_python(args: list[str], timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=timeout)
