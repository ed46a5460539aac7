"""A validation finding: which file, which column or key, which rule (§), what is wrong."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class Finding:
    file: str          # path relative to the task dir
    where: str         # column, key or stream ("" for the file as a whole)
    rule: str          # spec section, e.g. "§8.1.3", or "DESIGN:video-integrity"
    message: str

    def __str__(self) -> str:
        where = f" [{self.where}]" if self.where else ""
        return f"{self.file}{where} ({self.rule}): {self.message}"

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class Findings:
    """Collects findings for one file at a time."""

    items: list[Finding] = field(default_factory=list)

    def add(self, file: str, where: str, rule: str, message: str) -> None:
        self.items.append(Finding(file, where, rule, message))

    def __iter__(self):
        return iter(self.items)
