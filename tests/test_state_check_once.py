"""A state the ruleset's own `advance` made is checked (schema and `validate_state`) by the first
validated run on it; later runs on the very same, unchanged state skip the check (``Ruleset._made``),
and give what a run with the check gives: the same value, or the same diagnostics, under any budget.
A state changed in any way since (a value, a type, a copy in its place) is checked again."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from validator import load_ruleset
from validator.api import Ruleset, RunError

STANDARD = str(Path(__file__).resolve().parent.parent / "rulesets" / "diplomacy" / "standard.rules")
START = {"phase": {"season": "spring", "year": 1, "type": "movement"}, "units": [], "orders": []}


def _made(rs: Ruleset, seed: int = 3) -> Any:
    """The state `advance` makes from the map's start position with the rules' random orders."""
    start = rs.run(START, "start_state", validate=False)
    orders = rs.run(start, "random_orders", [seed], validate=False)
    return rs.run({**start, "orders": orders}, "advance")["next"]


def _counted(monkeypatch: pytest.MonkeyPatch, rs: Ruleset) -> list[int]:
    """Calls of the ruleset's schema check (the first half of a state check): its full check, or the
    fast one that says at once that the state holds no float and is valid (then the full one is not
    called)."""
    import validator.api as api

    calls: list[int] = []
    check = rs._checked
    monkeypatch.setattr(rs, "_checked", lambda *a, **k: calls.append(1) or check(*a, **k))
    fast = api.certainly_valid

    def counted_fast(*args: Any, exact: bool = False) -> bool:
        found = fast(*args, exact=exact)
        if found and exact:  # (the fast check of ``_checked`` is counted there)
            calls.append(1)
        return found
    monkeypatch.setattr(api, "certainly_valid", counted_fast)
    return calls


def _outcome(rs: Ruleset, state: Any, query: str, budget: int) -> Any:
    try:
        return ("value", rs.run(state, query, budget=budget))
    except RunError as exc:
        return ("error", exc.kind, [(d.code, d.message, d.span, d.pointer) for d in exc.diagnostics])


def test_a_state_advance_made_is_checked_by_its_first_validated_run_only(monkeypatch: pytest.MonkeyPatch) -> None:
    rs = load_ruleset(STANDARD, use_cache=False)
    made = _made(rs)
    calls = _counted(monkeypatch, rs)
    first = rs.run(made, "standing")
    assert calls == [1]
    assert [rs.run(made, "standing"), rs.run(made, "phase_name"), rs.run(made, "standing")] == \
        [first, rs.run(made, "phase_name", validate=False), first]
    assert calls == [1]


@pytest.mark.parametrize("change", [
    lambda s: s["units"][0].update(location="atlantis"),  # found by the rules' `validate_state`
    lambda s: s["phase"].update(season="summer"),  # found by the schema
    lambda s: s["units"].append(copy.deepcopy(s["units"][0])),  # two units in one province
])
def test_a_state_made_invalid_in_place_after_its_check_is_refused(change: Any) -> None:
    rs = load_ruleset(STANDARD, use_cache=False)
    made = _made(rs)
    rs.run(made, "standing")
    rs.run(made, "standing")
    change(made)
    with pytest.raises(RunError) as caught:
        rs.run(made, "standing")
    assert caught.value.kind == "state"
    assert caught.value.diagnostics == load_ruleset(STANDARD, use_cache=False).state_errors(made) != []


@pytest.mark.parametrize("change", [
    lambda s: s["phase"].update(year=float(s["phase"]["year"])),  # an equal value of another type
    lambda s: s["phase"].update(year=s["phase"]["year"] + 1),
    lambda s: s["units"].reverse(),  # the same units in another order
])
def test_a_state_changed_in_place_after_its_check_is_checked_again(monkeypatch: pytest.MonkeyPatch,
                                                                   change: Any) -> None:
    rs = load_ruleset(STANDARD, use_cache=False)
    made = _made(rs)
    calls = _counted(monkeypatch, rs)
    rs.run(made, "standing")
    rs.run(made, "standing")
    assert calls == [1]
    change(made)
    rs.run(made, "standing")
    assert calls == [1, 1]


def test_a_copy_of_the_state_made_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    rs = load_ruleset(STANDARD, use_cache=False)
    made = _made(rs)
    calls = _counted(monkeypatch, rs)
    rs.run(made, "standing")
    rs.run(copy.deepcopy(made), "standing")
    rs.run({**made}, "standing")
    assert calls == [1, 1, 1]


@pytest.mark.parametrize("query", ["standing", "phase_name", "main"])
def test_a_run_that_skips_the_check_gives_what_the_checked_run_gives_under_small_budgets(query: str) -> None:
    rs = load_ruleset(STANDARD, use_cache=False)
    made = _made(rs)
    checked = load_ruleset(STANDARD, use_cache=False)  # never made it: always checks
    _made(checked)  # (both warmed up alike: each writes the same functions, keeps the same values)
    rs.run(made, query)
    low, high = 1, 1 << 22  # the least budget the checked run needs
    while low < high:
        mid = (low + high) // 2
        if _outcome(checked, copy.deepcopy(made), query, mid)[0] == "value":
            high = mid
        else:
            low = mid + 1
    assert low > 1 and _outcome(checked, copy.deepcopy(made), query, low)[0] == "value"
    for budget in sorted({1, 2, low // 3, low // 2, low - 2, low - 1, low, low + 1, low + 50, 2 * low}):
        rs.run(made, query)  # checked once, unchanged: the next run skips the check if it may
        assert _outcome(rs, made, query, budget) == _outcome(checked, copy.deepcopy(made), query, budget), budget



def test_a_state_found_valid_vouches_for_no_other_state_written_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    """The schema check remembers the states it found valid; a state that JSON text would write alike
    (here a tuple where the schema wants an array: both are `[]` in JSON) is still checked, and refused."""
    import json

    import validator.api as api

    monkeypatch.setattr(api, "certainly_valid", lambda *a, **k: False)  # every state through the full check
    monkeypatch.setattr(api, "_VALID_STATES", {})
    valid = dict(START)
    twin = {**START, "orders": ()}
    assert json.dumps(valid, sort_keys=True) == json.dumps(twin, sort_keys=True)
    rs = load_ruleset(STANDARD, use_cache=False)
    want = [d.message for d in rs.state_schema_errors(twin)]
    assert want, "the twin is invalid on its own"
    assert rs.state_schema_errors(valid) == [] and api._VALID_STATES, "the valid state is remembered"
    assert [d.message for d in rs.state_schema_errors(twin)] == want


# -- what is checked when (docs/tools.md): a state built from the one `advance` made is the user's

PAST = '''ruleset t.past "advance makes a state its own check refuses from turn 3"
input turn: int at "/turn"
input orders: list[str] at "/orders" default []
rule too_late cite "T-1" = "turn " + str(turn) + " is past the last (2)"
def flat(xss) = [x for xs in xss for x in xs]
query validate_state = flat([
  [{pointer: "/turn", message: too_late, cites: ["T-1"]} for t in [turn] if t > 2],
  [{pointer: "/orders/" + str(e.index), message: "an order is never empty", cites: ["T-2"]}
     for e in enumerate(orders) if e.item == ""]])
query advance = {phase: "T" + str(turn), result: {played: len(orders)}, next: {turn: turn + 1, orders: []},
  next_phase: "T" + str(turn + 1), end: none}
'''


def _past(tmp_path: Path) -> Ruleset:
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "past.rules").write_text(PAST)
    rs = load_ruleset(tmp_path / "past.rules", use_cache=False)
    assert rs.ok, rs.diagnostics
    return rs


def _said(exc: Any) -> list[tuple[str, str, str, str | None]]:
    return [(d.code, d.message, d.span.file, d.pointer) for d in exc.diagnostics]


def test_a_state_made_by_advance_given_back_with_orders_is_checked_in_full(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each phase as `play` and `bench.full_games` give it, the state `advance` made with the next
    orders in it: its schema check and the rules' own `validate_state` run every time."""
    import validator.api as api

    rs = load_ruleset(STANDARD, use_cache=False)
    made = _made(rs)
    orders = rs.run(made, "random_orders", [5], validate=False)
    calls = _counted(monkeypatch, rs)
    rules_checks: list[bool] = []
    run_query = api.R.run_query

    def counted_run(*args: Any, check: Any = None, **kwargs: Any) -> Any:
        rules_checks.append(check is not None)
        return run_query(*args, check=check, **kwargs)
    monkeypatch.setattr(api.R, "run_query", counted_run)
    first = rs.run({**made, "orders": orders}, "advance")
    assert rs.run({**made, "orders": orders}, "advance") == first
    assert calls == [1, 1] and rules_checks == [True, True]
    with pytest.raises(RunError) as caught:  # the user's orders, read by the rules' own check
        rs.run({**made, "orders": [{**orders[0], "power": "atlantis"}]}, "advance")
    assert caught.value.kind == "state" and caught.value.diagnostics[0].pointer == "/orders/0/power"


def test_a_state_advance_made_that_its_own_check_refuses_is_reported(tmp_path: Path) -> None:
    """Nothing proves that `advance` makes states its `validate_state` accepts: the state made is
    checked as any other, on its own or with orders, and `play` names where it came from."""
    from validator.api import PlayError, play

    rs = _past(tmp_path)
    made = rs.run({"turn": 1, "orders": ["a"]}, "advance")["next"]
    made = rs.run({**made, "orders": ["b"]}, "advance")["next"]
    assert made == {"turn": 3, "orders": []}
    for state in (made, made, {**made, "orders": ["c"]}):  # (the very state made, twice: never found valid)
        with pytest.raises(RunError) as caught:
            rs.run(state, "advance")
        assert caught.value.kind == "state"
        assert _said(caught.value) == [("S002", "turn 3 is past the last (2)", "<state>", "/turn")]
    for entries in ([["a"], ["b"], ["c"]], [["a"], ["b"]]):  # at the next phase, or where play stops
        with pytest.raises(PlayError) as stopped:
            list(play(rs, {"turn": 1, "orders": []}, entries))
        assert _said(stopped.value) == [("S002", "turn 3 is past the last (2)",
                                         "(the state of T3, made by the rules after T2)", "/turn")]
        assert [s.phase for s in stopped.value.played] == ["T1", "T2"]


def test_the_orders_given_with_a_state_advance_made_are_checked(tmp_path: Path) -> None:
    rs = _past(tmp_path)
    made = rs.run({"turn": 1, "orders": []}, "advance")["next"]
    with pytest.raises(RunError) as caught:
        rs.run({**made, "orders": ["x", ""]}, "advance")
    assert _said(caught.value) == [("S002", "an order is never empty", "<state>", "/orders/1")]
    assert rs.run({**made, "orders": ["x"]}, "advance")["result"] == {"played": 1}


_KINDS = """ruleset kinds.unchecked
schema "state.schema.json"
input n: int at "/n"
input words: list[str] at "/words" default []
def more = n + 1
def first = if len(words) > 0 then words[0] else "-"
query main = [more, first]
"""
_KINDS_SCHEMA = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
                 "required": ["n"], "properties": {"n": {"type": "integer"},
                                                   "words": {"type": "array", "items": {"type": "string"}}}}


@pytest.mark.parametrize("state", [{"n": "x"}, {"n": [1]}, {"n": True, "words": ["a", 3]}, {"n": 1, "words": "ab"}])
def test_the_backend_asked_for_by_default_is_valid_on_a_state_no_check_accepted(tmp_path: Path, state: Any) -> None:
    """``Ruleset.backend()`` unqualified is the backend whose code assumes no kinds of the inputs: a run
    on a state of kinds its schema refuses, which no check read, gives the reference's answer (the
    typed backend's code, written for the schema's kinds, gives another here: a Python error, a list
    taken for a text)."""
    import json

    from validator.engine import reference as R
    from validator.lib.runtime import EvalError, SeededDice

    (tmp_path / "kinds.rules").write_text(_KINDS)
    (tmp_path / "state.schema.json").write_text(json.dumps(_KINDS_SCHEMA))
    rs = load_ruleset(tmp_path / "kinds.rules", use_cache=False)
    assert rs.ok, rs.diagnostics
    assert rs.state_errors(state) != []

    def outcome(engine: Any) -> Any:
        try:
            return R.run_query(rs.program, state, "main", [], SeededDice(0), engine=engine)[0]
        except EvalError as err:
            return err.diagnostic()
        except R.UnfitInput as unfit:  # (the inputs' declared types refuse each of these states, on both engines)
            return [(d.pointer, d.message) for d in unfit.diagnostics()]
    assert outcome(rs.backend()) == outcome(None)
    assert rs.backend() is rs.backend(typed=False) is not rs.backend(typed=True)


@pytest.mark.parametrize("luck, checks", [("0", [1]), ("roll(1d6)", [1, 1, 1])])
def test_a_state_made_by_rules_that_roll_dice_is_checked_at_every_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      luck: str, checks: list[int]) -> None:
    """Rules that may roll dice (``Program.rolls``: a unit names a dice built-in) have every run on a
    state their `advance` made checked: what a run skips is the check's own run, which would read
    the dice (``Ruleset._unchecked_run``). Rules that roll none have it checked once."""
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "past.rules").write_text(PAST.replace("result: {played: len(orders)}",
                                                      f"result: {{played: len(orders), luck: {luck}}}")
                                           + "query now = turn\n")
    rs = load_ruleset(tmp_path / "past.rules", use_cache=False)
    assert rs.ok, rs.diagnostics
    made = rs.run({"turn": 1, "orders": ["a"]}, "advance", seed=1)["next"]
    calls: list[int] = []
    check = rs._checked
    monkeypatch.setattr(rs, "_checked", lambda *a, **k: calls.append(1) or check(*a, **k))
    assert [rs.run(made, "now") for _ in range(3)] == [2, 2, 2]
    assert calls == checks
