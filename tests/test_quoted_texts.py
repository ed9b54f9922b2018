"""A run-time message that refuses a value for its kind writes a text in its quotes (``values.brief``), as
the rest do (tests/test_whole_numbers.py): a list's index, a built-in that walks a collection, one that reads
a map, `get`. They wrote a text bare, so that the text `"3"` read as the number `3` (`first("3")` said
"not `3`"). The same message in both engines."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_number_type import _errors, _load  # (one way to load a text and read its findings)
from validator.api import RunError

ENGINES = ("reference", "backend")


def _said(tmp_path: Path, expr: str) -> str:
    rs = _load(tmp_path, f"def hide(x) = x\nquery main = {expr}\n")
    assert _errors(rs) == [], expr
    said = []
    for engine in ENGINES:
        with pytest.raises(RunError) as exc:
            rs.run({}, engine=engine)
        said.append(exc.value.diagnostics[0].message)
    assert said[0] == said[1], said
    return said[0]


@pytest.mark.parametrize("call, other", [
    ("[1, 2][hide({})]", "true"),  # (a list's index)
    ("first(hide({}))", "3"), ("fold(hide({}), 0, fn(a, x) => a)", "3"),  # (a collection walked: ``walked_items``)
    ("keys(hide({}))", "3"), ("values(hide({}))", "3"), ("merge(hide({}), {{a: 1}})", "3"),  # (a map: ``_as_map``)
    ("get(hide({}), 0)", "3"),
    ('match_first("a", hide({}))', "3"),  # (a pattern's text where its list is meant)
    ('match("a", "a", hide({}))', "3"),  # (flags: the message quotes `""` and `"i"`, and now what it was given)
])
def test_a_text_refused_for_its_kind_is_in_its_quotes_and_another_value_is_not(tmp_path: Path, call: str,
                                                                                 other: str) -> None:
    text = _said(tmp_path, call.format('"3"'))
    assert '`"3"`' in text and "`3`" not in text, text
    said = _said(tmp_path, call.format(other))  # (a value of another kind, as the language writes it)
    assert f"`{other}`" in said, said


@pytest.mark.parametrize("call, other", [
    ("hide({}) < 1", "true"), ("hide({}) + 1", "true"), ("hide({}) * 2", "true"),  # (compare, add, compute)
    ("hide({}) with {{a: 1}}", "3"),  # (`with`)
    ('hex_label(1, 1, hide({}))', "3"),  # (a hex layout)
])
def test_the_operators_and_hex_layouts_quote_a_text_too(tmp_path: Path, call: str, other: str) -> None:
    text = _said(tmp_path, call.format('"3"'))
    assert '"3"' in text and "`3`" not in text, text
    said = _said(tmp_path, call.format(other))
    assert f"`{other}`" in said, said


@pytest.mark.parametrize("call, name", [
    ("pad(1, hide(1/2))", "pad"), ("get([1], hide(none))", "get"), ("abs(hide(true))", "abs"),
    ("fraction(1, hide(0))", "fraction"), ('hex_label(1, 1, hide("x"))', "hex_label"),
])
def test_a_built_ins_refusal_names_it_once(tmp_path: Path, call: str, name: str) -> None:
    said = _said(tmp_path, call)
    assert said.count(name) == 1, said
