"""`play --random-orders` checks a state the rules made once, with the orders drawn in it (issue 46, item
3): `random_orders` is run on it without the state check, and the run of `advance` that plays its
orders checks it in full. What play gives and says is what it gave when `random_orders` checked the
state first: the same phases, and where a state the rules made is refused, the same diagnostics (the
check of the state without orders, made again when anything fails)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import validator.api as api
from validator import load_ruleset
from validator.api import PlayError, Ruleset, RunError, game_seed, play

ROOT = Path(__file__).resolve().parent.parent
DIPLOMACY = ROOT / "rulesets" / "diplomacy"
START = {"phase": {"season": "spring", "year": 1, "type": "movement"}, "units": [], "orders": []}


def _checked_first(rs: Ruleset, start: Any, seed: int, phases: int) -> list[tuple[Any, ...]]:
    """The game ``play(..., random_orders=seed)`` plays, each phase's orders drawn by `random_orders` run
    with the state check (as `play` drew them before issue 46's change), then played by `advance`."""
    state, steps = start, []
    for i in range(phases):
        s = game_seed(seed, 0, i)
        orders = rs.run({**state, "orders": []}, "random_orders", [s], seed=s)
        out = rs.run({**state, "orders": orders}, "advance")
        steps.append(({**state, "orders": orders}, out["phase"], out["result"], out["next"], out["next_phase"], out["end"]))
        if out["end"] is not None:
            break
        state = out["next"]
    return steps


def _played(rs: Ruleset, start: Any, seed: int, phases: int) -> list[Any]:
    """The steps of ``phases`` phases of ``play(..., random_orders=seed)`` (which then stops, the game not over)."""
    with pytest.raises(PlayError) as stopped:
        list(play(rs, start, [], random_orders=seed, max_phases=phases))
    assert stopped.value.kind == "state" and "has not ended" in stopped.value.diagnostics[0].message
    return stopped.value.played


@pytest.mark.parametrize("name", ["standard_germany_italy", "pure", "standard"])
def test_random_games_are_played_as_when_each_state_was_checked_before_its_orders(name: str) -> None:
    rs = load_ruleset(DIPLOMACY / f"{name}.rules")
    start = rs.run(START, "start_state", validate=False)
    for seed in (1, 7):
        played = [(s.state, s.phase, s.result, s.next, s.next_phase, s.end) for s in _played(rs, start, seed, 10)]
        assert len(played) == 10 and played == _checked_first(rs, start, seed, 10)


def test_a_state_the_rules_made_is_checked_once_a_phase(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each state check counted (the schema's, and runs with the rules' own `validate_state`): the start
    state's name (`phase_name`), its random orders and its `advance`, then one check a phase, and the
    last state made where play stops (here none: play stops at its most phases, said of no state). Before the change `random_orders` checked each made state too."""
    rs = load_ruleset(DIPLOMACY / "standard_germany_italy.rules", use_cache=False)
    start = rs.run(START, "start_state", validate=False)
    schema_checks: list[int] = []
    fast = api.certainly_valid
    monkeypatch.setattr(api, "certainly_valid", lambda *a, **k: schema_checks.append(1) or fast(*a, **k))
    rules_checks: list[bool] = []
    run_query = api.R.run_query

    def counted_run(*args: Any, check: Any = None, **kwargs: Any) -> Any:
        rules_checks.append(check is not None)
        return run_query(*args, check=check, **kwargs)
    monkeypatch.setattr(api.R, "run_query", counted_run)
    assert len(_played(rs, start, 3, 8)) == 8
    # phase_name on the start state, random_orders and advance on it, advance on each made state
    assert len(schema_checks) == 3 + 7
    assert rules_checks.count(True) == 3 + 7


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

# what `random_orders` does on the state of turn 3, which the rules refuse: draws orders anyway, fails
# (a list read past its end), gives no list, or draws an empty order (which the check refuses too)
DRAWS = {
    "draws": 'query random_orders(seed) = ["x" + str(seed)]',
    "fails": 'query random_orders(seed) = if turn > 2 then [["x"][turn]] else ["x"]',
    "no list": 'query random_orders(seed) = if turn > 2 then 1 else ["x"]',
    "a bad order": 'query random_orders(seed) = if turn > 2 then [""] else ["x"]',
}


@pytest.mark.parametrize("draw", sorted(DRAWS))
def test_a_state_the_rules_made_and_refuse_is_said_as_its_check_says_it(tmp_path: Path, draw: str) -> None:
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "past.rules").write_text(PAST + DRAWS[draw] + "\n")
    rs = load_ruleset(tmp_path / "past.rules", use_cache=False)
    assert rs.ok, rs.diagnostics
    where = "(the state of T3, made by the rules after T2)"
    with pytest.raises(RunError) as checked:  # what `random_orders` with the check said of that state
        rs.run({"turn": 3, "orders": []}, "random_orders", [game_seed(5, 0, 2)], seed=game_seed(5, 0, 2),
               state_name=where)
    with pytest.raises(PlayError) as stopped:
        list(play(rs, {"turn": 1, "orders": []}, [], random_orders=5, max_phases=4))
    said = [(d.code, d.message, d.span.file, d.pointer) for d in stopped.value.diagnostics]
    assert said == [(d.code, d.message, d.span.file, d.pointer) for d in checked.value.diagnostics]
    assert said == [("S002", "turn 3 is past the last (2)", where, "/turn")]
    assert stopped.value.kind == "state" and [s.phase for s in stopped.value.played] == ["T1", "T2"]
