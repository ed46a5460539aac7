"""A counted problem and where it was first seen: how the converter reports bad
input it can carry on with (dropped samples, odd stamps) instead of stopping."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Issue:
    count: int = 0
    first_ns: int | None = None     # bag time of the first occurrence
    first: str = ""                 # what and where, for the first occurrence

    def add(self, log_ns: int, detail: str) -> None:
        if not self.count:
            self.first_ns, self.first = log_ns, detail
        self.count += 1

    def __bool__(self) -> bool:
        return self.count > 0
