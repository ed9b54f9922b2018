"""A bug of the backend's writer (code Python refuses for another reason than its nesting) is told apart
from nesting in one place (``backend._compile_text``): a user's run still gets the reference's answer, with
a warning that says it is a bug of ruleval (I002, docs/diagnostics.md), while nesting stays E005 and unsaid;
every test fails on such a bug (``conftest.loud_writing_everywhere``). The bug is planted here: the writer
made to write a `return` Python refuses in each function whose code reads the text `planted`."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any, Iterator

import pytest

from fuzzing import UnwrittenByMistake
from validator.api import load_ruleset
from validator.engine import backend as B
from validator.lib.runtime import WRITER_BUG, Unwritable
from validator.tools.cli import main
from validator.tools.testing import load_suite, run_case

RULES = 'def tag(x) = if x == "planted" then 1 else 2\nquery main = [tag("planted"), tag("other"), tag(3)]\n'
ANSWER = [1, 2, 2]
DEEP = "query main = [x0" + "".join(f" for x{i} in [1, 2]" for i in range(3)) + \
       "".join(f" for y{i} in [1]" for i in range(22)) + "]\n"  # (25 nested loops: past Python's 20)
CASES = "ruleset: main.rules\ncases:\n  - id: planted\n    state: {}\n    expect: [1, 2, 2]\n"


@pytest.fixture
def planted(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    real = B.define

    def define(source: str, filename: str, g: dict[str, Any], kept: Any = None) -> Any:
        if "'planted'" in source:
            source = source.replace("return ", "return return ", 1)
        return real(source, filename, g, kept)

    monkeypatch.setattr(B, "define", define)
    yield


def project(tmp_path: Path, rules: str = RULES) -> Path:
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "main.rules").write_text(rules)
    (tmp_path / "state.json").write_text("{}")
    (tmp_path / "cases.yaml").write_text(CASES)
    return tmp_path


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    assert "Traceback" not in out.getvalue() + err.getvalue(), err.getvalue()
    return code, out.getvalue(), err.getvalue()


@pytest.mark.planted_writer_bug
def test_compile_text_tells_nesting_from_a_bug_of_the_writer() -> None:
    loops = "def f(ctx):\n" + "".join("    " * (i + 1) + f"for _v{i} in ctx:\n" for i in range(25)) + "    " * 26 + "pass"
    indents = "def f(ctx):\n" + "".join("    " * (i + 1) + "if ctx:\n" for i in range(105)) + "    " * 106 + "pass"
    brackets = "def f(ctx):\n    return " + "(" * 250 + "1" + ")" * 250
    for source in (loops, indents, brackets):
        with pytest.raises(Unwritable) as nested:
            B._compile_text(source, "<ruleval _u1>")
        assert nested.value.code == "E005" and "nested too deeply" in nested.value.message
    for source in ("def f(ctx):\n    return return 1", "def f(ctx):\n    x = = 1", "def f(ctx):\n  return 1\n    pass"):
        with pytest.raises(Unwritable) as bug:
            B._compile_text(source, "<ruleval _u1>")
        assert bug.value.code == WRITER_BUG and bug.value.message.startswith(
            "the backend wrote code Python refuses, a bug of ruleval: "), bug.value.message


@pytest.mark.planted_writer_bug
def test_a_planted_bug_is_said_by_run_and_the_answer_is_the_references(tmp_path: Path, planted: None) -> None:
    root = project(tmp_path)
    code, out, err = cli("run", str(root / "main.rules"), "--state", str(root / "state.json"), "--format", "json")
    assert code == 0 and json.loads(out) == ANSWER, (code, out, err)
    assert "main.rules:2:1: warning[I002]: the backend wrote code Python refuses, a bug of ruleval: invalid syntax" in err
    assert "the reference interpreter ran it instead" in err
    (root / "states.jsonl").write_text("{}\n{}\n")
    code, out, err = cli("run", str(root / "main.rules"), "--batch", str(root / "states.jsonl"), "--format", "json")
    assert code == 0 and [json.loads(x) for x in out.splitlines()] == [ANSWER, ANSWER], (code, out, err)
    assert err.count("warning[I002]: the backend wrote code Python refuses, a bug of ruleval") == 2, err
    rs = load_ruleset(root / "main.rules", use_cache=False)
    result = rs.evaluate({})
    assert result.json() == ANSWER == rs.run({}, engine="reference")
    assert [(d.code, d.severity) for d in result.warnings] == [(WRITER_BUG, "warning")]
    assert rs.evaluate({}, exact=True).warnings  # (an exact run is the reference's too, and says so)


@pytest.mark.planted_writer_bug
def test_a_planted_bug_is_said_by_explain_ir(tmp_path: Path, planted: None) -> None:
    root = project(tmp_path)
    code, out, err = cli("explain", str(root / "main.rules"), "--ir", "tag")
    assert code == 0, err
    assert "# not written: the backend wrote code Python refuses, a bug of ruleval: invalid syntax" in out, out
    assert "(the reference runs it)" in out


def test_without_a_bug_nothing_is_said(tmp_path: Path) -> None:
    root = project(tmp_path)
    code, out, err = cli("run", str(root / "main.rules"), "--state", str(root / "state.json"), "--format", "json")
    assert (code, json.loads(out), err) == (0, ANSWER, "")
    assert "# not written" not in cli("explain", str(root / "main.rules"), "--ir", "tag")[1]


def test_deep_nesting_is_still_e005_unsaid_and_not_loud(tmp_path: Path) -> None:
    """Under the loud fixture: code nested past Python's limits is no bug, given up as before (E005)."""
    root = project(tmp_path, DEEP)
    code, out, err = cli("run", str(root / "main.rules"), "--state", str(root / "state.json"), "--format", "json")
    assert (code, json.loads(out), err) == (0, [1, 1, 1, 1, 2, 2, 2, 2], "")
    shown = cli("explain", str(root / "main.rules"), "--ir", "main")[1]
    assert "# not written: a definition is nested too deeply to write (SyntaxError) (the reference runs it)" in shown


def test_the_loud_fixture_fails_a_case_on_a_planted_bug(tmp_path: Path, planted: None) -> None:
    """Not marked: the conftest's fixture is on, and the case fails (as every bundled case would, through
    tests/test_cases.py's ``test_case``), where a user's run gives the right answer."""
    import test_cases

    root = project(tmp_path)
    (case,) = load_suite([str(root / "cases.yaml")]).cases
    with pytest.raises(UnwrittenByMistake, match="a bug of ruleval"):
        load_ruleset(root / "main.rules", use_cache=False).run({})
    with pytest.raises(UnwrittenByMistake, match="return return"):  # (the code written, shown)
        test_cases.test_case(case)


@pytest.mark.planted_writer_bug
def test_the_same_case_passes_without_the_loud_fixture(tmp_path: Path, planted: None) -> None:
    root = project(tmp_path)
    (case,) = load_suite([str(root / "cases.yaml")]).cases
    assert run_case(case).status == "passed"
