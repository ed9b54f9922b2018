"""Where a ruleset's reading of a rules question is cited: a choice a ruleset makes must be cited by what
decides it as it runs (a rule, a cited constant), so that `coverage` counts it and an explanation shows it;
a clause id only held in a value (a `cites:` list a rule builds) counts for neither."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from validator.api import load_ruleset
from validator.tools.coverage import cited_by

ROOT = Path(__file__).resolve().parent.parent
STANDARD = ROOT / "rulesets" / "diplomacy" / "standard.rules"


def _cites(state: dict[str, Any]) -> set[str]:
    return cited_by(load_ruleset(STANDARD).evaluate(state, explain=True))


def _movement(units: list[tuple[str, str, str]], orders: list[tuple[str, str]]) -> dict[str, Any]:
    return {"phase": {"season": "spring", "year": 1901, "type": "movement"},
            "units": [{"power": p, "type": t, "location": loc} for p, t, loc in units],
            "orders": [{"power": p, "order": o} for p, o in orders]}


def test_a_retreat_to_a_convoyed_attacker_s_origin_cites_4_a_5() -> None:
    """DATC 4.A.5 (a unit dislodged by a convoyed army may retreat to that army's origin) was given only in
    the `cites:` of a refusal: no rule cited it, so a case exercising it (DATC 6.H.11) did not cover it."""
    convoyed = _movement(
        [("france", "army", "gas"), ("france", "army", "bur"), ("france", "fleet", "mao"), ("france", "fleet", "wes"),
         ("france", "fleet", "lyo"), ("italy", "army", "mar")],
        [("france", "A GAS - MAR VIA"), ("france", "A BUR S A GAS - MAR"), ("france", "F MAO C A GAS - MAR"),
         ("france", "F WES C A GAS - MAR"), ("france", "F LYO C A GAS - MAR"), ("italy", "A MAR H")])
    assert "DATC-4.A.5" in _cites(convoyed)
    over_land = _movement([("france", "army", "gas"), ("france", "army", "bur"), ("italy", "army", "mar")],
                          [("france", "A GAS - MAR"), ("france", "A BUR S A GAS - MAR"), ("italy", "A MAR H")])
    assert "DATC-4.A.5" not in _cites(over_land)  # (the plain rule, DIP-R1: no convoy, no question)
    retreat = {"phase": {"season": "spring", "year": 1901, "type": "retreat"},
               "units": [{"power": "france", "type": "army", "location": "mar"}],
               "dislodged": [{"power": "italy", "type": "army", "location": "mar", "attacker_from": "gas",
                              "attacker_via_convoy": True}],
               "standoffs": [], "orders": [{"power": "italy", "order": "A MAR R GAS"}]}
    assert "DATC-4.A.5" in _cites(retreat)


def test_jomini_titles_say_the_rulesets_answer_retreats_too() -> None:
    """re.rules and am.rules answer the off-table retreats that follow the movement phase (query `retreats`,
    JOM-X2, JOM-X3) but were titled "movement phase" alone: a title says what a ruleset is."""
    for name in ("re.rules", "am.rules"):
        rs = load_ruleset(ROOT / "rulesets" / "jomini" / name)
        header = rs.program.entry.header
        assert "retreats" in rs.program.queries() and header is not None and header.title is not None
        assert "movement phase" in header.title and "retreat" in header.title, (name, header.title)


def test_the_straight_way_to_battle_after_an_interception_cites_his_a7() -> None:
    """HIS-A7 (a power whose units intercepted into the space may not avoid battle) is kept by the move going
    straight to the battle after a successful interception (HIS-M5); the avoid step's `require ... cite
    "HIS-A7"` was never reached (no run cited A7 through it, coverage counted it only because cases name it),
    and is gone: A7 is cited where it is decided."""
    import yaml

    cases = yaml.safe_load((ROOT / "tests" / "cases" / "his" / "movement.yaml").read_text(encoding="utf-8"))["cases"]
    case = next(c for c in cases if c["id"] == "interceptor_never_avoids")
    rs = load_ruleset(ROOT / "rulesets" / "his" / "his.rules")
    intercepted = rs.evaluate(case["state"], dice=case["dice"], explain=True)
    assert intercepted.value["intercepted_by"] == "france" and "HIS-A7" in cited_by(intercepted)
    failed = rs.evaluate(case["state"], dice=[1, 1], explain=True)  # (the attempt fails: no straight way to battle)
    assert failed.value["intercepted_by"] is None and "HIS-A7" not in cited_by(failed)
