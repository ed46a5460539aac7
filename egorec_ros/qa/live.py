"""Live QA alarms while an episode is being recorded: conditions the operator must see now,
not at the verdict (a camera unplugged, SLAM lost, a glove gone quiet). From the last-sample
ages the recorder already keeps; the recorder publishes them in ~/status and as a /diagnostics WARN."""
from __future__ import annotations

from typing import Mapping

from egorec_ros.qa.thresholds import QaThresholds


def live_alarms(kinds: Mapping[str, str], ages_s: Mapping[str, float], thresholds: QaThresholds,
                recording: bool) -> list[str]:
    """``kinds``: stream id -> kind ("video", "slam", "glove", "imu", other); ``ages_s``: seconds since
    each stream's last sample (negative: none yet). One line per alarm, in stream order."""
    if not recording:
        return []
    out = []
    limit = thresholds.live_silent_s
    for sid, kind in kinds.items():
        age = ages_s.get(sid, -1.0)
        if age < 0:
            out.append(f"{sid}: no sample received yet")
        elif age > limit:
            what = {"slam": "SLAM lost", "glove": "glove silent"}.get(kind, "stream silent")
            out.append(f"{sid}: {what} for {age:.1f} s")
    return out
