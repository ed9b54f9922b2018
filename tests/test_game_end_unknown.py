"""A game's end is never guessed: after a fall played on a state without `supply_centers`, `advance`
cannot know whether a power has won (the owners after the fall decide it, DIP-G2/DIP-G3), and `standing`
cannot know what each power holds; both say so rather than answer "nobody won" / "nothing held"."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from validator.api import load_ruleset
from validator.tools.cli import main

ROOT = Path(__file__).resolve().parent.parent
STANDARD = ROOT / "rulesets" / "diplomacy" / "standard.rules"
# France takes Belgium and Germany holds: seventeen centres short of anyone's victory either way
UNITS = [{"power": "france", "type": "army", "location": "bur"}, {"power": "germany", "type": "army", "location": "mun"}]
ORDERS = [{"power": "france", "order": "A BUR - BEL"}]


def _state(season: str, owners: dict[str, str] | None, **extra: Any) -> dict[str, Any]:
    state: dict[str, Any] = {"phase": {"season": season, "year": 1901, "type": "movement"}, "units": UNITS,
                             "orders": ORDERS, **extra}
    if owners is not None:
        state["supply_centers"] = owners
    return state


def _advance(state: dict[str, Any]) -> Any:
    return load_ruleset(STANDARD).run(state, query="advance")


def test_advance_after_a_fall_without_owners_says_the_end_is_unknown() -> None:
    out = _advance(_state("fall", None))
    assert out["end"] is not None, out["end"]  # (was none: "nobody won", which it cannot know)
    assert out["end"]["unknown"] is True and "supply_centers" in out["end"]["reason"], out["end"]
    assert "DIP-G3" in out["end"]["cites"]
    # the fall itself is still adjudicated without owners
    assert out["result"]["orders"][0]["status"] == "succeeds" and out["next_phase"] == "W1901A"


def test_the_fall_adjudication_runs_without_owners() -> None:
    result = load_ruleset(STANDARD).run(_state("fall", None))
    assert result["orders"][0]["status"] == "succeeds"


def test_advance_with_owners_or_before_the_fall_is_unchanged() -> None:
    assert _advance(_state("fall", {"par": "france", "mun": "germany"}))["end"] is None
    spring = _advance(_state("spring", None))  # (no ownership changes in the spring: the game goes on)
    assert spring["end"] is None and spring["next_phase"] == "F1901M"


def test_a_fall_retreat_without_owners_ends_the_season_unknown_too() -> None:
    state = {"phase": {"season": "fall", "year": 1901, "type": "retreat"}, "units": UNITS[1:],
             "dislodged": [{"power": "france", "type": "army", "location": "bel", "attacker_from": "hol"}],
             "standoffs": [], "orders": [{"power": "france", "order": "A BEL R PIC"}]}
    out = _advance(state)
    assert out["end"] is not None and out["end"]["unknown"] is True, out["end"]


def test_standing_without_owners_says_the_holdings_are_unknown() -> None:
    rs = load_ruleset(STANDARD)
    unknown = rs.run(_state("fall", None), query="standing")
    assert unknown["holdings"] is None, unknown  # (was every power holding nothing)
    assert unknown["alive"]["france"] is True and unknown["alive"]["italy"] is None, unknown
    known = rs.run(_state("fall", {"par": "france"}), query="standing")
    assert known["holdings"]["france"] == ["par"] and known["holdings"]["italy"] == []
    assert known["alive"]["italy"] is False


def test_play_from_a_fall_without_owners_still_stops_at_the_refused_adjustment(tmp_path: Path) -> None:
    start = tmp_path / "fall.json"
    start.write_text(json.dumps({**_state("fall", None), "orders": []}))
    orders = tmp_path / "orders.jsonl"
    orders.write_text(json.dumps(ORDERS) + "\n")
    out, err = io.StringIO(), io.StringIO()
    code = main(["play", str(STANDARD), str(start), "--orders", str(orders)], stdout=out, stderr=err)
    assert code == 3 and "S002" in err.getvalue() and "supply_centers" in err.getvalue(), (out.getvalue(), err.getvalue())
    assert "Traceback" not in err.getvalue()
