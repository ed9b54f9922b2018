"""Here I Stand: a reading ruleset that overrides one of his.rules' readings changes that reading only.

`shut_in` states the reading that a besieged formation leaves its fortifications by no movement (HIS-I6,
HIS-A6; fourth_audit.yaml, fifth_audit.yaml). A ruleset that overrides it lets a besieged formation make a
move action, while the bars the clauses state themselves stay: it still may not move to avoid battle (HIS-A6)
or to intercept (HIS-I6)."""

from __future__ import annotations

from pathlib import Path

from validator.api import check_text

HIS = Path(__file__).resolve().parent.parent / "rulesets" / "his"

OPEN_SIEGE = '''ruleset his.open_siege "Here I Stand: a besieged formation may make a move action"
extends "his.rules"
override rule shut_in(x) cite "HIS-I6", "HIS-A6" = false
'''

POWERS = {p: {"kind": "major"} for p in ["ottoman", "hapsburg", "england", "france", "papacy", "protestant"]}


def siege(reason: str | None) -> dict:
    action = {"power": "france", "units": ["f1"], "from": "ffort", "to": "b"}
    if reason is not None:
        action["reason"] = reason
    return {
        "spaces": {"ffort": {"controller": "france", "fortified": True}, "b": {"controller": "france"},
                   "a": {"controller": "hapsburg"}},
        "connections": [{"a": "ffort", "b": "b"}, {"a": "a", "b": "b"}],
        "powers": POWERS, "wars": [["hapsburg", "france"]],
        "units": [{"id": "f1", "power": "france", "space": "ffort", "type": "regular", "besieged": True},
                  {"id": "h1", "power": "hapsburg", "space": "ffort", "type": "regular"},
                  {"id": "h2", "power": "hapsburg", "space": "a", "type": "regular"}],
        "action": action,
    }


def test_overriding_shut_in_lets_a_besieged_formation_move_and_be_intercepted() -> None:
    rs = check_text(HIS / "zz_test_open_siege.rules", OPEN_SIEGE)
    assert rs.ok, rs.diagnostics
    outcomes = rs.run(siege(None), exact=True)["outcomes"]
    assert {o["result"]["status"] for o in outcomes} == {"completed"} and {o["result"]["cp"] for o in outcomes} == {1}
    # the move is declared, so the Hapsburg units beside b may try to intercept it (HIS-I1), the besiegers too
    listed = rs.run(siege(None), query="interceptors")
    assert sorted(a["from"] for a in listed) == ["a", "ffort"]


def test_overriding_shut_in_leaves_the_clauses_own_bars() -> None:
    rs = check_text(HIS / "zz_test_open_siege.rules", OPEN_SIEGE)
    for reason, clause in [("avoid_battle", "HIS-A6"), ("interception", "HIS-I6")]:
        out = rs.run(siege(reason), dice=[])
        assert out["status"] == "rejected" and out["step"] == "declare" and out["cites"] == [clause], (reason, out)
