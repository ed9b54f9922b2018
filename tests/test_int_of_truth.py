"""A truth value is no number (docs/language.md, "Equality of kinds"): `int(true)` gave 1, though no
arithmetic takes a truth value and `abs`, `fraction` of one are refused. `int` reads a number or a text;
a truth value is now E011 at run (both engines alike) and C004 at check where the argument is known to be
one, and so are `abs` and `fraction` of one, which only the run refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_number_type import _errors, _load, _underlined  # (one way to load a text and read its findings)

ENGINES = ("reference", "backend")


@pytest.mark.parametrize("call, underlined", [
    ("int(true)", "true"), ("int(1 > 0)", "1 > 0"), ("abs(false)", "false"), ("fraction(1, true)", "true"),
])
def test_a_truth_value_where_a_number_is_read_is_c004(tmp_path: Path, call: str, underlined: str) -> None:
    text = f"query main = {call}\n"
    found = [(d.code, _underlined(text, d), d.message) for d in _errors(_load(tmp_path, text))]
    assert [(code, at) for code, at, _ in found] == [("C004", underlined)], found
    assert "`bool`" in found[0][2], found


@pytest.mark.parametrize("call", ["int(n(true))", "int(n(false))", "abs(n(true))", "fraction(n(true), 2)"])
def test_a_truth_value_the_check_cannot_see_is_e011_in_both_engines(tmp_path: Path, call: str) -> None:
    from validator.api import RunError

    rs = _load(tmp_path, f"def n(x) = x\nquery main = {call}\n")
    assert _errors(rs) == []
    said = set()
    for engine in ENGINES:
        with pytest.raises(RunError) as info:
            rs.run({}, engine=engine)
        [d] = info.value.diagnostics
        assert d.code == "E011", d
        said.add(d.message)
    assert len(said) == 1 and "truth value" in said.pop(), said  # (one meaning, one message)


@pytest.mark.parametrize("call, want", [
    ('int(" 42 ")', 42), ("int(-7/2)", -3), ('int("x")', None), ("int(3)", 3), ("abs(-2)", 2),
    ("int(n(5))", 5), ("fraction(2, 4) * 2", 1),
])
def test_numbers_and_texts_still_read(tmp_path: Path, call: str, want: object) -> None:
    rs = _load(tmp_path, f"def n(x) = x\nquery main = {call}\n")
    assert _errors(rs) == [], _errors(rs)
    for engine in ENGINES:
        assert rs.run({}, engine=engine) == want, engine
