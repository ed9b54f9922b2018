"""Text that reads back: `str` writes every value in the language's notation, and that text, read as
an expression, is the same value again (docs/language.md, "Text of values")."""

from __future__ import annotations

import tempfile
from fractions import Fraction
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from validator.api import load_ruleset
from validator.engine import reference as R
from validator.lib.runtime import SeededDice
from validator.lib.values import Map, as_key, equal, write_value

_ROOT = Path(tempfile.mkdtemp(prefix="ruleval-notation-"))
(_ROOT / "ruleval.toml").write_text("")

# texts of any characters a text may hold (no lone surrogate: no text of the language has one)
texts = st.text(st.characters(blacklist_categories=["Cs"]), max_size=6) | st.sampled_from(
    ["if", "true", "none", "k", "two words", "a\"b", "\\", "\b", "\x7f", "\u2028", "é", "1", "(1, 2)", "{}"])
numbers = st.integers(-10**20, 10**20) | st.fractions(max_denominator=50).map(
    lambda f: f.numerator if f.denominator == 1 else f)
scalars = st.none() | st.booleans() | numbers | texts
keys = scalars | st.tuples(st.none() | numbers | texts, st.none() | numbers | texts)  # (a tuple of truth values is no key)


def _set(items: list[Any]) -> frozenset[Any]:
    return frozenset(as_key(x) for x in items)


def _map(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    return Map((as_key(k), v) for k, v in pairs)


values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4),
    st.lists(inner, max_size=3).map(tuple),
    st.lists(keys, max_size=4).map(_set),
    st.lists(st.tuples(keys, inner), max_size=4).map(_map),  # maps, of texts too
    st.dictionaries(texts, inner, max_size=3).map(Map),
    st.dictionaries(texts, inner, max_size=3)), max_leaves=10)  # records


def read_back(text: str) -> Any:
    path = _ROOT / "main.rules"
    path.write_text(f"ruleset t.notation \"notation\"\nquery main = {text}\n", encoding="utf-8")
    rs = load_ruleset(path, use_cache=False)
    assert rs.ok, (text, [str(d) for d in rs.diagnostics])
    value, _ = R.run_query(rs.program, {}, "main", [], SeededDice(0), 5_000_000)
    return value


@settings(max_examples=150, deadline=None)
@given(values)
def test_str_reads_back_as_the_same_value(v: Any) -> None:
    """Any value but a text at the top (which `str` writes as itself)."""
    text = write_value(v) if not isinstance(v, str) else write_value([v])
    got = read_back(text)
    want = v if not isinstance(v, str) else [v]
    assert equal(got, want), (text, got)
    assert write_value(got) == text


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(texts, values, min_size=1, max_size=3))
def test_a_record_and_a_map_of_the_same_entries_are_two_values(v: dict[str, Any]) -> None:
    """A record and a map with the same texts as keys are two values (docs/language.md, "Records and
    maps"): each is written in its own notation, reads back as itself, and is not equal to the other."""
    record, as_map = v, Map(v)
    record_text, map_text = write_value(record), write_value(as_map)
    assert record_text != map_text and " => " in map_text
    got_record, got_map = read_back(record_text), read_back(map_text)
    assert type(got_record) is dict and type(got_map) is Map
    assert equal(got_record, record) and equal(got_map, as_map)
    assert not equal(got_record, got_map) and not equal(record, as_map)
    assert write_value(got_record) == record_text and write_value(got_map) == map_text


def test_notation_of_each_kind() -> None:
    cases: list[tuple[Any, str]] = [
        ({"k": 1, "if": 2, "two words": 3}, '{k: 1, "if": 2, "two words": 3}'),
        ({"k": 1}, "{k: 1}"),
        (Map({"k": 1}), '{"k" => 1}'),  # (the docs' `str({"k" => 1})`)
        (Map({1: "a", "1": "b", as_key(True): "c"}), '{1 => "a", "1" => "b", true => "c"}'),
        ([frozenset(), Map(), {}, (1,), Fraction(-1, 2)], "[set(), {}, {}, (1,), -1/2]"),
        (["\b\x7f\n\"\\"], '["\\u0008\\u007f\\n\\"\\\\"]'),
    ]
    for v, text in cases:
        assert write_value(v) == text
        got = read_back(text)
        assert equal(got, v) and write_value(got) == text
