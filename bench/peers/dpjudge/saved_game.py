"""Import games saved by the `diplomacy` package (`diplomacy.utils.export.to_saved_game_format`: one
JSON object a game, or JSON Lines of them, the format of the public game datasets) as ruleval game
records for `ruleval replay` (a list of states in play order, each with its orders).

    python -m bench.peers.dpjudge.saved_game GAMES.jsonl [--game N] -o RECORD.jsonl
    ruleval replay rulesets/diplomacy/standard_dpjudge.rules RECORD.jsonl

Each saved phase (its state before the orders, and the orders) becomes one state: the phase, the
units on the board, the supply-centre owners and the orders (as the package writes them: the Diplomacy
rulesets read `A PAR B` as a build; powers and places in lower case, `near_east` for the package's
`NEAREAST`). A retreat
phase lists each dislodged unit with what the package does not save but a retreat state needs, found
in the movement phase before it: where its attacker came from (the unit whose move into its province
succeeded) and whether by convoy (an army move between provinces no army adjacency joins, or one to
an adjacent province that a fleet ordered to convoy it carried: `VIA` alone does not say, since the
package moves the army over land when the fleets ordered to convoy it make no route), and the
provinces left empty by a standoff (two or more moves into one bounced). The retreats the package
saves with a dislodged unit are not copied: they are not the retreats it allows (in the package's
own saved game tests/network/1.json, F1902R lists `NTH`, `NWG`, `SKA` and `STP/NC`, all
occupied, and `SWE`, left empty by a standoff, for `F NWY`), so ruleval works them out by the rules.
dipcc (`Game.to_json`: the saved games Meta published with Cicero, tests/records/cicero/) writes this
format without results: a retreat phase after a movement phase saved with orders and no results has
no attackers and no standoffs (`ruleval replay` takes them from the state the rules compute, and says
so), and keeps the retreats dipcc allowed each dislodged unit, which replay compares with the rules'.
A unit dipcc lists with no retreat (the rules disband it at once, DIP-R1) is left out, with the `D`
order dipcc saves for it.
The map is the converted one of the saved game's map name (`rulesets/diplomacy/maps/<map>.yaml`).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml

from .import_map import MAPS_OUT

SEASONS = {"S": "spring", "F": "fall", "W": "winter"}
TYPES = {"M": "movement", "R": "retreat", "A": "adjustment"}
UNIT_TYPES = {"A": "army", "F": "fleet"}


class SavedGameError(ValueError):
    """A saved game this importer cannot read: which game, which phase, and why."""


def _phase(name: str, where: str) -> dict[str, Any]:
    try:
        return {"season": SEASONS[name[0]], "year": int(name[1:-1]), "type": TYPES[name[-1]]}
    except (KeyError, ValueError, IndexError):
        raise SavedGameError(f"{where}: `{name}` is not a phase name like S1901M") from None


def _unit(text: Any, at: str) -> dict[str, str]:
    """A unit as the package writes it (`A PAR`, `F STP/SC`): its type and location."""
    if not isinstance(text, str) or re.fullmatch(r"[AF] [A-Za-z0-9_]+(/[A-Za-z]+)?", text) is None:
        raise SavedGameError(f"{at}: `{str(text)[:40]}` is not a unit like `A PAR` or `F STP/SC`")
    return {"type": UNIT_TYPES[text[0]], "location": text[2:].lower()}


def _lists(state: dict[str, Any], field: str, at: str) -> dict[str, list[Any]]:
    """A state's `units` or `retreats`: each power's list (a power's retreats may be a map of units)."""
    value = state.get(field, {})
    if not isinstance(value, dict) or not all(isinstance(v, (list, dict)) for v in value.values()):
        raise SavedGameError(f"{at}: `{field}` gives each power a list of units")
    return {p: list(v) for p, v in value.items()}


def _province(loc: str) -> str:
    return loc.split("/")[0].lower()


def _attacker(movement: dict[str, Any] | None, site: str, army: dict[str, list[str]]) -> tuple[str | None, bool]:
    """Where the unit that dislodged the one at ``site`` moved from, and whether by convoy."""
    if movement is None:
        return None, False
    results = movement.get("results", {})
    for texts in movement.get("orders", {}).values():
        for text in texts:
            words = text.split()
            if len(words) < 4 or words[2] != "-" or _province(words[3]) != _province(site):
                continue
            unit = f"{words[0]} {words[1]}"
            if any(r for r in results.get(unit, [])):
                continue  # bounced, void, dislodged...: not the attacker
            origin = _province(words[1])
            return origin, words[0] == "A" and (_province(words[3]) not in army.get(origin, [])
                                                or _carried(movement, origin, _province(site)))
    return None, False


def _carried(movement: dict[str, Any], origin: str, to: str) -> bool:
    """Whether the package carried an army that moved to an adjacent province by sea: a fleet ordered to
    convoy it was neither void (off every route the ordered fleets make, so the army went over land,
    `VIA` or not) nor dislodged (the route broken, the army fell back on the land route)."""
    results = movement.get("results", {})
    for texts in movement.get("orders", {}).values():
        for text in texts:
            w = text.split()
            if (len(w) == 7 and w[2] == "C" and w[3] == "A" and _province(w[4]) == origin and w[5] == "-"
                    and _province(w[6]) == to and not {"void", "dislodged"} & set(results.get(f"{w[0]} {w[1]}", []))):
                return True
    return False


def _results_left_out(movement: dict[str, Any]) -> bool:
    """Whether a movement phase was saved without its results: the package saves one (an empty list for
    an order that succeeded) for every unit ordered; dipcc (`Game.to_json`, the format of Meta's Cicero
    games) saves none."""
    orders = movement.get("orders")
    return not movement.get("results") and isinstance(orders, dict) and any(orders.values())


def _saved_retreats(state: dict[str, Any], at: str) -> list[tuple[str, str, list[str]]]:
    """A retreat state's `retreats` as saved: each power's map of its dislodged units to the places
    they may retreat to, as (power, unit, places)."""
    value = state.get("retreats", {})
    if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
        raise SavedGameError(f"{at}: `retreats` gives each power a map of its dislodged units to the places "
                             "they may retreat to")
    out = []
    for p, units in value.items():
        for u, to in units.items():
            if not isinstance(to, list) or not all(isinstance(t, str) for t in to):
                raise SavedGameError(f"{at}: `{str(u)[:40]}` retreats to a list of places")
            out.append((p, u, to))
    return out


def _standoffs(movement: dict[str, Any] | None, occupied: set[str]) -> list[str]:
    """The provinces a movement phase left empty by a standoff: two or more moves into one bounced,
    and no unit stands there after it."""
    if movement is None:
        return []
    results = movement.get("results", {})
    bounced: dict[str, int] = {}
    for texts in movement.get("orders", {}).values():
        for text in texts:
            words = text.split()
            if len(words) >= 4 and words[2] == "-" and "bounce" in results.get(f"{words[0]} {words[1]}", []):
                target = _province(words[3])
                bounced[target] = bounced.get(target, 0) + 1
    return sorted(p for p, n in bounced.items() if n >= 2 and p not in occupied)


def records(saved: dict[str, Any], where: str = "<game>") -> list[dict[str, Any]]:
    """The ruleval states of one saved game, in play order."""
    if not isinstance(saved, dict) or not isinstance(saved.get("phases", []), list):
        raise SavedGameError(f"{where}: a saved game is an object with a list of `phases`")
    name = saved.get("map", "standard")
    path = MAPS_OUT / f"{name}.yaml"
    if not isinstance(name, str) or not re.fullmatch(r"[a-z0-9_]+", name) or not path.is_file():
        raise SavedGameError(f"{where}: no converted map `{name}` (rulesets/diplomacy/maps/)")
    board = yaml.safe_load(path.read_text(encoding="utf-8"))
    powers = {p.upper().replace("_", ""): p for p in board["powers"]}
    army = board.get("army", {})

    def power(p: str, at: str) -> str:
        if p not in powers:
            raise SavedGameError(f"{at}: `{p}` is not a power of the `{name}` map")
        return powers[p]

    out: list[dict[str, Any]] = []
    phases = saved.get("phases", [])
    for i, ph in enumerate(phases):
        if isinstance(ph, dict) and ph.get("name") == "COMPLETED":  # the package's mark of a game over: no phase
            break
        if not isinstance(ph, dict) or not isinstance(ph.get("state", {}), dict):
            raise SavedGameError(f"{where}, phase {i}: a phase is an object with a `name` and a `state` object")
        at = f"{where}, phase {ph.get('name', i)}"
        state = ph.get("state", {})
        phase = _phase(str(ph.get("name", "")), at)
        units = [{"power": power(p, at), **_unit(u, at)} for p, us in _lists(state, "units", at).items()
                 for u in us if not u.startswith("*")]
        destroyed: set[str] = set()  # dislodged units with no retreat (dipcc's saved games keep them)
        rec: dict[str, Any] = {"phase": phase, "units": units,
                               "supply_centers": {c.lower(): power(p, at) for p, cs in state.get("centers", {}).items()
                                                  for c in cs}}
        if phase["type"] == "retreat":
            before = phases[i - 1] if i > 0 and str(phases[i - 1].get("name", ""))[-1:] == "M" else None
            rec["dislodged"] = []
            if before is not None and _results_left_out(before):
                # dipcc's saved games: no results to find attackers and standoffs by (left to the rules to
                # work out); its retreats are kept, the engine's, to be compared with the rules'
                for p, u, to in _saved_retreats(state, at):
                    if not to:  # no retreat: disbanded at once (DIP-R1), not a unit of the retreat phase
                        destroyed.add(u)
                        continue
                    rec["dislodged"].append({"power": power(p, at), **_unit(u, at),
                                             "retreats": sorted(t.lower() for t in to)})
            else:
                for p, retreats in _lists(state, "retreats", at).items():
                    for u in retreats:
                        unit = _unit(u, at)
                        origin, via = _attacker(before, u[2:], army)
                        rec["dislodged"].append({"power": power(p, at), **unit, "attacker_from": origin,
                                                 "attacker_via_convoy": via})
                rec["standoffs"] = _standoffs(before, {_province(u["location"]) for u in units})
        orders = ph.get("orders") or {}
        if not isinstance(orders, dict) or not all(isinstance(os, list) and all(isinstance(o, str) for o in os)
                                                   for os in orders.values() if os):
            raise SavedGameError(f"{at}: `orders` gives each power a list of order texts")
        rec["orders"] = [{"power": power(p, at), "order": o} for p, os in orders.items() for o in os or []
                         if not (o.endswith(" D") and o[:-2] in destroyed)]
        out.append(rec)
    return out


def read_saved_games(path: Path) -> list[dict[str, Any]]:
    """A saved game (.json) or JSON Lines of them (.jsonl)."""
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix == ".jsonl":
            return [json.loads(line) for line in text.splitlines() if line.strip()]
        return [json.loads(text)]
    except json.JSONDecodeError as exc:
        raise SavedGameError(f"{path}:{exc.lineno}: not JSON: {exc.msg}") from None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.peers.dpjudge.saved_game", description=__doc__.split("\n")[0])
    p.add_argument("games", help="a saved game (.json) or JSON Lines of them (.jsonl)")
    p.add_argument("--game", type=int, default=0, help="which game of a .jsonl file (from 0)")
    p.add_argument("-o", "--out", required=True, help="the record to write (.jsonl)")
    args = p.parse_args(argv)
    try:
        games = read_saved_games(Path(args.games))
        if not 0 <= args.game < len(games):
            raise SavedGameError(f"{args.games}: has {len(games)} game(s), no game {args.game}")
        recs = records(games[args.game], f"{args.games} game {args.game}")
    except (SavedGameError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 3
    except (AttributeError, TypeError, KeyError, IndexError, ValueError) as exc:  # a part of another shape
        print(f"error: {args.games}: not a saved game as the package writes it ({type(exc).__name__}: {exc})",
              file=sys.stderr)
        return 3
    Path(args.out).write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    print(f"wrote {args.out}: {len(recs)} phases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
