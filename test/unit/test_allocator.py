"""The malloc policy of a process that writes datasets (egorec_ros/allocator.py): buffers of a
few MB that come and go stay on pages already mapped instead of fresh ones each time."""
from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

# three 3 MB buffers made and freed, 200 times: with glibc's own thresholds (raised to 3 MB by
# the first free, trim at 6 MB) much of the 9 MB goes back to the kernel and faults in again
CHURN = """
import resource, sys
sys.path.insert(0, sys.argv[2])
if sys.argv[1] == "task_writer":
    from egorec_ros.store import TaskWriter
    TaskWriter(sys.argv[3]).close()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(200):
    buffers = [bytearray(3 << 20) for _ in range(3)]
    del buffers
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""
ROOT = str(Path(__file__).parents[2])


def _faults(mode: str, tmp_path: Path, **env: str) -> int:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")} | env
    proc = subprocess.run([sys.executable, "-c", CHURN, mode, ROOT, str(tmp_path / "task")],
                          capture_output=True, text=True, env=environ, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return int(proc.stdout)


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the policy is glibc's malloc tunables")
def test_writing_a_dataset_keeps_frame_buffers_mapped(tmp_path: Path) -> None:
    churn = _faults("plain", tmp_path)
    kept = _faults("task_writer", tmp_path)
    assert churn > 20_000           # measured 65 k (of 460 k pages made in all)
    assert kept < churn / 10        # measured 2 k


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the policy is glibc's malloc tunables")
def test_the_environment_wins(tmp_path: Path) -> None:
    """glibc's own tunables, set by the user, are left alone (here: trim at 1 MB, churn again)."""
    assert _faults("task_writer", tmp_path, MALLOC_TRIM_THRESHOLD_=str(1 << 20)) > 20_000
