"""A state whose members are those of a state the schema's fast check took whole, some replaced (the state
`advance` made, given its orders), is fast-checked for the replaced members alone (``Ruleset._fast_certain``,
``state.members_schema``), and gives what the whole check gives: the same games, values and diagnostics,
under any budget. A member changed in place since, or a key set the schema's shape does not allow to be
read member by member, is checked whole."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

import validator.api as api
from validator import load_ruleset
from validator.api import Ruleset, RunError
from validator.core.frozen import frozen
from validator.engine.state import certainly_valid, members_schema

DIPLOMACY = Path(__file__).resolve().parent.parent / "rulesets" / "diplomacy"
STANDARD = str(DIPLOMACY / "standard.rules")
START = {"phase": {"season": "spring", "year": 1, "type": "movement"}, "units": [], "orders": []}


def _no_lever(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every state fast-checked whole, as before the lever."""
    monkeypatch.setattr(api, "members_schema", lambda schema: None)


def _counted(monkeypatch: pytest.MonkeyPatch, rs: Ruleset) -> dict[str, int]:
    """Calls of the schema's fast check: of a whole state (the ruleset's schema), of some members alone."""
    calls = {"whole": 0, "members": 0}
    fast = certainly_valid

    def counted(state: Any, schema: Any, exact: bool = False) -> bool:
        calls["whole" if schema is rs.schema else "members"] += 1
        return fast(state, schema, exact=exact)
    monkeypatch.setattr(api, "certainly_valid", counted)
    return calls


def _made(rs: Ruleset, seed: int = 3) -> tuple[Any, Any]:
    """A state `advance` made, from the map's start position with the rules' random orders, with the
    rules' random orders for it, drawn by a checked run (as ``play --random-orders`` draws them): the
    fast check took ``{**made, "orders": []}`` whole."""
    start = rs.run(START, "start_state", validate=False)
    made = rs.run({**start, "orders": rs.run(start, "random_orders", [seed], validate=False)}, "advance")["next"]
    return made, rs.run({**made, "orders": []}, "random_orders", [seed])


def _outcome(rs: Ruleset, state: Any, query: str = "advance", budget: int = api.DEFAULT_STEP_BUDGET) -> Any:
    try:
        return ("value", rs.run(state, query, budget=budget))
    except RunError as exc:
        return ("error", exc.kind, [(d.code, d.message, d.span, d.pointer, d.schema_rule) for d in exc.diagnostics])


def test_the_state_made_with_its_orders_is_fast_checked_for_its_orders_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    rs = load_ruleset(STANDARD, use_cache=False)
    made, orders = _made(rs)
    calls = _counted(monkeypatch, rs)
    rs.run({**made, "orders": orders}, "advance")
    assert calls == {"whole": 0, "members": 1}


def test_a_played_game_checks_each_state_the_rules_made_whole_once(monkeypatch: pytest.MonkeyPatch) -> None:
    def counts() -> tuple[int, dict[str, int]]:
        rs = load_ruleset(STANDARD, use_cache=False)
        start = rs.run(START, "start_state", validate=False)
        calls = _counted(monkeypatch, rs)
        return len(list(api.play(rs, start, [], random_orders=5, until="F1903M"))), calls
    phases, calls = counts()
    _no_lever(monkeypatch)
    phases_before, before = counts()
    # each phase but the first (whose state the rules did not make): its orders drawn on the state made
    # with none (checked whole), then played: its orders alone checked, where they were checked whole
    assert phases == phases_before > 3 and before["members"] == 0
    assert calls["members"] == phases - 1 == before["whole"] - calls["whole"]


@pytest.mark.parametrize("name", ["standard", "pure", "standard_germany_italy"])
def test_seeded_games_are_those_played_without_the_lever(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    def game() -> list[Any]:
        rs = load_ruleset(str(DIPLOMACY / f"{name}.rules"), use_cache=False)
        start = rs.run(START, "start_state", validate=False)
        return [(s.phase, s.state, s.result, s.next, s.next_phase, s.end) for s in
                api.play(rs, start, [], random_orders=11, seed=4, until="S1904M")]
    with_lever = game()
    _no_lever(monkeypatch)
    assert len(with_lever) > 6 and game() == with_lever


# orders the schema refuses, orders holding what no JSON text holds, a float, orders the rules refuse, a
# key set that changed around the orders
BAD = [
    lambda m, o: {**m, "orders": [{"power": "france"}]},
    lambda m, o: {**m, "orders": [{**o[0], "order": 1.5}] + o[1:]},
    lambda m, o: {**m, "orders": [{**o[0], "order": "A PAR H\ud800"}]},
    lambda m, o: {**m, "orders": [{**o[0], "power": 12**4000}]},
    lambda m, o: {**m, "orders": o + [{"power": "atlantis", "order": "A PAR H"}]},
    lambda m, o: {**m, "orders": o + [{"power": "france", "order": "!!!"}]},
    lambda m, o: {**m, "orders": tuple(o)},
    lambda m, o: {**m, "orders": o, "weather": "rain"},
    lambda m, o: {k: v for k, v in {**m, "orders": o}.items() if k != "units"},
    lambda m, o: {**m, "orders": o, 3: "three"},
]


@pytest.mark.parametrize("bad", BAD)
def test_the_state_made_with_bad_orders_is_said_as_a_fresh_check_says_it(bad: Any) -> None:
    rs = load_ruleset(STANDARD, use_cache=False)
    made, orders = _made(rs)
    fresh = load_ruleset(STANDARD, use_cache=False)  # made nothing: checks every state whole
    state = bad(made, orders)
    want = _outcome(fresh, copy.deepcopy(state))
    assert want[0] == "error"
    assert _outcome(rs, state) == want


# a member of the state made, changed in place after the state with no orders was taken: found by the
# schema, found by the rules' `validate_state`, a value of another type (equal to it), one still valid
CHANGES = [
    lambda m: m["units"][0].update(location=7),
    lambda m: m["units"][0].update(location="atlantis"),
    lambda m: m["phase"].update(year=float(m["phase"]["year"])),
    lambda m: m["phase"].update(year=True),
    lambda m: m["units"].append(copy.deepcopy(m["units"][0])),
    lambda m: m["units"].reverse(),
    lambda m: m["phase"].update(year=m["phase"]["year"] + 1),
]


@pytest.mark.parametrize("change", CHANGES)
def test_a_state_made_changed_in_place_is_checked_whole(monkeypatch: pytest.MonkeyPatch, change: Any) -> None:
    rs = load_ruleset(STANDARD, use_cache=False)
    made, orders = _made(rs)
    change(made)
    state = {**made, "orders": orders}
    want = _outcome(load_ruleset(STANDARD, use_cache=False), copy.deepcopy(state))
    calls = _counted(monkeypatch, rs)
    assert _outcome(rs, state) == want
    assert calls["members"] == 0 and calls["whole"] >= 1


@pytest.mark.parametrize("budget", [1, 50, 2_000, 20_000, 200_000])
def test_the_lever_gives_what_the_whole_check_gives_under_any_budget(monkeypatch: pytest.MonkeyPatch,
                                                                      budget: int) -> None:
    rs = load_ruleset(STANDARD, use_cache=False)
    made, orders = _made(rs)
    got = _outcome(rs, {**made, "orders": orders}, budget=budget)
    _no_lever(monkeypatch)
    other = load_ruleset(STANDARD, use_cache=False)
    made2, orders2 = _made(other)
    assert (made2, orders2) == (made, orders)
    assert _outcome(other, {**made2, "orders": orders2}, budget=budget) == got


def test_a_state_sharing_members_with_no_state_taken_whole_is_checked_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    rs = load_ruleset(STANDARD, use_cache=False)
    made, orders = _made(rs)
    calls = _counted(monkeypatch, rs)
    rs.run(copy.deepcopy({**made, "orders": orders}), "advance")  # equal members, none the same object
    assert calls == {"whole": 1, "members": 0}


ROOT = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "required": ["a"],
        "additionalProperties": False,
        "properties": {"a": {"$ref": "#/$defs/n"}, "b": {"type": "array", "items": {"type": "string"}}},
        "$defs": {"n": {"type": "integer"}}}


@pytest.mark.parametrize("extra", [
    {"minProperties": 2},  # reads the key count
    {"dependentRequired": {"b": ["a"]}},  # reads two members together
    {"anyOf": [{"required": ["b"]}, {"required": ["a"]}]},
    {"patternProperties": {"^c": {"type": "string"}}},
    {"if": {"required": ["b"]}, "then": {"properties": {"a": {"const": 1}}}},
    {"properties": {"a": {"$ref": "#"}}},  # the root, which the members' check would read without `required`
    {"properties": {"a": {"$ref": "#/properties/b"}}},
    {"type": ["object", "null"]},
])
def test_a_root_whose_verdict_is_not_each_members_is_checked_whole(extra: dict[str, Any]) -> None:
    assert members_schema(frozen(ROOT)) is not None
    assert members_schema(frozen({**ROOT, **extra})) is None
