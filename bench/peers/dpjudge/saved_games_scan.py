"""Games the `diplomacy` package plays by itself, saved, imported and replayed under its readings.

    python -m bench.peers.dpjudge.saved_games_scan [--games N] [--phases P] [--first-seed S]
        [--no-check] [--maps NAME...]

For each map, N seeded games of P phases are played by the package alone, every unit given an order
drawn from the package's own list of possible orders (with `--no-check`, under its NO_CHECK rule, a
sixth of the movement orders are replaced by moves to any place of the map, which it then
adjudicates as it can). Each game is saved in the package's saved-game format, imported by
`saved_game.records` and replayed by ruleval under the package's readings of the rules
(`bench/peers/readings/maps/<map>.rules`). Printed: per map, the games and the games that replay to
their end; for each game that does not, its seed, the first phase that differs and how. This checks
the importer and the readings together on orders ruleval did not make (`full_games` plays ruleval's
`random_orders`). Exit 1 when a game does not replay.
"""

from __future__ import annotations

import argparse
import random
import sys
from typing import Any

from .full_games import peer_convoy_paths, ruleset_path
from .import_map import MAP_NAMES
from . import saved_game


def package_game(name: str, seed: int, phases: int = 14, no_check: bool = False) -> dict[str, Any]:
    """A game the package plays alone from its map's start, saved (`to_saved_game_format`)."""
    from diplomacy import Game
    from diplomacy.utils.export import to_saved_game_format

    game = Game(map_name=name, rules=["NO_CHECK"] if no_check else [])
    rng = random.Random(seed)
    places = sorted(loc.upper() for loc in game.map.locs)
    for _ in range(phases):
        if game.is_game_done:
            break
        possible = game.get_all_possible_orders()
        for power in sorted(game.powers):  # (sorted: the package's lists follow the hash seed)
            orders = []
            for loc in sorted(game.get_orderable_locations(power)):
                if possible[loc]:
                    order = rng.choice(sorted(possible[loc]))
                    if no_check and game.phase_type == "M" and rng.random() < 1 / 6:
                        order = " ".join(order.split()[:2]) + " - " + rng.choice(places)
                    orders.append(order)
            game.set_orders(power, orders)
        game.process()
    return to_saved_game_format(game)


def main(argv: list[str] | None = None) -> int:
    import contextlib
    import io

    from validator import load_ruleset
    from validator.api import PlayError, replay

    p = argparse.ArgumentParser(prog="python -m bench.peers.dpjudge.saved_games_scan", description=__doc__.split("\n")[0])
    p.add_argument("--games", type=int, default=10, help="games per map (default 10)")
    p.add_argument("--phases", type=int, default=20, help="phases per game (default 20)")
    p.add_argument("--first-seed", type=int, default=0)
    p.add_argument("--no-check", action="store_true", help="the package's NO_CHECK rule, with moves to any place")
    p.add_argument("--maps", nargs="*", default=list(MAP_NAMES), help="maps (default: all)")
    args = p.parse_args(argv)
    unknown = [m for m in args.maps if m not in MAP_NAMES]
    if unknown:
        print(f"unknown map(s): {', '.join(unknown)} (maps: {', '.join(MAP_NAMES)})", file=sys.stderr)
        return 2
    left = 0
    for name in args.maps:
        peer_convoy_paths(name)
        rs = load_ruleset(ruleset_path(name, reading=True))
        whole = 0
        for seed in range(args.first_seed, args.first_seed + args.games):
            with contextlib.redirect_stdout(io.StringIO()):  # (the package prints the orders NO_CHECK refuses)
                game = package_game(name, seed, args.phases, args.no_check)
            try:
                states = saved_game.records(game, f"{name} game {seed}")
                agreed, mismatch = replay(rs, states)
            except (saved_game.SavedGameError, PlayError) as exc:  # an import or a recorded state refused
                left += 1
                why = str(exc) if isinstance(exc, saved_game.SavedGameError) else exc.diagnostics[0].message
                print(f"{name} game {seed}: not replayed: {why}")
                continue
            if mismatch is None:
                whole += 1
                continue
            left += 1
            shown = "; ".join(f"{ptr}: {rec} recorded, {comp} computed" for ptr, rec, comp in mismatch.differences[:4])
            print(f"{name} game {seed}: {agreed} phases agree, then {mismatch.phase}: {shown}")
        print(f"{name}: {args.games} games, {whole} replay to their end")
    print(f"games that do not replay: {left}")
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())
