"""What `check` infers of a `def`'s result and how a test against none narrows a name (issue 46):
a wrong program is C004 at the offending expression, and the checker agrees with the language's
meaning (docs/language.md) both ways, on the reference interpreter: each program it accepts runs
without a type error, and each it refuses, with the offending value hidden from it (passed through a
`def` of an untyped parameter, whose result is unknown), fails its run with E001 on that line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from validator.api import RunError, load_ruleset

RECORD_OR_NONE = 'def f(x) = if x then {text: "a"} else none\n'
HIDE = "def hide(v) = v\n"  # (the checker knows nothing of what it gives)

# each wrong program: the text, with the value to hide from the checker marked `<<...>>`; the message's
# words; what the diagnostic underlines
WRONG = [
    # the defect that asked for it: a `{text, cites}` or none, narrowed by `== none`, added to a text
    ('def g(x) = (let bad = f(x); if bad == none then none else "b" + <<bad>>)\nquery main = g(true)\n',
     "cannot compute `str` + `{text: str}`", '"b" + <<bad>>'),
    ('def g(x) = (let r = f(x); if r != none then r.text else <<r>> + 1)\nquery main = g(false)\n',
     "cannot compute `none` + `int`", "<<r>> + 1"),
    ('def g(x) = (let r = f(x); if r == none then "" elif r.text == "a" then <<r>> - 1 else "")\nquery main = g(true)\n',
     "cannot compute `{text: str}` - `int`", "<<r>> - 1"),
    ('def g(x) = (let r = f(x); r != none and <<r>> * 2 > 0)\nquery main = g(true)\n',
     "cannot compute `{text: str}` * `int`", "<<r>> * 2"),
    ('def g(x) = (let r = f(x); r == none or -<<r>> > 0)\nquery main = g(true)\n',
     "cannot negate `{text: str}`", "-<<r>>"),
    ('def g(x) = (let r = f(x); if not (r == none) then <<r>> + "!" else "")\nquery main = g(true)\n',
     "cannot compute `{text: str}` + `str`", '<<r>> + "!"'),
    ('def g(x) = <<(f(x) ?? {text: "z"})>> + 1\nquery main = g(false)\n',
     "cannot compute `{text: str}` + `int`", '<<(f(x) ?? {text: "z"})>> + 1'),
    # not narrowed: a record or none is refused by `+` either way
    ('query main = "b" + <<f(true)>>\n', "cannot compute `str` + `{text: str}?`", '"b" + <<f(true)>>'),
    # through calls: a chain, a `let`, an `elif`, a list, a map
    ('def a() = b()\ndef b() = [1]\nquery main = <<a()>> + 1\n', "cannot compute `list[int]` + `int`", "<<a()>> + 1"),
    ('def n(k) = (let m = [k]; len(m))\nquery main = "a" + <<n(1)>>\n', "cannot compute `str` + `int`", '"a" + <<n(1)>>'),
    ('def n(k) = if k > 1 then 1 elif k > 0 then 2 else 3\nquery main = <<n(1)>> + "a"\n',
     "cannot compute `int` + `str`", '<<n(1)>> + "a"'),
    ('def rows() = [{n: 1}, {n: 2}]\nquery main = <<rows()[0]>> + 1\n', "cannot compute `{n: int}` + `int`",
     "<<rows()[0]>> + 1"),
    ('def m() = {"a" => "x"}\nquery main = <<m()["a"]>> - 1\n', "cannot compute `str` - `int`", '<<m()["a"]>> - 1'),
    ('def r() = {n: 1} with {t: "x"}\nquery main = <<r().t>> + 1\n', "cannot compute `str` + `int`", "<<r().t>> + 1"),
]

RIGHT = [
    'def g(x) = (let r = f(x); if r == none then "-" else "b" + r.text)\nquery main = [g(true), g(false)]\n',
    'def g(x) = (let r = f(x); if r != none then "b" + r.text else "-")\nquery main = [g(true), g(false)]\n',
    'def g(x) = (f(x) ?? {text: "z"}).text + "!"\nquery main = [g(true), g(false)]\n',
    'def g(x) = (let r = f(x); r != none and r.text + "!" == "a!")\nquery main = [g(true), g(false)]\n',
    'def g(x) = (let r = f(x); r == none or r.text + "!" == "a!")\nquery main = [g(true), g(false)]\n',
    'def g(x) = (let r = f(x); if r == none then 0 elif r.text == "a" then 1 else 2)\nquery main = [g(true), g(false)]\n',
    'def g(x) = (let r = f(x); if not (r == none) then r.text + "!" else "")\nquery main = [g(true), g(false)]\n',
    'def count(n) = if n <= 0 then 0 else 1 + count(n - 1)\nquery main = count(3) + 1\n',
    # a recursive one's own calls are unknown, and so what it gives
    'def c(n) = if n <= 0 then "none" else c(n - 1)\nquery main = c(2) + "!"\n',
    'def ev(n) = if n == 0 then true else od(n - 1)\ndef od(n) = if n == 0 then false else ev(n - 1)\n'
    'query main = ev(4) and not od(4)\n',
    'def rows() = [{n: 1}, {n: 2}]\nquery main = sum([r.n for r in rows()]) + 1\n',
    'def m() = {"a" => 1}\nquery main = m()["a"] + 1\n',
    'def same(x) = x\nquery main = same(1) + 1\n',
    'def a() = b()\ndef b() = {text: "t"}\nquery main = a().text + "!"\n',
    # a name certainly none is unknown where a test says it is not (another variant's callee may give more)
    'def nothing() = none\nquery main = (let v = nothing(); if v != none then v + 1 else 0)\n',
    'def g(x) = if x then 1 else none\nquery main = (g(true) ?? 0) + (g(false) ?? 0)\n',
    'def g(x) = if x then [1] else none\nquery main = len(g(true)) + sum(g(true))\n',
    # `x in none` is false, not a mistake
    'def g(x) = if x then [1] else none\nquery main = (let xs = g(false); if xs == none then 1 in xs else true)\n',
]


def _load(tmp_path: Path, text: str) -> object:
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "main.rules").write_text(text)
    return load_ruleset(tmp_path / "main.rules", use_cache=False)


def _errors(rs: object) -> list[object]:
    return [d for d in rs.diagnostics if d.is_error]  # type: ignore[attr-defined]


def _underlined(text: str, span: object) -> str:
    lines = text.splitlines()
    assert span.line == span.end_line, span  # type: ignore[attr-defined]
    return lines[span.line - 1][span.col - 1:span.end_col - 1]  # type: ignore[attr-defined]


@pytest.mark.parametrize("text, words, underlined", WRONG)
def test_a_wrong_program_is_c004_at_the_offending_expression(tmp_path: Path, text: str, words: str,
                                                             underlined: str) -> None:
    plain = RECORD_OR_NONE + re.sub(r"<<(.*?)>>", r"\1", text)
    found = _errors(_load(tmp_path, plain))
    assert [(d.code, d.message) for d in found] == [("C004", words)], found  # type: ignore[attr-defined]
    assert _underlined(plain, found[0].span) == underlined.replace("<<", "").replace(">>", "")  # type: ignore[attr-defined]


@pytest.mark.parametrize("text, words, underlined", WRONG)
def test_what_the_checker_refuses_fails_its_run(tmp_path: Path, text: str, words: str, underlined: str) -> None:
    """The same program, the offending value hidden from the checker: accepted, and its run fails
    with E001 on the line the checker named."""
    hidden = RECORD_OR_NONE + HIDE + re.sub(r"<<(.*?)>>", r"hide(\1)", text)
    rs = _load(tmp_path, hidden)
    assert _errors(rs) == []
    line = next(i for i, ln in enumerate(hidden.splitlines(), 1) if "hide(" in ln and not ln.startswith("def hide"))
    with pytest.raises(RunError) as err:
        rs.run({}, engine="reference")  # type: ignore[attr-defined]
    assert [(d.code, d.span.line) for d in err.value.diagnostics] == [("E001", line)], err.value.diagnostics


@pytest.mark.parametrize("text", RIGHT)
def test_what_the_checker_accepts_runs_without_a_type_error(tmp_path: Path, text: str) -> None:
    rs = _load(tmp_path, RECORD_OR_NONE + text)
    assert _errors(rs) == []
    rs.run({}, engine="reference")  # type: ignore[attr-defined]


def test_the_issue_s_three_lines_are_refused(tmp_path: Path) -> None:
    text = ('ruleset t "t"\n' + RECORD_OR_NONE
            + 'def g(x) = (let bad = f(x); if bad == none then none else "b" + bad)\n')
    [d] = _errors(_load(tmp_path, text))
    assert (d.code, d.span.line, d.span.col, _underlined(text, d.span)) == ("C004", 3, 59, '"b" + bad'), d  # type: ignore[attr-defined]


@pytest.mark.parametrize("base_first", [True, False])
def test_a_variant_overriding_a_callee_gets_its_own_finding(tmp_path: Path, base_first: bool) -> None:
    """A declaration's type check found clean is not made again where what it reads is the same
    (``types._TYPED``), nor a `def`'s result inferred again (``types._RESULTS``): what a definition
    it calls gives, through another, is part of that, so a variant whose override changes it is
    checked afresh (and the base, checked after, keeps its own finding: none)."""
    from validator import api

    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "base.rules").write_text('ruleset t.base\ndef inner(u) = {text: "a"}\ndef middle(u) = inner(u)\n'
                                         'def outer(u) = "x" + middle(u).text\nquery main = outer(1)\n')
    (tmp_path / "variant.rules").write_text('ruleset t.variant\nextends "base.rules"\n'
                                            'override def inner(u) = {text: 1}\n')
    order = ["base.rules", "variant.rules"] if base_first else ["variant.rules", "base.rules"]
    found = {name: [(d.code, d.span.file.rsplit("/", 1)[-1], d.span.line, d.message)
                    for d in api.load_ruleset(tmp_path / name, use_cache=False).diagnostics] for name in order}
    assert found == {"base.rules": [],
                     "variant.rules": [("C004", "base.rules", 4, "cannot compute `str` + `int`")]}, found
