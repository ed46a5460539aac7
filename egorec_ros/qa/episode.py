"""The verdict of one episode from what it holds: drop_stats, the per-frame figures of its
videos, and the few data columns the sensor checks read. Called at every commit (live record,
convert, salvage) before the episode row is written; the row keeps it under ``qa``."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import pyarrow.parquet as pq

from egorec_ros.codecs.frame_stats import FrameSeries
from egorec_ros.qa.sensors import glove_checks, qa_columns, sensor_checks
from egorec_ros.qa.streams import clock_notes, salvage_check, stream_checks
from egorec_ros.qa.thresholds import QaThresholds, thresholds_from
from egorec_ros.qa.verdict import Finding, Verdict, judge
from egorec_ros.qa.video import video_checks


def episode_verdict(data: Path, fps: float, drop_stats: Mapping[str, Any],
                    frames: Mapping[str, tuple[str, FrameSeries]], thresholds: QaThresholds,
                    feature_stats: Mapping[str, Mapping] | None = None) -> Verdict:
    """``data``: the episode's data parquet (staged or committed); ``frames``: image_key ->
    (kind, figures), only the streams whose figures were gathered (a salvage has none);
    ``feature_stats``: the episode's own statistics (the row's ``stats``), for the glove check."""
    findings: list[Finding] = []
    figures: dict[str, Any] = {}
    parquet = pq.ParquetFile(data)      # not pq.read_table: its dataset layer costs ~0.1 s more a call
    table = parquet.read(columns=qa_columns(parquet.schema_arrow.names))
    figures["streams"] = stream_checks(drop_stats, thresholds, findings)
    salvage_check(drop_stats, findings)
    figures["videos"] = video_checks(frames, fps, thresholds, findings)
    figures["sensors"] = sensor_checks(table, fps, thresholds, findings)
    figures["sensors"].update(glove_checks(feature_stats or {}, table.num_rows, thresholds, findings))
    notes = clock_notes(drop_stats)
    if notes:
        figures["notes"] = notes
    return judge(findings, figures)


def row_verdict(data: Path, fps: float, qa_block: Mapping[str, Any] | None, drop_stats: Mapping[str, Any],
                frames: Mapping[str, tuple[str, FrameSeries]], feature_stats: Mapping[str, Mapping]) -> dict:
    """The episode row's ``qa`` value. QA never costs an episode its commit: when it fails, the
    value says why there is no verdict. Without frame figures (a salvage: its frames never went
    through this process's encoders) the camera checks are left out and said so."""
    try:
        verdict = episode_verdict(data, fps, drop_stats, frames, declared_thresholds(qa_block),
                                  feature_stats).to_json()
    except Exception as exc:  # noqa: BLE001 - reported in the row, the commit goes on
        return {"error": f"QA could not be computed: {type(exc).__name__}: {exc}"}
    if not frames:
        verdict["figures"]["videos"] = "not checked: no per-frame figures (salvaged episode)"
    return verdict


def declared_thresholds(qa: Mapping[str, Any] | None) -> QaThresholds:
    """The thresholds a Declaration carries (the rig's qa: block), defaults where absent."""
    return thresholds_from(qa or None, "declaration")
