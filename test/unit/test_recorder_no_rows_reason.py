"""When a live episode builds no row, the log says whether video never came or came too late."""
from __future__ import annotations

from egorec_ros.recorder.no_rows import no_rows_reason
from egorec_ros.recorder.stamp_lag import StampLag, track
from egorec_ros.rig.load import load_rig


def test_no_video_and_late_video_are_told_apart():
    rig = load_rig("uvc_pair")
    assert no_rows_reason(rig, {}) == "no video stream delivered a sample during the episode"
    videos = [s.id for s in rig.streams.values() if s.slot]
    text = no_rows_reason(rig, {videos[0]: {"received": 40, "late": 12, "outside": 28}})
    assert f"{videos[0]}: 40 received, 12 late, 28 outside" in text
    assert "arrived after its row's deadline" in text and "before the episode's first row" in text


def test_each_publisher_behind_is_named_with_its_lag_and_what_to_do():
    """Issue 24 item 4: an episode of samples whose stamps lagged seconds behind now said only
    'outside'/'late'; now each publisher beyond the budget is named, steady and growing apart."""
    rig = load_rig("uvc_pair")
    cam0, cam1 = sorted(s.id for s in rig.streams.values() if s.slot)
    lags: dict[str, StampLag] = {}
    for k in range(30):     # cam0 steady 2 s behind; cam1 falling behind, 0.5 s more every second
        track(lags, cam0, 10**10 + k * 33_000_000, 10**10 + k * 33_000_000 - 2_000_000_000)
        track(lags, cam1, 10**10 + k * 33_000_000, 10**10 - 1_000_000_000 + k * 16_500_000)
    text = no_rows_reason(rig, {cam0: {"received": 30, "outside": 30}}, lags, latency_ns=150_000_000)
    assert f"{cam0}: stamps 2.00 s behind their arrival" in text and "steady" in text
    assert "latency budget above 2050 ms (--latency-ms" in text
    assert f"{cam1}: stamps 1.00-1.48 s behind" in text and "falling behind" in text
    assert text.index(cam0 + ": stamps") < text.index(cam1 + ": stamps"), "the worst first"
    within = {cam0: StampLag(20_000_000, 40_000_000, 30_000_000)}
    assert "behind the recorder's clock" not in no_rows_reason(rig, {}, within, latency_ns=150_000_000)
