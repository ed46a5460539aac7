"""The tick grid t_i = t0 + i / fps in integer nanoseconds, computed from i (never by
adding a rounded period), so it cannot drift however long the episode."""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction


@dataclass(frozen=True)
class TickGrid:
    t0: int
    fps: Fraction

    @classmethod
    def at(cls, t0: int, fps: float) -> "TickGrid":
        return cls(int(t0), Fraction(fps).limit_denominator(1001))

    def tick(self, i: int) -> int:
        return self.t0 + (i * 10**9 * self.fps.denominator) // self.fps.numerator

    def index_at_or_after(self, t: int) -> int:
        """Smallest i with tick(i) >= t."""
        num, den = self.fps.numerator, self.fps.denominator
        i = max(0, -(-(t - self.t0) * num // (10**9 * den)))
        while i > 0 and self.tick(i - 1) >= t:
            i -= 1
        while self.tick(i) < t:
            i += 1
        return i

    def nearest(self, t: int) -> int:
        """Index of the tick nearest ``t`` (the earlier one on a tie), never below 0."""
        i = self.index_at_or_after(t)
        if i > 0 and t - self.tick(i - 1) <= self.tick(i) - t:
            return i - 1
        return i
