"""`play --random-orders` checks each state twice, for two values: the state with no orders before the
ruleset's `random_orders` reads it (``api._random_entry``), and the state with the orders it gave before
`advance` plays them. Neither check is redundant: each test here fails without one of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from validator.api import PlayError, load_ruleset, play

# `advance` makes a next state its own `validate_state` refuses (turn -1), on which `random_orders`
# would fail (a division by zero); the orders it gives are checked as any state's are
GAME = '''ruleset t.random "random orders on a state the rules made"
input turn: int at "/turn"
input orders: list[int] at "/orders" default []
query validate_state =
  (if turn < 0 then [{pointer: "/turn", message: "a turn is never negative"}] else [])
  + [{pointer: "/orders/" + str(e.index), message: "an order is a number from 0 to 9"}
     for e in enumerate(orders) if e.item > 9]
query random_orders(seed) = [100 / (turn + 1)]
query advance = {phase: "T" + str(turn), result: {played: orders}, next: {turn: -1, orders: []},
  next_phase: "T-1", end: none}
'''


def _refusal(tmp_path: Path, turn: int) -> PlayError:
    (tmp_path / "g.rules").write_text(GAME)
    rs = load_ruleset(tmp_path / "g.rules", use_cache=False)
    assert rs.ok, rs.diagnostics
    with pytest.raises(PlayError) as info:
        list(play(rs, {"turn": turn, "orders": []}, [], random_orders=1, max_phases=3))
    return info.value


def test_a_made_state_is_checked_before_random_orders_reads_it(tmp_path: Path) -> None:
    refused = _refusal(tmp_path, 99)  # orders [1]: played; the next state, turn -1, is the rules' fault
    assert len(refused.played) == 1 and refused.kind == "state", refused.diagnostics
    [d] = refused.diagnostics
    assert (d.code, d.pointer, d.message) == ("S002", "/turn", "a turn is never negative"), d
    assert "made by the rules after T99" in d.span.file, d


def test_the_orders_random_orders_gave_are_checked_before_they_are_played(tmp_path: Path) -> None:
    refused = _refusal(tmp_path, 9)  # orders [10]: over 9
    assert refused.played == [] and refused.kind == "state", refused.diagnostics
    assert [(d.code, d.pointer) for d in refused.diagnostics] == [("S002", "/orders/0")], refused.diagnostics
