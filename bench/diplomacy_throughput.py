"""Diplomacy movement-phase throughput: ruleval's standard ruleset against two peer adjudicators.

Usage: python -m bench.diplomacy_throughput [--turns N] [--rounds R] [--seed S]

The same random turns (bench.peers.dip_positions.random_turns, 34 units) are adjudicated by
ruleval (ruleset loaded once, then `.run(state)` per turn), by the `diplomacy` package and by `pydip`.
The engines take turns round by round (interleaved, each round in another order), so that machine
noise hits all of them alike; the cycle collector runs (untimed) before each engine's batch, so none
pays for another's garbage. Besides the rates over all rounds, each ratio is given as the median of
its per-round ratios, which a burst of noise in one round barely moves.
A peer that cannot be imported is skipped with a message.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.peers.dip_positions import random_turns  # noqa: E402

WARM_TURNS = 20


def engines() -> tuple[dict[str, Callable[[dict], Any]], list[Any]]:
    from validator import load_ruleset

    rs = load_ruleset(str(ROOT / "rulesets" / "diplomacy" / "standard.rules"))
    if not rs.ok:
        raise SystemExit("standard.rules does not check: " + "; ".join(d.message for d in rs.diagnostics))
    # `ruleval` validates each state against the JSON Schema first, as the API does by default;
    # `ruleval-noschema` is adjudication alone, which is what the peers do (they validate nothing).
    # a second, separately loaded copy for the row without schema checks: results a ruleset keeps
    # from one state to the next (state-free rules) must not come warm from the other row's run
    rs2 = load_ruleset(str(ROOT / "rulesets" / "diplomacy" / "standard.rules"), use_cache=False)
    rulesets = [rs, rs2]
    found: dict[str, Callable[[dict], Any]] = {"ruleval": rs.run,
                                               "ruleval-noschema": lambda st: rs2.run(st, validate=False)}
    for name, module in (("diplomacy", "bench.peers.engine_diplomacy"), ("pydip", "bench.peers.engine_pydip")):
        try:
            mod = __import__(module, fromlist=["adjudicate"])
            if hasattr(mod, "available") and not mod.available():
                raise ImportError(f"package `{name}` is not installed")
            found[name] = mod.adjudicate
        except ImportError as exc:
            print(f"skipping {name}: {exc}")
    return found, rulesets


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--turns", type=int, default=30)
    # (21 rounds of 30 turns: on a shared machine the median over 7 rounds moved by +-0.1 from run to
    # run, over 21 by about +-0.04)
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    # fresh turns every round (the same for every engine): no engine may gain from having seen a state
    turns = random_turns(args.seed, args.turns * args.rounds, 34)
    found, rulesets = engines()
    # warm-up, the same turns for every engine (map loading, caches; ruleval writes each rule's
    # function at its first call, which the warm turns make for most of them)
    warm = random_turns(args.seed + 10_000, WARM_TURNS, 34)
    for fn in found.values():
        for state in warm:
            fn(state)
    rounds: dict[str, list[float]] = {name: [] for name in found}
    names = list(found)
    for r in range(args.rounds):
        batch = turns[r * args.turns:(r + 1) * args.turns]
        for name in names[r % len(names):] + names[:r % len(names)]:  # each round starts with another engine
            fn = found[name]
            gc.collect()  # (untimed) no engine pays for collecting the garbage of the one before it
            started = time.perf_counter()
            for state in batch:
                fn(state)
            rounds[name].append(time.perf_counter() - started)
    total = args.turns * args.rounds
    rate = {name: total / sum(rounds[name]) for name in found}

    def median_ratio(a: str, b: str) -> float:
        """The median over rounds of a's rate over b's (b's time over a's)."""
        return statistics.median(tb / ta for ta, tb in zip(rounds[a], rounds[b]))

    print(f"steady state: {args.turns} turns x {args.rounds} rounds, 34 units, seed {args.seed}")
    for name in found:
        line = f"  {name:10s} {rate[name]:9.1f} turns/s"
        if not name.startswith("ruleval"):
            line += (f"   ruleval/{name} = {rate['ruleval'] / rate[name]:.2f}"
                     f" (adjudication only: {rate['ruleval-noschema'] / rate[name]:.2f});"
                     f" median of rounds {median_ratio('ruleval', name):.2f}"
                     f" ({median_ratio('ruleval-noschema', name):.2f})")
        print(line)
    fresh(args.seed, FRESH_TURNS, list(found))
    return 0


FRESH_TURNS = 200
_FRESH_CHILD = """
import sys, time
started = time.perf_counter()
sys.path.insert(0, sys.argv[1])
from bench.peers.dip_positions import random_turns
turns = random_turns(int(sys.argv[3]), int(sys.argv[4]), 34)
t0 = time.perf_counter()
if sys.argv[2] == "ruleval":
    from validator import load_ruleset
    rs = load_ruleset(sys.argv[1] + "/rulesets/diplomacy/standard.rules", use_cache=False)
    run = rs.run
else:
    import importlib
    run = importlib.import_module("bench.peers.engine_" + sys.argv[2]).adjudicate
for state in turns:
    run(state)
print(time.perf_counter() - t0)
"""


def fresh(seed: int, turns: int, names: list[str]) -> None:
    """Each engine in a process of its own, from its import to its last turn (ruleval: loading and
    checking the ruleset, writing its code as it is first called, validating each state): the
    figure of a command-line run or a short script, where the steady state is a long session's.
    The turns are made before the clock starts; the median of 3 processes each, the engines taking
    turns. ruleval's per-user cache folder is as any run but the very first finds it (parser tables,
    the data checks, parsed modules and compiled code: docs/architecture.md, "Caches"): one untimed
    process fills it first (and writes ruleval's bytecode, as installing a package does)."""
    import os
    import subprocess

    engines = [n for n in names if n in ("ruleval", "pydip", "diplomacy")]
    times: dict[str, list[float]] = {n: [] for n in engines}
    # a machine that writes no bytecode (PYTHONDONTWRITEBYTECODE, set in some sandboxes and CI images) would
    # have each of ruleval's processes compile its modules from source (a clean clone: 0.17 s of import
    # against 0.05 s), where the peers' modules were compiled when pip installed them, as a user's
    # installed ruleval's are: the untimed first process writes ruleval's bytecode, as bench.startup's does
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if "ruleval" in engines:
        subprocess.run([sys.executable, "-c", _FRESH_CHILD, str(ROOT), "ruleval", str(seed + 777), str(turns)],
                       capture_output=True, check=False, env=env)
    for _ in range(3):
        for name in engines:
            done = subprocess.run([sys.executable, "-c", _FRESH_CHILD, str(ROOT), name, str(seed + 777), str(turns)],
                                  capture_output=True, text=True, check=False, env=env)
            if done.returncode != 0:
                print(f"  fresh {name}: failed: {done.stderr.strip()[-300:]}")
                return
            times[name].append(float(done.stdout.strip().splitlines()[-1]))
    print(f"fresh process: the first {turns} turns, from import to the last result (median of 3 processes)")
    med = {n: statistics.median(ts) for n, ts in times.items()}
    for name in engines:
        line = f"  {name:10s} {turns / med[name]:9.1f} turns/s ({med[name]:.2f} s)"
        if name != "ruleval":
            line += (f"   ruleval/{name} = {med[name] / med['ruleval']:.2f} (median of rounds "
                     f"{statistics.median(b / a for a, b in zip(times['ruleval'], times[name])):.2f})")
        print(line)


if __name__ == "__main__":
    raise SystemExit(main())
