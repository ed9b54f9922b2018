"""A case that cannot run as written (S004) is one thing, said one way: ``testing.case_fault`` gives it
as a Diagnostic at the value at fault (it gave `test` and `coverage` a `file:line:col` text beside the
message, while `diff --cases` read a Diagnostic from ``run_fault``: two shapes of one finding), and
`test`, `coverage` and `diff --cases` name the same place and say the same message."""

from __future__ import annotations

from pathlib import Path

import pytest

from validator.core.diagnostics import Diagnostic
from validator.tools import testing

RULES = 'ruleset t "t"\ninput n: int at "/n" default 0\nquery main = {x: n}\nquery twice(k: int) = k * 2\n'


def _suite(tmp_path: Path, case: str) -> Path:
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "t.rules").write_text(RULES)
    path = tmp_path / "c.yaml"
    path.write_text("ruleset: t.rules\ncases:\n  - id: ok\n    state: {n: 1}\n    expect: {x: 1}\n" + case)
    return path


def test_case_fault_is_a_diagnostic_at_the_value(tmp_path: Path) -> None:
    path = _suite(tmp_path, "  - id: bad\n    query: twice\n    args: 5\n    expect: 10\n")
    faults = [testing.case_fault(c) for c in testing.load_suite([str(path)]).cases]
    assert faults[0] is None
    bad = faults[1]
    assert isinstance(bad, Diagnostic) and bad.code == "S004", bad
    assert (bad.span.file, bad.span.line, bad.span.col) == (str(path), 8, 11), bad.span  # (`5`, after `args: `)
    assert bad.message == "case `bad`: `args` must be a list", bad.message


def test_an_expectation_of_the_wrong_kind_is_no_fault_of_the_run(tmp_path: Path) -> None:
    """``run_only`` (what `diff --cases` asks): the run's fields only, its expectations not."""
    path = _suite(tmp_path, "  - id: bad\n    query: twice\n    args: [2]\n    expect: .nan\n")
    [_, case] = testing.load_suite([str(path)]).cases
    assert testing.case_fault(case) is not None and testing.case_fault(case, run_only=True) is None


def test_test_coverage_and_diff_say_a_malformed_case_at_one_place(cli, tmp_path: Path) -> None:
    path = _suite(tmp_path, "  - id: bad\n    query: twice\n    args: [2]\n    dice: [0]\n    expect: 4\n")
    said = f"{path}:9:12"  # (the face `0`, the list's item of the wrong kind)
    message = "case `bad`: `dice` must be a list of die faces, integers from 1 (item 0 is 0)"
    ran = cli("test", str(path))
    assert ran.code == 3 and f"{said}: S004: {message}" in ran.out, ran.out + ran.err
    measured = cli("coverage", str(path))
    assert measured.code == 3 and f"{said}: error[S004]: {message}" in measured.err, measured.err
    rules = str(tmp_path / "t.rules")
    diffed = cli("diff", rules, rules, "--cases", str(path))
    assert diffed.code == 3 and diffed.err.startswith(f"{said}: error[S004]: {message}"), diffed.err


def test_a_case_with_no_expectation_is_refused_at_its_id(cli, tmp_path: Path) -> None:
    """A case with none of `expect`, `probabilities` or `expect_error` checks nothing: it ran and failed
    (exit 1, as if the rules were wrong) with no place in the file; now S007 at its `id`, exit 3, the
    other cases still run."""
    path = _suite(tmp_path, "  - id: nothing\n    state: {n: 2}\n")
    ran = cli("test", str(path))
    assert ran.code == 3 and f"{path}:6:5: error[S007]: case `nothing`: the case has no expectation" in ran.err, ran.err
    assert "1 passed, 0 failed" in ran.out, ran.out


def test_diff_says_a_case_state_json_cannot_hold_at_its_value(cli, tmp_path: Path) -> None:
    """A case's `state` holding what JSON cannot (a YAML date) was said by `diff --cases` at the case's
    first line, column 1, while `test` said it at the value: both now at the value, its pointer kept."""
    path = _suite(tmp_path, "  - id: dated\n    state: {n: 2020-01-01}\n    expect: {x: 1}\n")
    said = f"{path}:7:16"
    ran = cli("test", str(path))
    assert ran.code == 3 and f"{said}: S001: state of case `dated`" in ran.out, ran.out
    rules = str(tmp_path / "t.rules")
    diffed = cli("diff", rules, rules, "--cases", str(path))
    assert diffed.code == 3 and diffed.err.startswith(f"{said}: error[S001]: state of case `dated`"), diffed.err
    assert "= pointer: /n" in diffed.err, diffed.err


def test_diff_given_cases_that_are_not_there_says_so_alone(cli, tmp_path: Path) -> None:
    """`diff --cases` of a path that is not there said U001, then `tried 0 states: nothing was compared`
    as if a comparison had been made; now the usage error alone, exit 2."""
    _suite(tmp_path, "")
    rules = str(tmp_path / "t.rules")
    missing = str(tmp_path / "cases.yml")
    diffed = cli("diff", rules, rules, "--cases", missing)
    assert diffed.code == 2 and diffed.err == f"{missing}: error[U001]: `{missing}` not found\n", diffed.err
    assert diffed.out == "", diffed.out


def test_a_case_giving_both_state_and_state_file_is_malformed(cli, tmp_path: Path) -> None:
    """`state_file` was read and `state` passed over without a word: a case that reads as checking one
    state ran on another. Now S004 at `state_file`, exit 3, in `test` and `diff --cases` alike."""
    path = _suite(tmp_path, "  - id: both\n    state: {n: 2}\n    state_file: s.json\n    expect: {x: 2}\n")
    (tmp_path / "s.json").write_text('{"n": 5}')
    said = f"{path}:8:17: S004: case `both`: `state` and `state_file` both give the case's state: keep one"
    ran = cli("test", str(path))
    assert ran.code == 3 and said in ran.out, ran.out
    rules = str(tmp_path / "t.rules")
    diffed = cli("diff", rules, rules, "--cases", str(path))
    assert diffed.code == 3 and said.replace(" S004:", " error[S004]:") in diffed.err, diffed.err


@pytest.mark.parametrize("written, shown", [("[a]", '["a"]'), ('""', '""'), ("", "none"), ("{a: 1}", "{a: 1}")])
def test_a_case_whose_id_is_no_name_is_refused_at_it(cli, tmp_path: Path, written: str, shown: str) -> None:
    """`id: [a]` ran as the case `['a']` (Python's text of a list), `id: ""` and `id:` as cases of no name."""
    path = _suite(tmp_path, f"  - id: {written}\n    state: {{n: 2}}\n    expect: {{x: 2}}\n")
    ran = cli("test", str(path))
    assert ran.code == 3 and f"{path}:6:5: error[S004]: a case's `id` is a name (a text), not {shown}\n" in ran.err, ran.err
    assert "1 passed, 0 failed" in ran.out, ran.out


@pytest.mark.parametrize("written", ["3", "true", '""', "", "[why]"])
def test_an_xfail_that_gives_no_reason_in_words_is_refused_at_it(cli, tmp_path: Path, written: str) -> None:
    """`xfail: 3` (or `true`, an empty text, nothing) marked a case as a known failure with no reason
    in words: the case failed quietly as "xfailed 3". An xfail reason is a text: anything else is
    S004 at its value, exit 3, the case not run; a reason in words keeps the case xfailed."""
    path = _suite(tmp_path, f"  - id: later\n    state: {{n: 2}}\n    expect: {{x: 3}}\n    xfail: {written}\n")
    ran = cli("test", str(path))
    # (a scalar at its value; nothing after the colon just past it; a list at its key, as for any key)
    col = len("    xfail: ") + 1 if written and written != "[why]" else len("    xfail") - 4 if written else len("    xfail:") + 1
    said = f"{path}:9:{col}: S004: case `later`: `xfail` must be the reason the case is known to fail, in words (a text)"
    assert ran.code == 3 and said in ran.out, ran.out
    worded = _suite(tmp_path, "  - id: later\n    state: {n: 2}\n    expect: {x: 3}\n    xfail: issue 12, not yet\n")
    kept = cli("test", str(worded))
    assert kept.code == 0 and "1 xfailed" in kept.out, kept.out
