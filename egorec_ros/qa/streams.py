"""drop_stats checks (§7.1): per stream, the share of rows repeated and of samples late or
invalid, judged like the record/convert summaries (above 5 % is HIGH: a warning), plus the clock
notes a conversion left and samples the recorder restamped."""
from __future__ import annotations

from typing import Any, Mapping

from egorec_ros.qa.thresholds import QaThresholds
from egorec_ros.qa.verdict import REDO, WARN, Finding


def stream_checks(drop_stats: Mapping[str, Any], t: QaThresholds, findings: list[Finding]) -> dict:
    """Appends findings; returns {stream: {count kind: share}} for the streams with any problem."""
    figures: dict[str, dict] = {}
    for sid, counts in sorted((drop_stats.get("streams") or {}).items()):
        if not isinstance(counts, Mapping):
            continue
        used, received = int(counts.get("used", 0)), int(counts.get("received", 0))
        shares = {}
        if counts.get("repeated"):
            shares["repeated"] = counts["repeated"] / max(1, used + counts["repeated"])
        for kind in ("late", "invalid", "restamped"):
            if counts.get(kind):
                shares[kind] = counts[kind] / max(1, received)
        if counts.get("excluded"):
            findings.append(Finding(REDO, "excluded", f"{sid}: left out of the episode (silent at its start)"))
        for kind, share in shares.items():
            warn, redo = {"repeated": (t.repeated_warn, t.repeated_redo), "late": (t.late_warn, None),
                          "invalid": (t.invalid_warn, None), "restamped": (t.late_warn, None)}[kind]
            level = REDO if redo is not None and share >= redo else WARN if share > warn else None
            if level:
                findings.append(Finding(level, kind, f"{sid}: {kind} {counts[kind]} ({100 * share:.1f} %)"))
        if shares:
            figures[sid] = {k: round(v, 4) for k, v in shares.items()}
    return figures


def salvage_check(drop_stats: Mapping[str, Any], findings: list[Finding]) -> None:
    """A salvaged episode ends where the crash stopped it: worth a look before keeping it."""
    salvaged = drop_stats.get("salvaged")
    if isinstance(salvaged, Mapping):
        left_out = salvaged.get("left_out_videos") or []
        findings.append(Finding(WARN, "salvaged", f"recovered after an interrupted recording (kept "
                                f"{salvaged.get('kept_rows', '?')} of {salvaged.get('journal_rows', '?')} journaled "
                                "rows): check that it ends where it should"
                                + (f"; videos left out: {', '.join(map(str, left_out))}" if left_out else "")))


def clock_notes(drop_stats: Mapping[str, Any]) -> list[str]:
    """The conversion's clock decisions (drop_stats.notes) and a salvage's notes: shown with the
    verdict, not judged (they explain, e.g., an offset applied to a device clock)."""
    notes = [str(n) for n in drop_stats.get("notes") or []]
    salvaged = drop_stats.get("salvaged")
    if isinstance(salvaged, Mapping):
        notes += [f"salvaged: {n}" for n in salvaged.get("notes") or []]
    return notes
