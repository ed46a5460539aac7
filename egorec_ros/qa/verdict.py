"""The QA verdict of one episode, as stored under the episode row's ``qa`` key (JSON):
``{"verdict": "ok"|"warn"|"redo", "reasons": [str], "figures": {check: {...}}}``.

An episode row without the key (older episodes, or a commit that could not compute it) has
no verdict: readers show "" rather than guessing."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

OK, WARN, REDO = "ok", "warn", "redo"
LEVELS = (OK, WARN, REDO)


@dataclass(frozen=True)
class Finding:
    level: str          # warn | redo
    check: str          # e.g. "frozen", "gap", "slam_lost"
    reason: str         # one line the operator reads


@dataclass(frozen=True)
class Verdict:
    verdict: str
    reasons: tuple[str, ...] = ()
    figures: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "reasons": list(self.reasons), "figures": self.figures}


def judge(findings: list[Finding], figures: Mapping[str, Any]) -> Verdict:
    """The worst level found decides; redo reasons come first."""
    order = sorted(findings, key=lambda f: -LEVELS.index(f.level))
    level = order[0].level if order else OK
    return Verdict(level, tuple(f"{f.level}: {f.reason}" for f in order), dict(figures))


def summary_lines(qa: Mapping[str, Any] | None, keep: int = 8) -> list[str]:
    """The verdict for an episode summary: "QA: redo", then its reasons (the first ``keep``)."""
    verdict, reasons = from_row(qa)
    if not verdict:
        error = (qa or {}).get("error")
        return [f"QA: not computed ({error})"] if error else []
    more = [f"  ... {len(reasons) - keep} more (egorec inspect)"] if len(reasons) > keep else []
    return [f"QA: {verdict}"] + [f"  {r}" for r in reasons[:keep]] + more


def from_row(qa: Mapping[str, Any] | None) -> tuple[str, list[str]]:
    """(verdict, reasons) of an episode row's ``qa`` value; ("", []) when it has none."""
    if not qa or qa.get("verdict") not in LEVELS:
        return "", []
    return str(qa["verdict"]), [str(r) for r in qa.get("reasons", [])]
