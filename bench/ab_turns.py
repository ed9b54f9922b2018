"""Diplomacy turn time of this checkout against another one (the baseline): an A/B measurement of a
change, as used to decide which speed-ups to keep.

Usage: python -m bench.ab_turns OTHER_TREE [--runs N] [--turns T] [--validate]

OTHER_TREE is another checkout of ruleval, e.g. the commit before a change:
`git worktree add /tmp/base HEAD~1` (remove it afterwards with `git worktree remove /tmp/base`).
Each run starts a fresh process per tree, the two trees taking turns (interleaved, so that noise of
the machine hits both alike). A process loads the standard Diplomacy ruleset, warms up on 180 turns
(`WARM_UP`, which bench.ab_instructions shares), then times 5 batches of T fresh random turns and
reports its best batch (ms per turn). Printed:
each tree's median and best over the runs, and the ratio of the medians (above 1: this checkout is
faster). On a noisy machine a change of 1-2% needs 9 to 15 runs to show.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Run in the tree measured (which may be an older commit: it uses only long-standing names). Given
# `root`, the number of turns to measure `measured` and `validate`: the ruleset `rs` warmed up on the
# first 180 of `turns`. bench.ab_instructions warms up the same way.
WARM_UP = """
import gc, itertools, os, sys, time
sys.path.insert(0, root)
os.chdir(root)
from bench.peers.dip_positions import random_turns
from validator import load_ruleset
rs = load_ruleset("rulesets/diplomacy/standard.rules", use_cache=False)
turns = random_turns(0, 180 + measured, 34)
for s in turns[:180]:
    rs.run(s, validate=validate)
"""

_CHILD = """
import sys
root, n, validate = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
measured = 5 * n
""" + WARM_UP + """
best = float("inf")
for b in range(5):
    batch = turns[180 + b * n:180 + (b + 1) * n]
    gc.collect()
    started = time.perf_counter()
    for s in batch:
        rs.run(s, validate=validate)
    best = min(best, (time.perf_counter() - started) / n * 1e3)
print(best)
"""


def time_tree(tree: Path, turns: int, validate: bool) -> float:
    """Milliseconds per turn in a fresh process running ``tree``'s code (its best of 5 batches)."""
    done = subprocess.run([sys.executable, "-c", _CHILD, str(tree), str(turns), "1" if validate else "0"],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"timing {tree} failed:\n{done.stderr.strip()}")
    return float(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("other", type=Path, help="another checkout of ruleval: the baseline")
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--turns", type=int, default=300, help="turns per timed batch")
    ap.add_argument("--validate", action="store_true", help="check each state as the API does by default")
    args = ap.parse_args(argv)
    other = args.other.resolve()
    if not (other / "validator").is_dir() or not (other / "rulesets" / "diplomacy" / "standard.rules").is_file():
        raise SystemExit(f"{other} is not a checkout of ruleval")
    trees = {"this": ROOT, "other": other}
    times: dict[str, list[float]] = {name: [] for name in trees}
    for r in range(args.runs):
        for name in (list(trees) if r % 2 == 0 else list(trees)[::-1]):  # each run starts with the other tree
            times[name].append(time_tree(trees[name], args.turns, args.validate))
    for name, tree in trees.items():
        print(f"  {name:5s} {tree}: median {statistics.median(times[name]):.4f} ms/turn, "
              f"best {min(times[name]):.4f} ({args.runs} runs)")
    ratio = statistics.median(times["other"]) / statistics.median(times["this"])
    print(f"  this checkout is {ratio:.3f}x the speed of the other (median over median)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
