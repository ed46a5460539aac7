"""glibc's malloc policy for a process that moves camera frames (issue 13).

Camera frames and bag chunks are buffers of 0.1-4 MB that come and go at frame rate, on
several threads. glibc serves such a buffer with mmap until a free happens to raise its
threshold, and hands a heap's top back to the kernel once more than twice that threshold
is free there, so buffer after buffer lands on fresh pages: a fresh process converting a
60 s bag of raw 640x480 images took 0.8-1.0 M minor page faults and 5 s of kernel time
(44 k and 2.4 s with the policy below, 8 % less CPU; bench/bench_convert.py). Fixed
thresholds keep buffers below 4 MB in the heap and give memory back once 32 MB are free
at a heap's top (8 MB is too little: the faults come back); peak RSS stays the same.

Set by code that writes datasets (``TaskWriter``), so it holds when egorec_ros is used as
a library too. ``MALLOC_MMAP_THRESHOLD_`` / ``MALLOC_TRIM_THRESHOLD_`` in the environment
(glibc's own tunables) win over it. Other C libraries: nothing is changed.
"""
from __future__ import annotations

import ctypes
import os
import platform

MMAP_THRESHOLD = 4 << 20
TRIM_THRESHOLD = 32 << 20
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3     # <malloc.h>
_ENVIRONMENT = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")

_in_effect: bool | None = None


def keep_frame_buffers() -> bool:
    """Set the policy for this process, once; True if it is in effect."""
    global _in_effect
    if _in_effect is None:
        _in_effect = _set()
    return _in_effect


def _set() -> bool:
    if platform.libc_ver()[0] != "glibc" or any(name in os.environ for name in _ENVIRONMENT):
        return False
    mallopt = ctypes.CDLL(None).mallopt
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
