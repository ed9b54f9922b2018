"""What `abs` and `int` give, as the checker types them by their argument (docs/language.md, Built-ins:
`abs(x)` of `x`'s type, `int(x)` an `int`), one table (``types._BY_ARGUMENT``): an `int` where an `int` is
declared is no error, a `number` is C004; `abs` of what the check does not know may be whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_number_type import _errors, _load, _underlined  # (one way to load a text and read its findings)

PROBE = "def hide(x) = x\ndef wants(n: int) = n\ndef probe(i: int, x: number) = wants({})\nquery main = probe(3, 5/2)\n"


@pytest.mark.parametrize("expr", ["abs(i)", "abs(hide(x))", "int(x)", "int(i)", "int(hide(x))", 'int("3")',
                                  "abs(if i > 0 then i else none)"])
def test_a_whole_result_fits_an_int(tmp_path: Path, expr: str) -> None:
    rs = _load(tmp_path, PROBE.format(expr))
    assert _errors(rs) == []


@pytest.mark.parametrize("expr", ["abs(x)", "abs(i / 2)", "abs(if i > 0 then x else none)"])
def test_abs_of_a_number_is_a_number(tmp_path: Path, expr: str) -> None:
    text = PROBE.format(expr)
    found = _errors(_load(tmp_path, text))
    assert [(d.code, _underlined(text, d)) for d in found] == [("C004", expr)], found
