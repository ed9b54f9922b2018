"""Whole Diplomacy games (issue 22): a phase's result becomes the next phase's state by the ruleset's
own `advance` query, states a phase cannot be played from are refused rather than silently
misread, and `ruleval play` / `ruleval replay` run games as users do."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from validator import load_ruleset
from validator.api import Entry, PlayError, RunError, play, record_differences, replay
from validator.tools.cli import main

ROOT = Path(__file__).resolve().parent.parent
DIP = ROOT / "rulesets" / "diplomacy"
STANDARD = str(DIP / "standard.rules")
STATE_SCHEMA = json.loads((ROOT / "schemas" / "diplomacy" / "state.schema.json").read_text())
RESULT_SCHEMA = json.loads((ROOT / "schemas" / "diplomacy" / "result.schema.json").read_text())
MAP = yaml.safe_load((DIP / "standard_map.yaml").read_text())
HOMES = {p: v["home"] for p, v in MAP["provinces"].items() if v.get("home")}


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def unit(text: str) -> dict[str, str]:
    """`france A PAR` -> a state unit."""
    power, kind, loc = text.split()
    return {"power": power, "type": "army" if kind == "A" else "fleet", "location": loc.lower()}


def state(season: str, year: int, kind: str, units: list[str], orders: list[str] = (), **extra: Any) -> dict[str, Any]:
    """Orders as `power: ORDER`."""
    return {"phase": {"season": season, "year": year, "type": kind}, "units": [unit(u) for u in units],
            "orders": [{"power": o.split(":")[0], "order": o.split(":", 1)[1].strip()} for o in orders], **extra}


def advance(s: dict[str, Any], ruleset: str = STANDARD) -> dict[str, Any]:
    out = load_ruleset(ruleset).run(s, "advance")
    jsonschema.validate(out["result"], RESULT_SCHEMA)
    jsonschema.validate(out["next"], STATE_SCHEMA)
    return out


def locs(units: list[dict[str, Any]]) -> set[str]:
    return {f'{u["power"]} {u["type"][0].upper()} {u["location"].upper()}' for u in units}


# ---------------------------------------------------------------- succession

def test_spring_movement_is_followed_by_fall_movement_of_the_same_year() -> None:
    out = advance(state("spring", 1901, "movement", ["france A PAR", "germany A MUN"], ["france: A PAR - BUR"],
                        supply_centers={"par": "france", "mun": "germany"}))
    assert (out["phase"], out["next_phase"]) == ("S1901M", "F1901M")
    nxt = out["next"]
    assert nxt["phase"] == {"season": "fall", "year": 1901, "type": "movement"}
    assert locs(nxt["units"]) == {"france A BUR", "germany A MUN"}
    assert nxt["orders"] == [] and nxt["supply_centers"] == {"par": "france", "mun": "germany"}
    assert "dislodged" not in nxt and out["end"] is None


def test_a_dislodgement_leads_to_a_retreat_phase_with_all_it_needs() -> None:
    s = state("spring", 1901, "movement",
              ["germany A MUN", "germany A RUH", "france A BUR", "austria A TYR", "russia A SIL"],
              ["germany: A MUN - BUR", "germany: A RUH S A MUN - BUR", "austria: A TYR - BOH", "russia: A SIL - BOH"])
    out = advance(s)
    res, nxt = out["result"], out["next"]
    assert res["standoffs"] == ["boh"]
    [d] = res["dislodged"]
    assert d == {"power": "france", "type": "army", "location": "bur", "attacker_from": "mun",
                 "attacker_via_convoy": False, "retreats": ["bel", "gas", "mar", "par", "pic"]}
    assert out["next_phase"] == "S1901R"
    assert nxt["dislodged"] == res["dislodged"] and nxt["standoffs"] == ["boh"]
    assert "france A BUR" not in locs(nxt["units"]) and "germany A BUR" in locs(nxt["units"])
    # the state it gives is one the retreat phase plays: to the attacker's origin is refused
    nxt["orders"] = [{"power": "france", "order": "A BUR R MUN"}]
    retreat = advance(nxt)
    assert retreat["result"]["orders"][0]["status"] == "invalid"
    assert locs(retreat["result"]["destroyed"]) == {"france A BUR"}
    assert retreat["next_phase"] == "F1901M"


def test_a_dislodged_unit_with_no_retreat_is_destroyed_at_once_and_no_retreat_phase_follows() -> None:
    # Kiel's fleet is dislodged by Berlin with Munich's support; all its retreats are occupied or the origin
    s = state("spring", 1901, "movement",
              ["germany A BER", "germany A MUN", "russia F KIE", "germany F HEL", "germany F BAL", "germany A HOL",
               "germany A DEN"],
              ["germany: A BER - KIE", "germany: A MUN S A BER - KIE"])
    out = advance(s)
    assert out["result"]["dislodged"] == []
    assert locs(out["result"]["destroyed"]) == {"russia F KIE"}
    assert out["next_phase"] == "F1901M" and "dislodged" not in out["next"]


def test_fall_ownership_follows_occupation_and_empty_centres_keep_their_owner() -> None:
    centres = {"par": "france", "bel": "germany", "hol": "germany", "mun": "germany", "ber": "germany", "kie": "germany"}
    s = state("fall", 1901, "movement", ["france A PIC", "germany A MUN", "germany A BER", "germany A KIE"],
              ["france: A PIC - BEL"], supply_centers=centres)
    out = advance(s)
    owners = out["next"]["supply_centers"]
    assert owners["bel"] == "france"       # taken by occupation (DIP-G2)
    assert owners["hol"] == "germany"      # empty: keeps its owner
    assert owners["par"] == "france"
    # france: 2 centres, 1 unit, and Paris is free: a build, so the adjustment phase comes
    assert out["next_phase"] == "W1901A"


def test_the_adjustment_phase_is_skipped_when_no_power_has_anything_to_do() -> None:
    s = state("fall", 1901, "movement", ["france A PAR", "germany A MUN"], [],
              supply_centers={"par": "france", "mun": "germany"})
    out = advance(s)
    assert out["next_phase"] == "S1902M"
    # a build owed (4 centres, 3 units) but impossible (every home centre occupied) is nothing to do either
    s = state("fall", 1901, "movement", ["france A PAR", "france A MAR", "france F BRE"], [],
              supply_centers={"par": "france", "mar": "france", "bre": "france", "bel": "france"})
    assert advance(s)["next_phase"] == "S1902M"
    s["units"][1]["location"] = "bur"  # Marseilles free: the build can be made
    assert advance(s)["next_phase"] == "W1901A"


def test_adjustment_is_followed_by_next_spring_with_builds_of_the_ordering_power() -> None:
    s = state("winter", 1901, "adjustment", ["france A BUR"], ["france: BUILD A PAR", "france: BUILD F BRE"],
              supply_centers={"par": "france", "bre": "france", "bel": "france"})
    out = advance(s)
    assert out["next_phase"] == "S1902M"
    assert locs(out["next"]["units"]) == {"france A BUR", "france A PAR", "france F BRE"}


def test_civil_disorder_disbands_when_no_order_is_given() -> None:
    s = state("winter", 1901, "adjustment", ["france A BUR", "france A PAR", "france F MAO"], [],
              supply_centers={"par": "france", "bre": "france"})
    out = advance(s)
    assert len(out["next"]["units"]) == 2  # one unit removed by DATC 4.D.8
    assert len(out["result"]["destroyed"]) == 1


def test_civil_disorder_is_cited_only_for_a_power_that_owes_removals() -> None:
    """DATC 4.D.8 was cited (civil disorder called) for every power with more units than centres, also one
    that ordered all its removals."""
    from validator.tools.coverage import cited_by

    rs = load_ruleset(STANDARD)
    centres = {"par": "france", "bre": "france"}
    ordered = state("winter", 1901, "adjustment", ["france A BUR", "france A PAR", "france F MAO"], ["france: REMOVE A BUR"],
                    supply_centers=centres)
    unordered = {**ordered, "orders": []}
    assert "DATC-4.D.8" not in cited_by(rs.evaluate(ordered, explain=True))
    assert "DATC-4.D.8" in cited_by(rs.evaluate(unordered, explain=True))
    assert len(rs.run(ordered)["units"]) == len(rs.run(unordered)["units"]) == 2


def test_a_solo_victory_ends_the_game() -> None:
    centres = sorted(p for p, v in MAP["provinces"].items() if v.get("center"))
    owned = {c: "france" for c in centres[:17]}
    target = next(c for c in centres[17:] if MAP["provinces"][c]["kind"] != "sea"
                  and any(c in MAP["army"].get(n, []) for n in ("bur", "pic", "gas")))
    start = next(n for n in ("bur", "pic", "gas") if target in MAP["army"].get(n, []))
    s = state("fall", 1905, "movement", [f"france A {start.upper()}"], [f"france: A {start.upper()} - {target.upper()}"],
              supply_centers=owned)
    out = advance(s)
    assert out["end"] is not None and out["end"]["winner"] == "france" and out["end"]["centres"] == 18
    assert "DIP-G3" in out["end"]["cites"]
    # in spring nothing changes hands: no end
    s["phase"]["season"] = "spring"
    assert advance(s)["end"] is None


def test_phase_names() -> None:
    rs = load_ruleset(STANDARD)
    retreat = state("fall", 1903, "retreat", ["germany A MUN"], standoffs=[], supply_centers={},
                    dislodged=[{**unit("france A MUN"), "attacker_from": "bur"}])
    assert rs.run(retreat, "phase_name") == "F1903R"
    assert rs.run(state("winter", 1903, "adjustment", [], supply_centers={}), "phase_name") == "W1903A"


# ---------------------------------------------------------------- states that cannot be played as given

def _errors(s: dict[str, Any]) -> list[tuple[str, str]]:
    rs = load_ruleset(STANDARD)
    with pytest.raises(RunError) as info:
        rs.run(s)
    assert info.value.kind == "state"
    return [(d.pointer, d.message) for d in info.value.diagnostics]


def test_a_retreat_state_without_the_attackers_origin_or_retreats_is_refused() -> None:
    dis = {"power": "france", "type": "army", "location": "bur"}
    for given in ({}, {"attacker_from": None}):
        s = state("spring", 1901, "retreat", ["germany A BUR"], ["france: A BUR R MUN"],
                  dislodged=[{**dis, **given}], standoffs=[])
        [(ptr, msg)] = _errors(s)
        assert ptr == "/dislodged/0" and "`attacker_from`" in msg and "`retreats`" in msg


def test_a_retreat_state_without_standoffs_is_refused_unless_retreats_are_listed() -> None:
    dis = {"power": "france", "type": "army", "location": "bur", "attacker_from": "mun"}
    s = state("spring", 1901, "retreat", ["germany A BUR"], ["france: A BUR R BEL"], dislodged=[dis])
    [(ptr, msg)] = _errors(s)
    assert ptr == "" and "`standoffs`" in msg
    # with its retreats listed, the record is enough: a retreat outside them is invalid
    s["dislodged"] = [{"power": "france", "type": "army", "location": "bur", "retreats": ["bel", "pic"]}]
    rs = load_ruleset(STANDARD)
    assert rs.run(s)["orders"][0]["status"] == "succeeds"
    s["orders"] = [{"power": "france", "order": "A BUR R GAS"}]
    res = rs.run(s)["orders"][0]
    assert res["status"] == "invalid" and "not among the retreats" in res["reason"]


def test_remove_is_read_as_a_disband_in_a_retreat_phase() -> None:
    dis = {"power": "france", "type": "army", "location": "bur", "attacker_from": "mun"}
    for text in ("REMOVE A BUR", "A BUR D", "DISBAND A BUR"):
        s = state("spring", 1901, "retreat", ["germany A BUR"], [f"france: {text}"], dislodged=[dis], standoffs=[])
        res = load_ruleset(STANDARD).run(s)
        assert res["orders"][0]["status"] == "succeeds", text
        assert locs(res["destroyed"]) == {"france A BUR"}


def test_two_different_retreat_orders_for_one_unit_disband_it() -> None:
    # DATC 4.D.3 choice c, as in a movement phase: neither order is carried out; a dislodged unit without
    # an order to carry out is disbanded. The same order twice, in two notations, is that order.
    dis = {"power": "france", "type": "army", "location": "bur", "attacker_from": "mun"}
    rs = load_ruleset(STANDARD)
    for orders in (["A BUR R GAS", "A BUR R PIC"], ["A BUR R GAS", "A BUR D"], ["A BUR R PIC", "A BUR R GAS"]):
        s = state("spring", 1901, "retreat", ["germany A BUR"], [f"france: {o}" for o in orders], dislodged=[dis], standoffs=[])
        res = rs.run(s)
        assert [o["status"] for o in res["orders"]] == ["fails", "fails"], orders
        assert all("DATC-4.D.3" in o["cites"] for o in res["orders"])
        assert locs(res["destroyed"]) == {"france A BUR"} and locs(res["units"]) == {"germany A BUR"}
    s = state("spring", 1901, "retreat", ["germany A BUR"], ["france: A BUR R GAS", "france: A Burgundy R Gascony"],
              dislodged=[dis], standoffs=[])
    res = rs.run(s)
    assert [o["status"] for o in res["orders"]] == ["succeeds", "succeeds"] and res["destroyed"] == []
    assert locs(res["units"]) == {"germany A BUR", "france A GAS"}
    # a unit whose orders cancel out makes no bounce: the other retreat to Gascony goes ahead
    dis2 = {"power": "france", "type": "army", "location": "bre", "attacker_from": "eng"}
    s = state("spring", 1901, "retreat", ["germany A BUR", "england A BRE"],
              ["france: A BUR R GAS", "france: A BUR R PIC", "france: A BRE R GAS"], dislodged=[dis, dis2], standoffs=[])
    res = rs.run(s)
    assert [o["status"] for o in res["orders"]] == ["fails", "fails", "succeeds"]
    assert locs(res["destroyed"]) == {"france A BUR"}


def test_unknown_coasts_in_orders_are_ignored() -> None:
    # DATC 4.B.6: `SPA/WC` names no coast of Spain; read as `SPA`, which from Gascony can only be the
    # north coast (DATC 4.B.2). The same in a support, a retreat and for a one-coast province.
    rs = load_ruleset(STANDARD)
    for text in ("F GAS - SPA/WC", "F GAS - SPA", "F GAS - SPA/NC"):
        res = rs.run(state("spring", 1901, "movement", ["france F GAS"], [f"france: {text}"]))
        assert res["orders"][0]["status"] == "succeeds", (text, res["orders"])
        assert locs(res["units"]) == {"france F SPA/NC"}
    res = rs.run(state("spring", 1901, "movement", ["russia F BAR"], ["russia: F BAR - STP/WC"]))
    assert locs(res["units"]) == {"russia F STP/NC"}
    res = rs.run(state("spring", 1901, "movement", ["france F MAO"], ["france: F MAO - BRE/EC"]))
    assert locs(res["units"]) == {"france F BRE"}
    res = rs.run(state("spring", 1901, "movement", ["france F GAS", "france F MAO", "italy F WES"],
                       ["france: F GAS - SPA/NC", "france: F MAO S F GAS - SPA/WC", "italy: F WES - SPA/SC"]))
    assert [o["status"] for o in res["orders"]] == ["succeeds", "succeeds", "fails"], res["orders"]
    dis = {"power": "russia", "type": "fleet", "location": "bar", "attacker_from": "nwg"}
    s = state("spring", 1901, "retreat", ["england F BAR"], ["russia: F BAR R STP/WC"], dislodged=[dis], standoffs=[])
    res = rs.run(s)
    assert res["orders"][0]["status"] == "succeeds" and locs(res["units"]) == {"england F BAR", "russia F STP/NC"}
    # a coast is still needed where both are in reach (DATC 4.B.1), and an unknown one does not name it
    res = rs.run(state("spring", 1901, "movement", ["france F MAO"], ["france: F MAO - SPA/WC"]))
    assert res["orders"][0]["status"] == "invalid" and "must be named" in res["orders"][0]["reason"]


def test_a_coast_written_as_a_bare_direction_is_that_coast() -> None:
    # `SPA(NORTH)` names the north coast, as `SPA(NC)` and `SPA north coast` do: never read as an unknown
    # coast left out (DATC 4.B.6), which would send the fleet to the coast it did not name
    rs = load_ruleset(STANDARD)
    res = rs.run(state("spring", 1901, "movement", ["france F LYO"], ["france: F LYO - SPA(NORTH)"]))
    assert res["orders"][0]["status"] == "invalid" and "DATC-4.B.3" in res["orders"][0]["cites"]
    res = rs.run(state("spring", 1901, "movement", ["france F MAO"], ["france: F MAO - SPA(NORTH)"]))
    assert locs(res["units"]) == {"france F SPA/NC"}
    res = rs.run(state("spring", 1901, "movement", ["france F MAO", "france A GAS", "italy F WES"],
                       ["france: F MAO - SPA/SC", "france: A GAS S F MAO - SPA(NORTH)", "italy: F WES - SPA/SC"]))
    assert [o["status"] for o in res["orders"]] == ["fails", "fails", "fails"]  # the support names the other coast (4.B.4)
    res = rs.run(state("winter", 1901, "adjustment", [], ["russia: BUILD F STP(NORTH)"], supply_centers={"stp": "russia"}))
    assert locs(res["units"]) == {"russia F STP/NC"}
    res = rs.run(state("winter", 1901, "adjustment", [], ["russia: BUILD F STP/EC"], supply_centers={"stp": "russia"}))
    assert res["orders"][0]["reason"] == "`STP` has no coast `ec`: the coast must be named (nc, sc)"
    dis = {"power": "france", "type": "fleet", "location": "mao", "attacker_from": "nao"}
    retreat = state("spring", 1901, "retreat", ["england F BRE"], ["france: F MAO R SPA"], dislodged=[dis], standoffs=[])
    res = rs.run(retreat)
    assert (res["orders"][0]["reason"], res["orders"][0]["cites"]) == ("the coast of SPA must be named", ["DIP-R1", "DATC-4.B.1"])
    res = rs.run({**retreat, "orders": [{"power": "france", "order": "F MAO R SPA(NORTH)"}]})
    assert locs(res["units"]) == {"england F BRE", "france F SPA/NC"}


def test_a_move_ordered_by_convoy_that_no_fleet_could_carry_is_illegal_and_the_unit_holds() -> None:
    # DATC 4.E.1: legal is what could be valid not knowing the other orders; with no fleet on the board no
    # convoy could carry A BRE to Picardy, so the order is ignored and A BRE holds, with its hold support
    rs = load_ruleset(STANDARD)
    res = rs.run(state("spring", 1901, "movement", ["france A BRE", "france A PAR", "germany A GAS", "germany A PIC"],
                       ["france: A BRE - PIC via convoy", "france: A PAR S A BRE", "germany: A GAS - BRE",
                        "germany: A PIC S A GAS - BRE"]))
    assert [o["status"] for o in res["orders"]] == ["invalid", "succeeds", "fails", "succeeds"], res["orders"]
    assert "no convoy could carry" in res["orders"][0]["reason"]
    # from an inland province, the same: an invalid order, not a failed run
    res = rs.run(state("spring", 1901, "movement", ["france A PAR"], ["france: A PAR - BUR via convoy"]))
    assert res["orders"][0]["status"] == "invalid" and locs(res["units"]) == {"france A PAR"}
    # with a fleet that could carry it, the order is legal, and goes as its convoy goes
    res = rs.run(state("spring", 1901, "movement", ["england A LON", "england F NTH"],
                       ["england: A LON - YOR via convoy", "england: F NTH C A LON - YOR"]))
    assert [o["status"] for o in res["orders"]] == ["succeeds", "succeeds"]
    res = rs.run(state("spring", 1901, "movement", ["england A LON", "england F NTH"], ["england: A LON - YOR via convoy"]))
    assert res["orders"][0]["status"] == "fails" and locs(res["units"]) == {"england A LON", "england F NTH"}


def test_a_support_of_a_move_only_a_convoy_could_make_needs_a_fleet_that_could_carry_it() -> None:
    # DATC 4.E.1: with no fleet that could convoy A ISL to EAS (neighbours only by sea), the move is
    # illegal, and so is a support of it
    rs = load_ruleset(str(ROOT / "tests" / "maps" / "archipelago.rules"))
    res = rs.run(state("spring", 1901, "movement", ["red A ISL", "red F KEY"], ["red: A ISL - EAS", "red: F KEY S A ISL - EAS"]))
    assert [o["status"] for o in res["orders"]] == ["invalid", "invalid"], res["orders"]


def test_an_adjustment_state_without_supply_centres_is_refused() -> None:
    [(ptr, msg)] = _errors(state("winter", 1901, "adjustment", ["france A PAR"], ["france: A PAR D"]))
    assert ptr == "" and "`supply_centers`" in msg


def test_dislodged_units_outside_a_retreat_phase_and_wrong_seasons_are_refused() -> None:
    dis = {"power": "france", "type": "army", "location": "bur", "attacker_from": "mun"}
    errs = _errors(state("spring", 1901, "movement", ["germany A BUR"], dislodged=[dis]))
    assert errs == [("/dislodged/0", "only a retreat phase has dislodged units (this is a movement phase)")]
    assert _errors(state("winter", 1901, "movement", ["germany A BUR"]))[0][0] == "/phase/season"
    assert _errors(state("fall", 1901, "adjustment", ["germany A BUR"], supply_centers={}))[0][0] == "/phase/season"


def test_a_fall_without_supply_centres_is_played_and_the_state_after_it_refused() -> None:
    fall = state("fall", 1901, "movement", ["germany A MUN"], ["germany: A MUN - BUR"])
    rs = load_ruleset(STANDARD)
    assert rs.run(fall)["orders"][0]["status"] == "succeeds"  # one phase needs no owners
    with pytest.raises(PlayError) as info:  # but the game stops where the rules' next state lacks them
        list(play(rs, fall, []))
    [d] = info.value.diagnostics
    assert d.span.file == "(the state of W1901A, made by the rules after F1901M)" and "`supply_centers`" in d.message
    assert [s.phase for s in info.value.played] == ["F1901M"]


def test_a_retreat_state_that_no_movement_phase_leaves_is_refused() -> None:
    dis = {"power": "france", "type": "army", "location": "bur", "attacker_from": "mun"}

    def retreat(**given: Any) -> dict[str, Any]:
        return state("spring", 1901, "retreat", ["germany A BUR", "germany A RUH"], ["france: A BUR R BEL"],
                     **{"dislodged": [dis], "standoffs": [], **given})

    assert _errors(retreat(dislodged=[dis, dis])) == [
        ("/dislodged/1/location", "two dislodged units in `BUR`: a province holds one unit, so one can be dislodged from it")]
    assert _errors(retreat(dislodged=[])) == [
        ("/phase/type", "a retreat phase has dislodged units to retreat: with none, the rules go on to the next phase")]
    assert _errors(retreat(dislodged=[{**dis, "attacker_from": "xyz"}])) == [
        ("/dislodged/0/attacker_from", "`xyz` is no place on this map")]
    assert _errors(retreat(dislodged=[{**dis, "retreats": ["bel", "xyz"]}])) == [
        ("/dislodged/0/retreats/1", "`xyz` is no place on this map")]
    assert _errors(retreat(standoffs=["pic", "xyz"])) == [("/standoffs/1", "`xyz` is no place on this map")]
    assert load_ruleset(STANDARD).run(retreat())["orders"][0]["status"] == "succeeds"


def test_powers_the_map_does_not_list_are_refused_wherever_they_stand() -> None:
    s = state("winter", 1901, "adjustment", ["narnia A PAR"], ["narnia: A PAR D"],
              supply_centers={"mar": "narnia", "bre": "france"})
    listed = "is not one of the map's powers (austria, england, france, germany, italy, russia, turkey)"
    assert sorted(_errors(s)) == [("/orders/0/power", f"`narnia` {listed}"),
                                  ("/supply_centers/mar", f"`mar` is owned by `narnia`, which {listed}"),
                                  ("/units/0/power", f"`narnia` {listed}")]


def test_a_map_victory_count_at_or_below_half_the_centres_is_refused(tmp_path: Path) -> None:
    data = dict(MAP, victory=17)  # 34 centres: two powers could own 17 at once
    (tmp_path / "half.yaml").write_text(yaml.safe_dump(data))
    (tmp_path / "half.rules").write_text('ruleset half "half"\nextends "bundled:diplomacy/standard.rules"\n'
                                         'import "half.yaml" as map\n')
    code, out, err = _run("check", str(tmp_path / "half.rules"))
    assert code == 1
    assert "a solo victory needs more than half of the 34 supply centres (at least 18), not 17" in out + err


# ---------------------------------------------------------------- a variant changes one rule only

def test_a_build_anywhere_variant_overrides_one_rule_and_the_unit_is_the_builders() -> None:
    variant = str(DIP / "build_anywhere.rules")
    s = state("winter", 1901, "adjustment", ["france A PAR"], ["france: BUILD A MUN"],
              supply_centers={"par": "france", "mun": "france"})
    res = load_ruleset(variant).run(s)
    assert res["orders"][0]["status"] == "succeeds"
    assert {"power": "france", "type": "army", "location": "mun"} in res["units"]
    assert load_ruleset(STANDARD).run(s)["orders"][0]["status"] == "invalid"
    # and whether an adjustment phase happens follows the same rule: Munich is a place France may build
    fall = state("fall", 1901, "movement", ["france A PAR", "france A BEL"], [],
                 supply_centers={"par": "france", "bel": "france", "mun": "france"})
    assert load_ruleset(STANDARD).run(fall, "advance")["next_phase"] == "S1902M"  # Munich is no French home
    assert load_ruleset(variant).run(fall, "advance")["next_phase"] == "W1901A"


def test_diff_over_whole_games_finds_a_build_rule_change(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    code, out, err = _run("diff", "rulesets/diplomacy/standard.rules", "rulesets/diplomacy/build_anywhere.rules",
                          "--games", "4", "--phases", "12", "--start", "docs/examples/game/start.json")
    assert code == 1, out + err
    assert "query `advance`" in out and "phase" in out
    assert out.rstrip().endswith("differ") and max(len(line) for line in out.splitlines()) <= 100
    code, out, err = _run("diff", "rulesets/diplomacy/standard.rules", "rulesets/diplomacy/build_anywhere.rules",
                          "--games", "4", "--phases", "12", "--start", "docs/examples/game/start.json", "--format", "json")
    assert code == 1, err
    minimal = json.loads(out)["differences"][0]["minimal"]
    assert minimal["phase"]["type"] == "adjustment"  # the difference lies in a build
    # the same rulesets on movement phases only: no difference, and diff says how little it tried
    code, out, err = _run("diff", "rulesets/diplomacy/standard.rules", "rulesets/diplomacy/all_hold.rules",
                          "--games", "2", "--phases", "6", "--start", "docs/examples/game/start.json", "--ignore-cites")
    assert code == 0, out + err
    assert out == "tried 0 states and 12 phases of 2 games: equivalent on all of them\n"


def test_diff_over_games_that_stop_early_is_no_all_clear(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A fall start without `supply_centers` plays its phase, and the adjustment after it is refused by
    both rulesets: the games stop, diff says so (exit 3) and does not call the rulesets equivalent."""
    monkeypatch.chdir(ROOT)
    start = json.loads((ROOT / "docs/examples/game/start.json").read_text(encoding="utf-8"))
    start["phase"] = {"season": "fall", "year": 1901, "type": "movement"}
    start.pop("supply_centers", None)
    path = tmp_path / "fall.json"
    path.write_text(json.dumps(start), encoding="utf-8")
    code, out, err = _run("diff", "rulesets/diplomacy/standard.rules", "rulesets/diplomacy/all_hold.rules",
                          "--games", "2", "--phases", "4", "--start", str(path), "--ignore-cites")
    assert code == 3, out + err
    assert "equivalent" not in out and "games stopped early" in out, out
    assert "an adjustment phase needs `supply_centers`" in err, err
    code, out, err = _run("diff", "rulesets/diplomacy/standard.rules", "rulesets/diplomacy/all_hold.rules",
                          "--games", "2", "--phases", "4", "--start", str(path), "--ignore-cites", "--format", "json")
    report = json.loads(out)
    assert code == 3 and report["phases"] == 2 and report["differences"] == [] and report["notes"] == [], out
    # each game stops on its own (the other is still played, with the other side's orders)
    assert [n.split(": S002 ")[1].split(" (")[0] for n in report["stopped"]] == ["an adjustment phase needs `supply_centers`"] * 2
    assert [n.split(":")[0] for n in report["stopped"]] == ["game 0 stopped at phase 2", "game 1 stopped at phase 2"]


# ---------------------------------------------------------------- ruleval play / replay

START = state("spring", 1901, "movement",
              ["austria A VIE", "austria A BUD", "austria F TRI", "england F LON", "england F EDI", "england A LVP",
               "france F BRE", "france A PAR", "france A MAR", "germany F KIE", "germany A BER", "germany A MUN",
               "italy F NAP", "italy A ROM", "italy A VEN", "russia A WAR", "russia A MOS", "russia F SEV",
               "turkey F ANK", "turkey A CON", "turkey A SMY"], supply_centers=HOMES)
START["units"].append({"power": "russia", "type": "fleet", "location": "stp/sc"})

ORDERS = [
    {"phase": "S1901M", "orders": [{"power": "france", "order": "A PAR - BUR"}, {"power": "germany", "order": "A MUN - BUR"},
                                   {"power": "england", "order": "F LON - NTH"}]},
    {"phase": "F1901M", "orders": [{"power": "england", "order": "F NTH - BEL"}, {"power": "france", "order": "A MAR - SPA"}]},
    {"phase": "W1901A", "orders": [{"power": "england", "order": "BUILD F LON"}, {"power": "france", "order": "BUILD A MAR"}]},
]


def _files(tmp_path: Path, orders: Any = ORDERS, suffix: str = ".jsonl") -> tuple[str, str]:
    start = tmp_path / "start.json"
    start.write_text(json.dumps(START))
    path = tmp_path / f"orders{suffix}"
    if suffix == ".jsonl":
        path.write_text("".join(json.dumps(o) + "\n" for o in orders))
    elif suffix == ".yaml":
        path.write_text(yaml.safe_dump(orders))
    else:
        path.write_text(json.dumps(orders))
    return str(start), str(path)


def test_play_writes_every_phase_and_the_last_state(tmp_path: Path) -> None:
    start, orders = _files(tmp_path)
    code, out, err = _run("play", STANDARD, start, "--orders", orders, "--format", "json")
    assert code == 0, err
    lines = [json.loads(x) for x in out.splitlines()]
    assert [x["phase"] for x in lines] == ["S1901M", "F1901M", "W1901A", "S1902M"]
    assert all(x["end"] is None for x in lines[:3]) and "result" not in lines[3]
    after = lines[3]["state"]
    assert {"power": "england", "type": "fleet", "location": "lon"} in after["units"]
    assert {"power": "france", "type": "army", "location": "mar"} in after["units"]
    assert after["supply_centers"]["bel"] == "england" and after["supply_centers"]["spa"] == "france"
    # the same game through the API
    rs = load_ruleset(STANDARD)
    steps = list(play(rs, START, [Entry(o["orders"], o["phase"]) for o in ORDERS]))
    assert [s.next for s in steps][-1] == after


def test_a_whole_first_year_counts_centres_and_builds_as_the_rules_say() -> None:
    """Every power plays a 1901 (text audit, DIP-G1 to DIP-G4): the counts below were worked out by hand
    from the standard rules before the game was run. Galicia and the Black Sea are spring standoffs;
    in the fall France's army and England's fleet stand each other off in Belgium, which stays
    unowned; a centre left in the fall keeps its owner (Brest); the winter's builds go in free owned
    home centres up to each power's allowance: France's third build fails, Russia's fleet without a
    coast in St Petersburg is invalid, unordered builds (Austria's two, one each of Germany and
    Russia) are waived."""
    def orders(power: str, *texts: str) -> list[dict[str, str]]:
        return [{"power": power, "order": t} for t in texts]
    spring = (orders("france", "A PAR - BUR", "A MAR - SPA", "F BRE - MAO")
              + orders("germany", "A MUN - RUH", "A BER - KIE", "F KIE - DEN")
              + orders("england", "F LON - NTH", "F EDI - NWG", "A LVP - YOR")
              + orders("italy", "A ROM - APU", "A VEN H", "F NAP - ION")
              + orders("austria", "A VIE - GAL", "A BUD - SER", "F TRI - ALB")
              + orders("russia", "A MOS - UKR", "A WAR - GAL", "F SEV - BLA", "F STP/SC - BOT")
              + orders("turkey", "A CON - BUL", "A SMY - ARM", "F ANK - BLA"))
    fall = (orders("france", "A SPA - POR", "F MAO - SPA/NC", "A BUR - BEL") + orders("germany", "A RUH - HOL")
            + orders("england", "F NTH - BEL", "F NWG - NWY") + orders("italy", "F ION - TUN") + orders("austria", "F ALB - GRE")
            + orders("russia", "A UKR - RUM", "F BOT - SWE") + orders("turkey", "F ANK - CON"))
    winter = (orders("france", "BUILD A PAR", "BUILD F BRE", "BUILD A MAR") + orders("germany", "BUILD A BER")
              + orders("england", "BUILD F LON") + orders("italy", "BUILD F NAP") + orders("russia", "BUILD F STP", "BUILD A MOS")
              + orders("turkey", "BUILD F SMY"))
    steps = list(play(load_ruleset(STANDARD), START, [Entry(spring, "S1901M"), Entry(fall, "F1901M"), Entry(winter, "W1901A")]))
    assert [s.phase for s in steps] == ["S1901M", "F1901M", "W1901A"] and steps[-1].next_phase == "S1902M"
    assert steps[0].result["standoffs"] == ["bla", "gal"] and steps[1].result["standoffs"] == ["bel"]
    owners = steps[1].next["supply_centers"]
    count = {pw: sum(1 for o in owners.values() if o == pw) for pw in sorted(set(owners.values()))}
    assert count == {"austria": 5, "england": 4, "france": 5, "germany": 5, "italy": 4, "russia": 6, "turkey": 4}
    assert "bel" not in owners and owners["bre"] == "france"
    assert [o["status"] for o in steps[2].result["orders"]] == [
        "succeeds", "succeeds", "fails", "succeeds", "succeeds", "succeeds", "invalid", "succeeds", "succeeds"]
    after = steps[-1].next
    units = {pw: sum(1 for u in after["units"] if u["power"] == pw) for pw in count}
    assert units == {"austria": 3, "england": 4, "france": 5, "germany": 4, "italy": 4, "russia": 5, "turkey": 4}
    assert after["supply_centers"] == owners and after["phase"] == {"season": "spring", "year": 1902, "type": "movement"}


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_play_reads_yaml_and_json_game_files(tmp_path: Path, suffix: str) -> None:
    start, orders = _files(tmp_path, suffix=suffix)
    code, out, err = _run("play", STANDARD, start, "--orders", orders, "--format", "text")
    assert code == 0, err
    assert out.splitlines() == [
        "S1901M: orders 2 fails, 1 succeeds -> F1901M",
        "F1901M: orders 2 succeeds -> W1901A",
        "W1901A: orders 2 succeeds -> S1902M",
        "now at S1902M",
    ]


def test_play_until_a_phase_plays_on_without_orders_and_writes_files(tmp_path: Path) -> None:
    start, orders = _files(tmp_path)
    outdir = tmp_path / "game"
    code, out, err = _run("play", STANDARD, start, "--orders", orders, "--until", "F1902M", "--out", str(outdir))
    assert code == 0, err
    names = sorted(p.name for p in outdir.iterdir())
    assert names == ["001_S1901M.json", "001_S1901M.result.json", "002_F1901M.json", "002_F1901M.result.json",
                     "003_W1901A.json", "003_W1901A.result.json", "004_S1902M.json", "004_S1902M.result.json",
                     "005_F1902M.json"]
    assert json.loads((outdir / "005_F1902M.json").read_text())["phase"]["season"] == "fall"


def test_play_orders_for_another_phase_are_a_located_error(tmp_path: Path) -> None:
    wrong = [ORDERS[0], {"phase": "S1902M", "orders": []}]
    start, orders = _files(tmp_path, wrong)
    code, out, err = _run("play", STANDARD, start, "--orders", orders, "--format", "json")
    assert code == 3
    assert f"{orders}:2" in err and "error[S006]" in err and "`S1902M`" in err and "`F1901M`" in err
    assert "stopped after 1 phase (last played: S1901M)" in err


def test_play_unreadable_order_points_at_the_entry(tmp_path: Path) -> None:
    bad = [{"phase": "S1901M", "orders": [{"power": "france", "order": "A PAR GOES"}]}]
    start, orders = _files(tmp_path, bad)
    code, out, err = _run("play", STANDARD, start, "--orders", orders, "--format", "json")
    assert code == 3 and f"{orders}:1" in err and "/orders/0/order" in err and "error[S002]" in err


@pytest.mark.parametrize("content,message,where", [
    ("{not json\n", "invalid JSON", ":1:2:"),
    ('[]\n\n{"orders": [1, }\n', "invalid JSON", ":3:16:"),  # the line of the file, once, and the column on it
    ('{"orders": 3}\n', "an orders entry is {orders: [...], phase: NAME} or a list of orders: its `orders` must be a list",
     ":1:"),
    ('{"orders": [], "extra": 1}\n', "or a list of orders: `extra` is no field of one", ":1:"),
    ('{"phase": 5, "orders": []}\n', "or a list of orders: its `phase` must be a phase's name (text)", ":1:"),
    ('{"orders": [], "orders": [{"power": "france", "order": "A PAR H"}]}\n', 'key "orders" given twice', ":1:16:"),
    ("[]\n" * 6, "more than 5 entries", ":6:"),
])
def test_play_bad_orders_file(tmp_path: Path, content: str, message: str, where: str) -> None:
    start, _ = _files(tmp_path)
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    code, out, err = _run("play", STANDARD, start, "--orders", str(path), "--format", "json", "--max-phases", "5")
    assert code == 3 and message in err and f"{path}{where}" in err and "Traceback" not in err, err
    assert "= pointer: \n" not in err  # (a fault of the whole document has no pointer to show)


@pytest.mark.parametrize("name,content,message,where", [
    ("ctrl.yaml", b"- phase: S1901M\n  orders: []\n- phase: F1901M\n  orders: [\x00]\n",
     "the character U+0000 is not allowed in YAML", ":4:12:"),
    ("bytes.yaml", b"- phase: S1901M\n  orders:\n    - {power: france, order: A PAR - B\xffUR}\n",
     "byte 0xff is not valid UTF-8", ":3:39:"),
    ("nan.yaml", b"- phase: S1901M\n  orders:\n    - power: france\n      order: .nan\n", "`nan` is not JSON", ":4:14:"),
    ("date.yaml", b"- phase: S1901M\n  orders:\n    - power: france\n      order: 2001-01-01\n",
     "a value of no JSON type (`date`)", ":4:14:"),
])
def test_play_faults_of_a_yaml_orders_file_are_located_where_they_are(tmp_path: Path, name: str, content: bytes,
                                                                      message: str, where: str) -> None:
    start, _ = _files(tmp_path)
    path = tmp_path / name
    path.write_bytes(content)
    code, out, err = _run("play", STANDARD, start, "--orders", str(path))
    assert code == 3 and message in err and err.startswith(f"{path}{where} error[S001]"), err


def test_a_state_not_in_utf8_is_located_at_its_bad_byte(tmp_path: Path) -> None:
    path = tmp_path / "start.json"
    path.write_bytes(json.dumps(START, indent=1).replace('"vie"', '"v\udcffie"', 1).encode("utf-8", "surrogateescape"))
    line = next(i for i, t in enumerate(path.read_bytes().split(b"\n"), 1) if b"\xff" in t)
    col = path.read_bytes().split(b"\n")[line - 1].index(b"\xff") + 1
    code, _, err = _run("run", STANDARD, "--state", str(path))
    assert code == 3 and err.startswith(f"{path}:{line}:{col}: error[S001]: state is not UTF-8 text: byte 0xff"), err


def test_play_and_replay_name_what_they_cannot_read(tmp_path: Path) -> None:
    start, orders = _files(tmp_path)
    code, _, err = _run("play", STANDARD, "-", "--until", "S1902M")
    assert code == 2 and "from a file, not from standard input" in err
    code, _, err = _run("play", STANDARD, start, "--orders", str(tmp_path))
    assert code == 2 and "is not a regular file (a folder)" in err
    code, _, err = _run("replay", STANDARD, str(tmp_path / "nope.jsonl"))
    assert code == 2 and "not found" in err
    long = tmp_path / "long.json"
    long.write_text(json.dumps([[]] * 10_001))
    code, _, err = _run("replay", STANDARD, str(long))
    assert code == 3 and "more than 10000 entries" in err and "--max-phases" not in err, err


def test_play_until_a_phase_written_loosely_stops_there() -> None:
    rs = load_ruleset(STANDARD)
    for until in ("s1902m", "S1902M ", "S01902M"):
        steps = list(play(rs, START, [], until=until))
        assert [s.next_phase for s in steps] == ["F1901M", "S1902M"], until


@pytest.mark.parametrize("name, content, col, pointer", [
    ("orders.json", '[\n  [],\n  {"orders": 3}\n]\n', 14, "/orders"),  # (at its `orders`, the field at fault)
    ("orders.yaml", "- phase: S1901M\n  orders: []\n- 3\n", 3, None),  # (at the entry: no mapping)
    ("orders.jsonl", '[]\n\n  {"phase": 5, "orders": []}\n', 13, "/phase"),
    ("orders.jsonl", '[]\n[]\n{"orders": [], "extra": 1}\n3\n', 25, "/extra"),
])
def test_play_entries_of_a_list_are_located_by_their_line(tmp_path: Path, name: str, content: str, col: int,
                                                          pointer: str | None) -> None:
    """An entry of a JSON or YAML list that is no orders entry (a YAML one that is no mapping too): said at
    its line and column (was `FILE:3` as the file's name, no line of it: a place no editor opens, nothing
    quoted), the line quoted, at the field at fault with its pointer."""
    start, _ = _files(tmp_path)
    path = tmp_path / name
    path.write_text(content)
    code, _, err = _run("play", STANDARD, start, "--orders", str(path))
    line = content.splitlines()[2]
    assert code == 3 and err.startswith(f"{path}:3:{col}: error[S006]: an orders entry is"), err
    assert f"   3 | {line}\n" in err and (f"= pointer: {pointer}\n" in err if pointer else "= pointer" not in err), err


def test_play_plays_the_start_states_own_orders_and_refuses_orders_given_twice(tmp_path: Path) -> None:
    start, orders = _files(tmp_path)
    given = {**START, "orders": ORDERS[0]["orders"]}
    Path(start).write_text(json.dumps(given))
    code, out, err = _run("play", STANDARD, start, "--until", "F1901M")
    assert code == 0 and out.splitlines()[-1] == "now at F1901M", err
    rs = load_ruleset(STANDARD)
    [step] = play(rs, given, [])
    assert step.state["orders"] == ORDERS[0]["orders"]
    assert step.next == next(iter(play(rs, START, [Entry(ORDERS[0]["orders"])]))).next
    code, out, err = _run("play", STANDARD, start, "--orders", orders)
    col = Path(start).read_text().index('"orders"') + 1  # (said at the start file's `orders`, its pointer kept)
    assert code == 3 and f"{start}:1:{col}: error[S006]: the start state holds orders" in err, err
    assert "= pointer: /orders" in err, err


def test_play_when_nothing_is_to_be_played_says_where_the_game_is(tmp_path: Path) -> None:
    start, orders = _files(tmp_path)
    code, out, err = _run("play", STANDARD, start, "--orders", orders, "--until", "S1901M")
    assert (code, out) == (0, "now at S1901M\n")
    assert f"{len(ORDERS)} entries of `{orders}` were not played (the game is at --until S1901M already)" in err
    nothing = tmp_path / "nothing.json"
    nothing.write_text("[]")
    assert _run("play", STANDARD, start, "--orders", str(nothing))[:2] == (0, "now at S1901M\n")
    code, out, _ = _run("play", STANDARD, start, "--until", "S1901M", "--format", "json")
    assert code == 0 and json.loads(out) == {"phase": "S1901M", "state": START}


def test_an_empty_game_file_is_an_error_in_every_format(tmp_path: Path) -> None:
    """An empty file is a mistake more often than a game of no phase (a truncated download, a wrong
    path written to): S001 at its first line, in JSON, JSON Lines and YAML alike, for play and replay."""
    start, _ = _files(tmp_path)
    for name in ("empty.json", "empty.jsonl", "empty.yaml"):
        path = tmp_path / name
        path.write_text(" \n\n")
        for argv in (["play", STANDARD, start, "--orders", str(path)], ["replay", STANDARD, str(path)]):
            code, out, err = _run(*argv)
            assert (code, out) == (3, ""), err
            assert err.startswith(f"{path}:1:1: error[S001]: the file is empty") and "`[]`" in err, err
    # a file of no game format is said to be that first, empty or not
    for text in ("", "[]"):
        path = tmp_path / "game.txt"
        path.write_text(text)
        code, out, err = _run("replay", STANDARD, str(path))
        assert (code, out) == (2, "") and "a game file ends in .jsonl, .json, .yaml or .yml" in err, err


def test_play_out_is_a_new_or_empty_folder(tmp_path: Path) -> None:
    start, orders = _files(tmp_path)
    afile = tmp_path / "afile"
    afile.write_text("")
    code, _, err = _run("play", STANDARD, start, "--orders", orders, "--out", str(afile))
    assert code == 2 and "is a file, not a folder" in err
    outdir = tmp_path / "game"
    assert _run("play", STANDARD, start, "--orders", orders, "--out", str(outdir))[0] == 0
    code, _, err = _run("play", STANDARD, start, "--orders", orders, "--out", str(outdir))
    assert code == 2 and "already holds a game's files" in err


def test_a_state_the_rules_made_is_named_as_such_in_a_diagnostic(tmp_path: Path) -> None:
    start, orders = _files(tmp_path)
    Path(start).write_text(json.dumps({k: v for k, v in START.items() if k != "supply_centers"}))
    code, _, err = _run("play", STANDARD, start, "--orders", orders)
    assert code == 3
    assert err.startswith("(the state of W1901A, made by the rules after F1901M)#: error[S002]: an adjustment phase needs"), err


def test_play_api_refuses_what_it_cannot_play() -> None:
    rs = load_ruleset(STANDARD)
    with pytest.raises(ValueError, match="max_phases"):
        list(play(rs, START, [Entry([])], max_phases=0))
    with pytest.raises(ValueError, match="engine"):
        list(play(rs, START, [Entry([])], engine="bogus"))
    with pytest.raises(TypeError, match="seed"):
        list(play(rs, START, [Entry([])], seed="abc"))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="an entry of orders is"):
        list(play(rs, START, [3]))  # type: ignore[list-item]
    # orders given as lists or {orders, phase} are entries too
    assert [s.phase for s in play(rs, START, [ORDERS[0]["orders"], {"orders": [], "phase": "F1901M"}])] == ["S1901M", "F1901M"]
    with pytest.raises(PlayError, match="at least two states"):
        replay(rs, [START])


def test_play_plays_the_orders_the_start_state_holds(tmp_path: Path) -> None:
    """docs/tools.md: the start state's orders are its phase's orders; no --orders is then needed."""
    path = tmp_path / "start.json"
    path.write_text(json.dumps({**START, "orders": ORDERS[0]["orders"]}))
    code, out, err = _run("play", STANDARD, str(path))
    assert code == 0, out + err
    start, orders = _files(tmp_path, ORDERS[:1])  # the same phase played from an orders file
    code, by_file, err = _run("play", STANDARD, start, "--orders", orders)
    assert code == 0 and out == by_file and out.splitlines()[-1] == "now at F1901M", (out, by_file)
    # without orders anywhere there is still nothing to play
    path.write_text(json.dumps(START))
    code, out, err = _run("play", STANDARD, str(path))
    assert code == 2 and "holds no orders" in err, err


def test_play_usage_errors(tmp_path: Path) -> None:
    start, orders = _files(tmp_path)
    assert _run("play", STANDARD, start)[0] == 2
    assert _run("play", STANDARD, start, "--orders", str(tmp_path / "nope.jsonl"))[0] == 2
    txt = tmp_path / "orders.txt"
    txt.write_text("x")
    code, _, err = _run("play", STANDARD, start, "--orders", str(txt))
    assert code == 2 and ".jsonl, .json, .yaml" in err
    # an --until that names no phase is the command line's mistake (exit 2, not 3: nothing in the game is
    # wrong): said with the phases the game plays and the nearest of them, in any case
    code, out, err = _run("play", STANDARD, start, "--until", "f1903q")
    assert code == 2 and out == "" and "Traceback" not in err, err
    assert err.startswith(f"{STANDARD}: error[U001]: --until `f1903q` names no phase of this ruleset\n"), err
    help = " ".join(err.split("= help:", 1)[1].split())
    assert help.startswith("did you mean `F1903M`? With no orders the game plays S1901M, F1901M, S1902M, ") and \
        help.endswith(", ...") and "F1903M" in help.split("plays", 1)[1], help
    code, _, err = _run("play", STANDARD, start, "--until", "zzz")
    assert code == 2 and "error[U001]" in err and "did you mean" not in err and "S1901M" in err, err
    with pytest.raises(PlayError, match="`X1901Q` names no phase of this ruleset"):  # (the API's own: S006)
        list(play(load_ruleset(STANDARD), START, [], until="X1901Q"))
    code, _, err = _run("play", STANDARD, start, "--until", "F1905M", "--max-phases", "5")
    assert code == 3 and "5 phases played without reaching `F1905M`" in err
    code, _, err = _run("play", STANDARD, start, "--until", "F1905M", "--max-phases", "1")
    assert code == 3 and "1 phase played without reaching `F1905M`" in err, err  # (one phase, not "1 phases")


def test_play_until_a_phase_the_rules_skip_stops_once_the_game_passes_it(tmp_path: Path) -> None:
    # nothing to adjust after a fall where every unit held: W1901A is skipped (DIP-G1), and play stops at
    # the phase after it, saying so, rather than playing on to --max-phases
    start, _ = _files(tmp_path)
    code, out, err = _run("play", STANDARD, start, "--until", "w1901a", "--format", "text")
    assert code == 0, err
    assert out.splitlines() == ["S1901M: played -> F1901M", "F1901M: played -> S1902M", "now at S1902M"]
    assert "the game passed --until w1901a without playing it" in err and "stopped at S1902M" in err
    rs = load_ruleset(STANDARD)
    assert [s.next_phase for s in play(rs, START, [], until="W1901A")] == ["F1901M", "S1902M"]
    # a phase the game is past already is refused before anything is played
    later = {**START, "phase": {"season": "spring", "year": 1902, "type": "movement"}}
    with pytest.raises(PlayError, match="the game is at `S1902M`, past `W1901A` already") as exc:
        list(play(rs, later, [], until="W1901A"))
    assert exc.value.played == [] and exc.value.diagnostics[0].code == "S006"


def test_play_needs_an_advance_query(tmp_path: Path) -> None:
    start, orders = _files(tmp_path)
    code, _, err = _run("play", str(ROOT / "rulesets" / "his" / "his.rules"), start, "--orders", orders)
    assert code == 1 and "no query `advance`" in err and "error[E008]" in err  # an `E` diagnostic: exit 1


def test_play_with_random_orders_from_the_rulesets_start(tmp_path: Path) -> None:
    """`play RULESET --random-orders SEED`: no start file (the ruleset's `query start_state`), every phase
    given the ruleset's random orders (the seeds of `diff --games`'s game 0), the same game for the same
    seed; the states written hold the orders played, so the game can be replayed."""
    from validator.api import game_seed

    ancmed = str(DIP / "ancmed.rules")
    code, out, err = _run("play", ancmed, "--random-orders", "3", "--until", "S3M", "--format", "json")
    assert code == 0, err
    assert _run("play", ancmed, "--random-orders", "3", "--until", "S3M", "--format", "json")[1] == out
    lines = [json.loads(line) for line in out.splitlines()]
    assert [x["phase"] for x in lines][0] == "S1M" and lines[-1]["phase"] == "S3M" and "result" not in lines[-1]
    rs = load_ruleset(ancmed)
    start = rs.run({"units": []}, "start_state", validate=False)
    assert lines[0]["state"] == {**start, "orders": lines[0]["state"]["orders"]}
    for i, line in enumerate(lines[:-1]):
        assert line["state"]["orders"] == rs.run({**line["state"], "orders": []}, "random_orders", [game_seed(3, 0, i)],
                                                 seed=game_seed(3, 0, i))
    assert all(line["state"]["orders"] for line in lines[:-1])
    assert _run("play", ancmed, "--random-orders", "4", "--until", "S3M", "--format", "json")[1] != out
    path = tmp_path / "played.jsonl"
    path.write_text(out)
    assert _run("replay", ancmed, str(path))[0] == 0
    # an orders file first, then random orders; without --until, on to the game's end or --max-phases
    start_file, orders = _files(tmp_path)
    code, out, err = _run("play", STANDARD, start_file, "--orders", orders, "--random-orders", "1", "--max-phases", "6")
    assert code == 3 and "6 phases played and the game has not ended" in err, err
    by_file = _run("play", STANDARD, start_file, "--orders", orders)[1].splitlines()[:-1]  # (but its "now at" line)
    assert out.splitlines()[:len(by_file)] == by_file and len(out.splitlines()) == 6 > len(by_file)
    # the same through the Python API
    steps = list(play(rs, start, [], until="S2M", random_orders=3))
    assert [s.state["orders"] for s in steps] == [line["state"]["orders"] for line in lines[:len(steps)]]
    with pytest.raises(TypeError, match="random_orders"):
        list(play(rs, start, [], random_orders="3"))  # type: ignore[arg-type]


def test_play_without_a_start_or_random_orders_says_what_is_missing(tmp_path: Path) -> None:
    his = str(ROOT / "rulesets" / "his" / "his.rules")
    code, _, err = _run("play", his, "--random-orders", "1")
    assert code == 2 and "error[U001]: give a START state file:" in err and "has no `query start_state` to start from" in err
    (tmp_path / "ruleval.toml").write_text("")
    plain = tmp_path / "plain.rules"
    plain.write_text('ruleset t.plain "no random orders"\nextends "bundled:diplomacy/standard.rules"\n'
                     'override query random_orders(seed) = 1\n')
    code, _, err = _run("play", str(plain), "--random-orders", "1", "--until", "F1901M")
    assert code == 1 and "`random_orders` gave int, not a list of orders" in err, err
    assert _run("play", STANDARD)[0] == 2  # (neither orders, --until nor --random-orders: nothing to play)


@pytest.mark.parametrize("fields, said", [("next: 5, next_phase: \"T1\", end: none", "gave a `next` state that is no record"),
                                          ("next: {turn: 1}, next_phase: \"T1\", end: \"over\"",
                                           "gave an `end` that is neither none nor a record")])
def test_an_advance_of_the_wrong_shape_is_the_rules_error(tmp_path: Path, fields: str, said: str) -> None:
    """A `next` that is no state was reported as a fault of the state (S001, exit 3), at a place named
    `(no orders: phase 1) (the state after it)`; it is the rules' (E001 at `advance`, exit 1)."""
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "a.rules").write_text('input turn: int at "/turn" default 0\n'
                                      'query advance = {phase: "T" + str(turn), result: {}, ' + fields + '}\n')
    (tmp_path / "s.json").write_text('{"turn": 0}')
    code, _, err = _run("play", str(tmp_path / "a.rules"), str(tmp_path / "s.json"), "--until", "T3")
    assert code == 1 and "error[E001]" in err and said in err and "a.rules:2:1" in err, err


def _record(tmp_path: Path) -> Path:
    rs = load_ruleset(STANDARD)
    steps = list(play(rs, START, [Entry(o["orders"], o["phase"]) for o in ORDERS]))
    record = [s.state for s in steps] + [steps[-1].next]
    path = tmp_path / "record.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in record))
    return path


def test_replay_of_a_game_that_agrees(tmp_path: Path) -> None:
    path = _record(tmp_path)
    code, out, err = _run("replay", STANDARD, str(path))
    assert (code, out) == (0, "3 phases replayed: every next state agrees with the record\n"), err


def test_replay_reports_the_first_phase_that_differs_field_by_field(tmp_path: Path) -> None:
    path = _record(tmp_path)
    lines = path.read_text().splitlines()
    third = json.loads(lines[2])  # the state of W1901A, as recorded after F1901M
    third["supply_centers"]["bel"] = "france"
    third["units"] = [u for u in third["units"] if u["location"] != "bel"]
    lines[2] = json.dumps(third)
    path.write_text("\n".join(lines) + "\n")
    code, out, err = _run("replay", STANDARD, str(path))
    assert code == 1
    *head, first, second = out.splitlines()  # the head is wrapped to the width (the path is long)
    assert " ".join(line.strip() for line in head) == \
        f"1 phase agrees; F1901M ({path}:2) differs from the record's next state ({path}:3):"
    assert [first, second] == [
        '  /units: computed {"power": "england", "type": "fleet", "location": "bel"}, not in the record',
        '  /supply_centers/bel: recorded "france", computed "england"',
    ]
    code, out, _ = _run("replay", STANDARD, str(path), "--format", "json")
    report = json.loads(out)
    assert report["phases_agreeing"] == 1 and report["first_difference"]["phase"] == "F1901M"


def test_replay_checks_every_recorded_state_the_last_too(tmp_path: Path) -> None:
    path = _record(tmp_path)
    lines = path.read_text().splitlines()
    last = json.loads(lines[-1])
    for bad, pointer in (({}, ""), ({**last, "units": last["units"] + [{"power": "narnia", "type": "army", "location": "xyz"}]},
                                    "/units/")):
        path.write_text("\n".join(lines[:-1] + [json.dumps(bad)]) + "\n")
        code, _, err = _run("replay", STANDARD, str(path))
        # (at the line of the state in the record file, and the column of the value its pointer names)
        assert code == 3 and f"{path}:{len(lines)}:" in err and "error[S" in err, err
        assert not pointer or f"= pointer: {pointer}" in err, err


def test_replay_of_a_record_that_goes_on_after_the_game_ended_differs(tmp_path: Path) -> None:
    centres = sorted(p for p, v in MAP["provinces"].items() if v.get("center"))
    owned = {c: "france" for c in centres if c not in ("bel", "hol")}
    owned = dict(list(owned.items())[:17])
    won = state("fall", 1905, "movement", ["france A PIC"], ["france: A PIC - BEL"], supply_centers=owned)
    rs = load_ruleset(STANDARD)
    [step] = play(rs, won, [])
    assert step.end is not None
    record = [won, step.next, {**step.next, "phase": {"season": "spring", "year": 1906, "type": "movement"}}]
    agreed, mismatch = replay(rs, record)
    assert agreed == 1 and mismatch is not None
    assert mismatch.differences == [("/phase", "(the record goes on: 1 more state)",
                                      f"(the game is over: {step.end['reason']})")]


def test_replay_takes_an_empty_list_for_no_list() -> None:
    rs = load_ruleset(STANDARD)
    [step] = play(rs, START, [Entry(ORDERS[0]["orders"])])
    assert replay(rs, [{**START, "orders": ORDERS[0]["orders"]}, {**step.next, "dislodged": [], "standoffs": []}]) == (1, None)


def test_record_differences_compares_lists_as_collections() -> None:
    assert record_differences({"a": [1, 2, 2]}, {"a": [2, 1, 2], "b": 3}) == []
    assert record_differences({"a": [1, 2]}, {"a": [2, 3]}) == [("/a", 1, "(missing)"), ("/a", "(not recorded)", 3)]
    assert record_differences({"m": {"x": 1}}, {"m": {"x": 1, "y": 2}}) == [("/m/y", "(absent)", 2)]
    assert record_differences({"gone": 1}, {}) == [("/gone", 1, "(absent)")]
    # at every depth: a dislodged unit's retreats listed in another order are the same retreats
    one = {"location": "bur", "from": "mun", "retreats": ["gas", "mar", "par", "pic"]}
    assert record_differences({"dislodged": [{**one, "retreats": ["pic", "par", "mar", "gas"]}]}, {"dislodged": [one]}) == []


def test_an_item_changed_in_a_field_is_reported_at_that_field() -> None:
    """A recorded item that agrees with a computed one on most of its fields is that item changed:
    the difference is named field by field, under the recorded item's index, not as a whole item
    missing and another not recorded."""
    computed = {"units": [{"power": "turkey", "type": "fleet", "location": "ank"}],
                "dislodged": [{"location": "bur", "from": "mun", "retreats": ["gas", "mar", "par", "pic"]}]}
    recorded = {"units": [{"power": "turkey", "type": "fleet", "location": "bla"}],
                "dislodged": [{"location": "bur", "from": "mun", "retreats": ["bel", "par", "mar", "pic"]}]}
    assert record_differences(recorded, computed) == [
        ("/units/0/location", "bla", "ank"),
        ("/dislodged/0/retreats", "bel", "(missing)"), ("/dislodged/0/retreats", "(not recorded)", "gas")]
    # agreeing on half the fields or fewer is another item
    assert record_differences({"u": [{"a": 1, "b": 2}]}, {"u": [{"a": 1, "b": 3}]}) == [
        ("/u", {"a": 1, "b": 2}, "(missing)"), ("/u", "(not recorded)", {"a": 1, "b": 3})]
    # a field the record leaves out of an item changed elsewhere is not compared
    assert record_differences({"u": [{"a": 1, "b": 2, "c": 3}]}, {"u": [{"a": 1, "b": 2, "c": 4, "d": 5}]}) == [
        ("/u/0/c", 3, 4)]


def test_replay_lines_fit_the_width(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A difference too wide for 100 columns is written over lines that fit, the head too."""
    code, out, err = _run("play", STANDARD, str(ROOT / "docs/examples/game/start.json"),
                          "--orders", str(ROOT / "docs/examples/game/orders.yaml"), "--format", "json")
    assert code == 0, err
    record = [json.loads(line)["state"] for line in out.splitlines()]
    [retreat] = [n for n, s in enumerate(record) if s.get("dislodged")]
    unit = record[retreat]["dislodged"][0]  # another unit dislodged: no field-by-field pairing
    record[retreat]["dislodged"][0] = {**unit, "power": "italy", "type": "fleet", "location": "gol", "attacker_from": "mar",
                                       "retreats": []}
    monkeypatch.chdir(tmp_path)
    path = Path("a_folder_with_a_long_name_" * 2) / "record.json"  # a head of more than 100 columns
    path.parent.mkdir()
    path.write_text(json.dumps(record, indent=1))
    code, out, err = _run("replay", STANDARD, str(path))
    assert code == 1, err
    assert all(len(line) <= 100 for line in out.splitlines()), out
    head = f"{retreat - 1} phase{'s' if retreat != 2 else ''} agree"
    assert out.startswith(head) and not out.splitlines()[0].endswith(":"), out
    assert f"({path}:" in out and "  /dislodged:\n    recorded {" in out and '"power": "italy"' in out, out


def test_replay_api_stops_at_the_end_of_the_game(tmp_path: Path) -> None:
    rs = load_ruleset(STANDARD)
    path = _record(tmp_path)
    from validator.tools.play import read_game_file

    agreed, mismatch = replay(rs, [(item.where, item.value) for item in read_game_file(str(path))])
    assert (agreed, mismatch) == (3, None)
    with pytest.raises(PlayError):
        list(play(rs, START, [Entry([], "F1901M")]))


def test_the_play_transcript_of_docs_tools_md(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = (ROOT / "docs" / "tools.md").read_text(encoding="utf-8")
    block = doc[re.search(r"^\$ ruleval play [^#\n]*$", doc, re.M).start():]  # (the first that exits 0)
    block = block[:block.index("```")]
    command, *expected = block.strip().splitlines()
    monkeypatch.chdir(ROOT)
    code, out, err = _run(*command.split()[2:])
    assert code == 0, err
    assert out.splitlines() == expected


def test_diff_ignore_cites_compares_results_without_their_citations(tmp_path: Path) -> None:
    (tmp_path / "ruleval.toml").write_text("")
    for name, cite in (("old", "T-1"), ("new", "T-2")):
        (tmp_path / f"{name}.rules").write_text(
            f'ruleset t.{name} "one result"\ninput n: int at "/n" default 0\n'
            f'query main = {{value: n + 1, steps: [{{cites: ["{cite}"], ok: true}}]}}\nquery generate(seed) = {{n: seed}}\n')
    args = ("diff", str(tmp_path / "old.rules"), str(tmp_path / "new.rules"), "--generate", "3")
    code, out, _ = _run(*args)
    assert code == 1 and out.endswith("tried 3 states: 3 differ\n")
    code, out, _ = _run(*args, "--ignore-cites")
    assert (code, out) == (0, "tried 3 states: equivalent on all of them\n")
    # where the values differ too, the table of changed fields leaves the citations out
    (tmp_path / "new.rules").write_text(
        'ruleset t.new "one result"\ninput n: int at "/n" default 0\n'
        'query main = {value: n + 2, steps: [{cites: ["T-2"], ok: true}]}\nquery generate(seed) = {n: seed}\n')
    code, out, _ = _run(*args, "--shrink", "1")
    assert code == 1 and "/steps/0/cites" in out and "/value" in out, out
    code, out, _ = _run(*args, "--shrink", "1", "--ignore-cites")
    assert code == 1 and "/steps/0/cites" not in out and "/value" in out, out


def test_two_comparisons_at_once_in_threads_each_read_their_own_ignore_cites(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """`--ignore-cites` travels with each task of a comparison (a Dask worker runs several tasks at once in
    its threads): a task that ignores citations and one that does not, set one after the other and compared
    after both are set, each answer by their own."""
    import threading

    from validator.tools import errata

    (tmp_path / "ruleval.toml").write_text("")
    rulesets = []
    for name, cite in (("old", "T-1"), ("new", "T-2")):
        (tmp_path / f"{name}.rules").write_text(
            f'ruleset t.{name} "one result"\ninput n: int at "/n" default 0\n'
            f'query main = {{value: n + 1, steps: [{{cites: ["{cite}"], ok: true}}]}}\n')
        rulesets.append(load_ruleset(tmp_path / f"{name}.rules", use_cache=False))
    both_set = threading.Barrier(2, timeout=30)
    first_outcome = errata.outcome
    waited: set[int] = set()

    def outcome_after_both_set(rs: Any, probe: Any, state: Any) -> Any:
        if threading.get_ident() not in waited:  # (each task's first outcome: its flag is set by now)
            waited.add(threading.get_ident())
            both_set.wait()
        return first_outcome(rs, probe, state)
    monkeypatch.setattr(errata, "outcome", outcome_after_both_set)
    found: dict[bool, Any] = {}

    def task(ignore: bool) -> None:
        found[ignore] = errata._probe_task(rulesets, (errata.Probe("n=1", {"n": 1}), ignore))
    threads = [threading.Thread(target=task, args=(ignore,)) for ignore in (True, False)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert found[True].differ is False and found[False].differ is True


def test_the_retreats_a_movement_result_lists_are_exactly_the_retreat_orders_that_succeed() -> None:
    """One meaning for where a dislodged unit may go: over random whole games, every retreat phase
    reached is played once per dislodged unit and neighbouring location, with that retreat alone;
    it succeeds exactly when the movement result listed the location among the unit's retreats."""
    rs = load_ruleset(STANDARD)
    checked = 0
    for game in range(40):
        st: dict[str, Any] = START
        for i in range(24):
            if st["phase"]["type"] == "retreat":
                for d in st["dislodged"]:
                    text = ("A " if d["type"] == "army" else "F ") + d["location"].upper()
                    near = [x for x in MAP["army" if d["type"] == "army" else "fleet"].get(d["location"], [])
                            if d["type"] == "fleet" or MAP["provinces"][x]["kind"] != "sea"]
                    for x in near:
                        alone = {**st, "orders": [{"power": d["power"], "order": f"{text} R {x.upper()}"}]}
                        status = rs.run(alone)["orders"][0]["status"]
                        assert (status == "succeeds") == (x in d["retreats"]), (alone, d["retreats"])
                        checked += 1
            orders = rs.run(st, "random_orders", [game * 100 + i])
            step = rs.run({**st, "orders": orders}, "advance")
            if step["end"] is not None:
                break
            st = step["next"]
        if checked >= 150:
            break
    assert checked >= 150


def test_the_start_state_comes_from_the_map_and_games_start_there_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    from validator.tools.errata import generator_state

    rs = load_ruleset(STANDARD)
    start = rs.run(generator_state(rs), "start_state", validate=False)
    assert rs.state_errors(start) == []
    assert len(start["units"]) == 22 and start["supply_centers"] == HOMES
    assert locs(start["units"]) == locs(START["units"])
    monkeypatch.chdir(ROOT)
    code, out, err = _run("diff", "rulesets/diplomacy/standard.rules", "rulesets/diplomacy/all_hold.rules",
                          "--games", "1", "--phases", "3")
    assert (code, out) == (0, "tried 0 states and 3 phases of 1 game: equivalent on all of them\n"), err


def test_a_recorded_items_fields_are_the_ones_compared() -> None:
    """A game log gives a dislodged unit without the retreats the rules work out: the item matches on
    the fields it gives; a field it gives that differs, or an item not computed, is a difference."""
    computed = {"dislodged": [{"location": "nwy", "from": "yor", "retreats": ["bar"]}, {"location": "gal", "retreats": []}]}
    assert record_differences({"dislodged": [{"location": "gal"}, {"location": "nwy", "from": "yor"}]}, computed) == []
    assert record_differences({"dislodged": [{"location": "nwy", "from": "ska"}, {"location": "gal"}]}, computed) == [
        ("/dislodged", {"location": "nwy", "from": "ska"}, "(missing)"),
        ("/dislodged", "(not recorded)", {"location": "nwy", "from": "yor", "retreats": ["bar"]})]
    assert record_differences({"dislodged": [{"location": "gal", "extra": 1}]}, computed) == [
        ("/dislodged", {"location": "gal", "extra": 1}, "(missing)"),
        ("/dislodged", "(not recorded)", computed["dislodged"][0]),
        ("/dislodged", "(not recorded)", computed["dislodged"][1])]


def test_a_reader_that_stops_reading_never_turns_a_difference_into_success(tmp_path: Path) -> None:
    from validator.tools.cli import _ReaderMayLeave

    class Gone(io.StringIO):  # `ruleval replay ... | head -0`
        def write(self, text: str) -> int:
            raise BrokenPipeError

    path = _record(tmp_path)
    lines = path.read_text().splitlines()
    third = json.loads(lines[2])
    third["supply_centers"]["bel"] = "france"
    path.write_text("\n".join(lines[:2] + [json.dumps(third)] + lines[3:]) + "\n")
    err = io.StringIO()
    assert main(["replay", STANDARD, str(path)], stdout=_ReaderMayLeave(Gone()), stderr=err) == 1
    assert err.getvalue() == ""


@pytest.mark.parametrize("entry,message", [
    ("VAR-1: ~", "clause `VAR-1` has no text"),
    ('VAR-1: ""', "clause `VAR-1` has no text"),
    ("has space: text", "clause id `has space` is not one word"),
    ("VAR-1: a\n  VAR-1: b", "key `VAR-1` given twice"),
])
def test_a_variants_clause_catalogue_is_checked_where_it_goes_wrong(tmp_path: Path, entry: str, message: str) -> None:
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "cl.yaml").write_text(f"clauses:\n  {entry}\n")
    (tmp_path / "v.rules").write_text('ruleset v "v"\nextends "bundled:diplomacy/standard.rules"\nclauses "cl.yaml"\n')
    code, out, err = _run("check", str(tmp_path / "v.rules"))
    assert code == 1 and "cl.yaml:" in out + err and message in out + err, out + err


def test_replay_reads_a_records_places_as_orders_read_them(tmp_path: Path) -> None:
    rs = load_ruleset(STANDARD)
    steps = list(play(rs, START, [Entry(o["orders"], o["phase"]) for o in ORDERS]))
    record = [s.state for s in steps] + [steps[-1].next]
    shown = json.loads(json.dumps(record))
    for st in shown[1:]:  # as a game log may write them: upper case, names, coasts in brackets
        for u in st["units"]:
            u["location"] = {"stp/sc": "StP(sc)", "mun": "Munich"}.get(u["location"], u["location"].upper())
        st["supply_centers"] = {c.upper(): o for c, o in st.get("supply_centers", {}).items()}
    assert replay(rs, shown) == (len(steps), None)
    moved = json.loads(json.dumps(shown))
    moved[-1]["units"][0]["location"] = "Gulf of Bothnia" if moved[-1]["units"][0]["type"] == "fleet" else "Bohemia"
    agreed, mismatch = replay(rs, moved)
    assert mismatch is not None and mismatch.differences[0][0] == "/units/0/location"


def test_normal_state_leaves_every_state_the_rules_make_as_it_is() -> None:
    """The rules' own next states, over seeded random games, are already in the form `normal_state` writes."""
    rs = load_ruleset(STANDARD)
    for seed in range(3):
        s = rs.run({"phase": {"season": "spring", "year": 1901, "type": "movement"}, "units": [], "orders": []},
                   "start_state")
        for i in range(8):
            s = {**s, "orders": rs.run(s, "random_orders", [seed * 100 + i])}
            nxt = rs.run(s, "advance")["next"]
            assert rs.run(nxt, "normal_state") == nxt, (seed, i)
            s = nxt


def test_one_centre_written_twice_is_refused_and_a_centre_is_read_as_a_place() -> None:
    s = state("winter", 1901, "adjustment", ["france A PAR"], [], supply_centers={"par": "france", "PAR": "germany"})
    assert _errors(s) == [("/supply_centers/PAR", "`PAR` and `par` are one supply centre: give its owner once")]
    s["supply_centers"] = {"Paris": "france", "BRE": "france"}
    assert load_ruleset(STANDARD).run(s, "advance")["next"]["supply_centers"] == {"par": "france", "bre": "france"}


def test_diff_never_says_equivalent_about_what_it_did_not_compare(tmp_path: Path) -> None:
    all_hold = str(DIP / "all_hold.rules")
    for args, code, said in (((), 2, "nothing to compare"), (("--games", "0"), 2, "nothing to compare"),
                             (("--games", "-1"), 2, "--games takes a number from 0"),
                             (("--generate", "-5"), 2, "--generate takes a number from 0"),
                             (("--generate", "2", "--phases", "3"), 2, "--start and --phases go with --games"),
                             (("--games", "1", "--start", str(tmp_path / "nope.json")), 2, "not found"),
                             (("--cases", str(tmp_path / "nope")), 2, "not found")):
        got, out, err = _run("diff", STANDARD, all_hold, *args)
        assert got == code and said in out + err and "equivalent" not in out, (args, out, err)
    # a game the rules cannot play on (the start state lacks the owners an adjustment needs) is not an all-clear
    start = tmp_path / "start.json"
    start.write_text(json.dumps({k: v for k, v in START.items() if k != "supply_centers"}))
    got, out, err = _run("diff", STANDARD, all_hold, "--games", "1", "--start", str(start))
    assert got == 3 and "an adjustment phase needs `supply_centers`" in err, (out, err)


def test_what_play_writes_replay_reads(tmp_path: Path) -> None:
    """The lines of `play --format json` are a record `replay` takes as it is; a changed outcome in
    them is found."""
    code, out, err = _run("play", STANDARD, str(ROOT / "docs/examples/game/start.json"),
                          "--orders", str(ROOT / "docs/examples/game/orders.yaml"), "--format", "json")
    assert code == 0, err
    path = tmp_path / "played.jsonl"
    path.write_text(out)
    assert _run("replay", STANDARD, str(path)) == (0, "4 phases replayed: every next state agrees with the record\n", "")
    lines = [json.loads(line) for line in out.splitlines()]
    lines[1]["state"]["supply_centers"] = {**lines[1]["state"]["supply_centers"], "par": "germany"}
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    code, out, err = _run("replay", STANDARD, str(path))
    assert code == 1 and '/supply_centers/par: recorded "germany", computed "france"' in out, out + err


def test_replay_reads_the_folder_play_out_writes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(ROOT)
    out_dir = tmp_path / "game"
    code, _, err = _run("play", "rulesets/diplomacy/standard.rules", "docs/examples/game/start.json",
                        "--orders", "docs/examples/game/orders.yaml", "--out", str(out_dir))
    assert code == 0, err
    code, out, err = _run("replay", "rulesets/diplomacy/standard.rules", str(out_dir))
    assert (code, out) == (0, "4 phases replayed: every next state agrees with the record\n"), err
    # a hand-edit of the fourth state (after the fall retreat) is found there, named by its file
    edited = out_dir / "004_W1901A.json"
    state = json.loads(edited.read_text(encoding="utf-8"))
    moved = next(i for i, u in enumerate(state["units"]) if u["location"] == "pic")
    state["units"][moved]["location"] = "gas"
    edited.write_text(json.dumps(state), encoding="utf-8")
    code, out, err = _run("replay", "rulesets/diplomacy/standard.rules", str(out_dir))
    assert code == 1 and f"differs from the record's next state ({edited}" in out.replace("\n  ", " "), out
    assert '"gas"' in out and '"pic"' in out, out
    # a folder without states
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "001_S1901M.result.json").write_text("{}", encoding="utf-8")
    code, out, err = _run("replay", "rulesets/diplomacy/standard.rules", str(empty))
    assert code == 3 and "error[S001]: the folder holds no state files `NNN_PHASE.json`" in err, err


def test_replay_says_which_side_a_list_item_is_on(tmp_path: Path) -> None:
    """An item of a list on one side only reads as such: `computed X, not in the record` and
    `recorded X, not computed`, never `recorded (not recorded)`."""
    from validator.tools.play import _difference_lines

    assert _difference_lines("/d/0/retreats", "(not recorded)", "gas") == '  /d/0/retreats: computed "gas", not in the record\n'
    assert _difference_lines("/d/0/retreats", "bel", "(missing)") == '  /d/0/retreats: recorded "bel", not computed\n'
    assert _difference_lines("/x", 1, 2) == "  /x: recorded 1, computed 2\n"
    wide = _difference_lines("/units", "(not recorded)", {"location": "x" * 120})
    assert wide.splitlines()[0] == "  /units:" and wide.splitlines()[2] == "    not in the record", wide


@pytest.mark.parametrize("name,text,line,col", [
    ("o.yaml", '- phase: S1901M\n  orders:\n    - {power: france, order: "A PAR - BUR"}\n'
               '    - {power: france, order: "A MAR CHARGES SPA"}\n', 4, 30),
    ("o.jsonl", '{"phase": "S1901M", "orders": [{"power": "france", "order": "A PAR - BUR"}]}\n'
                '{"orders": [{"power": "france", "order": "A MAR CHARGES SPA"}]}\n', 2, 42),
])
def test_an_unreadable_order_in_an_orders_file_is_located_where_it_is_written(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str, text: str, line: int, col: int) -> None:
    """An order no form reads was located at its entry's first line, as `o.yaml:1#/orders/1/order`,
    without the line quoted: now at the order's value (in JSON Lines too, on the entry's line), quoted."""
    monkeypatch.chdir(ROOT)
    orders = tmp_path / name
    orders.write_text(text, encoding="utf-8")
    code, _, err = _run("play", STANDARD, "docs/examples/game/start.json", "--orders", str(orders))
    assert code == 3, err
    assert err.startswith(f"{orders}:{line}:{col}: error[S002]: cannot read the order `A MAR CHARGES SPA`"), err
    assert f"{line:>4} | {text.splitlines()[line - 1]}" in err and "= pointer: /orders/" in err, err


def test_replay_given_an_orders_file_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """An orders file given to replay by mistake printed schema errors (`'units' is a required
    property`); it is named for what it is, with the command that plays it."""
    monkeypatch.chdir(ROOT)
    code, out, err = _run("replay", STANDARD, "docs/examples/game/orders.yaml")
    assert (code, out) == (3, ""), err
    assert "error[S001]: this is an orders file (entries of `phase` and `orders`), not a record of states" in err
    assert "--orders FILE" in err and "required property" not in err


@pytest.mark.parametrize(("case", "said"), [
    ("bad-state.attacker-from-not-a-neighbour", "`MOS` does not border `BUR`"),
    ("bad-state.attacker-from-own-province", "`Burgundy` is where the dislodged unit stands")])
def test_an_attackers_impossible_origin_is_refused_at_its_pointer(case: str, said: str) -> None:
    """The text-audit cases of an origin no attack could come from expect S002 alone: here, that it is
    the origin's own check that refuses them (DIP-R1, DIP-M1), at the origin's pointer, and nothing else."""
    cases = {c["id"]: c for c in yaml.safe_load((ROOT / "tests/cases/diplomacy/text_audit.yaml").read_text())["cases"]}
    found = load_ruleset(ROOT / "rulesets/diplomacy/standard.rules").state_errors(cases[case]["state"])
    assert [(d.code, d.pointer) for d in found] == [("S002", "/dislodged/0/attacker_from")]
    assert found[0].message.startswith(said), found[0].message
