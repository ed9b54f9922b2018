"""values.to_json: a run's value as JSON, always a copy (a result never shares a list or map with
what the program keeps: memoized values, literals of generated code)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from hypothesis import given, settings
from hypothesis import strategies as st

from validator.lib import builtins as B
from validator.lib.values import MAX_INT_BITS, as_key, order_key, to_json, tree_size


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
    # a map with a key that is no text writes every key in the notation, its texts in quotes
    assert to_json(value) == {"1": "one", "none": "nothing", '"k"': [3, "a", "b"], '"f"': "3/4", '"g"': 2}
    assert to_json({"k": frozenset({"b", "a", 3})}) == {"k": [3, "a", "b"]}
    # so a number key and its text never collide: no entry is lost
    assert to_json({1: "a", "1": "b"}) == {"1": "a", '"1"': "b"}
    assert to_json({"1": "b", 1: "a"}) == {'"1"': "b", "1": "a"}
    assert to_json({as_key(True): "t", "true": "u", 1: "o"}) == {"true": "t", '"true"': "u", "1": "o"}
    assert to_json((1, "x", [None, True])) == [1, "x", [None, True]]


def test_a_number_too_large_to_write_is_an_error() -> None:
    with pytest.raises(ValueError):
        to_json({"n": [2 ** (MAX_INT_BITS + 1)]})
    assert to_json({"n": 2 ** 64}) == {"n": 2 ** 64}


def test_a_list_of_records_is_written_whole_whatever_its_items() -> None:
    """A list whose items mix texts, records (written all at once), other values and records nested
    in records, keys and sets inside them converted as anywhere else; a list of texts inside a record
    whose later item is a record is written whole too."""
    shared = {"p": "x"}
    value = {"orders": ["a", {"k": 1, "cites": ["C1"]}, Fraction(1, 2), {2: shared, "s": {"b", "a"}}, None],
             "mixed": ["t", 7, {"r": True}], "units": [shared, shared]}
    out = to_json(value)
    assert out == {"orders": ["a", {"k": 1, "cites": ["C1"]}, "1/2", {"2": {"p": "x"}, "\"s\"": ["a", "b"]}, None],
                   "mixed": ["t", 7, {"r": True}], "units": [{"p": "x"}, {"p": "x"}]}
    assert out["units"][0] is not shared and out["units"][0] is not out["units"][1]
    assert out["orders"][3]["2"] is not shared


def _size_by_recursion(v: object) -> int:
    """What ``tree_size`` defines, written the plain way: a value and, for a collection, the sizes of
    its items (a map: its keys and values), counted as a tree."""
    if isinstance(v, dict):
        return 1 + sum(_size_by_recursion(k) + _size_by_recursion(x) for k, x in v.items())
    if isinstance(v, (list, tuple, set, frozenset)):
        return 1 + sum(_size_by_recursion(x) for x in v)
    return 1


_scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=3))
_keys = st.recursive(_scalars, lambda inner: st.tuples(inner, inner), max_leaves=4)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.tuples(inner, inner), st.frozensets(_keys, max_size=4),
                            st.dictionaries(_keys, inner, max_size=4)),
    max_leaves=25)


@given(_values, st.integers(0, 40))
@settings(max_examples=500, deadline=None)
def test_tree_size_is_the_size_of_the_value_as_a_tree_capped_past_the_limit(v: object, limit: int) -> None:
    assert tree_size(v, limit) == min(_size_by_recursion(v), limit + 1)


def test_tree_size_counts_a_shared_part_each_time_it_is_held() -> None:
    part = ["a", "b", ["c"]]
    assert tree_size([part, part, part], 1000) == 1 + 3 * 5


class _Budget:
    """What a built-in sees of a run: the steps spent and the budget."""

    def __init__(self, budget: int):
        self.steps, self.budget = 0, budget


_items = st.lists(st.one_of(_values, st.fractions(max_denominator=4)), max_size=6)


@given(_items, st.integers(0, 60))
@settings(max_examples=300, deadline=None)
def test_ordering_built_ins_sort_and_charge_as_the_plain_way(items: list[object], budget: int) -> None:
    """sorted, max and min skip the walk of items that are no collection and the sort key of
    integers or texts alone: the same order as ``_sort_key`` and the steps (an item a step, a
    collection its size as a tree) and the budget error of walking every item."""
    def plain(what: str) -> tuple[str, int]:
        ctx = _Budget(budget)
        try:
            B._spend(ctx, len(items), what)
            for x in items:
                B._walk_cost(ctx, x, what)
        except B.CallError as err:
            return str(err), ctx.steps
        return "ok", ctx.steps

    for name, fn in [("sorted", B._sorted), ("max", B._max), ("min", B._min)]:
        ctx = _Budget(budget)
        try:
            got = fn(ctx, items)
        except B.CallError as err:
            if str(err).startswith((f"{name} compares", f"{name} cannot order")):
                continue  # (max and min of items no order relates: the engines report E011)
            assert (str(err), ctx.steps) == plain(name)
            continue
        except TypeError:  # (sorted of maps whose keys Python cannot order: the engines report E001)
            continue
        assert ("ok", ctx.steps) == plain(name)
        if name == "sorted":
            assert got == sorted(items, key=order_key)


def test_a_list_of_records_held_twice_is_written_twice_apart_and_counted_twice() -> None:
    """A value may hold one list of records twice (the pieces in a phase's result and in its next state):
    its second writing is a copy of the first (``values._records``), with no part shared, and the
    parts and characters of both count against the limits."""
    import copy
    import json
    from typing import Any

    from validator.lib.values import Map, written

    pieces = [{"who": "a", "where": "x", "gone": None, "ok": True}, {"who": "b", "where": "y", "gone": None, "ok": False}]
    deep = [{"who": "c", "at": ["x", "y"]}]
    value = {"result": {"pieces": pieces, "deep": deep}, "next": {"pieces": pieces, "deep": deep, "m": Map({"k": "v"})}}
    out = written(value)
    assert json.dumps(out) == json.dumps(value, default=dict)
    assert out["result"]["pieces"] == out["next"]["pieces"] and out["result"]["pieces"] is not out["next"]["pieces"]
    assert all(a is not b for a, b in zip(out["result"]["pieces"], out["next"]["pieces"]))
    out["next"]["pieces"][0]["who"] = "z"
    assert out["result"]["pieces"][0]["who"] == "a" and pieces[0]["who"] == "a"
    apart = {"result": {"pieces": copy.deepcopy(pieces), "deep": deep}, "next": {"pieces": copy.deepcopy(pieces),
                                                                              "deep": deep, "m": Map({"k": "v"})}}

    def least(limit: str) -> int:  # the least limit under which a value is written
        def fits(v: Any, n: int) -> bool:
            try:
                written(v, **{limit: n})
                return True
            except ValueError:
                return False
        n = next(n for n in range(1, 400) if fits(value, n))
        assert not fits(apart, n - 1) and fits(apart, n)  # the same as for a value holding two such lists
        return n
    assert least("limit") > 1 and least("byte_limit") > 1


def test_a_writing_in_one_thread_is_not_undone_by_writings_in_another() -> None:
    """``written``'s count (parts left, characters) and its table of lists met are the writing's own:
    threads that write at once (runs in threads, a Dask worker of several threads) neither end another's
    count (its limit would no longer hold) nor have theirs read into another's ``to_json``."""
    import threading

    from validator.lib.values import FUNCTION_IN_RESULT, written

    paused, resume = threading.Event(), threading.Event()

    class Pause:  # (no value of the language: written by its text, which waits mid-writing)
        def __str__(self) -> str:
            paused.set()
            assert resume.wait(10)
            return "p"

    outcome: list[object] = []

    def write_too_large() -> None:
        try:
            outcome.append(written([Pause(), [{"a": "b"}] * 60, list(range(100))], limit=50))
        except ValueError as exc:
            outcome.append(exc)

    other = threading.Thread(target=write_too_large)
    other.start()
    try:
        assert paused.wait(10)  # the other thread is half-way through its writing
        assert to_json([len]) == ["<function>"]  # (a plain to_json: not counted, a function its stand-in)
        with pytest.raises(ValueError, match=FUNCTION_IN_RESULT):
            written([len])
        assert written([{"a": "b"}] * 3) == [{"a": "b"}] * 3  # a writing begun and ended meanwhile
    finally:
        resume.set()
        other.join(10)
    assert len(outcome) == 1 and isinstance(outcome[0], ValueError) and "too large" in str(outcome[0]), outcome


@given(st.one_of(st.text(max_size=8), st.integers(), st.integers(-2**70, 2**70), st.booleans(), st.none(),
                 st.fractions(max_denominator=4), st.lists(st.integers(), max_size=3)), st.integers(0, 40))
@settings(max_examples=300, deadline=None)
def test_str_of_a_text_or_a_short_number_gives_and_charges_what_writing_it_does(x: object, budget: int) -> None:
    """``str`` answers a text and a number of at most 64 bits itself: the text the language's notation
    writes (``_text_of``), charged its walk and its length, with the same budget error."""
    def plain() -> tuple[str, int]:
        ctx = _Budget(budget)
        try:
            B._walk_cost(ctx, x, "str")
            out = B._text_of(x)
            B._spend(ctx, len(out), "str")
        except B.CallError as err:
            return f"error: {err}", ctx.steps
        return out, ctx.steps

    ctx = _Budget(budget)
    try:
        got = B._str(ctx, x)
    except B.CallError as err:
        got = f"error: {err}"
    assert (got, ctx.steps) == plain()


class _Written:
    """A value that notes each time a message writes it."""

    count = 0

    def __str__(self) -> str:
        _Written.count += 1
        return "w"


@pytest.mark.parametrize("limit", [10, 40, 80])
def test_brief_writes_no_more_of_a_value_than_its_message_shows(limit: int) -> None:
    """A caller's huge value in a message (``api._shown_value``, a trace's ``explain``) is written as far as the
    message goes, never whole: its start as the whole value's would be written, "..." where cut."""
    from validator.lib.values import brief, notation

    _Written.count = 0
    deep = [[i, "t" * 1000, {"k": [i] * 5}] for i in range(200)] + [_Written()] * 100_000
    shown = brief(deep, limit)
    assert _Written.count == 0 and len(shown) == limit
    assert shown[:-3] == notation(deep[:200])[:limit - 3] and shown.endswith("...")
    assert brief({"a": "x" * 10**7}, limit) == notation({"a": "x" * limit})[:limit - 3] + "..."
    assert brief(list(range(10**5))) == "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11..."
    assert (brief("abc", quoted=False), brief("abc"), brief([1, "a", (1,), {1, 2}])) == ("abc", '"abc"', '[1, "a", (1,), {1, 2}]')
    assert brief(10**5000) == "an integer of 16610 bits" == brief([10**5000])[1:-1]
