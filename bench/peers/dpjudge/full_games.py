"""Full games on every map of the `diplomacy` package, played by ruleval and by the package's engine.

    python -m bench.peers.dpjudge.full_games                       # 3 games a map, 3 game-years each
    python -m bench.peers.dpjudge.full_games --games 300 --maps ancmed modern
    python -m bench.peers.dpjudge.full_games --reading             # ruleval under the package's readings

Prints a table per map (games, phases compared, phases agreed, games that differ and how many of them
the package's readings explain, the phase type and fields of each first difference), the phases per
second of each side, and the number of differences left unexplained (the exit code is 1 if any).

A game starts from the map's start position (`query start_state` of the map's variant ruleset,
`rulesets/diplomacy/<map>.rules`) and, in every phase, ruleval's `query random_orders(seed)` gives an
order to every unit (retreats, builds, disbands and waives in their phases) of every power someone
plays: a power the map marks as played by no one (its `dummies`, the package's DUMMY: known_world_901's
neutral state) gets none, and since the package is given the same orders, it gets none there either,
and each engine plays it as a power without orders. The same orders go to a
`diplomacy.Game(map_name=...)`; ruleval's `query advance` and the engine's `process()` each play every
phase (ruleval the whole game first, then the package), and after each phase the next phase's name, the
units on the board, the dislodged units and the supply-centre owners are compared. A game is compared up
to its first difference (what follows would differ anyway), the end of its years, or a solo victory.

With `--reading`, ruleval plays the map under the package's readings of the rules
(`bench/peers/readings/diplomacy_pkg.rules` with the map re-bound: `reading_ruleset`), where every
known departure of the package's is an override citing its DATC case: then no difference should be
left.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from validator import load_ruleset
from validator.api import Ruleset

from .import_map import MAP_NAMES, ROOT, package_maps, ruleset_name, uses_build_any
from .mapfile import read_map

READINGS = ROOT / "bench" / "peers" / "readings"
_TYPE = {"A": "army", "F": "fleet"}


def peer_power(power: str) -> str:
    """The package's name of a power (`near_east` -> `NEAREAST`)."""
    return power.upper().replace("_", "")


def peer_order(text: str) -> str:
    """ruleval's order text as the package writes it: `BUILD A PAR` -> `A PAR B`; the rest as is."""
    words = text.upper().split()
    if words[:1] == ["BUILD"] and len(words) == 3:
        return f"{words[1]} {words[2]} B"
    return " ".join(words)


def ruleset_path(name: str, reading: bool = False) -> Path:
    if not reading:
        return ROOT / "rulesets" / "diplomacy" / f"{ruleset_name(name)}.rules"
    return READINGS / "maps" / f"{name}.rules"


def reading_ruleset(name: str) -> str:
    """The package's readings on a map: the reading ruleset of the standard board with the map re-bound
    (and, for a map with `RULE BUILD_ANY`, the one rule of the build-anywhere variant)."""
    m = read_map(package_maps() / f"{name}.map")
    text = (f"# The `diplomacy` package's readings of the rules (../diplomacy_pkg.rules) on its `{name}` map;\n"
            f"# written by bench/peers/dpjudge/full_games.py (`write_readings`).\n"
            f'ruleset diplomacy.peer_diplomacy_{name} "Diplomacy as the diplomacy package reads it, {name} map"\n'
            f'extends "../diplomacy_pkg.rules"\n'
            f'import "../../../../rulesets/diplomacy/maps/{name}.yaml" as map\n')
    if uses_build_any(m):
        text += ("\n# its RULE BUILD_ANY, as rulesets/diplomacy/build_anywhere.rules\n"
                 'override rule build_problem(pw, p, owners, held) cite "DIP-R1" =\n'
                 '  if owners[p] != pw then upper(p) + " is not owned by " + pw\n'
                 '  elif p in held then upper(p) + " is occupied"\n'
                 "  else none\n")
    return text


def write_readings(names: tuple[str, ...] = MAP_NAMES, check: bool = False) -> list[Path]:
    """Write (or, with ``check``, compare) the reading ruleset of each map; returns the stale ones."""
    stale = []
    for name in names:
        path = ruleset_path(name, reading=True)
        text = reading_ruleset(name)
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            continue
        stale.append(path)
        if not check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    return stale


@dataclass
class Difference:
    """The first phase where the two disagree: its name, and each field that differs."""

    game: int
    phase: str
    fields: dict[str, tuple[Any, Any]]
    orders: list[dict[str, str]]

    def kinds(self) -> str:
        """The phase type where the games part, and what differs: `adjustment: units`."""
        kind = {"M": "movement", "R": "retreat", "A": "adjustment"}.get(self.phase[-1:], self.phase)
        return f"{kind}: " + ", ".join(sorted(self.fields))


@dataclass
class MapFigures:
    name: str
    games: int = 0
    phases: int = 0
    agreed: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    differences: list[Difference] = field(default_factory=list)
    explained: int = 0  # differing games that end as the package ends them under its readings
    unexplained: list[Difference] = field(default_factory=list)
    ruleval_s: float = 0.0  # time in ruleval's `advance` (the orders are made untimed)
    peer_s: float = 0.0     # time in the package's set_orders and process


def _peer_view(game: Any) -> dict[str, Any]:
    units: set[tuple[str, str, str]] = set()
    dislodged: set[tuple[str, str, str]] = set()
    for power, us in game.get_units().items():
        for u in us:
            target = dislodged if u.startswith("*") else units
            u = u.lstrip("*")
            target.add((power, _TYPE[u[0]], u[2:].lower()))
    centres = {c.lower(): power for power, cs in game.get_centers().items() for c in cs}
    return {"phase": game.get_current_phase(), "units": units, "dislodged": dislodged, "centres": centres,
            "over": game.is_game_done}


def _ruleval_view(out: dict[str, Any], year_width: int = 4) -> dict[str, Any]:
    nx = out["next"]
    ph = nx["phase"]
    name = "%s%0*d%s" % ({"spring": "S", "fall": "F", "winter": "W"}[ph["season"]], year_width, ph["year"],
                         {"movement": "M", "retreat": "R", "adjustment": "A"}[ph["type"]])
    return {"phase": "COMPLETED" if out["end"] is not None else name,
            "units": {(peer_power(u["power"]), u["type"], u["location"]) for u in nx["units"]},
            "dislodged": {(peer_power(d["power"]), d["type"], d["location"]) for d in nx.get("dislodged", [])},
            "centres": {c: peer_power(p) for c, p in (nx.get("supply_centers") or {}).items()},
            "over": out["end"] is not None}


def _differences(mine: dict[str, Any], theirs: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    out = {}
    for key in ("phase", "over"):
        if mine[key] != theirs[key]:
            out[key] = (mine[key], theirs[key])
    for key in ("units", "dislodged"):
        if mine[key] != theirs[key]:
            out[key] = (sorted(mine[key] - theirs[key]), sorted(theirs[key] - mine[key]))
    if mine["centres"] != theirs["centres"]:
        keys = sorted(set(mine["centres"]) | set(theirs["centres"]))
        out["centres"] = ({k: mine["centres"].get(k) for k in keys if mine["centres"].get(k) != theirs["centres"].get(k)},
                          {k: theirs["centres"].get(k) for k in keys if mine["centres"].get(k) != theirs["centres"].get(k)})
    return out


# The longest convoy, in fleets, whose paths the peer is given where it has none of a map yet (see
# `peer_convoy_paths`). Generated games convoy an army through at most three seas.
CONVOY_PATH_CAP = 6


def peer_convoy_paths(name: str) -> None:
    """The package works out every convoy path of a map (up to 13 fleets) the first time it loads it
    and keeps them in ~/.cache/diplomacy: 5 minutes for `world` on a fresh machine (a CI run). Where
    it has no paths for ``name`` yet, the paths of up to ``CONVOY_PATH_CAP`` fleets are worked out here
    instead, with the package's own search (about 11 s for `world`), and kept in this process only.
    A convoy needs a fleet ordered along every sea of its path and generated games order at most
    three, so no generated game can tell the two apart."""
    import contextlib
    import io

    from diplomacy.engine import map as peer_map
    from diplomacy.utils import convoy_paths

    if name in peer_map.CONVOYS_PATH_CACHE:
        return
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        paths = convoy_paths._build_convoy_paths_cache(peer_map.Map(name, use_cache=False), CONVOY_PATH_CAP)
    peer_map.CONVOYS_PATH_CACHE[name] = paths


def play_game(rs: Ruleset, name: str, seed: int, years: int, figures: MapFigures) -> Difference | None:
    """Play one seeded game on both sides; adds to ``figures``; returns the first difference, if any.

    Each engine plays the whole game on its own, as a user plays one: ruleval first (its orders made
    untimed by its `random_orders`), then the package from the same orders; the phases are compared
    after. (Until 2026-11-27 the two took turns phase by phase, which charged each engine the cache
    misses and garbage of the other's phase.) Only the phases compared, up to the first difference,
    count in the figures."""
    from diplomacy import Game

    state = rs.run({"phase": {"season": "spring", "year": 1, "type": "movement"}, "units": [], "orders": []},
                   "start_state", validate=False)
    first_year = state["phase"]["year"]
    played: list[tuple[list[dict[str, str]], dict[str, Any], float]] = []  # (orders, ruleval's outcome, its time)
    for i in range(years * 5):
        if state["phase"]["year"] >= first_year + years:
            break
        orders = rs.run(state, "random_orders", [seed * 1000 + i], validate=False)
        t0 = time.perf_counter()
        out = rs.run({**state, "orders": orders}, "advance")
        played.append((orders, out, time.perf_counter() - t0))
        if out["end"] is not None:
            break
        state = out["next"]
    peer_convoy_paths(name)
    game = Game(map_name=name)
    figures.games += 1
    for orders, out, ruleval_s in played:
        t1 = time.perf_counter()
        per_power: dict[str, list[str]] = {}
        for o in orders:
            per_power.setdefault(peer_power(o["power"]), []).append(peer_order(o["order"]))
        for power, texts in per_power.items():
            game.set_orders(power, texts)
        game.process()
        figures.peer_s += time.perf_counter() - t1
        figures.ruleval_s += ruleval_s
        figures.phases += 1
        diff = _differences(_ruleval_view(out), _peer_view(game))
        if diff:
            d = Difference(seed, out["phase"], diff, orders)
            figures.differences.append(d)
            figures.kinds[d.kinds()] += 1
            return d
        figures.agreed += 1
    return None


def _loaded(path: Path) -> Ruleset:
    rs = load_ruleset(path)
    if not rs.ok:
        raise SystemExit(f"{path}: does not check: {rs.diagnostics[0].message}")
    return rs


def run_map(name: str, games: int, years: int, reading: bool = False, first_seed: int = 0,
            explain: bool = False) -> MapFigures:
    """Play ``games`` seeded games on a map; with ``explain``, replay each game that differs under the
    package's readings, counting those that then end as the package ends them."""
    rs = _loaded(ruleset_path(name, reading))
    figures = MapFigures(name)
    for seed in range(first_seed, first_seed + games):
        play_game(rs, name, seed, years, figures)
    if explain and figures.differences:
        peer_rs = _loaded(ruleset_path(name, reading=True))
        for d in figures.differences:
            left = play_game(peer_rs, name, d.game, years, MapFigures(name))
            if left is None:
                figures.explained += 1
            else:
                figures.unexplained.append(left)
    return figures


def table(rows: list[MapFigures]) -> str:
    lines = ["| map | games | phases compared | agreed | games that differ | of them, as the package under its readings "
             "| where they first differ (games) |",
             "|---|---|---|---|---|---|---|"]
    for f in rows:
        kinds = "; ".join(f"{k} ({n})" for k, n in sorted(f.kinds.items())) or "nowhere"
        lines.append(f"| {f.name} | {f.games} | {f.phases} | {f.agreed} ({100 * f.agreed / max(f.phases, 1):.1f} %) "
                     f"| {len(f.differences)} | {f.explained} | {kinds} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.peers.dpjudge.full_games", description=__doc__.split("\n")[0])
    p.add_argument("--games", type=int, default=3, help="games per map (default 3)")
    p.add_argument("--years", type=int, default=3, help="game-years per game (default 3)")
    p.add_argument("--maps", nargs="*", default=list(MAP_NAMES), help="maps (default: all)")
    p.add_argument("--reading", action="store_true", help="ruleval under the package's readings of the rules")
    p.add_argument("--show", type=int, default=0, help="print the first N differences in full")
    args = p.parse_args(argv)
    unknown = [m for m in args.maps if m not in MAP_NAMES]
    if unknown:
        print(f"unknown map(s): {', '.join(unknown)} (maps: {', '.join(MAP_NAMES)})", file=sys.stderr)
        return 2
    rows = []
    for name in args.maps:
        f = run_map(name, args.games, args.years, args.reading, explain=not args.reading)
        rows.append(f)
        for d in f.differences[:args.show]:
            print(f"{name} game {d.game} {d.phase}: {d.fields}", file=sys.stderr)
        for d in f.unexplained:
            print(f"UNEXPLAINED: {name} game {d.game} {d.phase} (under the package's readings): {d.fields}",
                  file=sys.stderr)
    print(table(rows))
    total_r = sum(f.ruleval_s for f in rows)
    total_p = sum(f.peer_s for f in rows)
    phases = sum(f.phases for f in rows)
    print(f"\n{phases} phases: ruleval {phases / total_r:.1f} phases/s, diplomacy {phases / total_p:.1f} phases/s "
          f"(ruleval {total_p / total_r:.2f}x)")
    left = sum(len(f.unexplained) for f in rows) if not args.reading else sum(len(f.differences) for f in rows)
    print(f"differences left unexplained: {left}")
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())
