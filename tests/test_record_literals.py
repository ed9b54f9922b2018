"""A record literal makes a record (docs/language.md, "Records and maps"): where a type is declared, the
check holds it to that type, C004 where it is not one. It is no map (but `{}`, which is both), and it is the
record `R` only where it gives every field `R` requires, each of its type, and no label `R` does not declare:
`input m: map[str, int] default {a: 1}` gave a record at run time, and `default {b: 1}` for `record R { a: int }`
a record without `a`, both checked clean. A literal is followed into its parts (a list's items, a map's keys
and values, a record literal's fields, an `if`'s values), each misfit found where it is written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from test_number_type import _errors, _load, _underlined  # (one way to load a text and read its findings)

ENGINES = ("reference", "backend")
DECLS = ("record R { a: int }\nrecord O { a: int, b?: str }\nrecord S { r: R }\n"
         "def f(x: R) = x.a\ndef g(xs: list[R]) = len(xs)\n")


def _found(tmp_path: Path, text: str) -> list[tuple[str, str, str | None]]:
    text = DECLS + text
    return [(d.code, _underlined(text, d), d.help) for d in _errors(_load(tmp_path, text))]


@pytest.mark.parametrize("text, underlined, said", [
    # (the two)
    ('input m: map[str, int] at "/m" default {a: 1}\nquery main = m\n', "{a: 1}", "=>"),
    ('input r: R at "/r" default {b: 1}\nquery main = r\n', "{b: 1}", "`a`"),
    ('input r: R at "/r" default {b: 1}\nquery main = r\n', "{b: 1}", "no field `b`"),
    # (an argument, a return, a const, a table's cells)
    ("query main = f({b: 2})\n", "{b: 2}", "`a`"),
    ('query main = f({a: "x"})\n', '{a: "x"}', "field `a` is `str`"),  # (a field of another type)
    ("def mk() -> R = {a: 1, c: 2}\nquery main = mk()\n", "{a: 1, c: 2}", "no field `c`"),
    ("const m: map[str, int] = {a: 1}\nquery main = m\n", "{a: 1}", "=>"),
    ("table t[k] -> R cite \"X-1\" {\n  | x | {b: 1} |\n}\nquery main = t[\"x\"]\n", "{b: 1}", "`a`"),
    # (a part of a literal: a list's item, a map's value, a record's field, an `if`'s value)
    ("query main = g([{a: 1}, {b: 2}])\n", "{b: 2}", "`a`"),
    ("const rs: list[R] = [{a: 1}, {a: 1, b: 2}]\nquery main = rs\n", "{a: 1, b: 2}", "no field `b`"),
    ('const m: map[str, R] = {"x" => {b: 1}}\nquery main = m\n', '{"x" => {b: 1}}', "`a`"),
    ("const s: S = {r: {b: 1}}\nquery main = s\n", "{r: {b: 1}}", "`r` is `{b: int}`"),
    # (where the literal's type hides a part, a list of two shapes being of no one type: the part)
    ('const m: map[str, list[R]] = {"x" => [{a: 1}, {b: 1}]}\nquery main = m\n', "{b: 1}", "`a`"),
    ("const s: list[S] = [{r: {a: 1}}, {r: {b: 1}}]\nquery main = s\n", "{r: {b: 1}}", "`r` is `{b: int}`"),
    ("def h(c: bool) -> R = if c then {a: 1} else {b: 1}\nquery main = h(true)\n", "{b: 1}", "`a`"),
    # (a typo in an optional field's label: `x.b` would read none, a wrong answer without a word)
    ('const o: O = {a: 1, bb: "x"}\nquery main = o\n', '{a: 1, bb: "x"}', "did you mean `b`?"),
    # (a shape the check inferred, given where a record is declared)
    ("def mk(n) = {b: n}\nquery main = f(mk(1))\n", "mk(1)", "`a`"),
    # (a list literal is no set, nor a record literal a list)
    ("const xs: list[R] = {a: 1}\nquery main = xs\n", "{a: 1}", None),
])
def test_a_record_literal_that_is_not_the_declared_type_is_c004(tmp_path: Path, text: str, underlined: str,
                                                                said: str | None) -> None:
    found = _found(tmp_path, text)
    assert [(code, at) for code, at, _ in found] == [("C004", underlined)], found
    help_ = found[0][2]
    if said is None:
        assert help_ is None or "record" not in help_, help_
    else:
        assert help_ is not None and said in help_, help_


@pytest.mark.parametrize("text, want", [
    ('input m: map[str, int] at "/m" default {}\nquery main = len(m)\n', 0),  # (`{}` is the empty map too)
    ('input r: R at "/r" default {a: 1}\nquery main = f(r)\n', 1),
    ("const o: O = {a: 1}\nquery main = o.b\n", None),  # (an optional field may be left out)
    ('const o: O? = {a: 1, b: "x"}\nquery main = o.b\n', "x"),
    ("const s: S = {r: {a: 2}}\nquery main = f(s.r)\n", 2),
    ('const m: map[str, R] = {"x" => {a: 3}}\nquery main = f(m["x"])\n', 3),
    ("const anything: any = {b: 1}\nquery main = anything.b\n", 1),
    ("query main = g([{a: 1}, {a: 2}]) + f(if true then {a: 4} else {a: 5})\n", 6),
    ("def mk(n) = {a: n}\nquery main = f(mk(7))\n", 7),
    # (a record a definition gives is structural, as any other: more labels than `R` declares are no slip)
    ("def mk(n) = {a: n, extra: 1}\nquery main = f(mk(8)) + mk(1).extra\n", 9),
    ("record Wide { a: int, c: int }\nconst w: Wide = {a: 1, c: 2}\nquery main = f(w)\n", 1),  # (structural)
])
def test_a_record_literal_of_the_declared_type_checks_clean_and_runs(tmp_path: Path, text: str, want: Any) -> None:
    rs = _load(tmp_path, DECLS + text)
    assert _errors(rs) == []
    for engine in ENGINES:
        assert rs.run({}, engine=engine) == want, engine

