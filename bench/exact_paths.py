"""Exact dice: how many outcome paths a second ruleval enumerates, on a dice battle of three dice
against two (each side's dice sorted, highest against highest: 7 776 outcomes), against the same
battle enumerated by plain Python over every combination of faces, in the same process.

    .venv/bin/python -m bench.exact_paths [--repeat N]

Goal (issue 21): at least 100 000 paths per second warm, the whole battle in well under 100 ms.
The two distributions are checked equal.
"""

from __future__ import annotations

import argparse
import itertools
import tempfile
import time
from collections import Counter
from fractions import Fraction
from pathlib import Path

BATTLE = """query battle =
  let a = reverse(sorted([roll(1d6), roll(1d6), roll(1d6)]));
  let d = reverse(sorted([roll(1d6), roll(1d6)]));
  len([1 for w in [a[0] > d[0], a[1] > d[1]] if w])
"""


def plain_python() -> dict[int, Fraction]:
    counts: Counter[int] = Counter()
    for faces in itertools.product(range(1, 7), repeat=5):
        a, d = sorted(faces[:3], reverse=True), sorted(faces[3:], reverse=True)
        counts[(a[0] > d[0]) + (a[1] > d[1])] += 1
    return {k: Fraction(v, 6 ** 5) for k, v in counts.items()}


def main(argv: list[str] | None = None) -> int:
    from validator import load_ruleset

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="ruleval-bench-"))
    (folder / "ruleval.toml").write_text("")
    (folder / "battle.rules").write_text(BATTLE)
    rs = load_ruleset(folder / "battle.rules")
    result = rs.run({}, query="battle", exact=True)  # warm: the query's code is written at its first run
    times, peer = [], []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        result = rs.run({}, query="battle", exact=True)
        times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        expected = plain_python()
        peer.append(time.perf_counter() - t0)
    got = {o["result"]: Fraction(o["probability"]) for o in result["outcomes"]}
    best, best_peer = min(times), min(peer)
    print(f"3 dice against 2, exact: {result['paths']} paths in {best * 1000:.1f} ms (best of {args.repeat}): "
          f"{result['paths'] / best:,.0f} paths/s; goal 100 000 paths/s, under 100 ms")
    print(f"plain Python over every combination of faces: {best_peer * 1000:.1f} ms; ruleval/plain = "
          f"{best_peer / best:.2f}; same distribution: {got == expected}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
