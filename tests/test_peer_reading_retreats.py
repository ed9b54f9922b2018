"""The `diplomacy` package's reading of DATC 4.A.5 (bench/peers/readings/diplomacy_pkg.rules): once the
attacker came by convoy, the package lists every place next to the dislodged unit among its retreats,
occupied or not. The reading says so where the rules decide a unit's retreats (`retreat_options`), as the
package does, not only in whether a retreat phase follows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.peers import engine_diplomacy
from validator import load_ruleset
from validator.tools.coverage import cited_by

ROOT = Path(__file__).resolve().parent.parent
STANDARD = ROOT / "rulesets" / "diplomacy" / "standard.rules"
READING = ROOT / "bench" / "peers" / "readings" / "diplomacy_pkg.rules"


def _movement(units: list[tuple[str, str, str]], orders: list[tuple[str, str]]) -> dict[str, Any]:
    return {"phase": {"season": "spring", "year": 1901, "type": "movement"},
            "units": [{"power": p, "type": t, "location": loc} for p, t, loc in units],
            "orders": [{"power": p, "order": o} for p, o in orders]}


# Italy's army in Marseilles is dislodged by France's army from Gascony, which comes by convoy (VIA) or
# over land with Burgundy's support; Burgundy stays occupied either way
CONVOYED = _movement(
    [("france", "army", "gas"), ("france", "army", "bur"), ("france", "fleet", "mao"), ("france", "fleet", "wes"),
     ("france", "fleet", "lyo"), ("italy", "army", "mar")],
    [("france", "A GAS - MAR VIA"), ("france", "A BUR S A GAS - MAR"), ("france", "F MAO C A GAS - MAR"),
     ("france", "F WES C A GAS - MAR"), ("france", "F LYO C A GAS - MAR"), ("italy", "A MAR H")])
OVER_LAND = _movement([("france", "army", "gas"), ("france", "army", "bur"), ("italy", "army", "mar")],
                      [("france", "A GAS - MAR"), ("france", "A BUR S A GAS - MAR"), ("italy", "A MAR H")])


def _package_retreats(state: dict[str, Any]) -> dict[str, list[str]]:
    handle = engine_diplomacy.setup(state)
    handle.game.process()
    return {unit[2:].lower(): sorted(x.lower() for x in xs)
            for power in handle.game.powers.values() for unit, xs in power.retreats.items()}


def _retreats(path: Path, state: dict[str, Any]) -> dict[str, list[str]]:
    return {d["location"]: d["retreats"] for d in load_ruleset(path).run(state)["dislodged"]}


def test_the_reading_lists_the_packages_retreats_after_a_convoyed_attack() -> None:
    package = _package_retreats(CONVOYED)
    assert package == {"mar": ["bur", "gas", "pie", "spa"]}, package  # (Burgundy, occupied, among them)
    assert _retreats(READING, CONVOYED) == package
    assert _retreats(STANDARD, CONVOYED) == {"mar": ["gas", "pie", "spa"]}  # (the rules: not where occupied)


def test_after_an_attack_over_land_the_reading_is_the_rules() -> None:
    assert _retreats(READING, OVER_LAND) == _retreats(STANDARD, OVER_LAND) == _package_retreats(OVER_LAND) \
        == {"mar": ["pie", "spa"]}


def test_the_reading_cites_4_a_5_only_where_the_attack_came_by_convoy() -> None:
    reading = load_ruleset(READING)
    assert "DATC-4.A.5" in cited_by(reading.evaluate(CONVOYED, explain=True))
    assert "DATC-4.A.5" not in cited_by(reading.evaluate(OVER_LAND, explain=True))
