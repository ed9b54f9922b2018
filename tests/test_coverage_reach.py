"""`ruleval coverage` counts a clause covered only when a case's run reached something citing it:
a clause a case names in `clauses:` is that case's claim, not a run of the clause."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from validator.tools.cli import main

CLAUSES = "clauses:\n  X-1: one\n  X-2: two\n  X-3: three\n"
# a rule the query runs; X-2: a rule nothing calls; X-3: a rule the state check runs first (the
# query's own call of it then reads the value the check computed)
RULES = '''ruleset t.r "r"
clauses "clauses.yaml"
input items: list[int] at "/items" default []
rule seen(i) cite "X-3" = i > 0
rule never(i) cite "X-2" = i
rule unit(i) cite "X-1" = {id: i, ok: seen(i)}
query validate_state = [{pointer: "/items", message: "not positive"} for i in items if not seen(i)]
query main = [unit(i) for i in items]
'''
CASES = """ruleset: r.rules
cases:
  - id: names-two
    clauses: [X-2, X-3]
    state: {items: [1, 2]}
    expect: [{id: 1, ok: true}, {id: 2, ok: true}]
"""


def _project(tmp_path: Path) -> Path:
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "clauses.yaml").write_text(CLAUSES)
    (tmp_path / "r.rules").write_text(RULES)
    (tmp_path / "cases.yaml").write_text(CASES)
    return tmp_path / "cases.yaml"


def _coverage(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["coverage", *argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def _measured(cases: Path) -> dict[str, Any]:
    code, out, err = _coverage(str(cases), "--format", "json")
    assert code == 0, out + err
    (rs,) = json.loads(out)["rulesets"]
    return dict(rs)


def test_a_clause_a_case_names_but_nothing_that_ran_cites_is_not_covered(tmp_path: Path) -> None:
    """X-2 is named by a passing case but its rule never runs: it was counted covered (100 %)."""
    rs = _measured(_project(tmp_path))
    assert "X-2" not in rs["covered"] and "X-2" in rs["uncovered"], rs
    assert rs["listed_only"] == ["X-2"], rs  # named, reached by nothing: said apart


def test_a_rule_the_state_check_ran_covers_its_clause(tmp_path: Path) -> None:
    """X-3's rule runs in the state check, whose trace a run does not keep (the query then reads the
    check's value): the case reached it, and it counts."""
    (tmp_path / "cases.yaml").parent.mkdir(exist_ok=True)
    cases = _project(tmp_path)
    cases.write_text(CASES.replace("clauses: [X-2, X-3]", "clauses: []"))
    rs = _measured(cases)
    assert rs["covered"] == ["X-1", "X-3"], rs


def test_the_text_says_which_named_clauses_nothing_reached(tmp_path: Path) -> None:
    code, out, err = _coverage(str(_project(tmp_path)), "--fail-under", "60")
    assert code == 0, out + err
    assert "2/3 clauses (66.7%)" in out and "uncovered: X-2" in out, out
    assert "named by a case, reached by no run: X-2" in out, out


def test_a_case_refused_by_the_state_check_covers_what_the_check_ran(tmp_path: Path) -> None:
    """A case expecting the state check's refusal ran that check: its rules' clauses count (the query
    never ran, so X-1 does not)."""
    cases = _project(tmp_path)
    cases.write_text("ruleset: r.rules\ncases:\n  - id: refused\n    state: {items: [0]}\n"
                     "    expect_error: S002\n")
    rs = _measured(cases)
    assert rs["covered"] == ["X-3"], rs


def test_a_state_its_schema_refuses_covers_nothing(tmp_path: Path) -> None:
    """The state check never runs on a state the schema (here the input's type) refuses."""
    cases = _project(tmp_path)
    cases.write_text("ruleset: r.rules\ncases:\n  - id: refused\n    state: {items: [x]}\n"
                     "    expect_error: S002\n")
    rs = _measured(cases)
    assert rs["covered"] == [], rs


def test_diff_cites_what_the_state_check_ran_as_coverage_counts_it(tmp_path: Path) -> None:
    """`diff`'s "cited only by" reads citations as `coverage` does: a rule the state check ran (X-3 in the
    old ruleset, X-2 in the new) is cited by that side's run, though the query only reads its value."""
    cases = _project(tmp_path)
    (tmp_path / "new.rules").write_text(RULES.replace('rule seen(i) cite "X-3"', 'rule seen(i) cite "X-2"')
                                        .replace("{id: i, ok: seen(i)}", "{id: i, ok: seen(i), new: true}"))
    out, err = io.StringIO(), io.StringIO()
    code = main(["diff", str(tmp_path / "r.rules"), str(tmp_path / "new.rules"), "--cases", str(cases),
                 "--format", "json"], stdout=out, stderr=err)
    assert code == 1, out.getvalue() + err.getvalue()
    (difference,) = json.loads(out.getvalue())["differences"]
    assert difference["cited_only_by"] == {"OLD": ["X-3"], "NEW": ["X-2"]}, difference
