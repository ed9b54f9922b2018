"""State generators for ``ruleval diff --generate``: the pure pseudo-random built-ins (rand, choice,
shuffle), the bundled rulesets' ``query generate(seed)``, and the errata examples of docs/errata.md."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from validator.api import RunError, load_ruleset
from validator.lib.builtins import BUILTINS, CallError
from validator.tools.errata import generator_state

ROOT = Path(__file__).resolve().parent.parent
JOMINI = ROOT / "rulesets" / "jomini"
HIS = ROOT / "rulesets" / "his"

rand = BUILTINS["rand"].fn
choice = BUILTINS["choice"].fn
shuffle = BUILTINS["shuffle"].fn


# ---------------------------------------------------------------- the built-ins


# rand(0, "x", 10), rand(1, "x", 10), rand(0, ["x", 1], 1000), rand(-5, 7, 2**40)
PINNED = [7, 4, 51, 345164399863]


def test_rand_is_deterministic_and_pinned() -> None:
    assert [rand(0, "x", 10) for _ in range(3)] == [rand(0, "x", 10)] * 3
    # pinned values: a change of hash (or a salted one) would silently change every generated state
    assert [rand(0, "x", 10), rand(1, "x", 10), rand(0, ["x", 1], 1000), rand(-5, 7, 2**40)] == PINNED


def test_rand_is_the_same_in_another_process() -> None:
    # Python salts its own hash of text per process; rand must not depend on it
    code = ("from validator.lib.builtins import BUILTINS as B; r = B['rand'].fn; "
            "print([r(0, 'x', 10), r(1, 'x', 10), r(0, ['x', 1], 1000), r(-5, 7, 2**40)])")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                         env={"PYTHONHASHSEED": "12345", "PATH": ""}).stdout
    assert json.loads(out) == PINNED


@pytest.mark.parametrize("n", [1, 2, 3, 6, 7, 100, 2**63 + 5])
def test_rand_range(n: int) -> None:
    values = [rand(s, "k", n) for s in range(300)]
    assert all(0 <= v < n for v in values)
    if n == 1:
        assert set(values) == {0}


def test_rand_rough_uniformity_over_seeds_and_keys() -> None:
    n, draws = 6, 6000
    by_seed = Counter(rand(s, "die", n) for s in range(draws))
    by_key = Counter(rand(42, ["die", i], n) for i in range(draws))
    by_text = Counter(rand(7, f"key {i}", n) for i in range(draws))
    for counts in (by_seed, by_key, by_text):
        assert set(counts) == set(range(n))
        chi2 = sum((c - draws / n) ** 2 / (draws / n) for c in counts.values())
        assert chi2 < 25, counts  # 5 degrees of freedom: P(chi2 > 25) < 0.0002
    # consecutive seeds are not correlated: the pair (seed, seed + 1) covers all 36 combinations evenly
    pairs = Counter((rand(s, "k", n), rand(s + 1, "k", n)) for s in range(draws))
    assert len(pairs) == 36 and max(pairs.values()) < 2 * draws / 36


def test_keys_are_independent_and_typed() -> None:
    a = [rand(s, "a", 1000) for s in range(50)]
    b = [rand(s, "b", 1000) for s in range(50)]
    assert a != b
    # 1, "1", true, [1] and [[1]] are different keys
    keys = [1, "1", True, [1], [[1]], None, -1]
    assert len({rand(3, k, 2**62) for k in keys}) == len(keys)


def test_bad_arguments() -> None:
    for n in (0, -1, "3", True):
        with pytest.raises(CallError):
            rand(0, "k", n)
    for key in (1.5, {"a": 1}):
        with pytest.raises(CallError):
            rand(0, key, 3)


def test_choice_and_shuffle() -> None:
    xs = ["a", "b", "c", "d", "e"]
    assert choice(1, "k", []) is None
    assert all(choice(s, "k", xs) in xs for s in range(50))
    assert Counter(choice(s, "k", xs) for s in range(5000)).keys() == set(xs)
    for s in range(50):
        out = shuffle(s, "k", xs)
        assert sorted(out) == xs and out == shuffle(s, "k", xs)
    assert xs == ["a", "b", "c", "d", "e"]  # the argument is not changed
    perms = Counter(tuple(shuffle(s, "p", [1, 2, 3])) for s in range(6000))
    assert len(perms) == 6 and max(perms.values()) < 1.2 * 1000 and min(perms.values()) > 0.8 * 1000
    # a set's own order varies between runs: it is sorted first, so the draw does not
    assert choice(9, "k", frozenset(xs)) == choice(9, "k", sorted(xs))
    assert shuffle(9, "k", frozenset(xs)) == shuffle(9, "k", sorted(xs))
    assert shuffle(1, "k", []) == []


def test_builtins_through_the_language(tmp_path: Path) -> None:
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "main.rules").write_text(
        'query main = [rand(7, "k", 6), choice(7, ["c", 1], [10, 20, 30]), shuffle(7, "s", range(4))]\n'
        'query bad = rand(7, "k", 0)\n', encoding="utf-8")
    rs = load_ruleset(tmp_path / "main.rules", use_cache=False)
    assert rs.ok, rs.diagnostics
    assert rs.run({}) == [rand(7, "k", 6), choice(7, ["c", 1], [10, 20, 30]), shuffle(7, "s", list(range(4)))]
    assert rs.run({}, seed=1) == rs.run({}, seed=2)  # not dice: the run's seed plays no part
    with pytest.raises(RunError):
        rs.run({}, query="bad")


# ---------------------------------------------------------------- the bundled generators


def generated(path: Path, seed: int) -> Any:
    rs = load_ruleset(path)
    return rs.run(generator_state(rs), query="generate", args=[seed], seed=seed, validate=False)


@pytest.mark.parametrize("path", [JOMINI / "re.rules", JOMINI / "am.rules", JOMINI / "errata_heavy_infantry.rules",
                                  HIS / "his.rules", HIS / "his_threshold8.rules"])
def test_generated_states_satisfy_the_schema_and_run(path: Path) -> None:
    rs = load_ruleset(path)
    assert "generate" in rs.queries()
    for seed in range(40):
        state = generated(path, seed)
        assert state == generated(path, seed)
        assert not rs.state_schema_errors(state), (seed, rs.state_schema_errors(state)[0].message)
        rs.run(state, seed=seed)  # and the ruleset runs on it


def test_generator_state_binds_inputs_without_default_to_a_simplest_value_of_their_type() -> None:
    """(Not none for a typed input: its value is checked against its declared type, tests/test_input_types.py.)"""
    assert generator_state(load_ruleset(JOMINI / "re.rules")) == {"board": None, "units": []}
    assert generator_state(load_ruleset(HIS / "his.rules")) == {"powers": {}, "action": None}


def test_jomini_generator_is_varied() -> None:
    rs = load_ruleset(JOMINI / "re.rules")
    sizes, kinds, verdicts, terrains = set(), set(), Counter(), set()
    shapes: Counter = Counter()
    for seed in range(60):
        st = generated(JOMINI / "re.rules", seed)
        b = st["board"]
        sizes.add((b["cols"], b["rows"]))
        assert 5 <= b["cols"] <= 8 and 5 <= b["rows"] <= 8
        on = [u for u in st["units"] if u["hex"] is not None]
        assert 2 <= len(on) <= 6 and len(st["units"]) - len(on) <= 1 and 1 <= len(st["moves"]) <= 4
        assert len({u["hex"] for u in on}) == len(on)
        assert len(b["exits"]["voluntary"]) == len(b["exits"]["reinforcement"]) == 1
        # the shapes of move off and onto the table (JOM-X1, X4): leaving, with combat or not; entering,
        # and entering and leaving again
        off = {u["id"] for u in st["units"] if u["hex"] is None}
        shapes.update(("enter" if m["unit"] in off else "stay") + ("-leave" if m.get("exit") else "")
                      + ("-combat" if m["combat"] else "") for m in st["moves"])
        assert any(e["feature"] for e in b["edges"]) and b["roads"]
        terrains |= {h["terrain"] for h in b["hexes"].values()}
        kinds |= {(u["type"], u["class"], u["side"]) for u in st["units"]}
        verdicts.update(m["status"] for m in rs.run(st, seed=seed)["moves"])
    assert len(sizes) > 8 and len(kinds) > 10 and {"woods", "marsh", "impassable"} <= terrains
    assert verdicts["ok"] > 20 and verdicts["illegal"] > 20
    assert {"stay-leave", "stay-leave-combat", "enter", "enter-leave"} <= set(shapes), shapes


# ---------------------------------------------------------------- the errata examples (docs/errata.md)


def diff(*argv: str) -> tuple[int, dict[str, Any], list[Any]]:
    """`ruleval diff ... --format json`: the exit code, the report and the minimal states (of the
    differences shrunk: the first three by default)."""
    from validator.tools.cli import main

    out, err = io.StringIO(), io.StringIO()
    code = main(["diff", *argv, "--format", "json"], stdout=out, stderr=err)
    assert "Traceback" not in out.getvalue() + err.getvalue()
    report = json.loads(out.getvalue())
    return code, report, [d["minimal"] for d in report["differences"] if d["shrunk"]]


def changes(report: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    return [(c["pointer"], c["old"], c["new"]) for d in report["differences"] for c in d["changed"]]


def test_errata_his_threshold8() -> None:
    code, report, minimal = diff(str(HIS / "his.rules"), str(HIS / "his_threshold8.rules"), "--exact", "--generate", "30")
    assert code == 1
    assert report["tried"] == 30
    assert len(minimal) == 3 and not all(d["shrunk"] for d in report["differences"])  # the first three, by default
    assert any((x, y) == ("13/18", "7/12") for _, x, y in changes(report))  # P(no interception), 9+ vs 8+ on 2d6
    for st in minimal:  # one formation moves, one enemy piece reacts (intercepts or avoids battle)
        mover = set(st["action"].get("units", []) + st["action"].get("leaders", []))
        others = [x for x in st.get("units", []) + st.get("leaders", []) if x["id"] not in mover]
        assert len(mover) == 1 and len(others) == 1, st


def test_errata_jomini_heavy_infantry() -> None:
    code, report, minimal = diff(str(JOMINI / "re.rules"), str(JOMINI / "errata_heavy_infantry.rules"),
                                 "--generate", "200")
    assert code == 1
    assert report["tried"] == 200 and minimal
    assert ("/moves/0/allowance", 1, 2) in changes(report)
    for st in minimal:  # one heavy infantry unit, one move with combat (on a bare board, or entering it)
        assert len(st["units"]) == 1 and len(st["moves"]) == 1, st
        (u,), (m,) = st["units"], st["moves"]
        assert (u["type"], u["class"], m["combat"]) == ("infantry", "heavy", True)
        assert set(st["board"]) == ({"cols", "rows"} if u["hex"] is not None else {"cols", "rows", "exits"})


def test_errata_jomini_cases_differ() -> None:
    code, report, minimal = diff(str(JOMINI / "re.rules"), str(JOMINI / "errata_heavy_infantry.rules"),
                                 "--cases", str(ROOT / "tests" / "cases" / "jomini" / "errata.yaml"))
    assert code == 1 and report["tried"] == 2 and len(report["differences"]) == 2
    assert all(len(st["units"]) == 1 and len(st["moves"]) == 1 for st in minimal)


def test_two_rulesets_that_fail_alike_are_not_equivalent(tmp_path: Path) -> None:
    """A run that fails on both sides compared nothing: it is reported (exit 1), never counted as
    equivalent."""
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "old.rules").write_text('ruleset t.old "old"\nextends "bundled:diplomacy/standard.rules"\n'
                                        'override rule head_to_head_static(p) cite "DIP-S4" = 1 / 0 == 1\n')
    (tmp_path / "new.rules").write_text('ruleset t.new "new"\nextends "old.rules"\n'
                                        'override rule goes_by_sea(e) cite "DATC-4.A.3" = not e.adjacent or e.via\n')
    code, report, minimal = diff(str(tmp_path / "old.rules"), str(tmp_path / "new.rules"), "--generate", "5")
    assert code == 1 and report["differences"], report
    assert all(d["old"] == d["new"] == {"error": ["E003"], "kind": "eval"} for d in report["differences"]), report
    from validator.tools.cli import main

    out, err = io.StringIO(), io.StringIO()
    argv = ["diff", str(tmp_path / "old.rules"), str(tmp_path / "new.rules"), "--generate", "5"]
    assert main(argv, stdout=out, stderr=err) == 1
    assert "OLD (E003) and NEW (E003) failed to run" in out.getvalue()


def test_a_state_one_ruleset_refuses_is_skipped_not_a_difference() -> None:
    """The teaching map's rules refuse the standard map's generated states (no such places): skipped,
    nothing compared (exit 3), not 20 differences."""
    dip = ROOT / "rulesets" / "diplomacy"
    code, report, _ = diff(str(dip / "standard.rules"), str(dip / "teaching.rules"), "--generate", "20")
    assert code == 3 and report["differences"] == [] and report["tried"] == 0, report


def test_a_shrunk_state_keeps_every_kind_of_change() -> None:
    """Build anywhere: the found phases had a build that failed and now succeeds, or a winter phase
    skipped that is now played; each shrunk state keeps that change (not only a reason reworded),
    and the second, where every power's units and centres balance, shrinks to the one centre that
    matters (no single cut could: removing one unit gives its power a build under both rules)."""
    dip = ROOT / "rulesets" / "diplomacy"
    code, report, minimal = diff(str(dip / "standard.rules"), str(dip / "build_anywhere.rules"), "--games", "4",
                                 "--phases", "12", "--start", str(ROOT / "docs" / "examples" / "game" / "start.json"))
    assert code == 1 and len(minimal) == 2
    built, skipped = report["differences"]
    assert "/result/orders/0/status" in {c["pointer"] for c in built["changed"]}, built["changed"]
    assert {c["pointer"]: c["new"] for c in skipped["changed"]}["/next_phase"] == "W1904A"
    assert skipped["minimal"]["units"] == [] and skipped["minimal"]["supply_centers"] == {"gre": "austria"}


def test_shrinking_by_text_removes_every_item_holding_it() -> None:
    from validator.tools.errata import _by_text, _without

    state = {"units": [{"side": "a", "at": "x"}, {"side": "b", "at": "y"}, {"side": "a", "at": "z"}],
             "owners": {"x": "a", "y": "b"}, "turn": {"who": "a"}}
    assert _without(state, "a") == {"units": [{"side": "b", "at": "y"}], "owners": {"y": "b"}, "turn": {}}
    # texts found more than once (values, not keys), most frequent first: "a" (4 times), then "b"
    assert list(_by_text(state)) == [_without(state, "a"), _without(state, "b")]


def run_cli(*argv: str) -> tuple[int, str, str]:
    from validator.tools.cli import main

    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_diff_of_rulesets_of_two_games_says_so() -> None:
    dip, jom = str(ROOT / "rulesets" / "diplomacy" / "standard.rules"), str(ROOT / "rulesets" / "jomini" / "re.rules")
    code, out, err = run_cli("diff", dip, jom, "--games", "1")
    head = " ".join(line.strip() for line in err[:err.index("start_state#")].splitlines())  # (wrapped at 100 columns)
    assert code == 3 and head == (f"ruleval: NEW ({jom}) refuses the start state (the two rulesets' state schemas "
                                  "differ: are they of the same game?):"), err
    assert err.count("error[S002]") == 10 and err.rstrip().endswith("more problems with the start state"), err
    code, out, err = run_cli("diff", dip, jom, "--generate", "3")
    assert code == 3 and max(map(len, out.splitlines())) <= 100
    # (the first fault of the other game's state: at the top, the keys Diplomacy's schema requires; each
    # unexpected key is told at itself, below)
    assert " ".join(line.strip() for line in out.splitlines()) == (
        "tried 0 states (3 skipped: 3 × OLD refuses it: S002 missing required keys \"phase\", \"orders\"; "
        "the two rulesets' state schemas differ: are they of the same game?): nothing was compared")
    code, report, _ = diff(dip, jom, "--generate", "3")
    assert code == 3 and (report["tried"], report["skipped"], report["stopped"], report["notes"]) == (0, 3, [], [])
    assert list(report["skip_reasons"].values()) == [3] and "S002" in next(iter(report["skip_reasons"]))


def test_diff_json_reports_notes_and_stopped_games(tmp_path: Path) -> None:
    std = str(ROOT / "rulesets" / "diplomacy" / "standard.rules")
    code, report, _ = diff(std, std, "--games", "1", "--phases", "4", "--start",
                           str(ROOT / "rulesets" / "diplomacy" / "examples" / "retreat.json"))
    assert code == 3 and report["notes"] == [] and len(report["stopped"]) == 1, report
    assert "NEW's `random_orders(2)` failed" in report["stopped"][0], report
    plain = tmp_path / "plain.rules"
    plain.write_text('ruleset t.plain "no generator"\nquery main = 1\n', encoding="utf-8")
    code, report, _ = diff(str(plain), str(plain), "--generate", "2")
    assert code == 3 and report["notes"] == ["neither ruleset has `query generate(seed)`: only the cases were tried"]


@pytest.mark.parametrize("shrink", ["-2", "-5"])
def test_diff_shrink_takes_minus_one_for_all_and_nothing_lower(shrink: str) -> None:
    std = str(ROOT / "rulesets" / "diplomacy" / "standard.rules")
    code, out, err = run_cli("diff", std, std, "--generate", "1", "--shrink", shrink)
    assert code == 2 and f"--shrink takes a number from 0, or -1 for all, not {shrink}" in err and not out


def test_cited_only_by_lines_wrap_at_the_width(tmp_path: Path) -> None:
    """A difference whose NEW run meets thirty clauses OLD's does not lists them over lines of at most
    100 columns, each clause whole."""
    ids = [f"LONG-CLAUSE-{i:02d}" for i in range(30)]
    (tmp_path / "clauses.yaml").write_text("clauses:\n" + "".join(f"  {c}: text\n" for c in ids + ["X-0"]), encoding="utf-8")
    (tmp_path / "old.rules").write_text('ruleset t.old "old"\nclauses "clauses.yaml"\nrule one() cite "X-0" = 1\n'
                                        "query main = {v: one()}\n", encoding="utf-8")
    rules = "".join(f'rule r{i}() cite "{c}" = {i}\n' for i, c in enumerate(ids))
    (tmp_path / "new.rules").write_text('ruleset t.new "new"\nclauses "clauses.yaml"\n' + rules
                                        + "query main = {v: " + " + ".join(f"r{i}()" for i in range(30)) + "}\n",
                                        encoding="utf-8")
    (tmp_path / "cases.yaml").write_text("ruleset: old.rules\ncases:\n  - id: one\n    state: {}\n    expect: {}\n",
                                         encoding="utf-8")
    code, out, err = run_cli("diff", str(tmp_path / "old.rules"), str(tmp_path / "new.rules"), "--cases",
                             str(tmp_path / "cases.yaml"))
    assert code == 1, err
    cited = out[out.index("  cited only by NEW: "):out.index("\ncases that differ")].splitlines()
    assert len(cited) > 1 and max(map(len, cited)) <= 100, out
    assert [c.strip(" ,") for line in cited for c in line.split(": ")[-1].split(", ")] == sorted(ids), out
    assert "cited only by OLD: X-0" in out


def test_kinds_of_change_match_list_items_as_collections() -> None:
    """One unit destroyed in OLD and another in NEW shifts a sorted list: the kinds of change are the
    fields the two lone units differ in, not every field of every unit after them (which made a shrunk
    state keep an unrelated power's units to keep `/units/*/power` changed)."""
    from validator.tools.errata import _kinds

    a = {"units": [{"power": "italy", "at": "alb", "type": "fleet"}, {"power": "russia", "at": "sev", "type": "fleet"}]}
    b = {"units": [{"power": "russia", "at": "sev", "type": "fleet"}, {"power": "italy", "at": "smy", "type": "army"}]}
    assert _kinds(a, b) == {"/units/*/at", "/units/*/type"}
    assert _kinds({"u": [1, 2, 2]}, {"u": [2, 1]}) == {"/u/*"}  # an item left over on one side
    assert _kinds({"o": [{"s": "fails", "r": "x"}]}, {"o": [{"s": "succeeds", "r": None}]}) == {"/o/*/s", "/o/*/r"}
    assert _kinds({"m": {"bul": "turkey"}}, {"m": {"bul": "russia", "den": "germany"}}) == {"/m/bul", "/m/den"}


def _errata(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / f"{name}.rules"
    path.write_text(f'ruleset t.{name} "{name}"\nextends "bundled:diplomacy/standard.rules"\n\n{body}', encoding="utf-8")
    return str(path)


STD = str(ROOT / "rulesets" / "diplomacy" / "standard.rules")
GAME_START = str(ROOT / "docs" / "examples" / "game" / "start.json")


def test_a_run_that_fails_with_its_case_s_dice_is_shown_with_what_it_said(tmp_path: Path) -> None:
    """What a failed run said is what the run that failed said: the same query, arguments, seed,
    dice and exactness as the comparison's (``errata._settings``; it was run again without the case's
    dice, which did not fail: "the run failed")."""
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "old.rules").write_text('ruleset t.old "old"\nquery main = {v: 6 / (roll(1d6) - 6)}\n')
    (tmp_path / "new.rules").write_text('ruleset t.new "new"\nquery main = {v: roll(1d6)}\n')
    (tmp_path / "cases.yaml").write_text("ruleset: old.rules\ncases:\n  - id: six\n    state: {}\n    dice: [6]\n"
                                         "    expect: {v: 0}\n")
    code, out, err = run_cli("diff", str(tmp_path / "old.rules"), str(tmp_path / "new.rules"), "--cases",
                             str(tmp_path / "cases.yaml"))
    assert code == 1, err
    said = " ".join(line.strip() for line in out.splitlines())  # (a long path wraps)
    assert "OLD: E003 division by zero (at " in said and "the run failed" not in said, out


def test_a_run_that_fails_is_shown_with_what_it_said(tmp_path: Path) -> None:
    """A rules error in NEW: the difference says the error, where in the rules it is, and no list of
    clauses "cited only by OLD" (a run that stopped cites nothing to compare); JSON has the same. (The
    override's list holds a value of no known type: `[1][3]`, a number, is found by the check, C004 at the
    base's `len(cut_by(s))`, before any run.)"""
    broken = _errata(tmp_path, "broken", 'override rule cut_by(s) cite "DIP-P1" = [s][3]\n')
    code, out, err = run_cli("diff", STD, broken, "--generate", "1")
    assert code == 1, err
    lines = out.splitlines()
    said = " ".join(line.strip() for line in lines)  # (a long path wraps)
    assert lines[0] == "generate(0): NEW (E002) failed to run (query `main`)" and max(map(len, lines)) <= 100
    assert "NEW: E002 index 3 outside a list of 1 items (at " in said and "broken.rules:4) tried 1 state" in said, out
    assert "cited only by" not in out and "/error" not in out
    code, report, _ = diff(STD, broken, "--generate", "1")
    [found] = report["differences"]
    assert found["failures"]["NEW"].startswith("E002 index 3 outside") and "OLD" not in found["failures"]
    assert found["shrinking_runs"] > 0 and found["cited_only_by"] == {"OLD": [], "NEW": []}


def test_a_failing_random_orders_stops_its_game_only(tmp_path: Path) -> None:
    """NEW's random_orders has an error: the even games (NEW's orders) stop at their first retreat
    phase, the odd ones (OLD's orders) are played through; the error of the rules is a finding (1)."""
    broken = _errata(tmp_path, "orders", 'override rule random_retreat_orders(seed) cite "DIP-R1" = [1][3]\n')
    code, report, _ = diff(STD, broken, "--games", "2", "--phases", "12", "--start", GAME_START)
    assert code == 1 and report["games"] == 2, report
    [stopped] = report["stopped"]
    assert stopped.startswith("game 0 stopped at phase ") and "NEW's `random_orders(" in stopped and "E002" in stopped
    assert report["phases"] > 12 and report["differences"] == []  # game 1 played its 12 phases


def test_a_game_state_one_side_refuses_shrinks_to_the_refusal(tmp_path: Path) -> None:
    """OLD refuses states after 1902: the game phase where it does is a difference, said with OLD's
    words, and shrunk among the states OLD refuses alike (it was left unshrunk, thousands of characters)."""
    refuse = _errata(tmp_path, "refuse", 'override rule phase_problems cite "DIP-G1" =\n'
                     '  if phase.year > 1902 then [problem_at("/phase/year", "no year after 1902", "DIP-G1")] else []\n')
    code, out, err = run_cli("diff", refuse, STD, "--games", "1", "--phases", "20", "--start", GAME_START)
    assert code == 1, out + err
    head, shrunk, *_ = out.splitlines()
    assert head.endswith(": OLD (S002) refused the state (query `advance`)"), out
    assert "  OLD: S002 no year after 1902 (at /phase/year)" in out.splitlines()
    _, report, minimal = diff(refuse, STD, "--games", "1", "--phases", "20", "--start", GAME_START)
    assert minimal[0]["units"] == [] and minimal[0]["phase"]["year"] == 1903, minimal


BUNDLED = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "rulesets").rglob("*.rules")
                 if "generate" in load_ruleset(p).queries())


@pytest.mark.slow
@pytest.mark.parametrize("path", BUNDLED)
def test_generated_states_pass_their_own_ruleset_s_state_check(path: str) -> None:
    """`--generate 100` on every bundled ruleset with a generator: each state passes the ruleset's
    own state check (its schema and `query validate_state`), so nothing is skipped; were one refused,
    the report would name the reason (counted by reason)."""
    code, report, _ = diff(str(ROOT / path), str(ROOT / path), "--generate", "100")
    assert (code, report["tried"], report["skipped"], report["skip_reasons"]) == (0, 100, 0, {}), report


def test_a_skipped_state_is_counted_by_its_reason() -> None:
    from collections import Counter

    from validator.tools import errata

    std = load_ruleset(ROOT / "rulesets" / "diplomacy" / "standard.rules")
    teaching = load_ruleset(ROOT / "rulesets" / "diplomacy" / "teaching.rules")
    report = errata.compare_states(teaching, std, [], 4, 0, False, 0, errata.Options(jobs=1))
    assert report.seen == 4 and report.tried == 0 and sum(report.skips.values()) == 4
    assert all(r.startswith("OLD refuses it: S002 ") and "is no place on this map" in r for r in report.skips), report.skips
    assert errata.skips_text(Counter({"a": 2, "b": 1})) == "3 skipped: 2 × a; 1 × b"
