"""Retreats at the table's edge (JOM-X2, and AM's JOM-X3): the `retreats` query of the Jomini rulesets.

tests/cases/jomini/retreat.yaml pins each reading on one retreat. Here every simple path of up to 3
hexes from two units' hexes on a small board, for retreats of 1 to 3 hexes, with and without `exit`, is
given to both rulesets, and what the clauses say is checked of every answer, from the state alone:
- a retreat the texts allow (from the unit's hex, by touching hexes, none impassable, JOM-T1, nor held
  by another unit; all its hexes on the table, or fewer past the edge of the table) is made, never
  refused nor left undecided;
- made, it takes the hexes of its path; on the table it counts no loss; past the edge each hex not
  taken is one loss and the unit stays on its last hex (JOM-X2, even by a scenario's exit), except a
  lone character in AM, which leaves the table, no loss, `exited` (JOM-X3);
- made, it loses no combat die: neither unit is artillery marked (**) (JOM-K1);
- not made, it counts no loss and moves nobody.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Iterator

import pytest

from validator.api import load_ruleset

ROOT = Path(__file__).resolve().parent.parent
JOMINI = ROOT / "rulesets" / "jomini"

# 3 x 3 hexes, odd-q: 0202 alone is not on the table's edge; 0303 is impassable; F holds 0302; the
# scenario's voluntary exit is 0101 (no way out for a retreat).
BOARD = {"cols": 3, "rows": 3, "hexes": {"0303": {"terrain": "impassable"}}, "exits": {"voluntary": ["0101"]}}
UNITS = [
    {"id": "H", "side": "blue", "type": "infantry", "class": "heavy", "hex": "0202"},
    {"id": "K", "side": "red", "type": "character", "hex": "0101"},
    {"id": "F", "side": "blue", "type": "infantry", "class": "light", "hex": "0302"},
]


def simple_paths(grid: dict[str, list[str]], start: str, steps: int) -> Iterator[list[str]]:
    """Every path from `start` of at most `steps` hexes after it, each touching the one before, none twice."""
    todo = [[start]]
    while todo:
        path = todo.pop()
        yield path
        if len(path) <= steps:
            todo.extend(path + [n] for n in grid[path[-1]] if n not in path)


@pytest.mark.parametrize("name", ["re", "am"])
def test_every_retreat_on_a_small_board_is_as_the_clauses_say(name: str) -> None:
    rules = load_ruleset(JOMINI / f"{name}.rules")
    base = {"board": BOARD, "units": UNITS}
    grid = rules.run(base, query="costs")["edges"]
    grid = {h: sorted(set(ns) | {a for a, bs in grid.items() if h in bs}) for h, ns in grid.items()}
    edge = {h for h, ns in grid.items() if len(ns) < 6}
    assert edge == set(grid) - {"0202"}  # (the board is what this test says it is)
    held = {u["hex"]: u["id"] for u in UNITS}
    made = {"on": 0, "lost": 0, "left": 0}
    for unit in ("H", "K"):
        start = next(u["hex"] for u in UNITS if u["id"] == unit)
        for path in simple_paths(grid, start, 3):
            for hexes in (1, 2, 3):
                for leaves in (False, True):
                    retreat = {"unit": unit, "hexes": hexes, "path": path, **({"exit": True} if leaves else {})}
                    out = rules.run({**copy.deepcopy(base), "retreats": [retreat]}, query="retreats")
                    [r] = out["retreats"]
                    after = {u["id"]: u for u in out["units"]}
                    said = (name, retreat, r)
                    taken = path[1:]
                    free = all(h not in held and h != "0303" for h in taken)
                    allowed = free and (len(taken) == hexes if not leaves else len(taken) < hexes and path[-1] in edge)
                    assert (r["status"] == "ok") == allowed, said
                    if r["status"] != "ok":
                        assert r["lost"] is None and r["dice_lost"] is None and r["left_table"] is False, said
                        assert out["units"] == UNITS, said
                        continue
                    assert r["taken"] == taken, said
                    assert r["dice_lost"] == 0, said  # no artillery marked (**) here (JOM-K1)
                    lone_leaves = leaves and name == "am" and unit == "K"
                    if not leaves:
                        assert (r["lost"], r["left_table"], r["to"], r["clause"]) == (0, False, path[-1], "JOM-X2"), said
                        assert after[unit]["hex"] == path[-1], said
                        made["on"] += 1
                    elif lone_leaves:
                        assert (r["lost"], r["left_table"], r["to"], r["clause"]) == (0, True, None, "JOM-X3"), said
                        assert after[unit]["hex"] is None and after[unit]["flags"] == {"exited": True}, said
                        made["left"] += 1
                    else:
                        assert (r["lost"], r["left_table"], r["to"], r["clause"]) == (hexes - len(taken), False, path[-1],
                                                                                     "JOM-X2"), said
                        assert after[unit]["hex"] == path[-1] and "exited" not in after[unit].get("flags", {}), said
                        made["lost"] += 1
                    assert [u for u in out["units"] if u["id"] != unit] == [u for u in UNITS if u["id"] != unit], said
    # every kind of answer was met (in RE no lone character leaves)
    assert made["on"] and made["lost"] and (made["left"] > 0) == (name == "am"), made


def test_a_retreat_of_no_hex_is_refused_at_its_pointer() -> None:
    rules = load_ruleset(JOMINI / "re.rules")
    state: dict[str, Any] = {"board": BOARD, "units": UNITS, "retreats": [{"unit": "H", "hexes": 0, "path": ["0202"]}]}
    assert [(d.code, d.pointer) for d in rules.state_errors(state)] == [("S002", "/retreats/0/hexes")]
    state["retreats"] = [{"unit": "H", "hexes": 1, "path": ["0202"], "combat": True}]
    assert [(d.code, d.pointer) for d in rules.state_errors(state)] == [("S002", "/retreats/0/combat")]


def test_the_movement_phase_is_the_same_with_retreats_listed() -> None:
    """`main` is the movement phase: the retreats of the combat after it change nothing of it."""
    for name in ("re", "am"):
        rules = load_ruleset(JOMINI / f"{name}.rules")
        state = {"board": BOARD, "units": UNITS, "moves": [{"unit": "H", "path": ["0202", "0201"], "combat": False}]}
        with_retreats = {**state, "retreats": [{"unit": "K", "hexes": 2, "path": ["0101"], "exit": True}]}
        assert rules.run(with_retreats) == rules.run(state)
