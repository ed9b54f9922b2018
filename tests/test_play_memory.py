"""Games played one after another in a process (`play --random-orders`, `balance`, the playground) keep
what the backend keeps for the program's life, the values of state-free definitions whose arguments
are texts, numbers, truth values or none (``backend._alone``), and no more than ``backend._ALONE_CAP``
of them a definition: a definition of the seed (`random_orders`' own draws, a player's) has a new
value in every phase of every game, and past the cap its values are kept for their run alone. The
games played are the same whatever the cap."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from validator import load_ruleset
from validator.api import PlayError, Ruleset, play
from validator.engine import backend as B

STANDARD = str(Path(__file__).resolve().parent.parent / "rulesets" / "diplomacy" / "standard.rules")
START = {"phase": {"season": "spring", "year": 1, "type": "movement"}, "units": [], "orders": []}

# `draw(seed, i)`: state-free, of plain arguments, a new value for each phase's seed (as the Diplomacy
# rules' `ro_build_text(seed, pw, c)`)
DRAWN = '''ruleset t.drawn "random orders drawn by a state-free definition of the seed"
input turn: int at "/turn"
input orders: list[str] at "/orders" default []
def draw(seed, i) = "o" + str(rand(seed, ["draw", i], 1000))
query random_orders(seed) = [draw(seed, i) for i in range(3)]
query advance = {phase: "T" + str(turn), result: {played: orders}, next: {turn: turn + 1, orders: []},
  next_phase: "T" + str(turn + 1), end: if turn >= 6 then {reason: "six turns"} else none}
'''


def _kept_tables(rs: Ruleset) -> list[dict[Any, Any]]:
    """The backends' tables of values kept for the program's life (those holding any)."""
    return [v for typed in (True, False) for v in rs.backend(typed).g.values()
            if isinstance(v, dict) and v and all(type(x) is B._Kept for x in v.values())]


def _games(rs: Ruleset, start: Any, seeds: range, phases: int, cap: int | None = None) -> list[Any]:
    """The games played from ``start``, each as its phases' (phase, orders, result, next state), with the
    most kept by a table checked after each game."""
    games = []
    for seed in seeds:
        try:
            steps = list(play(rs, start, [], random_orders=seed, max_phases=phases))
        except PlayError as exc:  # (the phases allowed played, the game not over)
            assert exc.kind == "state" and len(exc.played) == phases, exc.diagnostics
            steps = exc.played
        games.append([(s.phase, s.state["orders"], s.result, s.next) for s in steps])
        if cap is not None:
            assert max(map(len, _kept_tables(rs))) <= cap
    return games


def test_the_values_a_game_keeps_for_the_programs_life_are_bounded_by_the_cap(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "drawn.rules").write_text(DRAWN)
    start = {"turn": 1, "orders": []}
    rs = load_ruleset(tmp_path / "drawn.rules", use_cache=False)
    assert rs.ok, rs.diagnostics
    free = _games(rs, start, range(20), 10)
    assert max(map(len, _kept_tables(rs))) == 20 * 6 * 3  # (every draw of every phase kept, without a cap)
    monkeypatch.setattr(B, "_ALONE_CAP", 7)
    capped = load_ruleset(tmp_path / "drawn.rules", use_cache=False)
    assert _games(capped, start, range(20), 10, cap=7) == free


def test_the_diplomacy_random_games_keep_no_more_than_the_cap_and_are_the_same_under_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    rs = load_ruleset(STANDARD, use_cache=False)
    start = rs.run(START, "start_state", validate=False)
    free = _games(rs, start, range(3), 6)
    assert max(map(len, _kept_tables(rs))) > 40
    monkeypatch.setattr(B, "_ALONE_CAP", 40)
    capped = load_ruleset(STANDARD, use_cache=False)
    assert _games(capped, start, range(3), 6, cap=40) == free
