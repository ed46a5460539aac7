"""Uploading while a recording runs leaves that recording's late and repeated counts as they are
without the upload: the same 3 s `egorec record --sim` is made without an upload, with one, and
without again, and the run with the upload may not exceed the worse run without by more than
what chance alone gives.

Why this comparison. The two runs without an upload bracket the one with it in time, so they
measure what the machine's load alone does to this recording in this minute (on a quiet machine
all are 0; on a shared one they are not). Late and repeated counts are tallies of rare events
(a frame that came after its row's deadline), spread like Poisson counts: standard deviation
about the square root of the count. The tolerance is 3 of those over the worse bracket (and 3
when the brackets saw 0 or 1): were the load's noise Poisson, it alone would fail the test in
well under 1 % of runs, while an upload that costs the recording a frame in 25 or more (4 of its
90 rows) fails it. A shared machine's load comes in bursts (brackets of 0 and 60 within a minute
were seen at load 40), which no tolerance of this kind covers: a burst that hits only the middle
run fails it, so judge a failure there with `uptime` in mind. Comparing with the worse bracket
and no tolerance (the earlier version of this test) is not sound: with three runs equally
disturbed by the load, the middle one is the worst a third of the time.

The upload is `egorec upload` of a 512 MiB episode at 400 Mbit/s in its own process, started
with the recording, so building its slice (a copy with CRC and sha256 of every byte, then an
fsync) and sending it both overlap the recording; it lowers itself below the recorder (niceness
+10, idle I/O class). The server stands for a remote machine and runs at niceness 19.

The recordings and the upload run on one core: what the upload takes then comes out of the
recorder's share, as on a busy robot PC, instead of being hidden on another core. Whether the
test can fail was checked with the upload at the recorder's priority, in the default I/O class
and unlimited (1 GiB, to last the recording), on 2 cores shared with other work (load 22-43):
one of three runs failed (6 and 6 problems per stream against 0 and 0 in both brackets, over
the tolerance of 3), two passed (1/1 against 0-2/0, and 0/0 against 0/0). A 2 x 320x240
recording needs little of the core, so even an upload of equal priority rarely delays it past
its latency budget; a heavier recording (2 x 640x480) was no better a probe: on that shared
machine it alone had 25-53 problems per stream. On a dedicated machine (CI) the brackets are 0."""
from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from helpers.upload import make_task, upload_server

from egorec_ros.schema.episode_row import read_episode_row
from egorec_ros.upload.slice import video_files

RECORD = ["record", "--sim", "--clean", "--rig", "uvc_pair", "--size", "320x240", "--seconds", "3"]
UPLOAD_MIB, LIMIT_MBPS = 512, ["--limit-mbps", "400"]


def on_one_core() -> None:
    """Run the child on one core (the first this process may use): see the module's docstring."""
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def problem_counts(out: Path) -> dict[str, int]:
    """late + repeated per stream, from the episode row's drop_stats."""
    row = read_episode_row(out / "uvc_pair" / "meta" / "episodes" / "chunk-000" / "episode-000.parquet")
    return {sid: c.get("late", 0) + c.get("repeated", 0) for sid, c in row["drop_stats"]["streams"].items()}


def record(out: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "egorec_ros.cli", *RECORD, "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, preexec_fn=on_one_core)


def finished(proc: subprocess.Popen, out: Path) -> dict[str, int]:
    text, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, text
    return problem_counts(out)


def tolerance(without: int) -> int:
    """How far a run with the upload may exceed the worse run without by chance: 3 standard
    deviations of a Poisson count of that size, at least 3 (see the module's docstring)."""
    return math.ceil(3 * math.sqrt(max(1, without)))


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="runs the recorder and the upload on one core (Linux)")
def test_a_recording_is_not_disturbed_by_an_upload(tmp_path: Path) -> None:
    before = finished(record(tmp_path / "before"), tmp_path / "before")
    root = tmp_path / "rec"
    task = make_task(root, "big", [1])
    with open(video_files(task, 1)["gripper_rgb"], "r+b") as f:
        f.truncate(UPLOAD_MIB << 20)
    with upload_server(tmp_path / "srv", discard=True) as server:
        os.setpriority(os.PRIO_PROCESS, server.proc.pid, 19)
        upload = subprocess.Popen([sys.executable, "-m", "egorec_ros.cli", "upload", str(task), "--server", server.url,
                                   *LIMIT_MBPS], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                  preexec_fn=on_one_core)
        try:
            rec = record(tmp_path / "during")          # the slice is built and sent while this records
            during = finished(rec, tmp_path / "during")
            assert upload.poll() is None and not server.received(), \
                "the upload ended before the recording did: the end of the recording was not measured"
            io_class = psutil.Process(upload.pid).ionice().ioclass       # it lowered itself as it says
            sending = bool(server.inflight())
        finally:
            upload.kill()
            _, err = upload.communicate(timeout=10)
    after = finished(record(tmp_path / "after"), tmp_path / "after")
    print(f"late + repeated per stream, without upload: before {before}, after {after}; "
          f"with the upload: {during}; allowed: {({s: max(before[s], after[s]) + tolerance(max(before[s], after[s])) for s in during})}; "
          f"load {os.getloadavg()[0]:.1f}; at its end the upload was {'sending' if sending else 'building its slice'}")
    assert io_class == psutil.IOPRIO_CLASS_IDLE, err
    assert during.keys() == before.keys() == after.keys()
    for sid, n in during.items():
        worse = max(before[sid], after[sid])
        assert n <= worse + tolerance(worse), (sid, n, worse)
