"""The Jomini rulesets' `main` against a second reading of the movement rules, written here in plain Python.

RULES.md section 2 (seeds 002 and 004) read once more, apart from the rulesets, for units of the
allowance table and lone characters (none with a unit: those readings are pinned by
tests/cases/jomini/characters.yaml, and a state is compared only up to a move that would end a
character with a unit):
- a unit is moved only if activated, at most once per turn (a move of no hex is none), from its hex by
  touching hexes (JOM-A1); with combat it has the table's first figure, none for a gun marked "sans
  combat"; without, the second, 1 more when the whole move follows the road from a road hex to a road
  hex (JOM-R1), 1 more for mounted infantry (JOM-D1); (*) artillery never more than 1 hex (JOM-K2);
- a hex costs its terrain (clear and village 1, woods and hills 2, marsh 3), 1 along the road, and a
  river side 1 more (a ford or a bridge nothing); impassable hexes are never entered (JOM-T1, T3);
  passing next to an enemy costs nothing (JOM-Z1);
- a move never ends on another unit (JOM-O1) nor crosses one, except (RE) infantry, cavalry and camelry
  crossing artillery of either side (JOM-O2), or (AM) a unit crossing a friendly light or very light
  unit or being one that crosses a friend (JOM-O3);
- leaving the table is a step off it, costing 1, only by a scenario's exit (JOM-X1), without combat;
  a reinforcement kept off the table enters by the scenario's entry, its first hex the first on the
  table (its terrain's cost), and makes no road march: it starts on no road hex (JOM-X4, R1);
- (AM) a unit with a pre-played token does not move (JOM-A2);
- (**) artillery loses one die a hex moved (JOM-K1); a road march may not fight after (JOM-R1);
- a lone character (officer, character, leader) has 3 hexes, with combat or without, 1 more by road; it
  pays 1 a passable hex and nothing for a river unless in a vehicle (JOM-T2); in RE it crosses no unit,
  in AM any friendly one (JOM-O3), and it leaves the table by any edge hex in AM (JOM-X3); a unit passes
  a friendly lone character's hex, not an enemy's (a character is no unit: characters.yaml).
Random small boards with every such feature and a few moves each are given to both; each move's verdict
(made or refused) must agree and, made, its cost, allowance, hexes, dice lost, road march and whether
the unit may fight, and the units' hexes at the end. (Which clause a refusal cites is the rulesets' own
reading, pinned by the cases.) RULEVAL_FUZZ_LONG=1 tries many more boards.
"""

from __future__ import annotations

import os
import random
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from validator import load_ruleset

JOMINI = Path(__file__).resolve().parent.parent / "rulesets" / "jomini"
BOARDS = 3000 if os.environ.get("RULEVAL_FUZZ_LONG") else 100

# (type, class) -> (with combat or None, without combat, marked (**), marked (*)): RULES.md's table.
TABLE: dict[tuple[str, str], tuple[int | None, int, bool, bool]] = {
    ("infantry", "light"): (2, 2, False, False),
    ("infantry", "medium"): (1, 2, False, False),
    ("infantry", "heavy"): (1, 2, False, False),
    ("cavalry", "light"): (4, 4, False, False),
    ("cavalry", "heavy"): (3, 3, False, False),
    ("cavalry", "cuirassiers"): (3, 3, False, False),
    ("cavalry", "very_heavy"): (2, 2, False, False),
    ("lancers", "light"): (4, 4, False, False),
    ("camelry", "light"): (3, 3, False, False),
    ("camelry", "heavy"): (3, 3, False, False),
    ("camelry", "very_heavy"): (2, 2, False, False),
    ("elephants", "medium"): (2, 2, False, False),
    ("elephants", "heavy"): (2, 2, False, False),
    ("foot_artillery", "very_light"): (1, 2, True, False),
    ("foot_artillery", "light"): (None, 1, False, False),
    ("foot_artillery", "heavy"): (None, 1, False, False),
    ("foot_artillery", "very_heavy"): (None, 1, False, True),
    ("rocket_artillery", "light"): (None, 1, False, False),
    ("horse_artillery", "very_light"): (3, 3, True, False),
    ("horse_artillery", "light"): (2, 2, True, False),
    ("horse_artillery", "heavy"): (1, 1, True, False),
    ("flying_artillery", "light"): (2, 2, True, False),
    ("elephant_artillery", "very_light"): (2, 2, False, False),
    ("elephant_artillery", "light"): (2, 2, False, False),
    ("camel_artillery", "very_light"): (2, 2, False, False),
    ("elephant_drawn_artillery", "very_light"): (1, 2, True, False),
    ("elephant_drawn_artillery", "light"): (None, 1, False, False),
}
KINDS = sorted(TABLE)
CHARACTERS = {"officer", "character", "leader"}  # the table's last row, 3 hexes whatever the class


def row(u: dict[str, Any]) -> tuple[int | None, int, bool, bool]:
    return (3, 3, False, False) if u["type"] in CHARACTERS else TABLE[(u["type"], u["class"])]


CROSSERS = {"infantry", "cavalry", "lancers", "camelry"}
TERRAIN = {"clear": 1, "village": 1, "woods": 2, "hills": 2, "marsh": 3, "impassable": None}
SIDE_EXTRA = {"river": 1, "ford": 0, "bridge": 0}


@cache
def rules(name: str):
    return load_ruleset(JOMINI / f"{name}.rules")


@cache
def neighbours(cols: int, rows: int) -> dict[str, frozenset[str]]:
    """The board's geometry (which hexes touch), read off the ruleset's `costs` on a board of clear ground."""
    edges = rules("re").run({"board": {"cols": cols, "rows": rows}, "units": []}, query="costs")["edges"]
    return {a: frozenset(bs) for a, bs in edges.items()}


def random_state(rng: random.Random) -> dict[str, Any]:
    cols, rows = 6, 5
    grid = neighbours(cols, rows)
    hexes = sorted(grid)
    edge = [h for h in hexes if len(grid[h]) < 6]
    rough = rng.sample(hexes, 7)
    terrain = {h: rng.choice(["woods", "hills", "marsh", "village", "impassable"]) for h in rough}
    road = [rng.choice(hexes)]
    for _ in range(rng.randint(2, 6)):
        nxt = [n for n in sorted(grid[road[-1]]) if n not in road]
        if not nxt:
            break
        road.append(rng.choice(nxt))
    pairs = sorted({tuple(sorted((a, b))) for a in hexes for b in grid[a]})
    sides = rng.sample(pairs, 4)
    units = []
    free = [h for h in hexes if terrain.get(h) != "impassable"]
    spots = rng.sample([h for h in road if h in free], min(2, len([h for h in road if h in free])))
    spots += rng.sample([h for h in free if h not in spots], rng.randint(2, 5))
    for i, h in enumerate(spots):
        t, c = rng.choice(KINDS)
        u: dict[str, Any] = {"id": f"u{i}", "side": rng.choice(["blue", "red"]), "type": t, "class": c, "hex": h,
                             "flags": {"activated": rng.random() < 0.95, "pre_played": rng.random() < 0.1}}
        if t == "infantry" and rng.random() < 0.3:
            u["mount"] = rng.choice(["horses", "camels", "wagons"])
        units.append(u)
    if rng.random() < 0.5:  # a lone character, now and then in a vehicle
        h = rng.choice([h for h in free if h not in spots])
        units.append({"id": "k", "side": rng.choice(["blue", "red"]), "type": rng.choice(sorted(CHARACTERS)), "hex": h,
                      "flags": {"activated": True, "vehicle": rng.random() < 0.25}})
    entry = rng.choice(edge)
    if rng.random() < 0.4:  # a reinforcement kept off the table (JOM-X4)
        t, c = rng.choice(KINDS)
        units.append({"id": "r", "side": "blue", "type": t, "class": c, "hex": None, "flags": {"activated": rng.random() < 0.9}})
    return {"board": {"cols": cols, "rows": rows, "hexes": {h: {"terrain": t} for h, t in terrain.items()},
                      "roads": [[road[i - 1], road[i], "A"] for i in range(1, len(road))],
                      "edges": [{"a": a, "b": b, "feature": rng.choice(["river", "river", "ford", "bridge"])} for a, b in sides],
                      "exits": {"voluntary": [rng.choice(edge)], "reinforcement": [entry]}},
            "units": units, "moves": []}


def shortest(grid: dict[str, frozenset[str]], a: str, b: str) -> list[str]:
    """A shortest path of touching hexes from a to b, whatever stands or grows on them."""
    back: dict[str, str | None] = {a: None}
    todo = [a]
    while b not in back:
        step = []
        for h in todo:
            for n in sorted(grid[h]):
                if n not in back:
                    back[n] = h
                    step.append(n)
        todo = step
    path = [b]
    while back[path[-1]] is not None:
        path.append(back[path[-1]])  # type: ignore[arg-type]
    return path[::-1]


def random_moves(rng: random.Random, state: dict[str, Any]) -> list[dict[str, Any]]:
    """2 to 5 moves, of distinct units but the last: walks of 0 to 3 hexes or about the unit's allowance
    without combat, often along the road, through other units now and then, and some to the scenario's
    exit and off (the units' hexes guessed: the oracle says where they are)."""
    board = state["board"]
    grid = neighbours(board["cols"], board["rows"])
    road = {h for r in board["roads"] for h in r[:2]}
    where = {u["id"]: u["hex"] for u in state["units"]}
    calm = {u["id"]: row(u)[1] for u in state["units"]}
    moves = []
    movers = rng.sample(sorted(where), rng.randint(1, 3))
    if "k" in where and "k" not in movers and rng.random() < 0.7:
        movers.append("k")  # (a character, when there is one, often moves: its readings are few)
    for uid in movers + rng.sample(sorted(where), 1):
        leave = where[uid] is not None and rng.random() < 0.2
        if where[uid] is None:
            path = [board["exits"]["reinforcement"][0]]
            for _ in range(rng.choice([0, 1, 2, calm[uid]])):
                path.append(rng.choice(sorted(n for n in grid[path[-1]])))
        elif leave and (uid != "k" or rng.random() < 0.5):
            path = shortest(grid, where[uid], board["exits"]["voluntary"][0])
        else:  # (a character's walk may end on any edge hex and leave, JOM-X3)
            path = [where[uid]]
            for _ in range(rng.choice([0, 1, 2, 3, calm[uid], calm[uid] + 1, calm[uid] + 2])):
                ns = sorted(n for n in grid[path[-1]] if n not in path)
                held = [n for n in ns if n in where.values()]
                on_road = [n for n in ns if n in road] if path[-1] in road else []
                pick = rng.random()
                choices = (held if uid == "k" and pick < 0.4 else on_road if pick < 0.6 else held if pick < 0.75 else []) or ns
                if not choices:
                    break
                path.append(rng.choice(choices))
        move = {"unit": uid, "path": path, "combat": False if leave else rng.random() < 0.5}
        if leave:
            move["exit"] = True
        moves.append(move)
        where[uid] = path[-1]
    return moves


def oracle(name: str, state: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, str | None] | None]:
    """Each move's verdict and the units' hexes at the end, by the reading in this module's docstring;
    up to a move that would end a character with a unit (then no hexes at the end)."""
    board = state["board"]
    grid = neighbours(board["cols"], board["rows"])
    terrain = {h: v["terrain"] for h, v in board["hexes"].items()}
    roads = {frozenset(r[:2]) for r in board["roads"]}
    extra: dict[frozenset[str], int] = {}
    for e in board["edges"]:
        extra[frozenset((e["a"], e["b"]))] = SIDE_EXTRA[e["feature"]]
    units = {u["id"]: dict(u) for u in state["units"]}
    moved: set[str] = set()
    out: list[dict[str, Any]] = []

    def cost(a: str, b: str) -> int | None:
        base = TERRAIN[terrain.get(b, "clear")]
        if base is None:
            return None
        return (1 if frozenset((a, b)) in roads else base) + extra.get(frozenset((a, b)), 0)

    def may_cross(u: dict[str, Any], other: dict[str, Any]) -> bool:
        if other["type"] in CHARACTERS:
            return other["side"] == u["side"]
        if u["type"] in CHARACTERS:
            return name == "am" and other["side"] == u["side"]
        if name == "re":
            return u["type"] in CROSSERS and "artillery" in other["type"]
        light = {"light", "very_light"}
        return other["side"] == u["side"] and (u["class"] in light or other["class"] in light)

    for m in state["moves"]:
        u = units[m["unit"]]
        path, combat, leave = m["path"], m["combat"], m.get("exit", False)
        fight, calm, loses, capped = row(u)
        lone = u["type"] in CHARACTERS and not u["flags"].get("vehicle", False)
        enters = u["hex"] is None
        # a reinforcement's first hex is the first on the table, entered from the fictitious hex beyond it
        legs = ([(None, path[0])] if enters else []) + list(zip(path, path[1:]))
        steps = len(legs) + (1 if leave else 0)
        along = not enters and not leave and len(path) > 1 and all(frozenset(p) in roads for p in zip(path, path[1:]))
        mounted = u["type"] == "infantry" and "mount" in u
        if combat:
            budget = fight
        else:
            budget = calm + (1 if along else 0) + (1 if mounted else 0)
        if capped and budget is not None:
            budget = min(budget, 1)
        occupant = {v["hex"]: v for v in units.values() if v["hex"] is not None and v["id"] != u["id"]}
        start = path[0] in board["exits"]["reinforcement"] if enters else path[0] == u["hex"]
        barred = name == "am" and u["flags"].get("pre_played", False)
        ok = u["flags"]["activated"] and not (steps > 0 and (u["id"] in moved or barred)) and start
        ok = ok and all(b in grid[a] for a, b in zip(path, path[1:]))
        total = None
        if ok and steps > 0:
            costs = [(None if TERRAIN[terrain.get(b, "clear")] is None else 1) if lone
                     else cost(a, b) if a is not None else TERRAIN[terrain.get(b, "clear")] for a, b in legs]
            if not leave and path[-1] in occupant and CHARACTERS & {u["type"], occupant[path[-1]]["type"]}:
                return out, None  # a character ending with a unit: characters.yaml's readings
            way_out = path[-1] in board["exits"]["voluntary"] or (
                name == "am" and u["type"] in CHARACTERS and len(grid[path[-1]]) < 6)
            crossed = [b for _, b in legs] if leave else [b for _, b in legs][:-1]
            ok = (budget is not None and None not in costs
                  and all(h not in occupant or may_cross(u, occupant[h]) for h in crossed)
                  and (leave or path[-1] not in occupant)
                  and (not leave or way_out)
                  and not (capped and steps > 1))
            if ok:
                total = sum(costs) + (1 if leave else 0)  # type: ignore[arg-type]
                ok = total <= budget  # type: ignore[operator]
        elif ok:
            total = 0
        if not ok:
            out.append({"status": "illegal"})
            continue
        hexes = len(legs)
        out.append({"status": "ok", "cost": total, "allowance": budget, "hexes": hexes,
                    "dice_lost": hexes if loses else 0, "road_march": along and not combat,
                    "may_fight": combat and not leave})
        if steps > 0:
            moved.add(u["id"])
            u["hex"] = None if leave else path[-1]
    return out, {uid: u["hex"] for uid, u in units.items()}


KEYS = ("status", "cost", "allowance", "hexes", "dice_lost", "road_march", "may_fight")


@pytest.mark.parametrize("name", ["re", "am"])
def test_main_agrees_with_a_second_reading_of_the_movement_rules(name: str) -> None:
    rng = random.Random(f"jomini-oracle-{name}")
    made = refused = unsure = 0
    for _ in range(BOARDS):
        state = random_state(rng)
        state["moves"] = random_moves(rng, state)
        got = rules(name).run(state)
        want, hexes = oracle(name, state)
        if hexes is None:
            unsure += 1
        for move, g, w in zip(state["moves"], got["moves"], want):
            said = (name, state, move, g)
            if w["status"] == "illegal":
                assert g["status"] == "illegal", said
                refused += 1
            else:
                assert {k: g[k] for k in KEYS} == w, said
                made += 1
        if hexes is not None:
            assert {u["id"]: u["hex"] for u in got["units"]} == hexes, (name, state)
    assert made > BOARDS // 2 and refused > BOARDS // 2 and unsure < BOARDS // 5, (made, refused, unsure)
