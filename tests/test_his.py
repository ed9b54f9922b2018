"""Here I Stand family: the three dice modes agree, exact distributions are complete, and a short
dice script is a clean E007 diagnostic."""

from __future__ import annotations

import io
import json
from fractions import Fraction
from pathlib import Path

import pytest

import validator
from validator.tools.cli import main

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "rulesets" / "his" / "his.rules"
RULES8 = ROOT / "rulesets" / "his" / "his_threshold8.rules"

SPACES = {"a": {"controller": "hapsburg"}, "d": {"controller": "hapsburg"}, "b": {"controller": "france"},
          "c": {"controller": "ottoman"}, "e": {"controller": "england"}, "x": {"controller": "france"}}
LINKS = [{"a": "a", "b": "d"}, {"a": "b", "b": "d"}, {"a": "c", "b": "d"}, {"a": "e", "b": "d"},
         {"a": "x", "b": "d"}]
POWERS = {p: {"kind": "major"} for p in ("ottoman", "hapsburg", "england", "france")}


def one_interceptor() -> dict:
    return {"spaces": SPACES, "connections": LINKS, "powers": POWERS, "wars": [["hapsburg", "france"]],
            "units": [{"id": "h1", "power": "hapsburg", "space": "a", "type": "regular"},
                      {"id": "f1", "power": "france", "space": "b", "type": "regular"}],
            "leaders": [{"id": "francis", "power": "france", "space": "b", "battle": 2, "command": 6}],
            "action": {"power": "hapsburg", "units": ["h1"], "from": "a", "to": "d"}}


def three_interceptors_and_avoid() -> dict:
    """Ottoman (cavalry), England and France adjacent to d; French units in d may avoid battle
    (the state bench/his_exact.py measures)."""
    path = Path(__file__).resolve().parent.parent / "rulesets" / "his" / "examples" / "three_interceptors_and_avoid.json"
    return json.loads(path.read_text(encoding="utf-8"))


def outcome_key(result: dict) -> str:
    keep = ("status", "intercepted_by", "avoided_to", "withdrew", "battle", "leader_captured")
    return json.dumps({k: result.get(k) for k in keep}, sort_keys=True)


def exact_distribution(rules: Path, state: dict) -> dict[str, Fraction]:
    out = validator.load_ruleset(rules).run(state, exact=True)
    dist: dict[str, Fraction] = {}
    for o in out["outcomes"]:
        key = outcome_key(o["result"])
        dist[key] = dist.get(key, Fraction(0)) + Fraction(o["probability"])
    return dist


@pytest.mark.parametrize("rules,state", [(RULES, one_interceptor()), (RULES, three_interceptors_and_avoid()),
                                         (RULES8, three_interceptors_and_avoid())])
def test_exact_probabilities_sum_to_one(rules, state) -> None:
    out = validator.load_ruleset(rules).run(state, exact=True)
    assert out["total"] == "1/1"
    assert sum(Fraction(o["probability"]) for o in out["outcomes"]) == 1


def test_exact_one_interceptor_battle_rating_2() -> None:
    dist = exact_distribution(RULES, one_interceptor())
    p = sum(w for k, w in dist.items() if json.loads(k)["intercepted_by"] == "france")
    assert p == Fraction(21, 36)
    dist8 = exact_distribution(RULES8, one_interceptor())
    assert sum(w for k, w in dist8.items() if json.loads(k)["intercepted_by"] == "france") == Fraction(26, 36)


def test_scripted_agrees_with_exact_branches() -> None:
    rs = validator.load_ruleset(RULES)
    assert rs.run(one_interceptor(), dice=[4, 3, 1, 1, 1, 1, 1])["intercepted_by"] == "france"   # 7 + 2 = 9, then the battle
    assert rs.run(one_interceptor(), dice=[3, 3])["intercepted_by"] is None       # 6 + 2 = 8


@pytest.mark.slow  # 100 000 seeded rolls per state
@pytest.mark.parametrize("state", [one_interceptor(), three_interceptors_and_avoid()])
def test_monte_carlo_matches_exact(state) -> None:
    rs = validator.load_ruleset(RULES)
    exact = exact_distribution(RULES, state)
    runs = 20_000
    counts: dict[str, int] = {}
    for seed in range(runs):
        key = outcome_key(rs.run(state, seed=seed))
        counts[key] = counts.get(key, 0) + 1
    assert set(counts) <= set(exact), set(counts) - set(exact)
    for key, p in exact.items():
        assert abs(counts.get(key, 0) / runs - float(p)) < 0.01, (key, counts.get(key, 0) / runs, float(p))


def test_too_few_scripted_dice_is_E007(tmp_path) -> None:
    state = tmp_path / "state.json"
    state.write_text(json.dumps(one_interceptor()), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    code = main(["run", "--format", "json", str(RULES), "--state", str(state), "--dice", "4"], stdout=out, stderr=err)
    assert code == 1
    assert "E007" in out.getvalue() + err.getvalue()
    assert "Traceback" not in out.getvalue() + err.getvalue()


def state_diagnostics(rules: Path, state: dict) -> dict[str, str]:
    """The S002 diagnostics of a refused state, by JSON pointer."""
    from validator.api import RunError

    with pytest.raises(RunError) as exc:
        validator.load_ruleset(rules).run(state, dice=[6] * 20)
    assert exc.value.kind == "state" and all(d.code == "S002" for d in exc.value.diagnostics), exc.value.diagnostics
    return {d.pointer: d.message for d in exc.value.diagnostics}


def test_cards_and_bonuses_are_read_as_the_rules_spell_them() -> None:
    """Issue 25: `Storms`, as the rules spell it, validated and was silently ignored (the move went
    on and France intercepted). Names of cards and bonuses are read case aside."""
    rs = validator.load_ruleset(RULES)
    state = one_interceptor() | {"cards_in_play": [{"card": " Storms", "by": "france"}]}
    out = rs.run(state, dice=[])  # (the move is cancelled before any roll)
    assert (out["status"], out["cancelled_by"], out["intercepted_by"]) == ("stopped", "france", None)
    # Telescope, capitalised, still adds 1: 3 + 3 + 2 = 8, 9 with it
    assert rs.run(one_interceptor(), dice=[3, 3])["intercepted_by"] is None
    with_telescope = one_interceptor() | {"bonuses": {"france": ["Telescope"]}}
    assert rs.run(with_telescope, dice=[3, 3] + [1] * 5)["intercepted_by"] == "france"  # then a battle of 1 + 4 dice


def test_every_name_a_state_refers_to_is_known_or_refused_at_its_pointer() -> None:
    """Issue 25: an unknown card, power, space, unit or leader is a located S002, never silence."""
    state = one_interceptor() | {
        "powers": POWERS | {"Venice": {"kind": "major"}, "scotland": {"kind": "minor", "major": "France"}},
        "wars": [["hapsburg", "france"], ["hapsburg", "Ottoman"]],
        "alliances": [["france", "scots"]],
        "bonuses": {"france": ["telescope", "astrolabe"], "Papacy": ["telescope"]},
        "units": [{"id": "h1", "power": "hapsburg", "space": "a", "type": "regular"},
                  {"id": "f1", "power": "France", "space": "b", "type": "regular"},
                  {"id": "f2", "power": "france", "space": "Paris", "type": "regular"},
                  {"id": "h1", "power": "hapsburg", "space": "a", "type": "regular"}],
        "tried_to_intercept": ["francis", "charles"],
        "cards_in_play": [{"card": "Foul Weather", "by": "france"}, {"card": "storms", "by": "venice"}],
        "action": {"power": "hapsburg", "units": ["h1", "h9"], "leaders": ["maximilian"], "from": "a", "to": "D"},
        "decisions": {"intercept": [{"power": "france", "from": "x", "units": ["f9"], "leaders": ["francis"]}],
                      "avoid": [{"power": "france", "to": "nowhere"}], "withdraw": ["frnace"]},
    }
    found = state_diagnostics(RULES, state)
    want = {
        "/powers/Venice": "impulse order", "/powers/scotland/major": "did you mean `france`",
        "/wars/1/1": "did you mean `ottoman`", "/alliances/0/1": "`scots`",
        "/bonuses/france/1": "`astrolabe`", "/bonuses/Papacy": "`Papacy`",
        "/units/1/power": "did you mean `france`", "/units/2/space": "`Paris`", "/units/3/id": "`h1`",
        "/tried_to_intercept/1": "`charles`",
        "/cards_in_play/0/card": "`Foul Weather`", "/cards_in_play/1/by": "`venice`",
        "/action/units/1": "`h9`", "/action/leaders/0": "`maximilian`", "/action/to": "did you mean `d`",
        "/decisions/intercept/0/units/0": "`f9`", "/decisions/avoid/0/to": "`nowhere`",
        "/decisions/withdraw/0": "`frnace`",
    }
    assert set(found) == set(want), (sorted(set(found) - set(want)), sorted(set(want) - set(found)))
    for pointer, words in want.items():
        assert words in found[pointer], (pointer, found[pointer])


def binomial(n: int, p: Fraction) -> dict[int, Fraction]:
    from math import comb

    return {k: comb(n, k) * p ** k * (1 - p) ** (n - k) for k in range(n + 1)}


@pytest.mark.parametrize("state", [one_interceptor(), three_interceptors_and_avoid()], ids=["one", "three"])
def test_exact_field_battle_is_the_binomial_of_each_side(state) -> None:
    """Issue 25: the field battle (HIS-B1) was recorded with its dice counts only. It is rolled: in
    exact mode, given everything before it, each side's hits follow Bin(dice, 1/3) independently,
    the attacker wins with more hits, and ties go to the defender."""
    out = validator.load_ruleset(RULES).run(state, exact=True)
    assert out["total"] == "1/1"
    groups: dict[str, dict[tuple[int, int], Fraction]] = {}
    dice: dict[str, tuple[int, int]] = {}
    for o in out["outcomes"]:
        battle = o["result"]["battle"]
        if battle is None:
            continue
        a, d = battle["attacker_hits"], battle["defender_hits"]
        assert isinstance(a, int) and isinstance(d, int)
        assert battle["winner"] == ("attacker" if a > d else "defender"), battle
        before = json.dumps({k: v for k, v in o["result"].items() if k not in ("battle", "events")} | {
            "battle": {k: v for k, v in battle.items() if k not in ("attacker_hits", "defender_hits", "winner")}},
            sort_keys=True)
        groups.setdefault(before, {})[(a, d)] = Fraction(o["probability"])
        dice[before] = (battle["attacker_dice"], battle["defender_dice"])
    assert groups, "no battle among the outcomes"
    for before, dist in groups.items():
        total = sum(dist.values())
        na, nd = dice[before]
        third = Fraction(1, 3)  # 5 and 6 hit
        want = {(a, d): pa * pd for a, pa in binomial(na, third).items() for d, pd in binomial(nd, third).items()}
        assert {k: v / total for k, v in dist.items()} == want, before


def test_field_battle_in_scripted_and_seeded_modes() -> None:
    rs = validator.load_ruleset(RULES)
    # France intercepts (4 + 3 + 2); 1 attacker die against 1 unit + battle 2 + 1 = 4 dice
    won = rs.run(one_interceptor(), dice=[4, 3, 6, 1, 1, 4, 2])["battle"]
    assert (won["attacker_dice"], won["defender_dice"]) == (1, 4)
    assert (won["attacker_hits"], won["defender_hits"], won["winner"]) == (1, 0, "attacker")
    tie = rs.run(one_interceptor(), dice=[4, 3, 5, 1, 1, 4, 6])["battle"]
    assert (tie["attacker_hits"], tie["defender_hits"], tie["winner"]) == (1, 1, "defender")
    winners = set()
    for seed in range(200):
        battle = rs.run(one_interceptor(), seed=seed)["battle"]
        if battle is not None:
            assert 0 <= battle["attacker_hits"] <= 1 and 0 <= battle["defender_hits"] <= 4
            assert battle["winner"] == ("attacker" if battle["attacker_hits"] > battle["defender_hits"] else "defender")
            winners.add(battle["winner"])
    assert winners == {"attacker", "defender"}


def _his_variant(tmp_path: Path, text: str) -> "validator.Ruleset":
    """A variant of his.rules written beside it (in a copy, so that its paths stay inside the root)."""
    import shutil

    shutil.copytree(ROOT / "rulesets" / "his", tmp_path / "rulesets" / "his")
    shutil.copytree(ROOT / "schemas", tmp_path / "schemas")
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "rulesets" / "his" / "variant.rules").write_text('extends "his.rules"\n' + text)
    rs = validator.load_ruleset(tmp_path / "rulesets" / "his" / "variant.rules")
    assert rs.ok, [str(d) for d in rs.diagnostics]
    return rs


def _interceptors(outcomes: list) -> set:
    return {o["result"]["intercepted_by"] for o in outcomes}


def test_a_variant_of_a_legality_rule_changes_every_query_that_reads_it(tmp_path: Path) -> None:
    """Issue 21, for Here I Stand as for Jomini: overriding one rule of who may intercept changes the
    `interceptors` query and every outcome of `main` alike; no other rule restates it."""
    base = validator.load_ruleset(RULES)
    state = three_interceptors_and_avoid()
    before = base.run(state, query="interceptors")
    assert len(before) >= 2
    barred = before[0]["power"]
    variant = _his_variant(tmp_path, f'override rule enemy_of_mover(a) cite "HIS-I4" =\n'
                                     f'  at_war(a.power, action.power) and a.power != "{barred}"\n')
    after = variant.run(state, query="interceptors")
    assert after == [a for a in before if a["power"] != barred]
    assert barred in _interceptors(base.run(state, exact=True)["outcomes"])
    assert barred not in _interceptors(variant.run(state, exact=True)["outcomes"])


def test_a_restriction_added_to_who_may_intercept_refuses_a_declaration_too(tmp_path: Path) -> None:
    """`may_try` is the one statement of who may intercept: a variant that adds a restriction to
    `may_intercept` (England may not intercept) and nothing else drops England from `interceptors`,
    from the default policy's rolls, and refuses a declaration naming England's formation before any
    die, though no `require` of `main` names the new restriction."""
    base = validator.load_ruleset(RULES)
    state = three_interceptors_and_avoid()
    variant = _his_variant(tmp_path, 'override rule may_intercept(a) cite "HIS-I1" =\n'
                           '  adjacent_to_destination(a) and not_across_pass(a) and enemy_of_mover(a) and one_formation(a)\n'
                           '  and fresh(a) and free_to_leave(a) and occupants_allow(a) and control_allows(a)\n'
                           '  and a.power != "england"\n')
    listed = base.run(state, query="interceptors")
    assert "england" in [a["power"] for a in listed]
    assert variant.run(state, query="interceptors") == [a for a in listed if a["power"] != "england"]
    assert "england" not in _interceptors(variant.run(state, exact=True)["outcomes"])
    declared = {**state, "decisions": {"intercept": listed}}
    assert base.run(declared, exact=True)["outcomes"][0]["result"]["status"] == "completed"
    out = variant.run(declared, exact=True)["outcomes"]
    assert len(out) == 1 and out[0]["result"]["status"] == "rejected", [o["result"]["status"] for o in out]
    assert out[0]["result"]["cites"] == ["HIS-I1"] and out[0]["result"]["step"] == "interception"
    assert not [e for e in out[0]["events"] if e.get("event") == "interception attempted"]


def test_a_variant_of_the_roll_modifier_changes_the_odds_and_nothing_else(tmp_path: Path) -> None:
    """A modifier of +12 makes every interception succeed: the first interceptor in impulse order always
    intercepts, the list of who may try is unchanged."""
    base = validator.load_ruleset(RULES)
    state = three_interceptors_and_avoid()
    sure = _his_variant(tmp_path, 'override rule roll_modifier(p, us, ls, with_telescope) cite "HIS-IP1", "HIS-A9" = 12\n')
    assert sure.run(state, query="interceptors") == base.run(state, query="interceptors")
    first = base.run(state, query="interceptors")[0]["power"]
    assert _interceptors(sure.run(state, exact=True)["outcomes"]) == {first}
    assert len(_interceptors(base.run(state, exact=True)["outcomes"])) > 1


@pytest.mark.parametrize("change, pointer, message", [
    ({"connections": LINKS + [{"a": "d", "b": "a", "kind": "pass"}]}, "/connections/5",
     "the link between `d` and `a` is given twice, as normal and as pass"),
    ({"cards_in_play": [{"card": "Storms", "by": "hapsburg"}]}, "/cards_in_play/0/by",
     "`hapsburg` moves: only other powers play `Storms` against the move"),
    ({"powers": {**POWERS, "hungary": {"kind": "minor", "major": "hapsburg"}},
      "cards_in_play": [{"card": "Storms", "by": "hungary"}]}, "/cards_in_play/0/by",
     "`hapsburg` moves: only other powers play `Storms` against the move"),
    ({"wars": [["hapsburg", "hapsburg"]]}, "/wars/0", "`hapsburg` cannot be at war with itself"),
    ({"alliances": [["france", "hapsburg"]]}, "/alliances/0", "`france` and `hapsburg` are listed both at war and allied"),
    ({"powers": {**POWERS, "scotland": {"kind": "minor", "major": "france"}},
      "decisions": {"avoid": [{"power": "scotland", "to": "b"}]}}, "/decisions/avoid/0/power",
     "`scotland` is a minor power: its units avoid and withdraw with its major power's, name `france`"),
    ({"decisions": {"avoid": [{"power": "france", "to": "b"}, {"power": "france", "to": "x"}]}}, "/decisions/avoid/1/power",
     "a second avoid-battle attempt of `france`"),
    ({"powers": {**POWERS, "venice": {"kind": "minor"}}, "alliances": [["france", "venice"]]}, "/alliances/0",
     "`venice` is a minor power with no associated major power, listed allied with the major power `france`: an allied "
     "minor power acts with its associated major power; give `france` as `venice`'s `major` instead"),
])
def test_a_state_the_rules_would_read_two_ways_is_refused(change: dict, pointer: str, message: str) -> None:
    """A link given twice with two kinds (the move's cost depended on the order of the list), the mover's
    own Storms (ignored without a word) or its minor ally's (the same side's: HIS-M4 is for other powers),
    a power at war with itself, a pair at war and allied, an avoid decision of a minor power (passed over,
    its units fought) or given twice, an alliance of a major with a minor that names no major (allied, yet at peace
    with its ally's enemies: HIS-A1 knows an allied minor as its associated major's)."""
    from validator.api import RunError

    rs = validator.load_ruleset(RULES)
    with pytest.raises(RunError) as exc:
        rs.run({**one_interceptor(), **change}, seed=1)
    found = [(d.code, d.pointer, d.message) for d in exc.value.diagnostics]
    assert ("S002", pointer, message) in found, found


def test_a_siege_needs_a_fortified_space() -> None:
    """A unit or leader marked besieged (or formerly besieged) in a space that is not fortified was read as
    it is: it barred every interception into an open field (HIS-I10) and could not avoid battle (HIS-A6).
    Only a fortified space is besieged (HIS-I6, "that fortified space"): the state is refused at the mark."""
    from validator.api import RunError

    rs = validator.load_ruleset(RULES)
    open_field = one_interceptor() | {
        "units": [{"id": "h1", "power": "hapsburg", "space": "a", "type": "regular"},
                  {"id": "f1", "power": "france", "space": "d", "type": "regular", "besieged": True},
                  {"id": "f2", "power": "france", "space": "b", "type": "regular", "formerly_besieged": True}],
        "leaders": [{"id": "francis", "power": "france", "space": "d", "battle": 2, "command": 6, "besieged": True}]}
    with pytest.raises(RunError) as exc:
        rs.run(open_field, seed=1)
    found = {d.pointer: (d.code, d.message, d.schema_rule) for d in exc.value.diagnostics}
    assert set(found) == {"/units/1/besieged", "/units/2/formerly_besieged", "/leaders/0/besieged"}, found
    assert all(code == "S002" and "not fortified" in message and "HIS-I6" in (rule or "")
               for code, message, rule in found.values()), found
    # the same marks in fortified spaces are a siege the rules read: the move is made, nobody intercepts (HIS-I10)
    fortress = open_field | {"spaces": SPACES | {"d": {"controller": "france", "fortified": True},
                                                 "b": {"controller": "france", "fortified": True}}}
    assert rs.run(fortress, dice=[])["attempts_made"] == []


def test_a_garrison_in_a_fortress_not_its_sides_is_refused() -> None:
    """A unit or leader marked besieged inside the fortifications of an enemy's space, or of an independent one, was
    read as it is: a relief force of its power fought the space's own units, which could withdraw beside it. Units
    and leaders go into the fortifications of a space of their power or an ally only (HIS-W1, HIS-A8): refused at
    the mark; in an ally's fortress the garrison is read."""
    from validator.api import RunError

    rs = validator.load_ruleset(RULES)
    state = one_interceptor() | {
        "spaces": SPACES | {"hf": {"controller": "hapsburg", "fortified": True}, "nf": {"controller": None, "key": True},
                            "ef": {"controller": "england", "fortified": True}},
        "connections": LINKS + [{"a": "hf", "b": "d"}, {"a": "nf", "b": "d"}, {"a": "ef", "b": "d"}],
        "alliances": [["france", "england"]],
        "units": [{"id": "h1", "power": "hapsburg", "space": "a", "type": "regular"},
                  {"id": "f1", "power": "france", "space": "hf", "type": "regular", "besieged": True},
                  {"id": "f2", "power": "france", "space": "ef", "type": "regular", "besieged": True}],
        "leaders": [{"id": "francis", "power": "france", "space": "nf", "battle": 2, "command": 6, "besieged": True}]}
    with pytest.raises(RunError) as exc:
        rs.run(state, seed=1)
    found = {d.pointer: (d.message, d.schema_rule or "") for d in exc.value.diagnostics}
    assert set(found) == {"/units/1/besieged", "/leaders/0/besieged"}, found
    assert "a space of `hapsburg`, neither `france` nor its ally" in found["/units/1/besieged"][0], found
    assert "an independent space" in found["/leaders/0/besieged"][0], found
    assert all("HIS-W1" in rule for _, rule in found.values()), found
    # the garrison in its ally's fortress alone is read: a Hapsburg unit enters, nobody intercepts (HIS-I10), no battle
    allied = state | {"units": [{"id": "h1", "power": "hapsburg", "space": "d", "type": "regular"}, state["units"][2]],
                      "leaders": [], "action": {"power": "hapsburg", "units": ["h1"], "from": "d", "to": "ef"}}
    out = rs.run(allied, dice=[])
    assert (out["status"], out["attempts_made"], out["battle"]) == ("completed", [], None), out


def test_a_land_piece_at_sea_or_a_siege_both_on_and_lifted_is_refused() -> None:
    """A land unit written in a sea zone was read as a group adjacent to the destination and intercepted from
    the sea; a piece marked both besieged and formerly besieged was read as besieged. Both are refused."""
    from validator.api import RunError

    rs = validator.load_ruleset(RULES)
    state = one_interceptor() | {
        "spaces": SPACES | {"s": {"sea": True}, "f": {"controller": "france", "fortified": True}},
        "connections": LINKS + [{"a": "s", "b": "d"}, {"a": "f", "b": "d"}],
        "units": [{"id": "h1", "power": "hapsburg", "space": "a", "type": "regular"},
                  {"id": "f1", "power": "france", "space": "s", "type": "regular"},
                  {"id": "f2", "power": "france", "space": "f", "type": "regular", "besieged": True,
                   "formerly_besieged": True},
                  {"id": "h2", "power": "hapsburg", "space": "f", "type": "regular"}],
        "leaders": [{"id": "francis", "power": "france", "space": "s", "battle": 2, "command": 6}]}
    with pytest.raises(RunError) as exc:
        rs.run(state, seed=1)
    found = {d.pointer: (d.message, d.schema_rule or "") for d in exc.value.diagnostics}
    assert set(found) == {"/units/1/space", "/leaders/0/space", "/units/2/formerly_besieged"}, found
    assert "sea zone" in found["/units/1/space"][0] and "HIS-A4" in found["/units/1/space"][1]
    assert "both besieged and formerly besieged" in found["/units/2/formerly_besieged"][0]


def test_a_variant_s_map_with_a_slip_is_refused_where_the_slip_is(tmp_path: Path) -> None:
    """A designer's HIS map (a new space, `krakow`) with a connection to a space it does not have
    (`brun`) and a misspelt field (`fortifed`) passed `ruleval check`, and a move there was read as
    "not adjacent": the map is checked data, as a Diplomacy map is, each slip an error at its line."""
    text = (ROOT / "rulesets" / "his" / "map.yaml").read_text(encoding="utf-8")
    text = text.replace("connections:\n", "connections:\n  - {a: krakow, b: brun, kind: normal}\n")
    text = text.replace("  venice:", "  krakow:    {fortifed: false, controller: poland}\n  venice:")
    (tmp_path / "ruleval.toml").write_text("", encoding="utf-8")
    (tmp_path / "my_map.yaml").write_text(text, encoding="utf-8")
    (tmp_path / "my.rules").write_text('ruleset my.his "mine"\nextends "bundled:his/his.rules"\n'
                                       'import "my_map.yaml" as map\n', encoding="utf-8")
    lines = text.splitlines()
    out, err = io.StringIO(), io.StringIO()
    code = main(["check", "--no-cache", "--format", "json", str(tmp_path / "my.rules")], stdout=out, stderr=err)
    assert code == 1, out.getvalue() + err.getvalue()
    found = {(d["code"], lines[d["line"] - 1].strip()) for d in json.loads(out.getvalue()) if d["severity"] == "error"}
    assert all(d["file"].endswith("my_map.yaml") for d in json.loads(out.getvalue()) if d["severity"] == "error")
    assert ("C026", "krakow:    {fortifed: false, controller: poland}") in found, found
    fixed = text.replace("fortifed", "fortified")
    (tmp_path / "my_map.yaml").write_text(fixed, encoding="utf-8")
    out = io.StringIO()
    assert main(["check", "--no-cache", "--format", "json", str(tmp_path / "my.rules")], stdout=out, stderr=err) == 1
    [d] = [d for d in json.loads(out.getvalue()) if d["severity"] == "error"]
    assert d["code"] == "C027" and "`brun`" in d["message"] and d["pointer"] == "/connections/0/b", d
    assert fixed.splitlines()[d["line"] - 1][d["col"] - 1:].startswith("brun")
    fixed = fixed.replace("b: brun,", "b: brunn,")
    (tmp_path / "my_map.yaml").write_text(fixed, encoding="utf-8")
    assert main(["check", "--no-cache", str(tmp_path / "my.rules")], stdout=io.StringIO(), stderr=err) == 0
