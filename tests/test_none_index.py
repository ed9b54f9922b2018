"""A list (or a text) is read at a whole-number position, and none is none: `xs[none]` and `get(xs, none)`
were refused only at run (E001, E011), though the check knew the index to be none. Now C004 at the index,
where its type is `none`; where it is `T?` or unknown the run decides, as it may be a whole number there. A
map's key may be any value, none too: `m[none]` is not looked at."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from test_number_type import _errors, _load, _underlined  # (one way to load a text and read its findings)

ENGINES = ("reference", "backend")
DECLS = ("const xs: list[int] = [1, 2]\nconst m: map[int?, int] = {1 => 2}\ndef nothing() = none\n"
         "def maybe(n: int) = if n > 0 then n else none\n")


@pytest.mark.parametrize("text, underlined", [
    ("query main = xs[none]\n", "none"),
    ('query main = "abc"[none]\n', "none"),
    ("query main = get(xs, none)\n", "none"),
    ("query main = get(xs, none, 5)\n", "none"),
    ("query main = xs[nothing()]\n", "nothing()"),  # (a definition that gives none alone)
    ("def at(i: int?) = if i == none then xs[i] else 0\nquery main = at(none)\n", "i"),  # (known none there)
])
def test_an_index_known_to_be_none_is_c004_and_the_run_refuses_it(tmp_path: Path, text: str,
                                                                   underlined: str) -> None:
    text = DECLS + text
    rs = _load(tmp_path, text)
    found = [(d.code, _underlined(text, d), d.message) for d in _errors(rs)]
    assert [(code, at) for code, at, _ in found] == [("C004", underlined)], found
    assert "`none`" in found[0][2], found


@pytest.mark.parametrize("text, want", [
    ("query main = xs[maybe(1) ?? 0]\n", 2),
    ("query main = xs[(maybe(1) ?? 5) - 1]\n", 1),
    ("query main = m[none]\n", None),  # (a map's key may be none)
    ("query main = get(m, none, 3)\n", 3),
    ("def at(i: int?) = if i != none then xs[i] else 0\nquery main = at(1)\n", 2),  # (not none there)
])
def test_an_index_that_may_be_whole_checks_clean(tmp_path: Path, text: str, want: Any) -> None:
    rs = _load(tmp_path, DECLS + text)
    assert _errors(rs) == [], _errors(rs)
    for engine in ENGINES:
        assert rs.run({}, engine=engine) == want, engine
