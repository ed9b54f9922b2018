"""Diplomacy family: the DATC text importer (a query of the ruleset) run through the CLI, and the
variant rulesets load and check."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from validator import load_ruleset
from validator.api import RunError
from validator.tools.cli import main

ROOT = Path(__file__).resolve().parent.parent
DIP = ROOT / "rulesets" / "diplomacy"
SAMPLE = ROOT / "tests" / "cases" / "diplomacy" / "datc_sample.txt"
PHASES = ROOT / "tests" / "cases" / "diplomacy" / "datc_phases.txt"


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_datc_text_import_runs_every_sample_case() -> None:
    code, out, err = _run("test", "--import", "datc_cases", "--ruleset", str(DIP / "datc_text.rules"),
                          "--format", "json", str(SAMPLE))
    assert code == 0, out + err
    report = json.loads(out)
    assert report["summary"]["passed"] == 5
    assert report["summary"]["failed"] == 0 and report["summary"]["error"] == 0
    assert [c["id"] for c in report["cases"]] == ["6.A.1", "6.A.2", "6.A.6", "6.A.11", "6.A.12"]


def test_datc_text_import_builds_project_cases() -> None:
    rs = load_ruleset(str(DIP / "datc_text.rules"))
    cases = rs.run({}, query="datc_cases", args=[SAMPLE.read_text(encoding="utf-8")], validate=False)
    first = cases[0]
    assert first["state"]["phase"] == {"season": "spring", "year": 1901, "type": "movement"}
    assert first["state"]["orders"] == [{"power": "england", "order": "F nth-pic"}]
    assert first["expect"] == {"units": [{"power": "england", "type": "fleet", "location": "nth"}]}


def test_datc_text_import_runs_retreat_and_adjustment_cases() -> None:
    # retreats with only PRESTATE_RESULTS (no standoff list), a unit destroyed at once, adjustments
    # labelled `Fall ..., Adjustment`: each case runs and ends where the file says
    code, out, err = _run("test", "--import", "datc_cases", "--ruleset", str(DIP / "datc_text.rules"),
                          "--format", "json", str(PHASES))
    assert code == 0, out + err
    report = json.loads(out)
    assert [(c["id"], c["status"]) for c in report["cases"]] == [
        (i, "passed") for i in ("R.1", "R.2", "R.3", "R.4", "R.5", "R.6", "R.7", "A.1", "A.2")]


# other programs' test data in the DATC text format (godip's copies of jDip's and its own, jDip's), with
# the number of cases each holds: every case is read and ends where its source says (or, where the
# source follows another DATC choice, where ours does: the case says so)
OTHER_PROGRAMS = {"godip_dipai.txt": 9, "godip_diplicity_errors.txt": 1, "godip_droidippy_errors.txt": 4,
                  "godip_real.txt": 4, "jdip_explicit_convoys.txt": 8}


@pytest.mark.parametrize("name", sorted(OTHER_PROGRAMS))
def test_datc_text_cases_of_other_programs_pass(name: str) -> None:
    code, out, err = _run("test", "--import", "datc_cases", "--ruleset", str(DIP / "datc_text.rules"),
                          "--format", "json", str(SAMPLE.parent / name))
    assert code == 0, out + err
    report = json.loads(out)
    assert report["summary"]["passed"] == OTHER_PROGRAMS[name], report["summary"]
    assert all(c["id"].startswith(name.split("_")[0] + "-") for c in report["cases"])


def test_jdip_datc_section_11_runs_under_the_build_anywhere_rules(tmp_path: Path) -> None:
    # jDip's section 11 (build anywhere) read by the importer that extends build_anywhere.rules: its one
    # case, on jDip's Chaos powers, shows as xfail naming them; a case on the map's powers runs under
    # those rules (a build in an owned centre that is no home centre succeeds, as standard.rules refuses)
    ruleset = str(DIP / "datc_text_build_anywhere.rules")
    code, out, err = _run("test", "--import", "datc_cases", "--ruleset", ruleset, "--format", "json",
                          str(SAMPLE.parent / "jdip_datc_11.txt"))
    assert code == 0, out + err
    report = json.loads(out)
    assert [(c["id"], c["status"]) for c in report["cases"]] == [("jdip-11.A [Civil Disorder]", "xfailed")]
    assert "the case's powers c_ber are not the map's" in report["cases"][0]["message"]
    text = tmp_path / "build.txt"
    text.write_text("CASE build-in-warsaw\nPRESTATE_SETPHASE Fall 1901, Adjustment\nPRESTATE_SUPPLYCENTER_OWNERS\n"
                    "Germany: war\nGermany: ber\nPRESTATE\nGermany: A ber\nORDERS\nGermany: Build A war\n"
                    "POSTSTATE\nGermany: A ber\nGermany: A war\nEND\n", encoding="utf-8")
    code, out, err = _run("test", "--import", "datc_cases", "--ruleset", ruleset, str(text))
    assert code == 0 and "1 passed, 0 failed" in out + err, out + err
    code, out, err = _run("test", "--import", "datc_cases", "--ruleset", str(DIP / "datc_text.rules"), str(text))
    assert code == 1 and "0 passed, 1 failed" in out + err, out + err


def _import(text: str) -> list[dict]:
    rs = load_ruleset(str(DIP / "datc_text.rules"))
    return rs.run({}, query="datc_cases", args=[text], validate=False)


def test_datc_text_reads_what_other_programs_write() -> None:
    # a case name of several words; a unit line without its colon; supply-centre owners with a unit or
    # without; POSTSTATE_DISLODGED becomes the expected dislodged units (those that must retreat)
    [case] = _import("CASE Convoy via spa/nc\nPRESTATE_SETPHASE Fall 1901, Movement\nPRESTATE\n\tItaly F gol\n"
                     "PRESTATE_SUPPLYCENTER_OWNERS\n\tFrance: A bre\n\tItaly: nap\nORDERS\n\tItaly: F gol H\n"
                     "POSTSTATE\n\tItaly: F gol\nPOSTSTATE_DISLODGED\n\tFrance: F stp/sc\nEND\n")
    assert case["id"] == "Convoy via spa/nc"
    assert case["state"]["units"] == [{"power": "italy", "type": "fleet", "location": "gol"}]
    assert case["state"]["supply_centers"] == {"bre": "france", "nap": "italy"}
    assert case["expect"]["dislodged"] == [{"power": "france", "type": "fleet", "location": "stp/sc"}]
    # an empty POSTSTATE_DISLODGED expects none; without the section, nothing is said of them
    [empty] = _import("CASE x\nPRESTATE\n\tItaly: F gol\nORDERS\nPOSTSTATE_SAME\nPOSTSTATE_DISLODGED\nEND\n")
    assert empty["expect"]["dislodged"] == []
    [unsaid] = _import("CASE x\nPRESTATE\n\tItaly: F gol\nORDERS\nPOSTSTATE_SAME\nEND\n")
    assert "dislodged" not in unsaid["expect"]


def test_datc_text_short_phase_name_and_the_start_s_owners() -> None:
    # `F1901B` is the winter of 1901 (it was read as no phase: a spring movement); a case without
    # PRESTATE_SUPPLYCENTER_OWNERS keeps the map's owners at the start (it had none: France could build nothing)
    [case] = _import("CASE a\nPRESTATE_SETPHASE F1901B\nPRESTATE\n\tFrance: A par\nORDERS\n\tFrance: Build A mar\n"
                     "POSTSTATE\n\tFrance: A par\n\tFrance: A mar\nEND\n")
    assert case["state"]["phase"] == {"season": "winter", "year": 1901, "type": "adjustment"}
    assert case["state"]["supply_centers"]["mar"] == "france" and len(case["state"]["supply_centers"]) == 22
    assert [_import(f"CASE x\nPRESTATE_SETPHASE {p}\nPRESTATE\nORDERS\nPOSTSTATE\nEND\n")[0]["state"]["phase"]
            for p in ("S1902R", "f1903m")] == [{"season": "spring", "year": 1902, "type": "retreat"},
                                                {"season": "fall", "year": 1903, "type": "movement"}]
    # owners given: only those
    [given] = _import("CASE a\nPRESTATE_SETPHASE F1901B\nPRESTATE_SUPPLYCENTER_OWNERS\n\tFrance: par\nEND\n")
    assert given["state"]["supply_centers"] == {"par": "france"}


def test_datc_text_retreat_without_results_may_go_anywhere_empty() -> None:
    # no PRESTATE_RESULTS: no attacker and no standoff are known, so the unit may retreat to every
    # place it could move to that no unit holds (it was refused for want of `attacker_from`)
    [case] = _import("CASE r\nPRESTATE_SETPHASE Spring 1902, Retreat\nPRESTATE\n\tFrance: A mun\n\tFrance: A kie\n"
                     "PRESTATE_DISLODGED\n\tGermany: A mun\nORDERS\n\tGermany: A mun-boh\nPOSTSTATE\n"
                     "\tFrance: A mun\n\tFrance: A kie\n\tGermany: A boh\nEND\n")
    assert case["state"]["dislodged"] == [{"power": "germany", "type": "army", "location": "mun",
                                           "retreats": ["ber", "boh", "bur", "ruh", "sil", "tyr"]}]
    [fleet] = _import("CASE r\nPRESTATE_SETPHASE Spring 1902, Retreat\nPRESTATE\n\tEngland: F bot\n"
                      "PRESTATE_DISLODGED\n\tRussia: F stp/sc\nORDERS\nPOSTSTATE\n\tEngland: F bot\nEND\n")
    assert fleet["state"]["dislodged"][0]["retreats"] == ["fin", "lvn"]


def _phase_cases() -> dict[str, dict]:
    rs = load_ruleset(str(DIP / "datc_text.rules"))
    cases = rs.run({}, query="datc_cases", args=[PHASES.read_text(encoding="utf-8")], validate=False)
    return {c["id"]: c for c in cases}


def test_datc_text_retreat_states_hold_what_the_results_imply() -> None:
    cases = _phase_cases()
    r1 = cases["R.1"]["state"]
    assert r1["phase"] == {"season": "spring", "year": 1902, "type": "retreat"}
    assert r1["standoffs"] == ["boh"]
    assert r1["dislodged"] == [{"power": "germany", "type": "army", "location": "mun",
                                "attacker_from": "bur", "attacker_via_convoy": False}]
    # convoyed attacker (said, or implied by a move between provinces that do not border)
    assert cases["R.4"]["state"]["dislodged"][0]["attacker_via_convoy"] is True
    assert cases["R.5"]["state"]["standoffs"] == []
    # a head-to-head loser bounces no one where it was going
    assert cases["R.6"]["state"]["standoffs"] == []
    # the unit destroyed at once is dislodged with no retreat
    assert cases["R.7"]["state"]["dislodged"] == [{"power": "austria", "type": "fleet", "location": "tri",
                                                   "retreats": [], "attacker_from": "ven",
                                                   "attacker_via_convoy": False}]


def test_datc_text_adjustment_labelled_fall_is_that_year_s_winter() -> None:
    cases = _phase_cases()
    assert cases["A.1"]["state"]["phase"] == {"season": "winter", "year": 1901, "type": "adjustment"}
    assert cases["A.2"]["state"]["phase"] == {"season": "winter", "year": 1902, "type": "adjustment"}
    assert "standoffs" not in cases["A.1"]["state"] and "dislodged" not in cases["A.1"]["state"]


def test_variants_check() -> None:
    for name in ("standard", "all_hold", "teaching"):
        rs = load_ruleset(str(DIP / f"{name}.rules"))
        assert rs.ok, [d.message for d in rs.diagnostics]


def test_unreadable_order_is_a_located_diagnostic_naming_what_was_expected(tmp_path: Path) -> None:
    state = {"phase": {"season": "spring", "year": 1901, "type": "movement"},
             "units": [{"power": "france", "type": "army", "location": "par"}],
             "orders": [{"power": "france", "order": "A PAR - BUR"}, {"power": "france", "order": "A PAR GO SOMEWHERE"}]}
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state))
    code, out, err = _run("run", "--format", "json", str(DIP / "standard.rules"), "--state", str(path))
    assert code == 3, (code, out, err)
    [diag] = json.loads(out)
    assert diag["code"] == "S002" and diag["pointer"] == "/orders/1/order"
    assert "A PAR GO SOMEWHERE" in diag["message"] and "expected" in diag["message"] and "A PAR - BUR" in diag["message"]


def test_two_units_in_one_province_are_reported_at_the_later_one() -> None:
    rs = load_ruleset(str(DIP / "standard.rules"))
    units = [{"power": "france", "type": "army", "location": "par"},
             {"power": "france", "type": "army", "location": "bur"},
             {"power": "germany", "type": "fleet", "location": "stp/nc"},
             {"power": "russia", "type": "army", "location": "stp"},
             {"power": "germany", "type": "army", "location": "PAR"}]
    state = {"phase": {"season": "spring", "year": 1901, "type": "movement"}, "units": units, "orders": []}
    found = rs.state_errors(state)
    assert [(d.code, d.pointer) for d in found] == [("S002", "/units/3/location"), ("S002", "/units/4/location")]
    assert "two units in `STP`" in found[0].message and "two units in `PAR`" in found[1].message
    # cited by the clauses that keep a province to one unit: those who try to enter one all stay out
    # (DIP-S1) unless one dislodges the unit there (DIP-P2); not DIP-S3, which is about blocked moves
    assert all(str(d.schema_rule).endswith("(DIP-S1, DIP-P2)") for d in found), [d.schema_rule for d in found]
    # the JSON Schema alone accepts it: `state_schema_errors` runs no rule (the API's two names say which)
    assert rs.state_schema_errors(state) == []
    # one unit a province: nothing to report, and the run goes ahead
    assert rs.state_errors(dict(state, units=units[:3])) == []
    assert len(rs.run(dict(state, units=units[:3]))["units"]) == 3


def test_an_army_on_a_coast_is_refused_at_its_location() -> None:
    """Coasts are for fleets (DIP-M6, DIP-MAP1): an army written on one (`spa/nc`) was read as the
    province and played. It is a mistyped state, refused at its pointer, in `units` and `dislodged`
    alike, with a message that says what to write; the same army in its province is accepted."""
    rs = load_ruleset(str(DIP / "standard.rules"))
    state = {"phase": {"season": "spring", "year": 1901, "type": "movement"},
             "units": [{"power": "france", "type": "fleet", "location": "por"},
                       {"power": "france", "type": "army", "location": "spa/nc"},
                       {"power": "russia", "type": "army", "location": "StP (sc)"}], "orders": []}
    found = rs.state_errors(state)
    assert [(d.code, d.pointer) for d in found] == [("S002", "/units/1/location"), ("S002", "/units/2/location")]
    assert "an army stands in a province, never on a coast" in found[0].message
    assert "`spa`" in found[0].message and "`spa/nc`" in found[0].message and "`stp`" in found[1].message
    assert all("(DIP-MAP1, DIP-M6)" in str(d.schema_rule) for d in found), [d.schema_rule for d in found]
    fixed = dict(state, units=[dict(u, location=u["location"].split("/")[0].split(" ")[0]) for u in state["units"]])
    assert rs.state_errors(fixed) == []
    retreat = {"phase": {"season": "spring", "year": 1901, "type": "retreat"},
               "units": [{"power": "germany", "type": "army", "location": "spa"}],
               "dislodged": [{"power": "france", "type": "army", "location": "spa/sc", "attacker_from": "gas"}],
               "standoffs": [], "orders": []}
    assert [(d.code, d.pointer) for d in rs.state_errors(retreat)] == [("S002", "/dislodged/0/location")]


def test_a_misplaced_unit_cites_the_clause_its_place_breaks() -> None:
    """Each place problem of a state cites its own clause: every one cited DIP-M7 (Switzerland and
    unnamed areas) whatever it was, an army at sea as much as a place no map has."""
    rs = load_ruleset(str(DIP / "standard.rules"))
    cases = [("army", "nth", "DIP-M2"), ("fleet", "mun", "DIP-M4"), ("fleet", "spa", "DIP-M6"),
             ("fleet", "bre/nc", "DIP-M6"), ("army", "atlantis", "DIP-M7")]
    state = {"phase": {"season": "spring", "year": 1901, "type": "movement"},
             "units": [{"power": "france", "type": t, "location": at} for t, at, _ in cases], "orders": []}
    found = rs.state_errors(state)
    assert [d.pointer for d in found] == [f"/units/{i}/location" for i in range(len(cases))]
    cited = [str(d.schema_rule).rpartition(" ")[2] for d in found]  # (`ruleset query `validate_state` (DIP-M2)`)
    assert cited == [f"({c})" for _, _, c in cases], cited


def test_readable_but_illegal_order_is_invalid_and_the_unit_holds() -> None:
    rs = load_ruleset(str(DIP / "standard.rules"))
    state = {"phase": {"season": "spring", "year": 1901, "type": "movement"},
             "units": [{"power": "france", "type": "army", "location": "par"}],
             "orders": [{"power": "france", "order": "A PAR - MUN"}]}
    result = rs.run(state)
    order = result["orders"][0]
    assert order["status"] == "invalid" and "DATC-4.E.1" in order["cites"]
    assert result["units"] == [{"power": "france", "type": "army", "location": "par"}]


# a path of 40 land provinces, each next to the one before it (all distinct; `nwy` beyond it is empty)
CHAIN = ["alb", "ser", "rum", "bul", "con", "smy", "ank", "arm", "sev", "mos", "stp", "lvn", "pru", "sil",
         "gal", "bud", "tri", "vie", "boh", "tyr", "ven", "tus", "pie", "mar", "spa", "gas", "par", "bre",
         "pic", "bel", "hol", "ruh", "bur", "mun", "ber", "kie", "den", "swe", "fin"]


def test_a_long_chain_of_moves_resolves_each_move_waiting_for_the_next() -> None:
    """Each army moves into the province of the next one: each move's decision waits for the next's,
    39 deep (a larger map may have longer chains). Led into the empty `nwy`, all succeed; held at its
    head, all fail (no unit may dislodge its own power's)."""
    rs = load_ruleset(str(DIP / "standard.rules"))
    units = [{"power": "france", "type": "army", "location": p} for p in CHAIN]
    moves = [{"power": "france", "order": f"A {a} - {b}"} for a, b in zip(CHAIN, CHAIN[1:] + ["nwy"])]
    state = {"phase": {"season": "spring", "year": 1901, "type": "movement"}, "units": units, "orders": moves}
    result = rs.run(state)
    assert [o["status"] for o in result["orders"]] == ["succeeds"] * len(CHAIN)
    assert sorted(u["location"] for u in result["units"]) == sorted(CHAIN[1:] + ["nwy"])
    held = rs.run(dict(state, orders=moves[:-1] + [{"power": "france", "order": "A fin H"}]))
    assert [o["status"] for o in held["orders"]] == ["fails"] * (len(CHAIN) - 1) + ["succeeds"]
    assert held["orders"][0]["reason"] == "would dislodge own unit A SER"


# The convoy-route rules answer at once when one fleet-held sea touches both ends; the searches they
# stand in front of are the definition. Here both are asked of every candidate on random positions:
# each answer must be the search's (the earlier formulations are restated as the oracle). Each row:
# [answer, the search's answer, whether a fleet-held sea touches both ends].


def _chordless_by_definition(adj: dict[str, list[str]], a: str, b: str, through: set[str]) -> set[str]:
    """Every simple path a, x1..xk, b (k >= 1, the x in `through`) with no edge between two of its
    nodes but consecutive ones (a-b aside): the union of their inner nodes."""
    out: set[str] = set()

    def walk(path: list[str]) -> None:
        for n in adj.get(path[-1], []):
            if n == b and len(path) > 1:
                nodes = path + [b]
                chords = [(i, j) for i in range(len(nodes)) for j in range(i + 2, len(nodes))
                          if nodes[j] in adj.get(nodes[i], []) and (i, j) != (0, len(nodes) - 1)]
                if not chords:
                    out.update(path[1:])
            elif n != b and n not in path and n in through:
                walk(path + [n])
    walk([a])
    return out


def test_minimal_convoy_routes_agree_with_their_definition(tmp_path: Path) -> None:
    """DATC 4.E.1 / 6.G.19: a convoying fleet must lie on a chordless route of fleet-held seas. The
    rule is written in standard.rules; here random fleets on the standard map are checked against the
    definition, searched by brute force over every simple route."""
    import random

    (tmp_path / "routes.rules").write_text(
        'ruleset my.routes "the seas of minimal convoy routes"\nextends "bundled:diplomacy/standard.rules"\n'
        "query routes(p, t) = sorted(minimal_route_seas(p, t))\n"
        "query graph = fleet_padj\n"
        "query seas = sorted([p for p, v in provinces if v.kind == \"sea\"])\n"
        "query shores = sorted([p for p, v in provinces if v.kind == \"coast\"])\n")
    rs = load_ruleset(tmp_path / "routes.rules", use_cache=False)
    assert rs.ok, [str(d) for d in rs.diagnostics]
    empty = {"phase": {"season": "spring", "year": 1901, "type": "movement"}, "units": [], "orders": []}
    adj = rs.run(empty, "graph")
    seas, shores = rs.run(empty, "seas"), rs.run(empty, "shores")
    rng = random.Random(11)
    nonempty = 0
    for _ in range(100):
        fleets = rng.sample(seas, rng.randint(6, 16))
        a, b = rng.sample([c for c in shores if any(s in fleets for s in adj.get(c, []))], 2)
        state = {**empty, "units": [{"power": "england", "type": "fleet", "location": s} for s in fleets]}
        got = set(rs.run(state, "routes", [a, b]))
        assert got == _chordless_by_definition(adj, a, b, set(fleets)), (fleets, a, b)
        nonempty += bool(got)
    assert nonempty >= 30  # the draw must reach routes that exist, not only empty answers


def _adjudicate(units: list[str], orders: list[str]) -> dict:
    """Units as `power A PAR`, orders as `power: text`; the standard rules' result."""
    state = {"phase": {"season": "spring", "year": 1901, "type": "movement"},
             "units": [{"power": u.split()[0], "type": "army" if u.split()[1] == "A" else "fleet", "location": u.split()[2]}
                       for u in units],
             "orders": [{"power": o.split(":")[0], "order": o.split(":", 1)[1].strip()} for o in orders]}
    return load_ruleset(str(ROOT / "rulesets" / "diplomacy" / "standard.rules")).run(state)


def test_a_dash_inside_a_name_and_a_dash_between_places_are_told_apart() -> None:
    for text in ("F Brest-Mid-Atlantic Ocean", "F Brest - Mid-Atlantic Ocean", "F BRE-MAO"):
        res = _adjudicate(["france F bre", "england F eng"], [f"france: {text}", "england: F ENG - BRE"])
        assert [o["status"] for o in res["orders"]] == ["succeeds", "succeeds"], (text, res["orders"])
    res = _adjudicate(["france F mao"], ["france: F Mid-Atlantic Ocean-Brest"])
    assert res["units"] == [{"power": "france", "type": "fleet", "location": "bre"}]


def test_one_order_given_twice_in_two_notations_is_that_order() -> None:
    res = _adjudicate(["france A par"], ["france: A PAR - BUR", "france: A Paris - Burgundy"])
    assert [o["status"] for o in res["orders"]] == ["succeeds", "succeeds"]
    res = _adjudicate(["france A par"], ["france: A PAR - BUR", "france: A PAR - PIC"])  # two orders: it holds (4.D.3)
    assert [o["status"] for o in res["orders"]] == ["fails", "fails"] and res["units"][0]["location"] == "par"


def test_a_convoy_path_and_a_foreign_units_nation_are_passed_over() -> None:
    res = _adjudicate(["england A lon", "england F nth"], ["england: A LON - NTH - NWY", "england: F NTH C A LON - NWY"])
    assert {u["location"] for u in res["units"]} == {"nwy", "nth"}  # DATC 4.A.6
    for support in ("A MUN S Russian A SIL - BOH", "A MUN S A SIL - BOH", "A MUN Supports Russian Army SIL to BOH"):
        res = _adjudicate(["austria A boh", "russia A sil", "germany A mun"],
                          ["austria: A BOH H", "russia: A SIL - BOH", f"germany: {support}"])
        assert [o["status"] for o in res["orders"]] == ["fails", "succeeds", "succeeds"], (support, res["orders"])
    # a place name of two words is still one place, not a nation and a place
    res = _adjudicate(["england F nth", "england F nwg"], ["england: F NWG S F North Sea", "england: F NTH H"])
    assert res["orders"][0]["status"] == "succeeds"


def test_a_move_written_with_a_verb_is_that_move() -> None:
    for text in ("A PAR M BUR", "A PAR MOVE BUR", "A Paris moves to Burgundy", "A PAR MOVES TO BUR"):
        res = _adjudicate(["france A par"], [f"france: {text}"])
        assert res["orders"][0]["status"] == "succeeds" and res["units"][0]["location"] == "bur", (text, res["orders"])
    res = _adjudicate(["france A par", "germany A mun"], ["france: A PAR M BUR", "germany: A MUN S French A PAR moves to BUR"])
    assert [o["status"] for o in res["orders"]] == ["succeeds", "succeeds"]


def test_a_coast_in_brackets_with_spaces_is_that_coast() -> None:
    for text in ("F MAO - SPA( NC )", "F MAO - SPA (nc)", "F MAO-SPA(NC)"):
        res = _adjudicate(["france F mao"], [f"france: {text}"])
        assert res["units"] == [{"power": "france", "type": "fleet", "location": "spa/nc"}], (text, res["orders"])


def test_a_coast_after_a_space_is_that_coast_only_where_the_place_has_it() -> None:
    for text, to in (("F MAO - SPA NC", "spa/nc"), ("F MAO - Spain sc", "spa/sc"), ("F MAO - spa n", "spa/nc")):
        res = _adjudicate(["france F mao"], [f"france: {text}"])
        assert res["units"] == [{"power": "france", "type": "fleet", "location": to}], (text, res["orders"])
    res = _adjudicate(["russia F stp/sc"], ["russia: F STP SC - BOT"])
    assert res["units"] == [{"power": "russia", "type": "fleet", "location": "bot"}], res["orders"]
    res = _adjudicate(["france F mao"], ["france: F MAO - SPA XC"])  # no coast of Spain: an unknown place
    assert res["orders"][0]["status"] == "invalid" and "unknown" in res["orders"][0]["reason"], res["orders"]
    res = _adjudicate(["france F mao"], ["france: F MAO - BRE NC"])  # Brest has no coasts to name
    assert res["orders"][0]["status"] == "invalid", res["orders"]


def test_a_support_of_a_unit_whose_name_has_a_dash_is_a_hold_support() -> None:
    # DATC 6.B.6 as the DATC writes it, in full names
    res = _adjudicate(["england F iri", "england F nao", "france F spa/nc", "france F mao", "italy F lyo"],
                      ["england: F Irish Sea Supports F North Atlantic Ocean - Mid-Atlantic Ocean",
                       "england: F North Atlantic Ocean - Mid-Atlantic Ocean",
                       "france: F Spain(nc) Supports F Mid-Atlantic Ocean",
                       "france: F Mid-Atlantic Ocean Hold", "italy: F Gulf of Lyon - Spain(sc)"])
    assert [o["status"] for o in res["orders"]] == ["succeeds", "succeeds", "fails", "fails", "fails"], res["orders"]
    assert res["orders"][2]["reason"] == "cut by F LYO"


def test_other_names_of_a_province_are_read_as_its_name() -> None:
    for text, unit, to in [("F Helgoland Bight - North Sea", "france F hel", "nth"),
                           ("F Gulf of Lyons - Spain(sc)", "france F lyo", "spa/sc"),
                           ("F Mid Atlantic Ocean - Brest", "france F mao", "bre"),
                           ("A Romania - Bulgaria", "france A rum", "bul")]:
        res = _adjudicate([unit], [f"france: {text}"])
        assert res["units"][0]["location"] == to, (text, res["orders"])


def test_a_head_to_head_says_whether_it_was_lost_or_a_standoff() -> None:
    res = _adjudicate(["france A par", "germany A bur"], ["france: A PAR - BUR", "germany: A BUR - PAR"])
    assert [o["reason"] for o in res["orders"]] == ["standoff in head-to-head with A BUR (strength 1 each)",
                                                    "standoff in head-to-head with A PAR (strength 1 each)"]
    res = _adjudicate(["france A par", "france A pic", "germany A bur"],
                      ["france: A PAR - BUR", "france: A PIC S A PAR - BUR", "germany: A BUR - PAR"])
    assert res["orders"][2]["reason"] == "beaten in head-to-head by A PAR (strength 2 against 1)", res["orders"]


@pytest.mark.parametrize("text,power,built,removed", [
    ("A PAR B", "france", "par", None), ("F Lon Build", "england", "lon", None), ("F EDI BUILDS", "england", "edi", None),
    ("A SIL REMOVE", "germany", None, "sil"), ("A Sil Removes", "germany", None, "sil"),
])
def test_an_adjustment_written_unit_first_is_that_adjustment(text: str, power: str, built: str | None,
                                                            removed: str | None) -> None:
    """`A PAR B` as the `diplomacy` package and DPjudge write a build (and `A MUN REMOVE`): read as
    `BUILD A PAR` (`A MUN D`); it was unreadable, and the whole state refused. In a movement phase it
    is an order of the wrong phase, refused alone."""
    rs = load_ruleset(ROOT / "rulesets" / "diplomacy" / "standard.rules")
    state = json.loads((ROOT / "rulesets" / "diplomacy" / "examples" / "adjustment.json").read_text(encoding="utf-8"))
    before = {u["location"] for u in state["units"]}
    res = rs.run({**state, "orders": [{"power": power, "order": text}]})
    after = {u["location"] for u in res["units"]}
    assert res["orders"][0]["status"] == "succeeds", res["orders"]
    # (the other powers' adjustments are left to civil disorder: only this one is looked at)
    assert (built not in before and built in after) if built else (removed in before and removed not in after), after
    start = json.loads((ROOT / "docs" / "examples" / "game" / "start.json").read_text(encoding="utf-8"))
    moved = rs.run({**start, "orders": [{"power": "france", "order": "A PAR B"}]})
    assert moved["orders"][0]["status"] == "invalid" and moved["orders"][0]["reason"] == "not a movement-phase order"


# every notation docs/tools.md (`ruleval play`) says the Diplomacy rulesets read, in a phase of its kind
NOTATIONS = {
    "movement": [("france", "A Paris moves to Burgundy"), ("france", "F Brest - Mid-Atlantic Ocean"), ("france", "A PAR -> BUR"),
                 ("france", "A PAR to BUR"), ("france", "A PAR M BUR"), ("germany", "A MUN S A BER - SIL"),
                 ("germany", "A MUN supports A BER"), ("germany", "A MUN H"), ("germany", "A Mun holds"),
                 ("russia", "F STP/SC - BOT"), ("russia", "F STP(sc) - BOT"), ("russia", "F STP SC - BOT"),
                 ("england", "A LON - NTH - NWY"), ("england", "A LON - NWY VIA"), ("england", "A LON - NWY via convoy"),
                 ("england", "A LON - NWY by convoy"), ("england", "F NTH C A LON - NWY"),
                 ("england", "F NTH convoys A LON - NWY"), ("france", "Army Paris HOLD."), ("france", "A PAR => BUR"),
                 ("france", "A PAR → BUR"), ("france", "A PAR – BUR"), ("russia", "F STP/SC - BOT."),
                 ("france", "France: A PAR - BUR"), ("france", "FRANCE:  Army Paris -> Burgundy."), ("england", "A LON-NTH-NWY")],
    "retreat": [("italy", "A VEN R APU"), ("italy", "A VEN - APU"), ("italy", "A VEN D"), ("italy", "DISBAND A VEN")],
    "adjustment": [("france", "BUILD A PAR"), ("france", "B A PAR"), ("france", "A PAR B"), ("england", "WAIVE"),
                   ("russia", "BUILD F St Petersburg (north coast)"), ("germany", "REMOVE A SIL"), ("germany", "A SIL D"),
                   ("germany", "A SIL REMOVE"), ("france", "Builds an army in Paris."),
                   ("russia", "Builds a fleet in St Petersburg (north coast)"), ("germany", "Removes the army in Silesia."),
                   ("england", "Waives a build")],
}
PHASE_STATES = {"movement": "docs/examples/game/start.json", "retreat": "rulesets/diplomacy/examples/retreat.json",
                "adjustment": "rulesets/diplomacy/examples/adjustment.json"}


@pytest.mark.parametrize("phase,power,text", [(k, p, t) for k, v in NOTATIONS.items() for p, t in v])
def test_every_documented_notation_is_read(phase: str, power: str, text: str) -> None:
    rs = load_ruleset(ROOT / "rulesets" / "diplomacy" / "standard.rules")
    state = json.loads((ROOT / PHASE_STATES[phase]).read_text(encoding="utf-8"))
    if phase == "adjustment":
        state["supply_centers"]["stp"] = "russia"
    if phase == "movement":  # England's army in London, a fleet in the North Sea to convoy it
        state["units"] = [u for u in state["units"] if u["power"] != "england"] + [
            {"power": "england", "type": "army", "location": "lon"}, {"power": "england", "type": "fleet", "location": "nth"}]
    res = rs.run({**state, "orders": [{"power": power, "order": text}]})  # (an unreadable text: RunError, S002)
    assert res["orders"][0]["status"] != "invalid", res["orders"]


@pytest.mark.parametrize("written, meant", [
    ("France: A PAR - BUR", "A PAR - BUR"), ("england:   F NTH C A LON - NWY.", "F NTH C A LON - NWY"),
    ("A LON-NTH-NWY", "A LON - NTH - NWY"), ("A LON-NTH-NWY", "A LON - NWY"), ("F BRE-MAO", "F BRE - MAO"),
    ("F Brest-Mid-Atlantic Ocean", "F BRE - MAO"), ("F BRE-ENG-PIC", "F BRE - PIC"),
])
def test_a_judge_notation_is_read_as_the_order_it_writes(written: str, meant: str) -> None:
    """DPjudge's listing (`France: ...`, the power first) and its routes without spaces (`A LON-NTH-NWY`) give
    what the plain order gives: the same adjudication of every unit."""
    rs = load_ruleset(ROOT / "rulesets" / "diplomacy" / "standard.rules")
    start = json.loads((ROOT / "docs" / "examples" / "game" / "start.json").read_text(encoding="utf-8"))
    start["units"] = [u for u in start["units"] if u["power"] != "england"] + [
        {"power": "england", "type": "army", "location": "lon"}, {"power": "england", "type": "fleet", "location": "nth"}]
    power = "england" if "LON" in meant else "france"
    others = [{"power": "england", "order": "F NTH C A LON - NWY"}] if meant.startswith("A LON") else []

    def result(text: str) -> dict[str, object]:
        out = rs.run({**start, "orders": [{"power": power, "order": text}, *others]})
        return {"units": out["units"], "orders": [{k: v for k, v in o.items() if k != "order"} for o in out["orders"]]}
    assert result(written) == result(meant)
    assert all(o["status"] != "invalid" for o in result(meant)["orders"])  # (two refusals alike would prove nothing)


def test_an_order_headed_by_another_power_is_not_read() -> None:
    """`Germany: A PAR - BUR` given as France's order names two powers: refused (S002), never played as
    France's."""
    rs = load_ruleset(ROOT / "rulesets" / "diplomacy" / "standard.rules")
    start = json.loads((ROOT / "docs" / "examples" / "game" / "start.json").read_text(encoding="utf-8"))
    with pytest.raises(RunError) as exc:
        rs.run({**start, "orders": [{"power": "france", "order": "Germany: A PAR - BUR"}]})
    assert exc.value.diagnostics[0].code == "S002" and exc.value.diagnostics[0].pointer == "/orders/0/order"


def test_an_explanation_cites_4_a_3_only_for_an_adjacent_move_that_may_go_by_sea() -> None:
    """DATC 4.A.3 (an army next to its destination goes by convoy only with `VIA` or its own power's
    convoy) was cited for every army's move, so `coverage` counted it covered by any case moving an army."""
    from validator.tools.coverage import cited_by

    rs = load_ruleset(ROOT / "rulesets" / "diplomacy" / "standard.rules")

    def cites(orders: list[str]) -> set[str]:
        units = [{"power": "england", "type": t, "location": loc}
                 for t, loc in [("army", "lon"), ("fleet", "nth"), ("army", "yor"), ("fleet", "eng")]]
        state = {"phase": {"season": "spring", "year": 1901, "type": "movement"}, "units": units,
                 "orders": [{"power": "england", "order": o} for o in orders]}
        return cited_by(rs.evaluate(state, explain=True))

    assert "DATC-4.A.3" not in cites(["A LON - WAL", "A YOR - EDI"])
    assert "DATC-4.A.3" not in cites(["A LON - NWY", "F NTH C A LON - NWY"])  # (not adjacent: by sea, no question)
    assert "DATC-4.A.3" in cites(["A YOR - LON VIA"])
    assert "DATC-4.A.3" in cites(["A LON - YOR", "F NTH C A LON - YOR"])


def test_a_lone_move_cites_no_head_to_head_and_no_defender() -> None:
    """DIP-S4 (two units ordered into each other's places do not swap) was cited for every move and DIP-S2
    (a standoff never dislodges the unit in place) for every move into an empty province."""
    from validator.tools.coverage import cited_by

    rs = load_ruleset(ROOT / "rulesets" / "diplomacy" / "standard.rules")

    def cites(units: list[tuple[str, str]], orders: list[tuple[str, str]]) -> set[str]:
        state = {"phase": {"season": "spring", "year": 1901, "type": "movement"},
                 "units": [{"power": pw, "type": "army", "location": loc} for pw, loc in units],
                 "orders": [{"power": pw, "order": o} for pw, o in orders]}
        return cited_by(rs.evaluate(state, explain=True))

    lone = cites([("france", "par")], [("france", "A PAR - BUR")])
    assert "DIP-S4" not in lone and "DIP-S2" not in lone and "DIP-P2" in lone
    assert "DIP-S4" in cites([("france", "par"), ("germany", "bur")], [("france", "A PAR - BUR"), ("germany", "A BUR - PAR")])
    assert "DIP-S2" in cites([("france", "par"), ("germany", "bur")], [("france", "A PAR - BUR")])


def test_an_explanation_cites_4_d_3_only_for_a_unit_given_several_orders() -> None:
    """DATC 4.D.3 is about a unit given two orders: it was cited in every explanation (each unit's one
    order was chosen by a rule citing it); now only where a unit has several, and DIP-H1 where one has none."""
    from validator.tools.coverage import cited_by

    rs = load_ruleset(ROOT / "rulesets" / "diplomacy" / "standard.rules")

    def cites(units: list[str], orders: list[str], phase: str = "movement", **extra: object) -> set[str]:
        state = {"phase": {"season": "spring", "year": 1901, "type": phase},
                 "units": [{"power": u.split()[0], "type": "army" if u.split()[1] == "A" else "fleet",
                            "location": u.split()[2]} for u in units],
                 "orders": [{"power": o.split(":")[0], "order": o.split(":", 1)[1].strip()} for o in orders], **extra}
        return cited_by(rs.evaluate(state, explain=True))

    one = cites(["france A par", "germany A mun"], ["france: A PAR - BUR"])
    assert "DATC-4.D.3" not in one and "DIP-H1" in one  # Munich has no order: it holds
    assert "DATC-4.D.3" in cites(["france A par"], ["france: A PAR - BUR", "france: A PAR - PIC"])
    retreat = {"dislodged": [{"power": "italy", "type": "army", "location": "ven", "attacker_from": "tri",
                              "attacker_via_convoy": False}], "standoffs": []}
    assert "DATC-4.D.3" not in cites(["austria A ven"], ["italy: A VEN R APU"], "retreat", **retreat)
    assert "DATC-4.D.3" in cites(["austria A ven"], ["italy: A VEN R APU", "italy: A VEN R TUS"], "retreat", **retreat)


def test_reading_an_order_is_a_function_of_its_text_alone() -> None:
    """Order reading is kept for the program's life only while nothing it calls recurs (a recursion's
    depth limit must see every call): a recursive `dash_route` once made every phase read every order
    afresh, 12 % of full-game throughput (bench/full_games.py). It is a fold now; this keeps it so."""
    rs = load_ruleset(ROOT / "rulesets" / "diplomacy" / "standard.rules")
    free = {n: u.state_free for (_, n), u in rs.program.units.items() if n in ("read_order", "read_loc", "order_text")}
    assert free == {"read_order": True, "read_loc": True, "order_text": True}


def test_an_importer_s_cases_are_checked_as_a_case_file_s(tmp_path: Path) -> None:
    """A case an importer query makes without an `id`, or whose expectations check nothing, is refused as
    in a case file (S004, S007 at the line the importer gives), where before it was dropped without a word
    or run as a pass; the other cases still run."""
    rules = tmp_path / "imp.rules"
    rules.write_text('ruleset probe.importer "importer"\n'
                     'query cases(text) = [{id: "ok", line: 2, state: {}, expect: {n: 1}}, {line: 3, state: {}},\n'
                     '  {id: "empty", line: 4, state: {}, expect: {}}, {id: "inner", line: 5, state: {}, expect: {n: {}}}]\n'
                     'query main = {n: 1}\n', encoding="utf-8")
    text = tmp_path / "cases.txt"
    text.write_text("a\nb\nc\nd\ne\n", encoding="utf-8")
    code, out, err = _run("test", "--import", "cases", "--ruleset", str(rules), str(text))
    assert code == 3, (code, out, err)
    assert out.strip() == "1 passed, 0 failed"
    found = [line for line in err.splitlines() if "error[" in line]
    assert [f.split(": ", 1)[0] for f in found] == [f"{text}:3:1", f"{text}:4:1", f"{text}:5:1"], err
    assert "error[S004]: importer `cases`: its case 2 has no `id`" in found[0]
    assert "error[S007]: case `empty`" in found[1] and "`expect: {}` checks nothing" in found[1]
    assert "error[S007]: case `inner`" in found[2] and "at expect.n" in found[2]


def test_an_importer_s_file_is_read_bounded_as_a_case_file_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The file `test --import` reads was read whole, however large: it is read as a case file is (at most
    MAX_CASE_FILE_BYTES), one over the bound an S004 at the file, exit 3."""
    from validator.tools import testing

    text = tmp_path / "cases.txt"
    text.write_text("x" * 100, encoding="utf-8")
    monkeypatch.setattr(testing, "MAX_CASE_FILE_BYTES", 50)
    code, out, err = _run("test", "--import", "datc_cases", "--ruleset", str(DIP / "datc_text.rules"), str(text))
    assert code == 3, (code, out, err)
    assert f"{text}: error[S004]: cannot read test file:" in err and "50" in err, err


def test_a_datc_text_line_the_importer_cannot_read_is_said_at_its_line(tmp_path: Path) -> None:
    """A DATC text file with a unit line of a type no one writes (`Q lon`), an order line with no power,
    or a last case without its END was run without those lines, or not at all, and could pass: each is
    an S004 at its line and the case is not run; a state the importer made that the rules refuse is said
    at its case's line, not as `FILE#ID#/pointer`."""
    text = tmp_path / "d.txt"
    text.write_text("CASE x.1\nPRESTATE_SETPHASE Spring 1901, Movment\nPRESTATE\n\tEngland: F nth\nORDERS\n"   # 1..5
                    "\tEngland: F nth-pic\nPOSTSTATE_SAME\nEND\n\n"                                             # 6..9
                    "CASE x.2\nPRESTATE\n\tEngland: F nth\n\tEngland: Q lon\nORDERS\n\tF nth-nwg\n"               # 10..15
                    "POSTSTATE\n\tEngland: F nwg\nEND\n\n"                                                      # 16..19
                    "CASE x.3\nPRESTATE\n\tEngland: F nth\nORDERS\n\tEngland: F nth-nwg\n", encoding="utf-8")  # 20..24
    code, out, err = _run("test", "--import", "datc_cases", "--ruleset", str(DIP / "datc_text.rules"), str(text))
    assert code == 3, (code, out, err)
    found = [line for line in err.splitlines() if "error[" in line]
    assert [f.split(": ", 1)[0] for f in found] == [f"{text}:13:1", f"{text}:15:1", f"{text}:20:1"], err
    assert all("error[S004]" in f for f in found), err
    assert "`England: Q lon`" in found[0] and "`F nth-nwg`" in found[1] and "END" in found[2], err
    assert f"{text}:1:1: S002: " in out and "(at /phase/type" in out, out
    assert "x.2" not in out and "x.3" not in out, out
