"""Defects where the checker, the two engines and docs/language.md gave a construct different meanings
(session 32): each construct has one meaning, which all of them give."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from validator.api import RunError, load_ruleset

FIXTURES = Path(__file__).parent / "fixtures" / "tools"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "ruleval.toml").write_text("")
    return tmp_path


def load(root: Path, text: str, name: str = "main.rules") -> Any:
    (root / name).write_text(text, encoding="utf-8")
    return load_ruleset(root / name, use_cache=False)


def check_codes(root: Path, text: str) -> list[tuple[str, str]]:
    """Each error of the check: its code and the text it underlines (its first line)."""
    rs = load(root, text)
    lines = text.splitlines()
    return [(d.code, lines[d.span.line - 1][d.span.col - 1:d.span.end_col - 1 if d.span.end_line == d.span.line
                                            else None])
            for d in rs.diagnostics if d.is_error and d.span.file.endswith("main.rules")]


def run_error(rs: Any, engine: str, **kw: Any) -> Any:
    with pytest.raises(RunError) as exc:
        rs.run({}, engine=engine, **kw)
    return exc.value.diagnostics[0]


# -- 1. `*` and its kin take numbers (`+` also two texts or two lists): the checker's meaning is the engines'

@pytest.mark.parametrize("call", [
    'f("ab", "*", 2)', 'f(2, "*", "ab")', 'f([1], "*", 2)', 'f((1, 2), "*", 2)', 'f("ab", "*", -1)',
    'f({1, 2}, "-", {1})', 'f("a%sb", "%", none)', 'f("a%sb", "%", [1])', 'f("a%cb", "%", 99999999)',
    'f("ab", "//", 2)', 'f([4], "/", 2)',
])
@pytest.mark.parametrize("engine", ["backend", "reference"])
def test_arithmetic_takes_numbers_in_both_engines(root: Path, call: str, engine: str) -> None:
    """What the checker refuses where it knows the kinds (C004), a run refuses where it does not (E001),
    in both engines: no Python meaning (repetition, set difference, %-formatting) leaks through, and no
    operand is an internal error."""
    op = re.search(r', "([-*%/]+)", ', call).group(1)  # type: ignore[union-attr]
    text = ("ruleset t \"t\"\n"
            f"def f(x, op, y) = if op == \"*\" then x * y elif op == \"-\" then x - y elif op == \"%\" then x % y "
            f"elif op == \"//\" then x // y else x / y\nquery main = {call}\n")
    rs = load(root, text)
    assert not [d for d in rs.diagnostics if d.is_error]
    d = run_error(rs, engine)
    assert d.code == "E001" and f"` {op} `" in d.message, d


@pytest.mark.parametrize("expr", ['"ab" * 2', '[1] * 2', '2 * "ab"', '{1, 2} - {1}', '"a%sb" % 1'])
def test_the_checker_refuses_what_the_engines_refuse(root: Path, expr: str) -> None:
    assert check_codes(root, f'ruleset t "t"\nquery main = {expr}\n') == [("C004", expr)]


@pytest.mark.parametrize("expr, want", [("7 * 3", 21), ("3/2 * 4", 6), ("7 % 2", 1), ("7 - 9", -2),
                                        ('"a" + "b"', "a"'b'), ("[1] + [2]", [1, 2])])
@pytest.mark.parametrize("engine", ["backend", "reference"])
def test_arithmetic_of_numbers_and_joins_stay(root: Path, expr: str, want: Any, engine: str) -> None:
    rs = load(root, f'ruleset t "t"\ndef f(x) = x\nquery main = f({expr})\n')
    assert rs.run({}, engine=engine) == want


def test_dice_named_by_a_def_are_refused_by_the_check_with_how_to_roll_them(root: Path) -> None:
    """`2d6` is dice, not a roll: `2d6 + 1` was C004 written so, but passed the check through a `def`
    named as a value (its inferred type was dropped) and failed only at run time."""
    text = 'ruleset t "t"\ndef d = 2d6\nquery main = d + 1\n'
    rs = load(root, text)
    errors = [d for d in rs.diagnostics if d.is_error]
    assert [(d.code, d.span.line) for d in errors] == [("C004", 3)], errors
    assert "roll(" in (errors[0].help or "")


def test_dice_through_a_parameter_fail_at_run_time_saying_how_to_roll_them(root: Path) -> None:
    """Through a parameter with no declared type the checker cannot know (it says nothing where it is not
    sure); the run's E001 says how to roll them."""
    rs = load(root, 'ruleset t "t"\ndef f(x) = x + 1\nquery main = f(2d6)\n')
    for engine in ("backend", "reference"):
        d = run_error(rs, engine, seed=1)
        assert d.code == "E001" and "roll(2d6)" in (d.help or ""), d


# -- 3. an `emit`'s payload never stands for the event's own fields

PROCEDURE = '''ruleset t "t"
procedure p cite "P-1" {
  step a cite "S-1" {
    emit "e" {PAYLOAD}
  }
}
query main = p()
'''


@pytest.mark.parametrize("payload, field", [('cites: ["X-9"]', '["X-9"]'), ('n: 1, step: "z"', '"z"'),
                                            ('event: "q"', '"q"'), ("n: 1, n: 2", "2")])
def test_an_emit_payload_may_not_name_an_event_s_own_fields(root: Path, payload: str, field: str) -> None:
    """A payload field `cites` replaced the event's citations (so a run could claim any clause, and
    `ruleval coverage` counted it); `step`, `event` and a field named twice were overwritten alike."""
    assert check_codes(root, PROCEDURE.replace("PAYLOAD", payload)) == [("C002", field)]


def test_an_emit_payload_of_other_fields_is_the_event_s(root: Path) -> None:
    rs = load(root, PROCEDURE.replace("PAYLOAD", 'n: 1, why: "w"'))
    for engine in ("backend", "reference"):
        assert rs.evaluate({}, engine=engine).events == [
            {"event": "e", "step": "a", "cites": ["S-1"], "n": 1, "why": "w"}]


# -- 4. a procedure that runs covers its own clauses


def test_a_procedure_that_runs_covers_its_own_cite() -> None:
    """`roll_it cite "T-4"` runs in the case `roll` (its step's T-5 was covered, through the step's event,
    but never the procedure's T-4: a procedure was no node of the trace)."""
    import io

    from validator.tools.cli import main

    out, err = io.StringIO(), io.StringIO()
    code = main(["coverage", "--format", "json", str(FIXTURES / "cases.yaml")], stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    [demo] = json.loads(out.getvalue())["rulesets"]
    assert "T-4" in demo["covered"] and "T-5" in demo["covered"] and demo["uncovered"] == ["T-6"], demo


def test_a_traced_procedure_is_a_node_of_the_trace_with_its_clauses(root: Path) -> None:
    rs = load(root, PROCEDURE.replace("PAYLOAD", "n: 1"))
    trace = rs.evaluate({}, explain=True).explain["trace"]
    assert [(n["rule"], n["kind"], n["cites"], n["value"]) for n in trace] == [
        ("p", "procedure", ["P-1"], {"status": "completed"})]


# -- 5. a test against none narrows a path of fields as it narrows a name


@pytest.mark.parametrize("body", [
    "(let r = {x: none}; if r.x != none then r.x + 1 else 0)",  # (was C004: r.x taken for none where it is not)
    "(let r = {a: {x: none}}; if r.a.x == none then 0 else r.a.x + 1)",
    "(let r = {x: none}; r.x != none and r.x + 1 > 2)",
    "(let r = {x: none}; r.x == none or r.x + 1 > 2)",
])
def test_a_field_tested_against_none_is_not_none_where_the_test_says_so(root: Path, body: str) -> None:
    assert check_codes(root, f'ruleset t "t"\nquery main = {body}\n') == []


def test_a_field_tested_as_none_is_none_where_the_test_says_so(root: Path) -> None:
    text = ('ruleset t "t"\nrecord R { x: int? }\n'
            "def f(r: R) = if r.x == none then r.x + 1 else r.x - 1\nquery main = f({x: 1})\n")
    assert check_codes(root, text) == [("C004", "r.x + 1")]


@pytest.mark.parametrize("body", [
    "if r.x == none then (let r = {x: 1}; r.x + 1) else 0",  # another `r`: nothing told of it
    "if r.x == none then r.y + 1 else 0",  # another field
])
def test_what_a_test_tells_of_one_path_is_not_told_of_another(root: Path, body: str) -> None:
    text = f'ruleset t "t"\nrecord R {{ x: int?, y: int }}\ndef f(r: R) = {body}\nquery main = f({{x: 1, y: 2}})\n'
    assert check_codes(root, text) == []


# -- 2. a finding an `override` causes in the code it is called from points at the override


BROKEN = ('ruleset t.broken "broken"\nextends "bundled:diplomacy/standard.rules"\n\n'
          'override rule cut_by(s) cite "DIP-P1" = [1][3]\n')


def test_a_finding_an_override_causes_in_its_base_points_at_the_override(root: Path) -> None:
    """Two findings: `len(cut_by(s))`, and a loop over `cut_by(p)` (since the loop's check, session 32)."""
    rs = load(root, BROKEN)
    errors = [d for d in rs.diagnostics if d.is_error]
    assert [(d.code, "len" in d.message, "loop" in d.message) for d in errors] == [
        ("C004", True, False), ("C004", False, True)], errors
    for d in errors:
        assert d.span.file.endswith("standard.rules"), d
        [rel] = d.related
        assert (Path(rel.span.file).name, rel.span.line, rel.span.col) == ("main.rules", 4, 1), rel
        assert "cut_by" in rel.message


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_the_override_s_place_is_in_every_output(root: Path, fmt: str) -> None:
    import io

    from validator.tools.cli import main

    (root / "main.rules").write_text(BROKEN, encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    assert main(["check", "--no-cache", "--format", fmt, str(root / "main.rules")], stdout=out, stderr=err) == 1
    said = out.getvalue() + err.getvalue()
    assert "Traceback" not in said
    if fmt == "text":  # (two findings, each with its note: ``test_a_finding_an_override_causes_...``)
        notes = [ln for ln in said.splitlines() if ln.strip().startswith("= note:")]
        assert len(notes) == 2 and all("main.rules:4:1" in n for n in notes), said
    elif fmt == "json":
        found = json.loads(out.getvalue())
        assert len(found) == 2, found
        for d in found:
            assert [r["location"].rsplit("/", 1)[-1] for r in d["related"]] == ["main.rules:4:1"], d
    else:
        results = json.loads(out.getvalue())["runs"][0]["results"]
        assert len(results) == 2, results
        for result in results:
            [loc] = result["relatedLocations"]
            where = loc["physicalLocation"]
            assert where["artifactLocation"]["uri"].endswith("main.rules") and where["region"]["startLine"] == 4, loc
            assert "cut_by" in loc["message"]["text"]


def test_two_variants_overriding_alike_each_point_at_their_own_override(root: Path) -> None:
    """The base's check is shared by variants whose context is the same (``types._TYPED``): two overrides
    giving the same type are two contexts, each finding's note at its own variant."""
    for name in ("one.rules", "two.rules"):
        rs = load(root, BROKEN.replace("t.broken", "t." + name[:3]), name)
        errors = [d for d in rs.diagnostics if d.is_error]
        assert len(errors) == 2, errors
        for d in errors:
            assert [Path(r.span.file).name for r in d.related] == [name], d
