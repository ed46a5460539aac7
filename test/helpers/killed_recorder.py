"""A live recording that a test kills with SIGKILL: ``python killed_recorder.py TASK REPORT``.

The real live path (simulated devices -> Recorder -> TaskWriter, encoders and row sink on
their threads) records one endless episode of ``uvc_pair`` at 160x120. Every 10 ms the
child overwrites REPORT with "ROWS QUEUED": the rows built so far, and how many of them
were still queued in memory (the largest encoder backlog in frames, or the row sink's
backlog in rows), so after the kill the test knows how many rows existed (to within the
rows of the last 10 ms), and how many a machine too busy to keep up still held in memory,
and can compare with what `egorec recover --salvage` keeps.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

SIZE = (160, 120)
RIG = "uvc_pair"


def main(task: Path, report: Path) -> None:
    from egorec_ros.recorder.session import Recorder
    from egorec_ros.rig.load import load_rig
    from egorec_ros.rig.resize import with_video_sizes
    from egorec_ros.sim.flaws import CLEAN
    from egorec_ros.sim.live import LiveRig
    from egorec_ros.store import TaskWriter, episode_writer

    rig = with_video_sizes(load_rig(RIG), SIZE)
    fd = os.open(report, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    with TaskWriter(task) as writer:
        recorder = Recorder(rig, writer)
        with LiveRig(rig, recorder.on_sample, seed=7, flaws=CLEAN):
            recorder.start_episode()
            per_buffer = max(1, int(rig.fps * episode_writer.JOURNAL_SECONDS))
            while True:
                status = recorder.status()
                frames = max((n for key, n in status.backlog.items() if key != "rows"), default=0)
                queued = max(frames, status.backlog.get("rows", 0) * per_buffer)
                os.pwrite(fd, f"{status.rows:12d} {queued:12d}\n".encode(), 0)
                time.sleep(0.01)


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
