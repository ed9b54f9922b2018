"""Benchmark: the exact outcome distribution of one Here I Stand move (three possible interceptors
in impulse order, then an avoid-battle attempt, then the field battle, rolled: each side's hits and
the winner) against a Monte Carlo run of the same action with 100 000 seeded rolls, same ruleset,
same process.

    .venv/bin/python bench/his_exact.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import time
from fractions import Fraction
from pathlib import Path

import validator

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "rulesets" / "his" / "his.rules"

# Ottoman (cavalry), England and France next to d; French units in d may avoid battle. The same
# state is a test fixture (tests/test_his.py), so the benchmark measures what the tests check.
STATE = json.loads((ROOT / "rulesets" / "his" / "examples" / "three_interceptors_and_avoid.json")
                   .read_text(encoding="utf-8"))
KEEP = ("status", "intercepted_by", "avoided_to", "withdrew", "battle", "leader_captured")


def key(result: dict) -> str:
    return json.dumps({k: result.get(k) for k in KEEP}, sort_keys=True)


def end_of(result: dict) -> str:
    """How the move ends, in a few words: who intercepted, avoid or withdrawal, who won the battle."""
    battle = result.get("battle")
    parts = [f"intercepted by {result['intercepted_by']}" if result.get("intercepted_by") else "no interception"]
    if result.get("avoided_to"):
        parts.append("avoided")
    if result.get("withdrew"):
        parts.append("withdrew")
    if result.get("leader_captured"):
        parts.append("leader captured")
    parts.append(f"battle won by the {battle['winner']}" if battle else "no battle")
    return ", ".join(parts)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=20, help="exact runs to average")
    args = ap.parse_args()
    rs = validator.load_ruleset(RULES)
    assert rs.ok, rs.diagnostics

    t0 = time.perf_counter()
    exact = rs.run(STATE, exact=True)  # first run: includes checking the state against the schema
    first = time.perf_counter() - t0
    # warm: each rule's function is written at its first call, which would otherwise be averaged in
    rs.run(STATE, exact=True)
    t0 = time.perf_counter()
    for _ in range(args.repeat):
        exact = rs.run(STATE, exact=True)
    t_exact = (time.perf_counter() - t0) / args.repeat
    dist: dict[str, Fraction] = {}
    for o in exact["outcomes"]:
        dist[key(o["result"])] = dist.get(key(o["result"]), Fraction(0)) + Fraction(o["probability"])

    t0 = time.perf_counter()
    counts: dict[str, int] = {}
    for seed in range(args.runs):
        k = key(rs.run(STATE, seed=seed))
        counts[k] = counts.get(k, 0) + 1
    t_mc = time.perf_counter() - t0

    worst = max(abs(counts.get(k, 0) / args.runs - float(p)) for k, p in dist.items())
    unknown = set(counts) - set(dist)
    print(f"exact: {len(dist)} outcomes, {exact['paths']} paths, total {exact['total']}")
    for k, p in sorted(dist.items(), key=lambda kv: -kv[1]):
        print(f"  {str(p):>10} {float(p):.4f}  mc {counts.get(k, 0) / args.runs:.4f}  {k}")
    ends: dict[str, Fraction] = {}
    for o in exact["outcomes"]:
        ends[end_of(o["result"])] = ends.get(end_of(o["result"]), Fraction(0)) + Fraction(o["probability"])
    print("by the move's end:")
    for e, p in sorted(ends.items(), key=lambda kv: -kv[1]):
        print(f"  {str(p):>12} {float(p):.4f}  {e}")
    print(f"exact time:       {t_exact * 1000:.2f} ms warm (first run {first * 1000:.2f} ms)")
    print(f"monte carlo time: {t_mc * 1000:.0f} ms for {args.runs} seeded runs")
    print(f"ratio mc/exact:   {t_mc / t_exact:.0f}x")
    print(f"max |freq - p|:   {worst:.4f}" + (f"  (outcomes not in the exact set: {len(unknown)})" if unknown else ""))


if __name__ == "__main__":
    main()
