"""The malloc policy of a process that writes datasets (egorec_ros/allocator.py): buffers of a
few MB that come and go stay on pages already mapped instead of fresh ones each time."""
from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

# one buffer of 1 MB and a page more each time, made and freed 200 times (as frames of a
# little different sizes come and go): with glibc's own thresholds each is a fresh mmap (a free
# raises the threshold only to the size it sees), so every one of its pages faults in again
CHURN = """
import resource, sys
sys.path.insert(0, sys.argv[2])
if sys.argv[1] == "task_writer":
    from egorec_ros.store import TaskWriter
    TaskWriter(sys.argv[3]).close()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for i in range(200):
    buffer = bytearray((1 << 20) + i * 4096)
    del buffer
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
    assert churn > 40_000           # 200 x 256+ pages
    assert kept < churn / 10


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the policy is glibc's malloc tunables")
def test_the_environment_wins(tmp_path: Path) -> None:
    """glibc's own tunables, set by the user, are left alone (here: mmap from 1 MB, churn again)."""
    assert _faults("task_writer", tmp_path, MALLOC_MMAP_THRESHOLD_=str(1 << 20)) > 40_000
