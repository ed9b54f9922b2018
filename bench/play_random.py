"""Instructions a phase of `ruleval play --random-orders` takes in this checkout and in another (the
baseline), counted by valgrind's callgrind (``bench.ab_instructions``'s method: the count does not
move with the load of the machine).

Usage: python -m bench.play_random OTHER_TREE [--games N] [--phases P] [--maps NAME...] [--cold] [--replay]

Each tree runs in a process of its own under callgrind (the two at once), with a cache folder of its
own (an empty ``XDG_CACHE_HOME``: what one tree's process keeps, the other's never reads): on each map
it loads the Diplomacy ruleset, writes the code of every definition (``Backend.write_all``, as
``bench.ab_instructions --games`` does: with code written in the counted games and one cache folder
for both trees, two runs of one tree counted 19.3 M and 13.6 M a phase, 2026-12-06), takes its start
position (``query start_state``), plays one game of P phases (not counted: the orders read are kept), then
plays N seeded games of P phases each with ``api.play(..., random_orders=SEED)``, as `ruleval play
--random-orders SEED --max-phases P` plays them: each phase's orders drawn by ``query
random_orders`` and played by ``query advance``, with the state checks `play` makes
(docs/tools.md, "What is checked when"). Only those N games are counted, per phase. With
``--cold``, nothing is played first: the count takes in the writing of the code and the values
computed once in a process, as a fresh `ruleval play` with no cache entry yet pays them (its load
apart; the cache folder is empty, so no writing is read back). Printed: each
tree's instructions per phase and their ratio (below 1: this checkout runs fewer).

With ``--replay``, the games are played (not counted) and then checked as `ruleval replay` checks a
record (``api.replay``): each game's states, its orders in each, and the state reached, as `play
--format json` writes them; what is counted is the replay of those N records a map, per phase. (The
warm-up then is the replay of one more game's record.)
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.ab_instructions import _count, finished, said

ROOT = Path(__file__).resolve().parent.parent

# Run in the tree measured, given `root`, the games a map, the phases a game, the maps (comma-separated)
# and whether to warm up: only long-standing names (`ruleset_path`, `start_state`, `play`'s
# `random_orders`), so that an older checkout can be the baseline.
_CHILD = """
import gc, itertools, os, sys
root, games, phases, maps, warm = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4].split(","), sys.argv[5] == "1"
replaying = sys.argv[6] == "1"
sys.path.insert(0, root)
os.chdir(root)
from bench.peers.dpjudge.full_games import ruleset_path
from validator import load_ruleset
from validator.api import PlayError, play, replay
START = {"phase": {"season": "spring", "year": 1, "type": "movement"}, "units": [], "orders": []}
played = [0]

def steps(rs, start, seed):
    try:
        return list(play(rs, start, [], random_orders=seed, max_phases=phases))
    except PlayError as exc:  # (P phases played and the game not over)
        if exc.kind != "state" or len(exc.played) != phases:
            raise
        return exc.played


def game(rs, start, seed):
    played[0] += len(steps(rs, start, seed))


def record(rs, start, seed):  # (a record as `play --format json` writes it: the states played, then the one reached)
    made = steps(rs, start, seed)
    return [s.state for s in made] + [{**made[-1].next, "orders": []}]


def check(rs, states):
    agreed, mismatch = replay(rs, states)
    if mismatch is not None:
        raise SystemExit(f"a record of a game played differs at {mismatch.phase}")
    played[0] += agreed

work = []
for name in maps:
    rs = load_ruleset(ruleset_path(name))
    if warm:  # every definition's code written first, as bench.ab_instructions --games does
        for typed in (True, False):
            rs.backend(typed=typed).write_all()
    start = rs.run(START, "start_state", validate=False)
    if replaying:
        if warm:
            check(rs, record(rs, start, 10_000))
        work += [(rs, record(rs, start, seed)) for seed in range(games)]
        continue
    if warm:
        game(rs, start, 10_000)
    work += [(rs, start, seed) for seed in range(games)]
played[0] = 0
gc.collect()
list(itertools.starmap(check if replaying else game, work))
print(played[0])
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("other", type=Path, help="another checkout of ruleval: the baseline")
    ap.add_argument("--games", type=int, default=3, help="games counted a map")
    ap.add_argument("--phases", type=int, default=12, help="phases a game (`--max-phases`)")
    ap.add_argument("--maps", nargs="+", default=["pure", "standard"])
    ap.add_argument("--cold", action="store_true", help="count from the first game (no warm-up game)")
    ap.add_argument("--replay", action="store_true", help="count the replay of each game's record, not its play")
    args = ap.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("bench.play_random needs valgrind (e.g. `apt install valgrind`)", file=sys.stderr)
        return 2
    other = args.other.resolve()
    if not (other / "validator").is_dir():
        raise SystemExit(f"{other} is not a checkout of ruleval")
    child_args = [str(args.games), str(args.phases), ",".join(args.maps), "0" if args.cold else "1",
                  "1" if args.replay else "0"]
    with tempfile.TemporaryDirectory() as tmp:
        outs = {tree: Path(tmp) / f"{i}.out" for i, tree in enumerate((ROOT, other))}
        env = {k: v for k, v in os.environ.items() if k not in ("RULEVAL_CACHE_DIR", "RULEVAL_NO_CACHE")}
        runs = {tree: subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                                        "--collect-atstart=no", "--toggle-collect=starmap_next", sys.executable, "-c",
                                        _CHILD, str(tree), *child_args],
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       env={**env, "PYTHONHASHSEED": "0", "XDG_CACHE_HOME": str(Path(tmp) / f"cache{i}")})
                for i, (tree, out) in enumerate(outs.items())}
        counted = {tree: int(out.split()[-1]) for tree, out in finished(runs).items()}
        if counted[ROOT] != counted[other]:
            raise SystemExit(f"the two trees played different games ({counted[ROOT]} and {counted[other]} phases)")
        per = {tree: _count(out) / counted[tree] for tree, out in outs.items()}
    what = f"{counted[ROOT]} phases of {args.games} games a map on {', '.join(args.maps)}" + \
        (", cold" if args.cold else "")
    counted_what = "replay of a record of play --random-orders" if args.replay else "play --random-orders"
    said(per, other, f"phase of {counted_what}", what)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
