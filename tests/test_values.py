"""values.to_json: a run's value as JSON, always a copy (a result never shares a list or map with
what the program keeps: memoized values, literals of generated code)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from validator.values import MAX_INT_BITS, to_json


def test_records_and_lists_are_copied_not_shared() -> None:
    cites = ["DIP-M1"]
    rec = {"status": "fails", "reason": None, "ok": False, "n": 3, "cites": cites, "sub": {"a": [1, {"b": "c"}]}}
    value = [rec, rec]
    out = to_json(value)
    assert out == [rec, rec]
    assert out[0] is not rec and out[0]["cites"] is not cites and out[0]["sub"] is not rec["sub"]
    assert out[0]["sub"]["a"][1] is not rec["sub"]["a"][1]
    out[0]["cites"].append("X")
    out[0]["sub"]["a"][1]["b"] = "changed"
    assert cites == ["DIP-M1"] and rec["sub"]["a"][1] == {"b": "c"}


def test_keys_become_texts_and_sets_sorted_lists() -> None:
    value = {1: "one", None: "nothing", "k": frozenset({"b", "a", 3}), "f": Fraction(3, 4), "g": Fraction(4, 2)}
    assert to_json(value) == {"1": "one", "none": "nothing", "k": [3, "a", "b"], "f": "3/4", "g": 2}
    # a number key and its text collide as JSON does: the later entry wins
    assert to_json({1: "a", "1": "b"}) == {"1": "b"}
    assert to_json({"1": "b", 1: "a"}) == {"1": "a"}
    assert to_json((1, "x", [None, True])) == [1, "x", [None, True]]


def test_a_number_too_large_to_write_is_an_error() -> None:
    with pytest.raises(ValueError):
        to_json({"n": [2 ** (MAX_INT_BITS + 1)]})
    assert to_json({"n": 2 ** 64}) == {"n": 2 ** 64}
