"""When a live episode builds no row, the log says whether video never came or came too late."""
from __future__ import annotations

from egorec_ros.recorder.no_rows import no_rows_reason
from egorec_ros.rig.load import load_rig


def test_no_video_and_late_video_are_told_apart():
    rig = load_rig("uvc_pair")
    assert no_rows_reason(rig, {}) == "no video stream delivered a sample during the episode"
    videos = [s.id for s in rig.streams.values() if s.slot]
    text = no_rows_reason(rig, {videos[0]: {"received": 40, "late": 12, "outside": 28}})
    assert f"{videos[0]}: 40 received, 12 late, 28 outside" in text
    assert "arrived after its row's deadline" in text and "before the episode's first row" in text
