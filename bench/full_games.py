"""Full-game throughput: ruleval against the `diplomacy` package's engine on the same games.

Usage: python -m bench.full_games [--games N] [--years Y] [--maps NAME...]

Plays the seeded random games of bench/peers/dpjudge/full_games.py on each map of the package (the
orders made untimed by ruleval's `random_orders`, none for a power no one plays, on either engine:
known_world_901's neutral state, since 2026-12-05) and times each side's play of every phase:
ruleval's `query advance` (state check, adjudication and the next state, one `Ruleset.run`) against
the package's `set_orders` and `process`, each engine playing a whole game on its own (ruleval first,
then the package from the same orders). Prints phases per second of each and their ratio, per map
and over all, in one run. The state check is ruleval's work, the package has none: each phase's
state, made by the phase before with new orders in it, is checked in full (docs/tools.md, "What is
checked when"): about 12 to 14 % of a phase's instructions on pure, standard, ancmed and
standard_age_of_empires against `validate=False` (2026-12-03, callgrind, 3 games a map played
again). Before the measured games, on each map, ruleval writes the code of every definition of the
ruleset (`Backend.write_all`; each is otherwise written at its first call) and plays three warm-up
games, as long as the measured ones, that are not counted: the package's one-time work, its map
caches, is never timed either. Until 2026-11-29 the warm-up went on only until a game wrote
no code ruleval had not written before, and the measured games still paid for the code of rules first
reached in them (a first retreat phase, a first civil disorder: 13 to 32 % of ruleval's measured time
on six of the fourteen maps in a run of 8 games); the time of that writing is printed per map (`write
ms`), not counted.

Twenty games a map by default, as the README's figures: with fewer, more of the orders timed are read
for the first time (an order's reading is kept for the program's life), and the ratio is lower (8
games a map gave 2.98x to 3.17x where 20 gave 3.33x to 3.44x, 2026-11-29).

The package plays with its own convoy paths of each map (every path up to 13 fleets, which it works
out once a machine and keeps in ~/.cache/diplomacy: minutes for `world` the first time), as its users
have them. With `--capped-paths` it is given, where it has none of its own yet, only the paths of up to
6 fleets, as the tests give it to save those minutes: the same results (generated games convoy through
at most three seas), but on the maps of the biggest caches a faster package than the one shipped
(figures before 2026-11-28 afternoon were taken so on colonial, empire, known_world_901 and world).
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.peers.dpjudge.full_games import MapFigures, play_game, ruleset_path  # noqa: E402
from bench.peers.dpjudge.import_map import MAP_NAMES  # noqa: E402


def written(rs: Any) -> int:
    """How many functions the backend has written for the ruleset's definitions so far (each is written
    at its first call)."""
    return sum(isinstance(v, types.FunctionType) for typed in (True, False) for v in rs.backend(typed).g.values())


WARM_UP_GAMES = 3


def warm_up(rs: Any, name: str, years: int, games: int = WARM_UP_GAMES) -> float:
    """The code of every definition written (``Backend.write_all``), then ``games`` warm-up games (seeds
    from 10 000, as long as the measured ones, not counted), which fill the values ruleval keeps for the
    program's life (the orders read, the places named): the measured games pay for no one-time work,
    as the package's are not charged for building its map caches. Returns the seconds the writing took."""
    t0 = time.perf_counter()
    rs.backend(typed=True).write_all()
    rs.backend(typed=False).write_all()  # (the runs on a state not checked: `random_orders`, `start_state`)
    writing = time.perf_counter() - t0
    for k in range(games):
        play_game(rs, name, 10_000 + k, years, MapFigures(name))
    return writing


def own_convoy_paths(name: str) -> None:
    """The package's own convoy paths of a map (every path, up to 13 fleets), as a user of the package
    has them: loaded from its cache (~/.cache/diplomacy), or worked out and kept there the first time
    (minutes for `world`, once a machine). Untimed, as ruleval's loading is."""
    from diplomacy.engine.map import Map

    Map(name)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.full_games", description=__doc__.split("\n")[0])
    p.add_argument("--games", type=int, default=20, help="seeded games a map (default 20, as the README's figures)")
    p.add_argument("--years", type=int, default=3)
    p.add_argument("--maps", nargs="*", default=list(MAP_NAMES))
    p.add_argument("--capped-paths", action="store_true",
                   help="give the package only the convoy paths of up to 6 fleets where it has none of its own "
                        "(as the tests do; faster than the package as shipped on the big maps)")
    args = p.parse_args(argv if argv is not None else [])
    try:
        import diplomacy  # noqa: F401
    except ImportError:
        print("skipped: the `diplomacy` package is not installed (pip install diplomacy==1.1.2)")
        return
    from validator import load_ruleset

    print(f"{'map':28} {'phases':>7} {'ruleval/s':>10} {'diplomacy/s':>12} {'ratio':>7} {'write ms':>9}")
    total = MapFigures("all")
    for name in args.maps:
        rs = load_ruleset(ruleset_path(name))
        if not args.capped_paths:
            own_convoy_paths(name)
        writing = warm_up(rs, name, args.years)
        # what both engines keep for good (the package's convoy paths of a map run to millions of
        # objects) is left out of the cycle collector's passes, which would otherwise charge it to
        # whichever engine happens to be running when a pass comes
        gc.collect()
        gc.freeze()
        f = MapFigures(name)
        for seed in range(args.games):
            play_game(rs, name, seed, args.years, f)
        total.phases += f.phases
        total.ruleval_s += f.ruleval_s
        total.peer_s += f.peer_s
        print(f"{name:28} {f.phases:7} {f.phases / f.ruleval_s:10.1f} {f.phases / f.peer_s:12.1f} "
              f"{f.peer_s / f.ruleval_s:6.2f}x {writing * 1000:9.1f}")
    print(f"{'all':28} {total.phases:7} {total.phases / total.ruleval_s:10.1f} {total.phases / total.peer_s:12.1f} "
          f"{total.peer_s / total.ruleval_s:6.2f}x   (ruleval's phases/s over the package's; goal >= 3x)")


if __name__ == "__main__":
    main(sys.argv[1:])
