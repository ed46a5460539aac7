"""Why an episode built no row, in words a user can act on."""
from __future__ import annotations

from collections.abc import Mapping

from egorec_ros.assembly.counts import MEANINGS
from egorec_ros.recorder.stamp_lag import StampLag, describe_all
from egorec_ros.rig.kinds import StreamKind
from egorec_ros.rig.model import Rig


def no_rows_reason(rig: Rig, streams: Mapping[str, Mapping[str, int]],
                   lags: Mapping[str, StampLag] | None = None, latency_ns: int = 0) -> str:
    """Why an episode built no row, from where its video samples went (the episode's counts):
    "no video delivered" and "every frame came too late" need different fixes. ``lags``: how
    far each stream's stamps were behind their arrival (the recorder's ``stamp_lag``); every
    publisher beyond the latency budget ``latency_ns`` is named, with what to do."""
    lagging = describe_all(lags or {}, latency_ns)
    behind = ("; publishers whose stamps are behind the recorder's clock: " + "; ".join(lagging)) if lagging else ""
    return _counts_reason(rig, streams) + behind


def _counts_reason(rig: Rig, streams: Mapping[str, Mapping[str, int]]) -> str:
    fates: list[str] = []
    kinds: set[str] = set()
    for spec in rig.streams.values():
        counts = streams.get(spec.id, {})
        if spec.kind in (StreamKind.VIDEO, StreamKind.DEPTH) and counts.get("received"):
            fates.append(f"{spec.id}: " + ", ".join(f"{n} {k}" for k, n in counts.items()))
            kinds.update(k for k in counts if k not in ("received", "used"))
    if not fates:
        return "no video stream delivered a sample during the episode"
    return ("video samples arrived but none made a row: " + "; ".join(fates) + " ("
            + "; ".join(f"{k}: {MEANINGS[k]}" for k in sorted(kinds) if k in MEANINGS)
            + "; stamps far behind the recorder's clock mean a publisher lagging or a clock apart)")
