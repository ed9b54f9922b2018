"""The route study's figures (issue 46, item 5): the typed prototype of a movement turn against pydip.

Usage: python -m bench.route [--turns N] [--rounds R] [--seed S] [--instructions]

The prototype (``bench/route/typed_turn.py``: hand-derived Python mirroring what code generated
from the typed program would be) and pydip adjudicate the same 34-unit turns of
``bench.diplomacy_throughput`` in one process, round by round (each round starting with another
engine), after the same warm-up; ruleval's own engine (``run`` with and without the state check)
runs beside them for reference. Printed: turns a second over all rounds and the ratios to pydip
(also as the median of the per-round ratios). The prototype's results are checked against the
engine's on every turn before anything is timed (tests/test_route.py checks them on more turns
and on the DATC's movement cases).

With ``--instructions``: each engine counted by valgrind's callgrind in a process of its own, as
``bench.ab_instructions`` counts (``PYTHONHASHSEED=0``, warmed up, then N turns counted while
``itertools.starmap`` drives them): instructions a turn, and the ratio to pydip's. With
``--stages`` too: the prototype alone, stopped after reading the state and checking the orders, then
after preparing what the decisions read, then whole (where its instructions go).
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.peers.dip_positions import random_turns  # noqa: E402

WARM = 180  # turns before any is measured, as bench.ab_instructions warms up


def same_results(engine: dict[str, Any], proto: dict[str, Any] | None) -> bool:
    """The adjudication the prototype gives is the engine's: each order's status, the units after the
    turn, the dislodged units with their retreats, the standoffs and the units destroyed (not the
    texts of the reasons, which the prototype does not write)."""
    if proto is None:
        return False
    return ([o["status"] for o in engine["orders"]] == [o["status"] for o in proto["orders"]]
            and all(engine[k] == proto[k] for k in ("units", "dislodged", "standoffs", "destroyed")))


def engines() -> dict[str, Callable[[dict[str, Any]], Any]]:
    from bench.peers import engine_pydip
    from bench.route.typed_turn import Board, adjudicate
    from validator import load_ruleset

    board = Board()
    rs = load_ruleset(str(ROOT / "rulesets" / "diplomacy" / "standard.rules"))
    found: dict[str, Callable[[dict[str, Any]], Any]] = {
        "prototype": lambda st: adjudicate(board, st),
        "prototype-read": lambda st: adjudicate(board, st, "read"),
        "prototype-prepare": lambda st: adjudicate(board, st, "prepare"),
        "ruleval": rs.run,
        "ruleval-noschema": lambda st: rs.run(st, validate=False)}
    if engine_pydip.available():
        found["pydip"] = engine_pydip.adjudicate
    return found


_CHILD = """
import gc, itertools, sys
root, engine, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
sys.path.insert(0, root)
from bench.route.__main__ import engines, WARM
from bench.peers.dip_positions import random_turns
fn = engines()[engine]
turns = random_turns(0, WARM + n, 34)
for s in turns[:WARM]:
    fn(s)
gc.collect()
list(itertools.starmap(fn, [(s,) for s in turns[WARM:]]))
"""


def count(engine: str, n: int, out: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    return subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--collect-atstart=no",
                             "--toggle-collect=starmap_next", sys.executable, "-c", _CHILD, str(ROOT), engine, str(n)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


def instructions(n: int, names: list[str]) -> int:
    if shutil.which("valgrind") is None:
        print("--instructions needs valgrind", file=sys.stderr)
        return 2
    per = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:  # one at a time: the machine is shared
            out = Path(tmp) / f"{name}.out"
            proc = count(name, n, out)
            _, err = proc.communicate()
            if proc.returncode != 0:
                raise SystemExit(f"counting {name} failed:\n{err.decode(errors='replace')[-2000:]}")
            total = next(int(line.split()[1]) for line in out.read_text().splitlines()
                         if line.startswith(("summary:", "totals:")))
            per[name] = total / n
    for name in names:
        ratio = f"  {per[name] / per['pydip']:.2f}x pydip's" if "pydip" in per else ""
        print(f"{name:17s} {per[name] / 1e6:7.2f} M instructions a turn ({n} turns){ratio}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--turns", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--instructions", action="store_true", help="count instructions a turn with callgrind instead")
    ap.add_argument("--stages", action="store_true",
                    help="with --instructions: the prototype only, stopped after reading and checking the orders, "
                         "then after preparing the decisions' inputs, then whole")
    args = ap.parse_args(argv)
    found = engines()
    if "pydip" not in found:
        print("pydip is not installed: the ratios need it (pip install -e '.[test]')", file=sys.stderr)
        return 2
    if args.instructions and args.stages:
        return instructions(args.turns, ["prototype-read", "prototype-prepare", "prototype"])
    if args.instructions:
        return instructions(args.turns, ["prototype", "pydip", "ruleval-noschema", "ruleval"])
    warm = random_turns(args.seed + 10_000, WARM, 34)
    turns = random_turns(args.seed, args.turns * args.rounds, 34)
    differ = [i for i, st in enumerate(warm + turns) if not same_results(found["ruleval"](st), found["prototype"](st))]
    if differ:
        print(f"the prototype differs from the engine on {len(differ)} turns (first: {differ[0]})", file=sys.stderr)
        return 1
    for fn in found.values():
        for st in warm:
            fn(st)
    names = [name for name in found if not name.startswith("prototype-")]
    rounds: dict[str, list[float]] = {name: [] for name in names}
    for r in range(args.rounds):
        batch = turns[r * args.turns:(r + 1) * args.turns]
        for name in names[r % len(names):] + names[:r % len(names)]:
            fn = found[name]
            gc.collect()
            t0 = time.perf_counter()
            for st in batch:
                fn(st)
            rounds[name].append(time.perf_counter() - t0)
    n = args.turns * args.rounds
    print(f"{n} turns of 34 units ({args.rounds} rounds of {args.turns}), each engine's results the same as the engine's")
    for name in names:
        rate = n / sum(rounds[name])
        median = statistics.median(p / s for p, s in zip(rounds["pydip"], rounds[name]))
        print(f"{name:17s} {rate:8.0f} turns/s  {rate / (n / sum(rounds['pydip'])):5.2f}x pydip "
              f"(median of rounds {median:.2f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
