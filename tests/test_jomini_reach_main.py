"""`reach` and `main` of the Jomini rulesets answer one question twice: can unit U get to hex H this turn.

`reach(id)` (and `reach_all`, and the marks `ruleval render` draws) lists the hexes a unit can go to;
`main` judges a move's path legal or not. For every unit of a state, the hexes `reach` lists must be
exactly the last hexes of the paths `main` accepts as that unit's move, found here by brute force:
every simple path from the unit's hex (for a unit off the table, from each reinforcement entry hex) is
submitted to `main`, one step longer at a time, also as a move leaving the table from its last hex,
and nothing of `reach` is used to find them. Simple paths suffice: cutting a loop out of a legal path
leaves a legal path to the same hex or off the table by it (no more cost, no more hexes crossed, and
on a road all along if the path was).

What `reach` means, exactly (README, the Jomini section):
- it is asked where `main` judges the unit's move: after the state's moves listed before the first of
  the unit's moves that `main` accepts and that moves it (one of no hex does not; after all of them when
  it accepts none, or the unit has none;
  units move one at a time, each once, JOM-A1), so the move tried replaces the unit's own and those
  after it;
- a hex is listed when some path to it is a legal move without combat (the larger allowance, road
  march and a mounted unit's bonus included); `fight: true` when some path to it is a legal move with
  combat; `cost` is the least cost of a legal path (`main`'s `cost`); `road_march: true` when that
  least cost is over the allowance without road march (so every legal path to it is a road march,
  after which the unit may not fight or fire, JOM-R1);
- its `allowance` is `main`'s: `fight` that of a move with combat, `calm` that of one without, `road`
  that of a road march (none when the unit does not stand on a road);
- the unit's own hex is never listed (staying is no move to a hex), nor a hex a unit only crosses (one
  held by another unit: a move never ends there, JOM-O1), unless a character and a unit of one side
  would end there together (the character is then with the unit: JOM-O1 speaks of units, JOM-X4);
- its `exits` are the hexes the unit may leave the table by (JOM-X1, X3): a hex is listed when some
  path ending on it is a legal move with `exit: true` and without combat (the unit's own hex alone is
  such a path), with the least `cost` of one (`main`'s, the step off included) and `main`'s `clause`
  for it; a unit off the table has none (its move enters the table, JOM-X4: checked here on `main`'s
  verdicts too, as `reach` agreeing with a `main` that let a reinforcement leave would prove nothing).
  Every such path is also submitted with combat: `reach` marks no way off with `fight`, so `main`
  accepts none (no combat follows a move off the table: JOM-A1's "with combat" is a fight at the end
  of the move).

Checked on the rulesets' own `generate(seed)` states and on small boards built here with every
feature the movement rules read: roads, rivers, fords, bridges, woods, hills, marsh, impassable hexes,
friendly and enemy units and artillery to cross, light units (AM), characters alone and with a unit,
mounted infantry, capped artillery (JOM-K2), units not activated or pre-played (JOM-A2), reduced
units, exits and reinforcement entry hexes. RULEVAL_FUZZ_LONG=1 runs many more states and, for some,
every simple path with no pruning (which checks the pruning used by default)."""

from __future__ import annotations

import json
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fuzzing import LONG, bounded  # noqa: E402
from validator import load_ruleset  # noqa: E402
from validator.api import check_text  # noqa: E402
from validator.tools.errata import generator_state  # noqa: E402

JOMINI = ROOT / "rulesets" / "jomini"
RULESETS = ["re", "am"]


# ---------------------------------------------------------------- main, many times in one run

# `main` folds the turn's moves over the state, each judged by `judge` on the state the moves before it
# left: move m made after the state's first k moves gets `judge(after k moves, m)`. One run of this query
# judges many such moves at once (a run of `main` each would take most of the test's time); for each unit,
# a sample of its verdicts, legal and refused, is also asked of `main` itself (`_confirm`).
_BATCH = """ruleset jomini.test_reach_main_{name} "the Jomini {name} ruleset, judging many moves in one run"
extends "{name}.rules"
query judge_each(k, ms) = let st = fold(slice(moves, 0, k), {{units: units, moved: set(), results: []}}, advance);
  [judge(st, m) for m in ms]
query neighbours = grid
"""


@cache
def batch(name: str) -> Any:
    rs = check_text(JOMINI / f"zz_test_reach_main_{name}.rules", _BATCH.format(name=name))
    assert rs.ok, [str(d) for d in rs.diagnostics]
    return rs


@cache
def ruleset(name: str) -> Any:
    rs = load_ruleset(JOMINI / f"{name}.rules")
    assert rs.ok, [str(d) for d in rs.diagnostics]
    return rs


def moment(name: str, state: dict, uid: str) -> int:
    """How many of the state's moves come before unit `uid`'s move: those before the first of its moves
    `main` accepts that moves it (a refused move, or one of no hex, is no move; a unit moves once, JOM-A1),
    or all of them when `main` accepts none (the unit has not moved: it may still move, after them)."""
    verdicts = turn(name, json.dumps(state, sort_keys=True))["moves"]
    return next((i for i, (m, v) in enumerate(zip(state["moves"], verdicts))
                 if m["unit"] == uid and v["status"] == "ok" and (v["hexes"] > 0 or m.get("exit"))),
                len(state["moves"]))


@cache
def turn(name: str, state: str) -> Any:
    return ruleset(name).run(json.loads(state))


def judged(name: str, state: dict, moves: list[dict]) -> list[dict]:
    """`main`'s verdict of each move (all of one unit), made in place of that unit's own."""
    if not moves:
        return []
    return batch(name).run(state, query="judge_each", args=[moment(name, state, moves[0]["unit"]), moves], validate=False)


def main_verdict(name: str, state: dict, move: dict) -> dict:
    k = moment(name, state, move["unit"])
    return ruleset(name).run({**state, "moves": state["moves"][:k] + [move]})["moves"][k]


# ---------------------------------------------------------------- the brute force

# A refused path is extended only when it is refused for where it ends (a hex another unit holds, which
# a longer path may cross) and enters fewer hexes than its allowance: any other refusal is of the unit
# (not activated, pre-played), of a hex the path enters (impassable, a unit it may not cross) or of the
# cost so far, which every longer path meets too, as its costs are the prefix's and more, and its
# allowance no larger (a longer path follows a road no further than its prefix does); and no hex costs
# less than 1 to enter (JOM-T3: clear ground, the cheapest, costs 1), so a path entering more hexes than
# its allowance is over it. The long mode also runs the search without this pruning.
#
# Leaving the table is a path with `exit: true`: every path tried (and, for a unit on the table, the
# path of its own hex alone) is also submitted so, without combat and with it. The pruning loses none
# that `main` accepts: such a path crosses every hex it enters, and its step off costs at least 1
# (`exit_cost`), so each of its prefixes, made as a move without combat (whose allowance is no smaller
# than with combat), is legal or refused only for where it ends, and enters fewer hexes than its
# allowance; so the path itself is tried.
ENDS_ONLY = {"JOM-O1", "JOM-O4"}
MOST_STEPS = 8  # more hexes than any allowance with its bonuses (at most 4 + road 1): a safety stop


def extendable(path: list[str], verdict: dict) -> bool:
    return verdict["status"] == "ok" or (verdict["clause"] in ENDS_ONLY and verdict["step"] == len(path) - 1
                                         and verdict["hexes"] < verdict["allowance"])


def legal_paths(name: str, state: dict, unit: dict, graph: dict, prune: bool = True, most: int = MOST_STEPS,
                refused: list | None = None, exits: dict | None = None,
                fighting_exits: dict | None = None) -> dict[str, list]:
    """The last hex of each path of at most `most` steps that `main` accepts for `unit` without combat,
    with the verdicts of those paths: {hex: [(path, verdict), ...]}; the paths it refuses, with their
    verdicts, go to `refused`; the hexes the unit leaves the table by, with the paths and verdicts of
    those moves, to `exits` (without combat) and `fighting_exits` (the same paths with combat)."""
    entries = state["board"].get("exits", {}).get("reinforcement", [])
    if unit["hex"] is None:
        frontier = [[e] for e in entries]
        tried = frontier
    else:
        frontier, tried = [[unit["hex"]]], []
    every = [] if unit["hex"] is None else [[unit["hex"]]]  # (staying is no move; leaving from there is)
    found: dict[str, list] = {}
    for _ in range(most + 1):
        every += tried
        if tried:
            verdicts = judged(name, state, [{"unit": unit["id"], "path": p, "combat": False} for p in tried])
            for p, v in zip(tried, verdicts):
                if v["status"] == "ok":
                    found.setdefault(p[-1], []).append((p, v))
                elif refused is not None:
                    refused.append((p, v))
            frontier = [p for p, v in zip(tried, verdicts) if not prune or extendable(p, v)]
        tried = [p + [n] for p in frontier for n in graph[p[-1]] if n not in p]
        if not tried:
            break
    else:
        assert not prune, f"{unit['id']}: paths of {most} steps still worth going on from: {tried[:3]}"
    for combat, ways in ((False, exits), (True, fighting_exits)):
        if ways is None:
            continue
        leaving = judged(name, state, [{"unit": unit["id"], "path": p, "combat": combat, "exit": True} for p in every])
        for p, v in zip(every, leaving):
            if v["status"] == "ok":
                ways.setdefault(p[-1], []).append((p, v))
    return found


def expected_reach(name: str, state: dict, unit: dict, graph: dict, prune: bool = True) -> dict:
    """What `reach` should say of `unit`, from `main`'s verdicts alone."""
    refused: list = []
    leaving: dict[str, list] = {}
    leaving_fighting: dict[str, list] = {}
    found = legal_paths(name, state, unit, graph, prune, refused=refused, exits=leaving, fighting_exits=leaving_fighting)
    ways = [(h, p) for h in sorted(found) for p, _ in found[h]]
    fights = judged(name, state, [{"unit": unit["id"], "path": p, "combat": True} for _, p in ways])
    fight = {h: (p, v) for (h, p), v in zip(ways, fights) if v["status"] == "ok"}
    calm = {v["allowance"] for vs in found.values() for _, v in vs if not v["road_march"]}
    road = {v["allowance"] for vs in found.values() for _, v in vs if v["road_march"]}
    fighting = {v["allowance"] for v in fights if v["status"] == "ok"}
    hexes = {}
    for h, vs in found.items():
        cost = min(v["cost"] for _, v in vs)
        hexes[h] = {"cost": cost, "fight": h in fight, "road_march": all(v["road_march"] for _, v in vs)}
    exits = {}
    for h, vs in leaving.items():
        clauses = {v["clause"] for _, v in vs}
        assert len(clauses) == 1, f"{unit['id']} leaves by {h} under several clauses: {vs}"
        exits[h] = {"cost": min(v["cost"] for _, v in vs), "clause": clauses.pop()}
    calm |= {v["allowance"] for vs in leaving.values() for _, v in vs}
    return {"hexes": hexes, "calm": calm, "road": road, "fight": fighting, "found": found, "fights": fight,
            "refused": refused, "exits": exits, "leaving": leaving, "leaving_fighting": leaving_fighting}


def standing(name: str, state: dict, uid: str) -> dict:
    """Unit `uid` where `main` leaves it after the state's moves before its own (a character with a unit
    goes where the unit went)."""
    k = moment(name, state, uid)
    return next(u for u in ruleset(name).run({**state, "moves": state["moves"][:k]})["units"] if u["id"] == uid)


def check_unit(name: str, state: dict, unit: dict, graph: dict, prune: bool = True) -> None:
    unit = standing(name, state, unit["id"])
    said = ruleset(name).run(state, query="reach", args=[unit["id"]])
    assert said["from"] == unit["hex"]
    want = expected_reach(name, state, unit, graph, prune)
    where = f"{name} {unit['id']} ({unit['type']} {unit.get('class')}) at {unit['hex']}: "
    # a unit off the table moves to enter it (JOM-X4): `main` lets none of its moves leave it again, and
    # so `reach` and `main` could not agree on such a way off without both being wrong
    assert unit["hex"] is not None or not want["leaving"], where + f"main lets a reinforcement leave: {want['leaving']}"
    assert set(said["hexes"]) == set(want["hexes"]), where + diff(said, want, state, unit)
    # the ways off the table: the hexes `main` lets it leave by, each at the least cost of a way, with
    # the clause that allows it
    assert said["exits"] == want["exits"], (where + f"reach's exits {said['exits']}, main's {want['exits']}, e.g. "
                                            + str({h: [p for p, _ in vs][:2] for h, vs in want["leaving"].items()}))
    # and with combat: `reach` says of none of them that the unit may fight after leaving, so `main`
    # accepts none (no combat follows a move off the table, JOM-A1)
    fighting = {h for h, way in said["exits"].items() if way.get("fight")}
    assert fighting == set(want["leaving_fighting"]), (
        where + f"reach lets it leave with combat by {sorted(fighting)}, main by "
        + str({h: [p for p, _ in vs][:2] for h, vs in want["leaving_fighting"].items()}))
    allowance = said["allowance"]
    # the allowances `main` used on the legal paths are those `reach` says
    assert want["calm"] <= {allowance["calm"]}, where + f"main's calm allowances {want['calm']}, reach {allowance}"
    assert want["road"] <= {allowance["road"]}, where + f"main's road allowances {want['road']}, reach {allowance}"
    assert want["fight"] <= {allowance["fight"]}, where + f"main's allowances with combat {want['fight']}, reach {allowance}"
    for h, w in want["hexes"].items():
        s = said["hexes"][h]
        # the least cost; with combat when some path is legal with it; a road march when no path is
        # within the allowance without one
        assert s["cost"] == w["cost"] and s["fight"] == w["fight"], where + f"{h}: reach {s}, main {w}"
        assert s["road_march"] == (w["cost"] > allowance["calm"]), where + f"{h}: reach {s}, main {w}"
        if s["road_march"]:
            assert w["road_march"], where + f"{h}: reach {s}, main {w}"
    _confirm(name, state, unit, want)


def _confirm(name: str, state: dict, unit: dict, want: dict) -> None:
    """The batch query's verdicts are `main`'s, asked of `main` itself with the move in place of the
    unit's own: a legal path to each of a few hexes, with combat too where one is legal with it, and a
    few refused paths (the first and the last tried)."""
    shown = [(p, False, v) for ways in list(want["found"].values())[:4] for p, v in ways[:1]]
    shown += [(p, True, v) for p, v in list(want["fights"].values())[:2]]
    shown += [(p, False, v) for p, v in want["refused"][:2] + want["refused"][-2:]]
    for path, combat, verdict in shown:
        assert main_verdict(name, state, {"unit": unit["id"], "path": path, "combat": combat}) == verdict
    for ways in list(want["leaving"].values())[:2]:
        path, verdict = ways[0]
        assert main_verdict(name, state, {"unit": unit["id"], "path": path, "combat": False, "exit": True}) == verdict
        with_combat = [p for p, _ in want["leaving_fighting"].get(path[-1], [])]
        said = main_verdict(name, state, {"unit": unit["id"], "path": path, "combat": True, "exit": True})
        assert (said["status"] == "ok") == (path in with_combat), said


def diff(said: dict, want: dict, state: dict, unit: dict) -> str:
    extra = sorted(set(said["hexes"]) - set(want["hexes"]))
    missing = sorted(set(want["hexes"]) - set(said["hexes"]))
    shown = {h: [p for p, _ in want["found"][h]][:2] for h in missing}
    return (f"reach lists {extra} that no legal path ends on; main accepts paths to {missing} that reach "
            f"does not list, e.g. {shown}; state {json.dumps(state)}")


def check_state(name: str, state: dict, prune: bool = True) -> int:
    """Every unit of the state, on and off the table; `reach_all` is `reach` of each unit on it. Returns
    how many units were checked."""
    state = {"moves": [], **state}
    rs = ruleset(name)
    assert rs.state_errors(state) == [], rs.state_errors(state)
    graph = batch(name).run(state, query="neighbours", validate=False)
    for unit in state["units"]:
        check_unit(name, state, unit, graph, prune)
    assert rs.run(state, query="reach_all") == [rs.run(state, query="reach", args=[u["id"]])
                                                for u in state["units"] if u["hex"] is not None]
    return len(state["units"])


# ---------------------------------------------------------------- the rulesets' own generated states

def generated(name: str, seed: int) -> dict:
    rs = ruleset(name)
    return rs.run(generator_state(rs), query="generate", args=[seed], seed=seed, validate=False)


@pytest.mark.parametrize("name", RULESETS)
def test_reach_is_where_main_lets_units_go_on_generated_states(name: str) -> None:
    seeds = range(40) if LONG else range(3)
    assert sum(check_state(name, generated(name, seed)) for seed in seeds) >= 2 * len(seeds)


# ---------------------------------------------------------------- small boards built here

KINDS = [("infantry", "light"), ("infantry", "medium"), ("infantry", "heavy"), ("cavalry", "light"),
         ("cavalry", "heavy"), ("lancers", "cuirassiers"), ("camelry", "very_heavy"), ("elephants", "medium"),
         ("foot_artillery", "very_light"), ("foot_artillery", "very_heavy"), ("rocket_artillery", "light"),
         ("horse_artillery", "very_light"), ("flying_artillery", "light"), ("elephant_artillery", "light"),
         ("camel_artillery", "very_light"), ("elephant_drawn_artillery", "very_light"), ("officer", None),
         ("character", None)]
TERRAINS = ["clear", "woods", "hills", "marsh", "village", "impassable"]
FEATURES = ["river", "ford", "bridge"]


def _label(c: int, r: int) -> str:
    return f"{c:02d}{r:02d}"


@st.composite
def boards(draw: Any, name: str) -> dict:
    """A valid state of 4 to 6 columns and rows: terrain, a road or two, hex sides with features, exits on
    the edge, and 2 to 7 units of both sides (a character now and then with a unit of its side, a unit
    now and then off the table, having left it or not, a character alone or with its unit)."""
    cols, rows = draw(st.integers(4, 6)), draw(st.integers(4, 6))
    layout = draw(st.sampled_from(["odd-q", "even-q", "odd-r", "even-r"]))
    board: dict[str, Any] = {"cols": cols, "rows": rows, "layout": layout}
    graph = batch(name).run({"board": board, "units": []}, query="neighbours", validate=False)
    hexes = sorted(graph)
    edge = [h for h in hexes if len(graph[h]) < 6]
    board["hexes"] = {h: {"terrain": draw(st.sampled_from(TERRAINS))}
                      for h in draw(st.lists(st.sampled_from(hexes), max_size=len(hexes) // 2, unique=True))}
    roads: set[tuple[str, str, str]] = set()
    for name in ("A", "B")[:draw(st.integers(0, 2))]:  # two roads, told apart by their names (JOM-R1)
        at = draw(st.sampled_from(hexes))
        for _ in range(draw(st.integers(1, 6))):
            nxt = draw(st.sampled_from(sorted(graph[at])))
            if (nxt, at, name) not in roads:
                roads.add((at, nxt, name))
            at = nxt
    board["roads"] = [list(r) for r in sorted(roads)]
    sides: dict[frozenset, dict] = {}
    for _ in range(draw(st.integers(0, 5))):
        a = draw(st.sampled_from(hexes))
        b = draw(st.sampled_from(sorted(graph[a])))
        sides.setdefault(frozenset((a, b)), {"a": a, "b": b, "feature": draw(st.sampled_from(FEATURES))})
    board["edges"] = list(sides.values())
    board["exits"] = {"voluntary": draw(st.lists(st.sampled_from(edge), max_size=2, unique=True)),
                      "reinforcement": draw(st.lists(st.sampled_from(edge), max_size=3, unique=True))}
    spots = draw(st.permutations(hexes))
    units = []
    for i in range(draw(st.integers(2, 7))):
        kind, cls = draw(st.sampled_from(KINDS))
        flags = {"activated": draw(st.integers(0, 5)) > 0}
        if kind == "infantry" and draw(st.booleans()):
            flags["mounted"] = True
        if name == "am" and draw(st.integers(0, 7)) == 0:
            flags["pre_played"] = True
        if kind in ("officer", "character") and draw(st.integers(0, 3)) == 0:
            flags["vehicle"] = True
        unit = {"id": f"u{i}", "side": draw(st.sampled_from(["blue", "red"])), "type": kind,
                "hex": None if board["exits"]["reinforcement"] and draw(st.integers(0, 5)) == 0 else spots[i],
                "flags": flags}
        if cls is not None:
            unit["class"] = cls
        if draw(st.integers(0, 5)) == 0:
            unit["reduced"] = True
        if unit["hex"] is None and draw(st.booleans()):
            # off the table after leaving it: alone, or (a character) with its unit (JOM-X3 in AM)
            flags["exited"] = True
            if kind in ("officer", "character") and draw(st.booleans()):
                flags["lone"] = False
        units.append(unit)
    # a character with a unit stands on the hex of a unit of its side (and takes none of its own)
    held = {u["hex"]: u for u in units if u["hex"] is not None and u["type"] not in ("officer", "character")}
    for u in units:
        if u["type"] in ("officer", "character") and u["hex"] is not None and draw(st.integers(0, 2)) == 0:
            mates = [h for h, v in sorted(held.items()) if v["side"] == u["side"]]
            if mates:
                u["hex"] = draw(st.sampled_from(mates))
                u["flags"]["lone"] = False
    # up to three moves made before the units checked move: random walks, legal or not, now and then
    # leaving the table from where they end (of no step: from where the unit stands)
    moves = []
    for _ in range(draw(st.integers(0, 3))):
        u = draw(st.sampled_from(units))
        path = [u["hex"]] if u["hex"] is not None else [draw(st.sampled_from(board["exits"]["reinforcement"]))]
        leaving = draw(st.integers(0, 3)) == 0
        for _ in range(draw(st.integers(0 if leaving else 1, 3))):
            path.append(draw(st.sampled_from(sorted(graph[path[-1]]))))
        move = {"unit": u["id"], "path": path, "combat": draw(st.booleans())}
        if leaving:
            move["exit"] = True
        moves.append(move)
    return {"board": board, "units": units, "moves": moves}


def _boards_test(name: str) -> Any:
    @bounded(5, 250)
    @given(boards(name))
    def run(state: dict) -> None:
        check_state(name, state)
    return run


@pytest.mark.parametrize("name", RULESETS)
def test_reach_is_where_main_lets_units_go_on_small_boards(name: str) -> None:
    _boards_test(name)()


# A board with one of each thing the movement rules read, near each other (odd-q, 7 x 6):
# a road from 0101 east through woods and hills, over a bridge and along a river; a ford; marsh and an
# impassable hex; friendly and enemy artillery and infantry on and beside the road; light units; a lone
# officer and one with a unit; mounted infantry on the road; capped artillery; a unit not activated, a
# pre-played one (AM), reduced units; two voluntary exits and two reinforcement entries, a unit off the
# table, a unit next to an exit.
def _u(uid: str, side: str, kind: str, cls: str | None, hex_: str | None, reduced: bool = False, **flags: Any) -> dict:
    unit = {"id": uid, "side": side, "type": kind, "hex": hex_, "flags": {"activated": True, **flags}}
    if reduced:
        unit["reduced"] = True
    if cls is not None:
        unit["class"] = cls
    return unit


BUILT = {
    "board": {
        "cols": 7, "rows": 6,
        "hexes": {"0201": {"terrain": "woods"}, "0301": {"terrain": "hills"}, "0303": {"terrain": "marsh"},
                  "0404": {"terrain": "impassable"}, "0204": {"terrain": "woods"}, "0503": {"terrain": "village"},
                  "0602": {"terrain": "hills"}},
        "roads": [["0101", "0201"], ["0201", "0301"], ["0301", "0402"], ["0402", "0502"], ["0502", "0602"],
                  ["0602", "0702"], ["0102", "0101"]],
        "edges": [{"a": "0402", "b": "0502", "feature": "bridge"}, {"a": "0403", "b": "0503", "feature": "river"},
                  {"a": "0502", "b": "0503", "feature": "river"}, {"a": "0203", "b": "0303", "feature": "ford"},
                  {"a": "0103", "b": "0203", "feature": "river"}],
        "exits": {"voluntary": ["0701", "0106"], "reinforcement": ["0101", "0105"]},
    },
    "units": [
        _u("M", "blue", "infantry", "medium", "0102", mounted=True),
        _u("C", "blue", "cavalry", "light", "0203"),
        _u("A", "blue", "foot_artillery", "light", "0302", activated=False),
        _u("X", "red", "horse_artillery", "very_light", "0402"),
        _u("E", "red", "infantry", "heavy", "0304"),
        _u("L", "blue", "infantry", "light", "0202"),
        _u("O", "blue", "officer", None, "0103"),
        _u("P", "blue", "character", None, "0202", lone=False),
        _u("K", "red", "foot_artillery", "very_heavy", "0603"),
        _u("R", "blue", "cavalry", "heavy", None),
        _u("Z", "red", "infantry", "medium", "0605", reduced=True),
        _u("Y", "red", "lancers", "heavy", "0505", reduced=True),
        _u("N", "red", "camelry", "light", "0104", activated=False),
        _u("F", "red", "infantry", "light", "0502", mounted=True),
        _u("W", "blue", "infantry", "light", "0206"),
    ],
}


@pytest.mark.parametrize("name", RULESETS)
def test_reach_is_where_main_lets_units_go_on_a_board_with_everything(name: str) -> None:
    state = json.loads(json.dumps(BUILT))
    if name == "am":
        state["units"].append(_u("Q", "blue", "cavalry", "heavy", "0401", pre_played=True))
    assert check_state(name, state) == len(state["units"])
    # (some units may leave the table: F by 0701, W by 0106; in AM the lone characters by any edge hex,
    # JOM-X3; R, a reinforcement, by none: its move enters the table, JOM-X4)
    assert sum(bool(ruleset(name).run(state, query="reach", args=[u["id"]])["exits"]) for u in state["units"]) >= 2
    # and where the units go after some moves: L leaves 0202 for the hills (P, with it, goes along); X
    # makes for 0602 along the road across F (refused in RE, JOM-O2; in AM, F is light and X gets there,
    # JOM-O3); F's move is refused (0404 is impassable); C moves after them, fighting
    state["moves"] = [{"unit": "L", "path": ["0202", "0301"], "combat": False},
                      {"unit": "X", "path": ["0402", "0502", "0602"], "combat": False},
                      {"unit": "F", "path": ["0502", "0503", "0504", "0404"], "combat": False},
                      {"unit": "C", "path": ["0203", "0202"], "combat": True}]
    assert check_state(name, state) == len(state["units"])
    # several moves of one unit (JOM-A1: once per turn; a refused move is no move): O tries to end on
    # 0104, which N (red) holds (refused, JOM-O1), then ends on 0203 with C, a unit of its side (a
    # character is no second unit there, JOM-O1, X4); C goes into the marsh, O with it; C's second move
    # is refused (it has moved); F's first is refused (0404 is impassable), its second is its move
    state["moves"] = [{"unit": "O", "path": ["0103", "0104"], "combat": False},
                      {"unit": "O", "path": ["0103", "0203"], "combat": False},
                      {"unit": "C", "path": ["0203", "0303"], "combat": False},
                      {"unit": "C", "path": ["0303", "0403"], "combat": False},
                      {"unit": "F", "path": ["0502", "0503", "0504", "0404"], "combat": False},
                      {"unit": "F", "path": ["0502", "0503"], "combat": False}]
    turn = ruleset(name).run(state)
    verdicts = [(v["status"], v["clause"]) for v in turn["moves"]]
    assert verdicts == [("illegal", "JOM-O1"), ("ok", "JOM-A1"), ("ok", "JOM-A1"), ("illegal", "JOM-A1"),
                        ("illegal", "JOM-T1"), ("ok", "JOM-A1")], verdicts
    o = next(u for u in turn["units"] if u["id"] == "O")
    assert (o["hex"], o["flags"].get("lone")) == ("0303", False)
    assert check_state(name, state) == len(state["units"])
    # the reinforcement R enters at 0101 and stops there; G, an officer kept off the table with it,
    # enters after it onto its hex and is then with it (JOM-X4: reinforcements enter with an officer)
    state["units"].append(_u("G", "blue", "officer", None, None))
    state["moves"] = [{"unit": "R", "path": ["0101"], "combat": False},
                      {"unit": "G", "path": ["0101"], "combat": False}]
    turn = ruleset(name).run(state)
    assert [v["status"] for v in turn["moves"]] == ["ok", "ok"], turn["moves"]
    g = next(u for u in turn["units"] if u["id"] == "G")
    assert (g["hex"], g["flags"].get("lone")) == ("0101", False)
    assert check_state(name, state) == len(state["units"])


@pytest.mark.parametrize("name", RULESETS)
def test_the_pruned_search_finds_what_the_whole_one_finds(name: str) -> None:
    # (every simple path, no pruning: one generated state by default, four in the long mode)
    for seed in range(4 if LONG else 1):
        state = {**generated(name, seed), "moves": []}
        graph = batch(name).run(state, query="neighbours", validate=False)
        for unit in state["units"]:
            pruned = legal_paths(name, state, unit, graph, prune=True)
            whole = legal_paths(name, state, unit, graph, prune=False, most=6)
            assert {h: len(v) for h, v in whole.items()} == {h: len(v) for h, v in pruned.items()}
    # the ways off the table, on the board with everything (where more units reach one): a move
    # leaving it enters at most 3 hexes (4, the largest allowance without combat, less the step off)
    state = {**BUILT, "moves": []}
    graph = batch(name).run(state, query="neighbours", validate=False)
    leaving = 0
    for unit in state["units"]:
        pruned_exits: dict[str, list] = {}
        whole_exits: dict[str, list] = {}
        pruned_fighting: dict[str, list] = {}
        whole_fighting: dict[str, list] = {}
        legal_paths(name, state, unit, graph, prune=True, exits=pruned_exits, fighting_exits=pruned_fighting)
        legal_paths(name, state, unit, graph, prune=False, most=3, exits=whole_exits, fighting_exits=whole_fighting)
        assert {h: len(v) for h, v in whole_exits.items()} == {h: len(v) for h, v in pruned_exits.items()}
        assert {h: len(v) for h, v in whole_fighting.items()} == {h: len(v) for h, v in pruned_fighting.items()}
        leaving += bool(whole_exits)
    assert leaving >= 2  # (F by 0701; W by 0106; in AM, the lone characters)
