"""Instructions a Diplomacy turn takes in this checkout and in another (the baseline), counted by
valgrind's callgrind: the count does not move with the load of the machine, so a change of a few
tenths of a percent shows in one run, where timings (``bench.ab_turns``) need many.

Usage: python -m bench.ab_instructions OTHER_TREE [--turns N]
       python -m bench.ab_instructions OTHER_TREE --games N [--maps NAME...]
       python -m bench.ab_instructions OTHER_TREE --fresh N

Each tree runs in a process of its own under callgrind (the two at once): it loads the standard
ruleset, warms up on 180 turns, then runs N fresh random turns (validated, as the API does by default). Only those N turns
are counted: callgrind collects while ``itertools.starmap`` drives them, which nothing else in the
run uses. Printed: each tree's instructions per turn and their ratio (below 1: this checkout runs
fewer). Needs valgrind; about a minute for 60 turns. Instructions are not time (cache misses and
branches are left out), so a change kept on this count is confirmed by ``bench.ab_turns``.

With ``--games N``, the work counted is that of ``bench.full_games`` (issue 22's figure): on each map
(standard, modern and world unless ``--maps`` names others) N seeded three-year games are played
first, untimed, by ``random_orders`` and ``advance``; then every phase of them is played again
(``advance``, validated), and only that second play is counted, per phase. As the bench does, the
code of every definition is written before the first play (``Backend.write_all``: a function written
while others run adds names to the globals they share, and CPython 3.11 stops specialising their global
reads for a while, some 6 % of a small map's phase that the bench does not pay); the first play warms
the tree up as the bench's warm-up games do.

With ``--fresh N``, the work counted is that of ``bench.diplomacy_throughput``'s fresh process: from
the first import of ruleval to the N-th turn's result (loading and checking the standard ruleset,
writing its code, N random turns validated). Each tree gets a cache folder of its own (a temporary
``XDG_CACHE_HOME``), filled first by one uncounted process doing the same work, as any run but the
very first finds it; the turns are made before the count starts. Printed: each tree's instructions
for the whole process's work, for its work up to the first turn's result (the import, the load and
that turn: callgrind's count is dumped there), and per turn, and their ratios.
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

# Run in the tree measured, given `root`, the games a map `games` and the maps `maps` (comma-separated):
# the phases of seeded games played first, then played again under the count. The game loop is
# written out here, not taken from bench.peers.dpjudge.full_games: the baseline may be an older
# checkout, so the child uses only long-standing names (`ruleset_path`, `start_state`,
# `random_orders`, `advance`).
_GAMES_CHILD = """
import gc, itertools, os, sys
root, games, maps = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(",")
sys.path.insert(0, root)
os.chdir(root)
from bench.peers.dpjudge.full_games import ruleset_path
from validator import load_ruleset
phases = []
for name in maps:
    rs = load_ruleset(ruleset_path(name))
    for typed in (True, False):  # every definition's code written first, as bench.full_games does
        rs.backend(typed=typed).write_all()
    for seed in range(games):
        state = rs.run({"phase": {"season": "spring", "year": 1, "type": "movement"}, "units": [], "orders": []},
                       "start_state", validate=False)
        first = state["phase"]["year"]
        for i in range(15):
            if state["phase"]["year"] >= first + 3:
                break
            st = {**state, "orders": rs.run(state, "random_orders", [seed * 1000 + i], validate=False)}
            phases.append((rs, st))
            out = rs.run(st, "advance")
            if out["end"] is not None:
                break
            state = out["next"]
print(len(phases))
gc.collect()
list(itertools.starmap(lambda rs, st: rs.run(st, "advance"), phases))
"""

# Run in the tree measured, given `root` and the turns `n`: a fresh process's import of ruleval, load and
# first n turns (bench.diplomacy_throughput's fresh child), counted under `itertools.starmap`.
_FRESH_CHILD = """
import itertools, os, sys
root, n = sys.argv[1], int(sys.argv[2])
sys.path.insert(0, root)
os.chdir(root)
from bench.peers.dip_positions import random_turns
turns = random_turns(777, n, 34)
def first():
    from validator import load_ruleset
    rs = load_ruleset("rulesets/diplomacy/standard.rules", use_cache=False)
    rs.run(turns[0])
    return rs
rs = list(itertools.starmap(first, [()]))[0]  # (callgrind's count dumped after it: the first turn's figure)
list(itertools.starmap(lambda: [rs.run(s) for s in turns[1:]], [()]))
"""


def _start(tree: Path, child_args: list[str], out: Path, fresh: Path | None = None) -> subprocess.Popen[bytes]:
    """``child_args``: ``[turns]`` for the turns' work, ``[games, maps]`` for the games'; with ``fresh``
    (a cache folder of the tree's own, filled first by an uncounted run), ``[turns]`` of a fresh process."""
    env = {**os.environ, "PYTHONHASHSEED": "0"}  # the same dict and set layouts in every run
    child = _CHILD if len(child_args) == 1 else _GAMES_CHILD
    if fresh is not None:
        child = _FRESH_CHILD
        env.pop("RULEVAL_CACHE_DIR", None)
        env.pop("RULEVAL_NO_CACHE", None)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["XDG_CACHE_HOME"] = str(fresh)
        subprocess.run([sys.executable, "-c", child, str(tree), *child_args], env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # (callgrind collects per thread: a fresh process's load runs in a thread of its own, ``core.deep``,
    # counted whole; the other modes load before the count, in such a thread, not counted)
    toggles = ["--toggle-collect=starmap_next"] + (["--toggle-collect=thread_run", "--dump-after=starmap_next"]
                                                   if fresh is not None else [])
    return subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--collect-atstart=no",
                             *toggles, sys.executable, "-c", child, str(tree), *child_args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


def _count(out: Path) -> int:
    """The instructions counted in ``out``, and in the parts dumped before its end (``out.1``, ``out.2``...:
    ``--dump-after``)."""
    return sum(_dumped(p) for p in [out, *out.parent.glob(out.name + ".*")] if p.exists())


def _dumped(out: Path) -> int:
    for line in out.read_text().splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise SystemExit(f"no total in {out}")


def finished(runs: dict[Path, subprocess.Popen[bytes]]) -> dict[Path, bytes]:
    """What each tree's counted process printed, once all have ended (a failure said with its error)."""
    printed = {}
    for tree, proc in runs.items():
        out, err = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"counting {tree} failed:\n{err.decode(errors='replace').strip()[-2000:]}")
        printed[tree] = out
    return printed


def said(per: dict[Path, float], other: Path, unit: str, what: str) -> None:
    """Prints each tree's instructions a ``unit`` (``per``: this checkout's and ``other``'s) and their ratio."""
    print(f"  this  {ROOT}: {per[ROOT]:,.0f} instructions a {unit} ({what})")
    print(f"  other {other}: {per[other]:,.0f} instructions a {unit}")
    print(f"  this checkout runs {per[ROOT] / per[other]:.4f}x the instructions of the other")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("other", type=Path, help="another checkout of ruleval: the baseline")
    ap.add_argument("--turns", type=int, default=60, help="turns counted")
    ap.add_argument("--games", type=int, default=None,
                    help="count the phases of N seeded full games a map instead of turns (bench.full_games)")
    ap.add_argument("--maps", nargs="+", default=["standard", "modern", "world"], help="with --games: the maps")
    ap.add_argument("--fresh", type=int, default=None, metavar="N",
                    help="count a fresh process from its import of ruleval to its N-th turn (cache folder warm)")
    args = ap.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("bench.ab_instructions needs valgrind (e.g. `apt install valgrind`)", file=sys.stderr)
        return 2
    other = args.other.resolve()
    if not (other / "validator").is_dir() or not (other / "rulesets" / "diplomacy" / "standard.rules").is_file():
        raise SystemExit(f"{other} is not a checkout of ruleval")
    if args.fresh is not None:
        args.turns = args.fresh
    child_args = [str(args.turns)] if args.games is None else [str(args.games), ",".join(args.maps)]
    unit = "turn" if args.games is None else "phase"
    with tempfile.TemporaryDirectory() as tmp:
        outs = {tree: Path(tmp) / f"{i}.out" for i, tree in enumerate((ROOT, other))}
        runs = {tree: _start(tree, child_args, out, None if args.fresh is None else Path(tmp) / f"cache{i}")
                for i, (tree, out) in enumerate(outs.items())}
        printed = finished(runs)
        counted = {tree: args.turns if args.games is None else int(out.split()[-1]) for tree, out in printed.items()}
        if args.games is not None and counted[ROOT] != counted[other]:
            raise SystemExit(f"the two trees played different games ({counted[ROOT]} and {counted[other]} phases): "
                             "their rules differ, so their counts cannot be compared")
        per = {tree: _count(out) / counted[tree] for tree, out in outs.items()}
        # (a fresh process: the first dump is its count up to the first turn's result, the first call of starmap_next)
        firsts = {tree: _dumped(out.parent / (out.name + ".1")) for tree, out in outs.items()} if args.fresh else {}
    what = (f"{args.turns} turns" if args.games is None
            else f"{counted[ROOT]} phases of {args.games} games a map on {', '.join(args.maps)}")
    if args.fresh is not None:
        what = f"a fresh process: import, load and {args.fresh} turns"
        for tree, name in ((ROOT, "this "), (other, "other")):
            print(f"  {name} {tree}: {per[tree] * args.fresh:,.0f} instructions in all, "
                  f"{firsts[tree]:,.0f} to the first turn's result")
        print(f"  this checkout runs {firsts[ROOT] / firsts[other]:.4f}x the instructions of the other to the first turn")
    said(per, other, unit, what)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
