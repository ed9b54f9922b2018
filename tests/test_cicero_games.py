"""Forty real games, played by people on webDiplomacy in 2022 with one seat taken by Meta's Cicero,
replayed under the standard rules (rulesets/diplomacy/standard.rules). The records are the
saved games Meta published with Cicero (tests/records/cicero/SOURCE.md), written by dipcc, the
engine that adjudicated them for the record; they are imported by bench/peers/dpjudge/saved_game.py.

Every game replays phase by phase with no difference, but where the record's engine reads the rules
otherwise, and each such game is tested to depart there, for that reason:

- DATC 4.D.8 (civil disorder removals). The last winter of most games was not played (no orders
  at all): dipcc removes the units a power owes farthest from its home centres, an army's distance
  and a fleet's each over its own moves; standard.rules removes those farthest from any centre the
  power owns, counting moves over land and sea for both (the 2023 rules, the reading DATC 4.D.8
  prefers). The package's reading (bench/peers/readings/maps/standard.rules), which counts from the
  home centres, computes the record's next state there. (dipcc: `GameState::do_civil_disorder`,
  dipcc/cc/game_state.cc, with its tables of distances to home centres, one for each unit type.)
- DATC 4.A.3 (an army moved to an adjacent province while a fleet of its own power convoys it).
  dipcc moves it over land unless its order says `VIA`; the standard rules take the convoy order
  as the army's intent, so a swap by convoy (DATC 6.G.1) succeeds. (dipcc's adjudicator.cc takes a
  move without `VIA` as a land move and a convoy for it, to an adjacent place, as uncoordinated.)

dipcc's reading (bench/peers/readings/dipcc.rules: the standard rules with those two clauses read
dipcc's way) replays all 40 games with no difference. The `diplomacy` package's reading does not:
dipcc saves games in the package's format but is not the package, and where the package lists every
neighbour as a retreat of a unit dislodged by a convoyed army (DATC 4.A.5), dipcc follows the rules.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from bench.peers.dpjudge import saved_game
from bench.peers.dpjudge.full_games import ruleset_path
from validator import load_ruleset
from validator.api import Mismatch, ReplayNote, replay

ROOT = Path(__file__).resolve().parent.parent
RECORDS = ROOT / "tests" / "records" / "cicero"
GAMES = sorted(RECORDS.glob("game_*.json"))

# the games whose record departs from the standard rules, the phase where, and the DATC clause
# that decides it (the module's docstring says how each engine reads it)
DEPARTS = {
    **{f"game_{g}": ("W1908A", "DATC-4.D.8") for g in (
        "433761_ENGLAND_AG", "433920_RUSSIA_EI", "433967_ENGLAND_IT", "434015_GERMANY_AF",
        "434119_AUSTRIA_FRT", "434170_TURKEY_FIR", "435440_ENGLAND_AR", "435605_RUSSIA_EFGT",
        "437697_ENGLAND_GR", "438141_FRANCE_EGR", "439679_ITALY_R", "441488_ENGLAND_FGIT",
        "443556_FRANCE_AI", "443831_GERMANY_EI", "444322_AUSTRIA_ER", "445034_RUSSIA_AFGIT",
        "445663_RUSSIA_A", "447784_ITALY_RT", "448105_ENGLAND_AG", "448741_ITALY_ERT",
        "449418_ENGLAND_GRT")},
    "game_443777_ENGLAND_AIT": ("F1907M", "DATC-4.A.3"),
}


@cache
def standard() -> Any:
    return load_ruleset(ruleset_path("standard"))


@cache
def package() -> Any:
    return load_ruleset(ruleset_path("standard", reading=True))


@cache
def dipcc() -> Any:
    return load_ruleset(ROOT / "bench" / "peers" / "readings" / "dipcc.rules")


@cache
def saved(stem: str) -> dict[str, Any]:
    return json.loads((RECORDS / f"{stem}.json").read_text(encoding="utf-8"))


@cache
def states(stem: str) -> list[dict[str, Any]]:
    return saved_game.records(saved(stem), stem)


@cache
def replayed(stem: str) -> tuple[int, Mismatch | None, list[ReplayNote]]:
    notes: list[ReplayNote] = []
    count, mismatch = replay(standard(), copy.deepcopy(states(stem)), notes=notes)
    return count, mismatch, notes


def name(state: dict[str, Any]) -> str:
    p = state["phase"]
    return f"{p['season'][0].upper()}{p['year']}{p['type'][0].upper()}"


def test_the_records_are_the_forty_games_and_name_their_source() -> None:
    assert len(GAMES) == 40 and set(DEPARTS) <= {p.stem for p in GAMES}
    source = (RECORDS / "SOURCE.md").read_text(encoding="utf-8")
    assert "MIT" in source and all(p.name in source for p in GAMES)


@pytest.mark.parametrize("stem", [p.stem for p in GAMES])
def test_each_game_replays_under_the_standard_rules_or_departs_where_its_engine_reads_them_otherwise(stem: str) -> None:
    count, mismatch, notes = replayed(stem)
    played = len(states(stem)) - 1
    skipped = sum(n.kind == "skipped" for n in notes)  # retreat phases whose units had no retreat
    # what replay took from the rules rather than compared: only what dipcc does not save
    derived = {f.rsplit("/", 1)[-1] for n in notes if n.kind == "derived" for f in n.fields}
    assert derived <= {"attacker_from", "attacker_via_convoy", "standoffs"}, derived
    assert {n.kind for n in notes} <= {"derived", "skipped", "unplayed"}, [n.text() for n in notes]
    if stem not in DEPARTS:
        assert mismatch is None and count + skipped == played, (count, mismatch)
        return
    phase, _ = DEPARTS[stem]
    assert mismatch is not None and mismatch.phase == phase, mismatch
    # every phase before it was played and agreed
    before = [name(s) for s in states(stem)].index(phase)
    assert count + sum(n.kind == "skipped" and n.phase is not None and
                       [name(s) for s in states(stem)].index(n.phase) < before for n in notes) == before


CIVIL_DISORDER = [g for g, (_, why) in DEPARTS.items() if why == "DATC-4.D.8"]


def _units(state: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(u["power"], u["type"], u["location"]) for u in state["units"]}


@pytest.mark.parametrize("stem", CIVIL_DISORDER)
def test_the_last_winter_departs_only_in_which_units_civil_disorder_removes(stem: str) -> None:
    """DATC 4.D.8: the winter's state is played with no orders at all; the record and the standard
    rules remove as many units of each power as it owes (its units beyond its centres), of its own
    units, and differ only in which; the package's reading, which measures from the home centres as
    dipcc does, removes the record's."""
    _, mismatch, _ = replayed(stem)
    assert mismatch is not None
    ss = states(stem)
    i = [name(s) for s in ss].index(mismatch.phase)
    winter, after = ss[i], ss[i + 1]
    assert winter["phase"]["type"] == "adjustment" and winter["orders"] == []
    assert all(pointer.startswith("/units") for pointer, _, _ in mismatch.differences), mismatch
    computed = standard().run(copy.deepcopy(winter), "advance")["next"]
    owed = {p: sum(u["power"] == p for u in winter["units"]) - list(winter["supply_centers"].values()).count(p)
            for p in {u["power"] for u in winter["units"]}}
    differing = {u[0] for u in _units(computed) ^ _units(after)}
    assert differing and all(owed[p] > 0 for p in differing), (differing, owed)
    for p in differing:
        mine = {u for u in _units(winter) if u[0] == p}
        for result in (_units(computed), _units(after)):
            kept = {u for u in result if u[0] == p}
            assert kept < mine and len(mine) - len(kept) == owed[p]
    for reading in (package(), dipcc()):
        assert _units(reading.run(copy.deepcopy(winter), "advance")["next"]) == _units(after)


def test_an_army_convoyed_by_its_own_fleet_swaps_with_the_unit_ahead_of_it_under_the_standard_rules() -> None:
    """DATC 4.A.3 and 6.G.1: in F1907M of game 443777 Turkey orders `A CON - BUL` (no `VIA`),
    `F AEG C A CON - BUL` and `F BUL/EC - CON`. The standard rules carry the army by sea (its own
    fleet convoys it) and the two units swap; dipcc moves it over land, a head-to-head fight two
    units of one power lose, and both stay. The game agrees again from the retreat phase after it."""
    stem = "game_443777_ENGLAND_AIT"
    _, mismatch, _ = replayed(stem)
    assert mismatch is not None and mismatch.phase == "F1907M"
    assert sorted((rec, comp) for _, rec, comp in mismatch.differences) == [("bul/ec", "con"), ("con", "bul")]
    ss = states(stem)
    i = [name(s) for s in ss].index("F1907M")
    orders = {r["order"]: r for r in standard().run(copy.deepcopy(ss[i]), "advance")["result"]["orders"]}
    assert orders["A CON - BUL"]["status"] == "succeeds" and orders["F BUL/EC - CON"]["status"] == "succeeds"
    assert orders["F AEG C A CON - BUL"]["status"] == "succeeds"
    assert replay(dipcc(), copy.deepcopy(ss[i: i + 2]))[1] is None  # dipcc's reading: both stay
    count, rest = replay(standard(), copy.deepcopy(ss[i + 1:]))
    assert rest is None and count > 0


def test_the_engines_retreats_are_compared_and_a_wrong_one_is_found() -> None:
    """dipcc saves no results, so the importer leaves each dislodged unit's attacker and the standoffs
    to the rules (replay derives and names them) but keeps the retreats dipcc allowed, which replay
    compares with the rules': hundreds of them agree, and one changed is found."""
    dislodged = [d for p in GAMES for s in states(p.stem) if s["phase"]["type"] == "retreat" for d in s["dislodged"]]
    assert len(dislodged) > 300 and all(d["retreats"] and "attacker_from" not in d for d in dislodged)
    stem = "game_433761_ENGLAND_AG"  # F1902R: Russia's F SWE may retreat to BAL, BOT or FIN
    ss = copy.deepcopy(states(stem))
    i = [name(s) for s in ss].index("F1902R")
    assert ss[i]["dislodged"] == [{"power": "russia", "type": "fleet", "location": "swe", "retreats": ["bal", "bot", "fin"]}]
    ss[i]["dislodged"][0]["retreats"].append("nwy")  # England's army stands there
    count, mismatch = replay(standard(), ss[: i + 1])
    assert mismatch is not None and mismatch.phase == "F1902M", mismatch
    assert [(p, r) for p, r, _ in mismatch.differences] == [("/dislodged/0/retreats", "nwy")], mismatch


def test_a_unit_dislodged_with_no_retreat_is_no_unit_of_the_retreat_phase() -> None:
    """DIP-R1: a dislodged unit with nowhere to go is disbanded. dipcc keeps it in the retreat phase
    (no retreats, and a `D` order for it); the importer leaves both out, and the rules, which disband
    it at once, agree (game 433762, S1902R: Germany's A HOL, dislodged by England's A BEL)."""
    game = saved("game_433762_ITALY_AEFT")
    raw = next(p for p in game["phases"] if p["name"] == "S1902R")
    assert raw["state"]["retreats"]["GERMANY"] == {"A HOL": []} and raw["orders"]["GERMANY"] == ["A HOL D"]
    ss = states("game_433762_ITALY_AEFT")
    i = [name(s) for s in ss].index("S1902R")
    assert [d["location"] for d in ss[i]["dislodged"]] == ["ruh"]
    assert [o["order"] for o in ss[i]["orders"]] == ["A RUH R BEL"]
    assert replay(standard(), copy.deepcopy(ss[i - 1: i + 2]))[1] is None


@pytest.mark.parametrize("stem, winner", [("game_439643_ENGLAND_T", "france"), ("game_449062_TURKEY_AFI", "austria")])
def test_a_game_won_outright_ends_where_the_record_does(stem: str, winner: str) -> None:
    """DIP-G3: two games end before their last winter: dipcc saves the position after the last retreat
    phase under `COMPLETED`, which names no phase (the importer stops before it). Played under the
    standard rules, that retreat phase ends the game with the winner holding 18 centres or more, and
    gives the saved units and centres."""
    game = saved(stem)
    assert game["phases"][-1]["name"] == "COMPLETED"
    final = game["phases"][-1]["state"]
    out = standard().run(copy.deepcopy(states(stem)[-1]), "advance")
    assert out["end"] is not None and out["end"].get("winner") == winner, out["end"]
    assert len(final["centers"][winner.upper()]) >= 18
    assert _units(out["next"]) == {(p.lower(), {"A": "army", "F": "fleet"}[u[0]], u[2:].lower())
                                   for p, us in final["units"].items() for u in us}
    assert out["next"]["supply_centers"] == {c.lower(): p.lower() for p, cs in final["centers"].items() for c in cs}


@pytest.mark.parametrize("retreats", [["A PAR"], {"FRANCE": ["A PAR"]}, {"FRANCE": {"A PAR": "BUR"}},
                                      {"FRANCE": {"A PAR": [3]}}, {"FRANCE": {"X PAR": ["BUR"]}}])
def test_dipcc_retreats_of_another_shape_are_an_error_line_not_a_traceback(tmp_path: Path, capsys, retreats: Any) -> None:
    game = {"map": "standard", "phases": [
        {"name": "S1901M", "orders": {"FRANCE": ["A PAR - BUR"]}, "results": {}, "state": {"units": {"FRANCE": ["A PAR"]}}},
        {"name": "S1901R", "orders": {}, "results": {}, "state": {"units": {"FRANCE": ["*A PAR"]}, "retreats": retreats}}]}
    path = tmp_path / "game.json"
    path.write_text(json.dumps(game), encoding="utf-8")
    assert saved_game.main([str(path), "-o", str(tmp_path / "r.jsonl")]) == 3
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "S1901R" in err and "Traceback" not in err, err


def test_dipccs_reading_checks_clean_and_overrides_only_the_two_clauses() -> None:
    rules = dipcc()
    assert rules.ok and rules.diagnostics == [], [d.message for d in rules.diagnostics]
    text = (ROOT / "bench" / "peers" / "readings" / "dipcc.rules").read_text(encoding="utf-8")
    overrides = [line.split(" cite ")[1].split()[0] for line in text.splitlines() if line.startswith("override rule")]
    assert overrides == ['"DATC-4.D.8"', '"DATC-4.D.8"', '"DATC-4.A.3"'], overrides


@pytest.mark.parametrize("stem", [p.stem for p in GAMES])
def test_each_game_replays_with_no_difference_under_dipccs_reading(stem: str) -> None:
    """The strongest statement the records allow: the standard rules with DATC 4.D.8 and 4.A.3 read as
    dipcc reads them (bench/peers/readings/dipcc.rules, each read in dipcc's source) compute every
    phase of every game as dipcc saved it, taking from the rules only what dipcc does not save."""
    notes: list[ReplayNote] = []
    count, mismatch = replay(dipcc(), copy.deepcopy(states(stem)), notes=notes)
    skipped = sum(n.kind == "skipped" for n in notes)
    derived = {f.rsplit("/", 1)[-1] for n in notes if n.kind == "derived" for f in n.fields}
    assert mismatch is None and count + skipped == len(states(stem)) - 1, (count, mismatch)
    assert derived <= {"attacker_from", "attacker_via_convoy", "standoffs"}, derived
    assert {n.kind for n in notes} <= {"derived", "skipped", "unplayed"}, [n.text() for n in notes]


def departures(rules: Any, stem: str) -> list[tuple[Mismatch, dict[str, Any], dict[str, Any]]]:
    """Every phase of a game whose next state `rules` computes otherwise than the record, each with the
    next state the rules compute there and the record's: the game replayed, and after each difference replayed again from
    the record's next phase on (a retreat phase the record kept with no retreat is passed over)."""
    ss = states(stem)
    names = [name(s) for s in ss]
    found: list[tuple[Mismatch, dict[str, Any], dict[str, Any]]] = []
    k = 0
    while k < len(ss) - 1:
        _, mismatch = replay(rules, copy.deepcopy(ss[k:]))
        if mismatch is None:
            break
        i = names.index(mismatch.phase)
        found.append((mismatch, rules.run(copy.deepcopy(ss[i]), "advance")["next"], ss[i + 1]))
        k = i + 1
        while k < len(ss) - 1 and ss[k]["phase"]["type"] == "retreat" and not ss[k]["dislodged"]:
            k += 1
    return found


def test_the_packages_reading_departs_from_dipcc_only_where_a_convoyed_army_dislodges_a_unit() -> None:
    """The `diplomacy` package's reading (bench/peers/readings/maps/standard.rules) computes dipcc's
    civil disorder (DATC 4.D.8), but departs from the records elsewhere: in every such phase, and only
    there, a unit was dislodged by an army that came by convoy, and the package, which lists every place
    next to such a unit among its retreats (DATC 4.A.5), gives it retreats dipcc, as the rules, refuses
    (places occupied, or left empty by a standoff), or a retreat where dipcc disbands it. In one of them
    (443777, F1907M) the package also carries an army convoyed by its own fleet without `VIA`, as the
    rules do (DATC 4.A.3), where dipcc moves it over land."""
    by_game = {p.stem: departures(package(), p.stem) for p in GAMES}
    # the figures bench/peers/README.md gives: 28 phases of 20 games
    assert (sum(map(len, by_game.values())), sum(map(bool, by_game.values()))) == (28, 20)
    for stem, found in by_game.items():
        for mismatch, computed, recorded_next in found:
            where = f"{stem} {mismatch.phase}"
            by_convoy = {d["location"]: d for d in computed["dislodged"] if d.get("attacker_via_convoy")}
            assert by_convoy, where
            units = [(r, c) for p, r, c in mismatch.differences if not p.startswith("/dislodged")]
            assert units == [] or (where == "game_443777_ENGLAND_AIT F1907M"
                                   and sorted(units) == [("bul/ec", "con"), ("con", "bul")]), (where, units)
            for pointer, recorded, comp in mismatch.differences:
                if not pointer.startswith("/dislodged"):
                    continue
                # only more retreats than dipcc's, of a unit a convoyed army dislodged
                assert recorded == "(not recorded)", (where, pointer, recorded)
                if isinstance(comp, dict):  # a unit dipcc disbanded, having nowhere to retreat
                    assert comp["location"] in by_convoy, (where, comp)
                    continue
                # a retreat dipcc does not list for the unit under the record's index
                unit = recorded_next["dislodged"][int(pointer.split("/")[2])]
                assert unit["location"] in by_convoy and comp not in unit["retreats"], (where, unit, comp)
                assert comp in by_convoy[unit["location"]]["retreats"], (where, unit, comp)


def test_how_often_the_reading_of_datc_4d8_changes_a_real_game() -> None:
    """The errata question on real data (docs/errata.md): of the 40 games' winters, how many does the
    reading of DATC 4.D.8 decide, and in how many do the two readings (the standard rules: farthest
    from any owned centre; dipcc's: from the home centres) remove other units? Civil
    disorder decides only the last winter, played with no orders, in 31 games; the readings part in
    21, the games the standard rules' replay departs in (DEPARTS)."""
    winters = disorder = 0
    differ = set()
    for p in GAMES:
        for s in states(p.stem)[:-1]:
            if s["phase"]["type"] != "adjustment":
                continue
            winters += 1
            owners = list(s["supply_centers"].values())
            owed = {pw: sum(u["power"] == pw for u in s["units"]) - owners.count(pw) for pw in {u["power"] for u in s["units"]}}
            ordered = {pw: sum(o["power"] == pw and o["order"].endswith(" D") for o in s["orders"]) for pw in owed}
            if all(owed[pw] <= ordered[pw] for pw in owed):
                continue  # every power that owed removals ordered them: no civil disorder
            assert s["orders"] == [], (p.stem, name(s))  # only in the last winter, which no one played
            disorder += 1
            ours, theirs = (_units(rules.run(copy.deepcopy(s), "advance")["next"]) for rules in (standard(), dipcc()))
            if ours != theirs:
                differ.add(p.stem)
    assert (winters, disorder, len(differ)) == (315, 31, 21)
    assert differ == set(CIVIL_DISORDER)


MORE = RECORDS / "more"


@cache
def france_austria() -> Any:
    return load_ruleset(ROOT / "rulesets" / "diplomacy" / "standard_france_austria.rules")


@cache
def more_states(stem: str) -> list[dict[str, Any]]:
    return saved_game.records(json.loads((MORE / f"{stem}.json").read_text(encoding="utf-8")), stem)


@pytest.mark.parametrize("stem, rules", [
    ("311223_s1911m", standard), ("311223_s1911m", dipcc),
    ("game_fva_order_idx_with_coasts_test", france_austria), ("game_fva_order_idx_with_coasts_test", dipcc)])
def test_the_repositorys_two_other_games_replay_with_no_difference(stem: str, rules: Any) -> None:
    """Two more games dipcc saved in the same repository (SOURCE.md): a no-press game on the standard
    map to S1911M, and a France-Austria game (dipcc's `fva`: the standard board with only those two
    powers) to S1908M. Neither plays a phase where the standard rules and dipcc's reading part: both
    replay them to the end; the France-Austria game under the package's France-Austria ruleset, whose
    start is the game's."""
    ss = more_states(stem)
    notes: list[ReplayNote] = []
    count, mismatch = replay(rules(), copy.deepcopy(ss), notes=notes)
    skipped = sum(n.kind == "skipped" for n in notes)
    assert mismatch is None and count + skipped == len(ss) - 1 and count > 25, (count, mismatch)
    derived = {f.rsplit("/", 1)[-1] for n in notes if n.kind == "derived" for f in n.fields}
    assert derived <= {"attacker_from", "attacker_via_convoy", "standoffs"}, derived
    assert {n.kind for n in notes} <= {"derived", "skipped", "unplayed"}, [n.text() for n in notes]


def test_the_france_austria_game_starts_where_the_packages_france_austria_ruleset_does() -> None:
    first = more_states("game_fva_order_idx_with_coasts_test")[0]
    start = france_austria().run(copy.deepcopy(first), "start_state")
    assert (_units(start), start["supply_centers"], start["phase"]) == (_units(first), first["supply_centers"], first["phase"])
    assert {u[0] for u in _units(first)} == {"france", "austria"}
