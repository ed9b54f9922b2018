"""Instructions a Diplomacy turn takes in this checkout and in another (the baseline), counted by
valgrind's callgrind: the count does not move with the load of the machine, so a change of a few
tenths of a percent shows in one run, where timings (``bench.ab_turns``) need many.

Usage: python -m bench.ab_instructions OTHER_TREE [--turns N]

Each tree runs in a process of its own under callgrind (the two at once): it loads the standard
ruleset, warms up on 180 turns, then runs N fresh random turns (validated, as the API does by default). Only those N turns
are counted: callgrind collects while ``itertools.starmap`` drives them, which nothing else in the
run uses. Printed: each tree's instructions per turn and their ratio (below 1: this checkout runs
fewer). Needs valgrind; about a minute for 60 turns. Instructions are not time (cache misses and
branches are left out), so a change kept on this count is confirmed by ``bench.ab_turns``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.ab_turns import WARM_UP

ROOT = Path(__file__).resolve().parent.parent

# Run in the tree measured: warmed up as bench.ab_turns warms up, then the counted turns, validated.
_CHILD = """
import sys
root, measured, validate = sys.argv[1], int(sys.argv[2]), True
""" + WARM_UP + """
gc.collect()
list(itertools.starmap(rs.run, [(s,) for s in turns[180:]]))
"""


def _start(tree: Path, turns: int, out: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONHASHSEED": "0"}  # the same dict and set layouts in every run
    return subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--collect-atstart=no",
                             "--toggle-collect=starmap_next", sys.executable, "-c", _CHILD, str(tree), str(turns)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)


def _count(out: Path) -> int:
    for line in out.read_text().splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise SystemExit(f"no total in {out}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("other", type=Path, help="another checkout of ruleval: the baseline")
    ap.add_argument("--turns", type=int, default=60, help="turns counted")
    args = ap.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("bench.ab_instructions needs valgrind (e.g. `apt install valgrind`)", file=sys.stderr)
        return 2
    other = args.other.resolve()
    if not (other / "validator").is_dir() or not (other / "rulesets" / "diplomacy" / "standard.rules").is_file():
        raise SystemExit(f"{other} is not a checkout of ruleval")
    with tempfile.TemporaryDirectory() as tmp:
        outs = {tree: Path(tmp) / f"{i}.out" for i, tree in enumerate((ROOT, other))}
        runs = {tree: _start(tree, args.turns, out) for tree, out in outs.items()}
        for tree, proc in runs.items():
            _, err = proc.communicate()
            if proc.returncode != 0:
                raise SystemExit(f"counting {tree} failed:\n{err.decode(errors='replace').strip()[-2000:]}")
        per_turn = {tree: _count(out) / args.turns for tree, out in outs.items()}
    print(f"  this  {ROOT}: {per_turn[ROOT]:,.0f} instructions a turn ({args.turns} turns)")
    print(f"  other {other}: {per_turn[other]:,.0f} instructions a turn")
    print(f"  this checkout runs {per_turn[ROOT] / per_turn[other]:.4f}x the instructions of the other")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
