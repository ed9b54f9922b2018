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
from validator.lib.values import as_key, equal, write_value

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
    return {as_key(k): v for k, v in pairs}


values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4),
    st.lists(inner, max_size=3).map(tuple),
    st.lists(keys, max_size=4).map(_set),
    st.lists(st.tuples(keys, inner), max_size=4).map(_map),
    st.dictionaries(texts, inner, max_size=3)), max_leaves=10)


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


def _as_map_notation(v: dict[str, Any]) -> str:
    """A map of texts written with `=>` (the notation `str` does not use for it: a record's)."""
    return "{" + ", ".join(f"{write_value([k])[1:-1]} => {write_value([x])[1:-1]}" for k, x in v.items()) + "}"


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(texts, values, min_size=1, max_size=3))
def test_a_map_of_texts_and_its_record_are_one_value_in_both_notations(v: dict[str, Any]) -> None:
    """A record and a map whose keys are all texts are one value (docs/language.md, "Text of values"):
    written as a map or as the record `str` writes, it reads back as the same value, and `str` of
    either is the record's notation."""
    as_record, as_map = write_value(v), _as_map_notation(v)
    for text in (as_record, as_map):
        got = read_back(text)
        assert equal(got, v), (text, got)
        assert write_value(got) == as_record


def test_notation_of_each_kind() -> None:
    cases: list[tuple[Any, str]] = [
        ({"k": 1, "if": 2, "two words": 3}, '{k: 1, "if": 2, "two words": 3}'),
        ({"k": 1}, "{k: 1}"),  # (the docs' `str({"k" => 1})`)
        ({1: "a", "1": "b", as_key(True): "c"}, '{1 => "a", "1" => "b", true => "c"}'),
        ([frozenset(), {}, (1,), Fraction(-1, 2)], "[set(), {}, (1,), -1/2]"),
        (["\b\x7f\n\"\\"], '["\\u0008\\u007f\\n\\"\\\\"]'),
    ]
    for v, text in cases:
        assert write_value(v) == text
        assert equal(read_back(text), v)
