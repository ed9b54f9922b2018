"""Figures of many runs: shares with their confidence intervals, and counts grouped by a key, as
``diff`` (how often two rulesets differ, and where) and ``balance`` (how a variant's games end)
report them."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable

Z95 = 1.959963984540054  # the normal quantile of a two-sided 95 % interval


@dataclass(frozen=True)
class Share:
    """``k`` of ``n``, with its 95 % Wilson score interval: unlike the normal approximation, it stays
    inside 0-1 and is honest for shares near 0 or 1 and for small ``n`` (0 of 20 is not "0 %, ±0")."""

    k: int
    n: int

    @property
    def value(self) -> float:
        return self.k / self.n if self.n else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        if not self.n:
            return 0.0, 1.0
        p, n, z2 = self.value, self.n, Z95 * Z95
        centre = (p + z2 / (2 * n)) / (1 + z2 / n)
        half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
        return max(0.0, centre - half), min(1.0, centre + half)

    def to_json(self) -> dict[str, Any]:
        low, high = self.interval
        return {"count": self.k, "of": self.n, "share": round(self.value, 4), "ci95": [round(low, 4), round(high, 4)]}

    def text(self, interval: bool = True) -> str:
        """``k of n (share%, 95% CI low%-high%)``; without ``interval`` (a count of all there is, not a sample),
        ``k of n (share%)``."""
        if not interval:
            return f"{self.k} of {self.n} ({_pct(self.value)})"
        low, high = self.interval
        return f"{self.k} of {self.n} ({_pct(self.value)}, 95% CI {_pct(low)}-{_pct(high)})"


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def grouped(keys: Iterable[Iterable[str]]) -> list[tuple[str, int]]:
    """How many runs name each key (a run counted once per key it names), most first, then by key."""
    counts: Counter[str] = Counter()
    for ks in keys:
        counts.update(set(ks))
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def group_lines(title: str, groups: list[tuple[str, int]], cap: int) -> list[str]:
    """A group's lines: its title, then up to ``cap`` keys with their counts, and how many more."""
    if not groups:
        return []
    width = max(len(k) for k, _ in groups[:cap])
    lines = [f"  {title}:"] + [f"    {k.ljust(width)}  {n}" for k, n in groups[:cap]]
    if len(groups) > cap:
        lines.append(f"    ... {len(groups) - cap} more (--format json has them all)")
    return lines
