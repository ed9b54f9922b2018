"""More defects where the checker, the two engines, the trace and the docs gave a construct different
meanings (session 32, second round): each construct has one meaning, said once."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from test_one_meaning import check_codes, load, run_error

ENGINES = ["backend", "reference"]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "ruleval.toml").write_text("")
    return tmp_path


# -- 1. a decision is a truth value: the checker refuses a body known to be another kind, a run any other


def test_a_decision_whose_body_is_a_number_is_refused_by_the_check(root: Path) -> None:
    """`decision d(p) = 3` passed the check and ran to 3, while `d("a") + 1` was C004 `bool + int`."""
    text = 'ruleset t "t"\ndecision d(p) cite "X" = 3\nquery main = d("a")\n'
    assert check_codes(root, text) == [("C004", "3")]


def test_a_cycle_policy_settling_with_a_number_is_refused_by_the_check(root: Path) -> None:
    text = ('ruleset t "t"\ndecision d(p) cite "X" = not d(p)\n'
            'cycle d cite "X" { otherwise => settle cycle as 1 }\nquery main = d("a")\n')
    assert check_codes(root, text) == [("C004", "1")]


GIVES = '''ruleset t "t"
def f(p) = p
decision d(p) cite "X" = f(p)
decision e(p) cite "X" = not e(p)
cycle e cite "X" { otherwise => settle cycle as f(2) }
query main(x) = d(x)
query cyc = e(1)
'''


@pytest.mark.parametrize("arg", [3, "a", None, [True]])
@pytest.mark.parametrize("engine", ENGINES)
def test_a_decision_giving_no_truth_value_is_an_error_at_its_body(root: Path, arg: Any, engine: str) -> None:
    """What the checker cannot see (the body's kind is unknown), the run refuses, in both engines."""
    rs = load(root, GIVES)
    assert not [d for d in rs.diagnostics if d.is_error]
    d = run_error(rs, engine, query="main", args=[arg])
    assert (d.code, d.span.line, d.span.col) == ("E001", 3, 26), d
    assert "truth value" in d.message


@pytest.mark.parametrize("engine", ENGINES)
def test_a_cycle_policy_settling_with_no_truth_value_is_an_error_at_the_value(root: Path, engine: str) -> None:
    rs = load(root, GIVES)
    d = run_error(rs, engine, query="cyc")
    assert (d.code, d.span.line, d.span.col) == ("E001", 5, 49), d


@pytest.mark.parametrize("arg", [True, False])
@pytest.mark.parametrize("engine", ENGINES)
def test_a_decision_giving_a_truth_value_stays(root: Path, arg: bool, engine: str) -> None:
    rs = load(root, GIVES)
    assert rs.run({}, engine=engine, query="main", args=[arg]) is arg


# -- 2. a procedure's step that runs covers its clause, whether or not it emits


STEPS = '''ruleset t "t"
clauses "clauses.yaml"
procedure p cite "P-1" {
  var n = 0
  step quiet cite "S-1" {
    n := n + 1
  }
  step loud cite "S-2" {
    emit "e" {n: n}
    stop
  }
  step never cite "S-3" {
    n := 0
  }
}
query main = p()
'''


def test_a_step_that_runs_and_emits_nothing_is_covered(root: Path) -> None:
    """A step's clause was covered only through an event it emitted: `quiet` ran and covered nothing,
    while docs/tools.md says a step counts."""
    from validator.tools.cli import main

    (root / "clauses.yaml").write_text("clauses:\n  P-1: p\n  S-1: q\n  S-2: l\n  S-3: n\n  S-4: x\n")
    load(root, STEPS)
    (root / "cases.yaml").write_text("ruleset: main.rules\ncases:\n  - id: one\n    state: {}\n"
                                     "    expect: {status: stopped}\n")
    out, err = io.StringIO(), io.StringIO()
    assert main(["coverage", "--format", "json", str(root / "cases.yaml")], stdout=out, stderr=err) == 0, err.getvalue()
    [cov] = json.loads(out.getvalue())["rulesets"]
    assert cov["covered"] == ["P-1", "S-1", "S-2"] and cov["uncovered"] == ["S-3", "S-4"], cov


def test_each_step_that_runs_is_a_node_of_the_trace(root: Path) -> None:
    rs = load(root, STEPS.replace('clauses "clauses.yaml"\n', ""))
    [proc] = rs.evaluate({}, explain=True).explain["trace"]
    assert [(n["rule"], n["kind"], n["cites"]) for n in proc["children"]] == [
        ("quiet", "step", ["S-1"]), ("loud", "step", ["S-2"])]


# -- 3. a test against none narrows in a procedure's `if` as in an `if` expression


NARROW = '''ruleset t "t"
def maybe(x) = if x > 0 then x else none
def keep(g) = g
procedure p(x) cite "P-1" {
  var out = 0
  var v = maybe(x)
  step s cite "S-1" {
    let r = {x: maybe(x), y: none}
    let n = maybe(x)
    BODY
  }
}
query main(x) = p(x)
'''


@pytest.mark.parametrize("body", [
    "if r.y != none { out := r.y + 1 }",  # (was C004: r.y taken for none where it is not)
    "if n == none { out := 0 } elif n > 3 { out := n } else { out := n + 2 }",
    "if v == none { v := 3 out := v + 1 }",  # a `var` changed after the test: nothing told of it
    "if v == none { if x > 0 { v := 3 } out := v + 1 }",
    "if v == none { for y in [1, 2] { out := v + 1 v := y } }",  # changed by an earlier turn of the loop
    "if v == none { let f = fn() => v + 1 v := 1 out := f() }",  # a lambda is called later
    "if v == none { let g = keep(v + i for i in [1]) v := 1 out := sum(g) }",  # so is a generator walked
])
def test_an_if_statement_narrows_what_it_tests_where_nothing_changes_it(root: Path, body: str) -> None:
    assert check_codes(root, NARROW.replace("BODY", body)) == []


@pytest.mark.parametrize("body, bad", [
    ("if n == none { out := n + 1 }", "n + 1"),
    ("if r.x != none { out := 1 } else { out := r.x + 1 }", "r.x + 1"),
    ("if n != none and x > 2 { out := 1 } elif x > 1 { out := 2 } else { out := n - 1 }", None),
    ("if v == none { out := v + 1 }", "v + 1"),
    ("if v == none { v := v } if v == none { out := v * 2 }", "v * 2"),
])
def test_an_if_statement_tells_its_blocks_what_is_none(root: Path, body: str, bad: str | None) -> None:
    """`if n == none { n + 1 }`, certain to fail, passed the check (an `if` statement told nothing)."""
    assert check_codes(root, NARROW.replace("BODY", body)) == ([("C004", bad)] if bad else [])


# -- 4. a loop over what is certainly no collection is refused by the check, as the run refuses it


@pytest.mark.parametrize("code, bad", [
    ("query main = [q for q in cut_by(1)]", "cut_by(1)"),
    ("query main = {q => 1 for q in cut_by(1)}", "cut_by(1)"),
    ("query main = any(q for q in 1 < 2)", "1 < 2"),
    ('query main = [c for c in "abc"]', '"abc"'),
    ("query main = [q for q in 2d6]", "2d6"),
    ("query main = [q for q in cut_by]", "cut_by"),
    ('procedure p cite "P-1" {\n  step s cite "S-1" {\n    for q in cut_by(2) { stop }\n  }\n}\nquery main = p()',
     "cut_by(2)"),
])
def test_a_loop_over_no_collection_is_refused_by_the_check(root: Path, code: str, bad: str) -> None:
    """`for q in cut_by(p)`, where `cut_by` gives a number, passed the check and failed every run (E001)."""
    assert check_codes(root, f'ruleset t "t"\ndef cut_by(p) = 3\n{code}\n') == [("C004", bad)]


@pytest.mark.parametrize("engine", ENGINES)
def test_what_the_check_refuses_to_loop_over_the_run_refuses(root: Path, engine: str) -> None:
    rs = load(root, 'ruleset t "t"\ndef f(x) = x\nquery main(x) = [q for q in f(x)]\n')
    for arg in (3, "abc", True):
        assert run_error(rs, engine, args=[arg]).code == "E001"
    assert rs.run({}, engine=engine, args=[{"a": 1}]) == ["a"]


@pytest.mark.parametrize("over", ["[1]", "{1}", '{"a" => 1}', "{a: 1}", "none", "maybe", "range(2)"])
def test_a_loop_over_a_collection_or_an_unknown_is_not_refused(root: Path, over: str) -> None:
    text = f'ruleset t "t"\ndef maybe = if 1 > 2 then [1] else none\nquery main = [q for q in {over}]\n'
    assert check_codes(root, text) == []


# -- 5. the engine's own events are its own: no `emit` takes their names


def test_an_emit_may_not_take_the_name_of_the_engine_s_rejection(root: Path) -> None:
    """`emit "rejected" {reason: ...}` made an event a reader could not tell from the engine's own record
    of a rejection, though the procedure completed."""
    text = ('ruleset t "t"\nprocedure p cite "P-1" {\n  step s cite "S-1" {\n    emit "rejected" {reason: "no"}\n'
            '  }\n}\nquery main = p()\n')
    assert check_codes(root, text) == [("C002", 'emit "rejected" {reason: "no"}')]


@pytest.mark.parametrize("engine", ENGINES)
def test_the_engine_s_rejection_event_stays(root: Path, engine: str) -> None:
    text = 'ruleset t "t"\nprocedure p cite "P-1" {\n  step s cite "S-1" {\n    reject "no"\n  }\n}\nquery main = p()\n'
    rs = load(root, text)
    assert rs.evaluate({}, engine=engine).events == [{"event": "rejected", "step": "s", "reason": "no", "cites": ["S-1"]}]
