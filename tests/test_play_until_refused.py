"""The Python API's `play` refuses an `until` it cannot reach before it plays a phase, saying why in one
field, ``PlayError.until`` (an ``UntilRefused``): the name is of no phase, or the game is past it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from validator.api import PlayError, UntilRefused, load_ruleset, play

ROOT = Path(__file__).resolve().parent.parent
DIP = ROOT / "rulesets" / "diplomacy" / "standard.rules"
RETREAT = json.loads((ROOT / "rulesets" / "diplomacy" / "examples" / "retreat.json").read_text())


@pytest.mark.parametrize("until, refused", [
    ("X1901Q", UntilRefused("unknown", "S1902R")),
    ("f1901m", UntilRefused("passed", "S1902R")),
])
def test_play_says_why_it_refused_until(until: str, refused: UntilRefused) -> None:
    with pytest.raises(PlayError) as info:
        list(play(load_ruleset(DIP), RETREAT, [], until=until))
    assert (info.value.kind, info.value.until, info.value.played) == ("usage", refused, [])
    assert [d.code for d in info.value.diagnostics] == ["S006"]


def test_other_refusals_of_play_carry_no_until() -> None:
    with pytest.raises(PlayError) as info:  # orders for another phase: the game's input, not `until`
        list(play(load_ruleset(DIP), RETREAT, [{"phase": "F1901M", "orders": []}], until="S1903M"))
    assert info.value.until is None and info.value.kind != "usage", info.value.diagnostics
