"""`r with {a: v}` gives the record `r` with its field `a` set to `v`: where `r` is a declared record,
the check holds `v` to the field's declared type, C004 at `v` where it is known not to be one, as a record
literal written there is held (tests/test_record_literals.py). `r with {a: "x"}` for `a: int` checked clean,
and the run then carried a text where an int is declared, to be read by code that trusts the declaration."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from test_number_type import _errors, _load, _underlined  # (one way to load a text and read its findings)

ENGINES = ("reference", "backend")
DECLS = ("record R { a: int, b?: str }\nrecord S { r: R, n: number }\n"
         "const r: R = {a: 1}\nconst s: S = {r: {a: 1}, n: 2}\n")


@pytest.mark.parametrize("text, underlined, said", [
    ('query main = r with {a: "x"}\n', '"x"', "field `a` of `R` is `int`"),
    ("query main = r with {b: 3}\n", "3", "field `b` of `R` is `str?`"),
    ("query main = s with {r: {b: \"x\"}}\n", '{b: "x"}', "`a`"),  # (a record literal's own help)
    ("query main = (r with {a: 1/2}).a\n", "1/2", "field `a` of `R` is `int`"),  # (a number may be a fraction)
    ("query main = r with {a: 1, b: [1]}\n", "[1]", "field `b`"),
])
def test_a_value_with_gives_that_is_not_the_fields_type_is_c004(tmp_path: Path, text: str, underlined: str,
                                                                said: str) -> None:
    text = DECLS + text
    found = [(d.code, _underlined(text, d), d.message, d.help) for d in _errors(_load(tmp_path, text))]
    assert [(code, at) for code, at, _, _ in found] == [("C004", underlined)], found
    assert said in found[0][2] or (found[0][3] is not None and said in found[0][3]), found


@pytest.mark.parametrize("text, want", [
    ("query main = (r with {a: 2}).a\n", 2),
    ('query main = (r with {b: "x"}).b\n', "x"),
    ('query main = (r with {b: none}).b\n', None),  # (an optional field may be set to none)
    ("query main = (s with {n: 1/2}).n * 2\n", 1),  # (a fraction where a number is declared)
    ("query main = (s with {r: {a: 3}}).r.a\n", 3),
    ("def f(x: int?) = r with {a: x ?? 0}\nquery main = f(4).a\n", 4),
    ("def g(x) = r with {a: x}\nquery main = g(5).a\n", 5),  # (a value of no known type: the run decides)
    ('query main = ({a: 1} with {a: "x"}).a\n', "x"),  # (a record literal's shape declares no type)
])
def test_a_value_of_the_fields_type_checks_clean_and_runs(tmp_path: Path, text: str, want: Any) -> None:
    rs = _load(tmp_path, DECLS + text)
    assert _errors(rs) == [], _errors(rs)
    for engine in ENGINES:
        assert rs.run({}, engine=engine) == want, engine
