"""The YAML reader's direct construction (``safeyaml._direct``: texts, lists and mappings built without
PyYAML's constructor) against PyYAML's constructor under the same loader: on generated documents, the
same value (types included) or the same first error."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from validator.core import jsontext, safeyaml

DIRECT = safeyaml._LOADERS[(False, False)]
PYYAML = safeyaml._no_repeats(safeyaml._FastLoader)  # (what ``DIRECT`` adds its construction to)

# keys that read as one another (`1`, `0x1`, `1.0`, `true`), texts, and keys PyYAML reads in ways of its own
KEYS = ["a", "b", "'a'", "1", "0x1", "1.0", "true", "yes", "null", "~", "''", "2001-12-14", "!!str 1", "!!int x",
        "[a]", "{a: 1}", "<<", "=", "!!binary aGk=", "1e400", "0o17", "-.inf"]
SCALARS = ["x", "'quoted'", '"dq"', "5", "-3", "0x1F", "1_000", "2.5", "1.0", ".nan", "true", "False", "on", "null",
           "~", "''", "2001-12-14", "2001-12-14t21:59:43.10-05:00", "2020-02-30", "!!str 5", "!!int 7", "!!int x",
           "!!float 2", "!!bool maybe", "!!null ''", "!!binary aGVsbG8=", "!!timestamp abc", "1" * 120,
           "!!python/name:os.system", "!custom x", "!!set {a, b}", "!!omap [{a: 1}]", "!!seq [1]", "!!map {a: 1}",
           "!!str [1]", "&anchor y"]


PLAIN_KEYS = ["a", "b", "c", "d", "1", "2", "'x'"]
PLAIN = ["x", "y", "5", "2.5", "true", "null", "'q'"]  # (half the picks: most documents then read whole)


def _doc(depth: int) -> st.SearchStrategy[str]:
    scalar = st.one_of(st.sampled_from(PLAIN), st.sampled_from(SCALARS))
    key = st.one_of(st.sampled_from(PLAIN_KEYS), st.sampled_from(KEYS))
    if depth == 0:
        return scalar
    inner = _doc(depth - 1)
    pairs = st.lists(st.tuples(key, inner), max_size=5)
    mapping = pairs.map(lambda ps: "{" + ", ".join(f"{k}: {v}" for k, v in ps) + "}")
    merge = st.tuples(pairs, pairs).map(lambda two: "{" + ", ".join(
        [f"{k}: {v}" for k, v in two[0]] + ["<<: {" + ", ".join(f"{k}: {v}" for k, v in two[1]) + "}"]) + "}")
    seq = st.lists(inner, max_size=5).map(lambda xs: "[" + ", ".join(xs) + "]")
    tagged = st.tuples(st.sampled_from(["!!set ", "!!omap ", "!!pairs ", "!!seq ", "!!map ", "!x "]),
                       st.one_of(mapping, seq)).map("".join)
    return st.one_of(scalar, mapping, seq, mapping, seq, merge, tagged)


def _typed(v: Any) -> Any:
    """``v`` with each value's type beside it (1, 1.0 and True are equal in Python, not here)."""
    if isinstance(v, dict):
        return ("dict", [(_typed(k), _typed(x)) for k, x in v.items()])
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, [_typed(x) for x in v])
    if isinstance(v, (set, frozenset)):
        return (type(v).__name__, sorted(map(repr, v)))
    if isinstance(v, float) and v != v:
        return ("float", "nan")
    return (type(v).__name__, v)


def _outcome(loader: Any, text: str) -> Any:
    try:
        reader = loader(text)
        try:
            return ("value", _typed(reader.get_single_data()))
        finally:
            reader.dispose()
    except (yaml.YAMLError, ValueError, TypeError, RecursionError) as exc:
        return ("error", type(exc).__name__, str(exc))


@settings(max_examples=1500, deadline=None)
@given(_doc(3))
def test_direct_construction_is_pyyamls(text: str) -> None:
    assert _outcome(DIRECT, text) == _outcome(PYYAML, text)


def test_direct_construction_on_the_bundled_data() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    texts = [p.read_text(encoding="utf-8") for p in sorted(root.glob("rulesets/**/*.yaml"))]
    assert texts
    for text in texts:
        assert _outcome(DIRECT, text) == _outcome(PYYAML, text)
        assert _outcome(DIRECT, text)[0] == "value"


def test_a_key_given_twice_is_found_first_in_pyyamls_order() -> None:
    # a mapping's keys are all read before the mappings inside it: the outer repeat is the one reported
    text = "a: {x: 1, x: 2}\n1: b\n0x1: c\n"
    assert _outcome(DIRECT, text) == _outcome(PYYAML, text)
    assert "key `0x1` given twice (as `1`)" in str(_outcome(DIRECT, text))


# ---------------------------------------------------------------- a plain document built from its events

def _loaded(text: str, events: bool) -> Any:
    """``safeyaml.load``'s value (types beside) or error, with or without building from the parser's events."""
    try:
        if not events:
            safeyaml._LOADERS[(False, False)].from_events = _refuse
        return ("value", _typed(safeyaml.load(text)))
    except (yaml.YAMLError, ValueError, TypeError, RecursionError) as exc:
        return ("error", type(exc).__name__, str(exc))
    finally:
        safeyaml._LOADERS[(False, False)].from_events = _FROM_EVENTS


def _refuse(self: Any) -> Any:
    raise safeyaml._Unplain


_FROM_EVENTS = safeyaml._LOADERS[(False, False)].from_events
BLOCK = ["a: 1\nb:\n  - x\n  - {c: d}\n", "- a\n- - b\n  - c\n", "a: &x 1\nb: &x 2\n", "a: 1\n---\nb: 2\n",
         "a: !!str 5\nb: !!int '7'\n", "? [a]\n: b\n", "a:\n  b:\n    c: 1\n  b: 2\n", "", "# only\n", "---\n...\n",
         "a: b: c\n", "[" * 120 + "]" * 120, "{a: " * 120 + "1" + "}" * 120, "x: 2001-12-14\ny: !!binary aGk=\n",
         "a: .nan\n.nan: 1\n", "- 1.0\n- 1e3\n- 0o17\n- '1'\n", "a: \x85\n", "a: \x00\n", "a: |\n  text\n  more\n",
         "!!map {a: 1}\n", "!x {a: 1}\n", "a: ! 5\n", "! a: 1\n", "{1: a, true: b}\n", "{null: 1, ~: 2}\n"]


@settings(max_examples=1500, deadline=None)
@given(st.one_of(_doc(3), st.sampled_from(BLOCK)))
def test_a_document_read_from_its_events_is_read_as_before(text: str) -> None:
    assert _loaded(text, events=True) == _loaded(text, events=False)


def test_the_bundled_data_is_read_from_its_events() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    texts = [p.read_text(encoding="utf-8") for p in sorted(root.glob("rulesets/**/*.yaml"))]
    for text in texts:
        reader = DIRECT(text)
        try:
            from_events = ("value", _typed(reader.from_events()))
        finally:
            reader.dispose()
        assert from_events == _outcome(DIRECT, text) == _loaded(text, events=True)


# ---------------------------------------------------------------- what a data file's value is checked for

_WIDE = [10 ** (jsontext.MAX_INT_DIGITS - 1), 10 ** jsontext.MAX_INT_DIGITS, -(10 ** jsontext.MAX_INT_DIGITS)]
_leaf = st.one_of(st.text(max_size=3), st.sampled_from(["\ud800", "a\udfff", "é"]), st.none(), st.booleans(),
                  st.integers(), st.sampled_from(_WIDE), st.floats(),
                  st.fractions(max_denominator=9), st.sampled_from([b"x", frozenset({1}), object]))
_key = st.one_of(st.text(max_size=2), st.sampled_from(["\udc80", 1, None, True]))
_values = st.recursive(_leaf, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.lists(inner, max_size=3).map(tuple),
    st.dictionaries(_key, inner, max_size=4)), max_leaves=25)


@settings(max_examples=1500, deadline=None)
@given(_values, st.integers(0, 4))
def test_the_walk_finds_the_first_problem_a_stack_pops(value: Any, max_depth: int) -> None:
    assert jsontext.value_problem(value, max_depth) == _popped(value, max_depth)


def _popped(value: Any, max_depth: int) -> Any:
    """The first problem in the order a stack of the parts pops them: a container is tested when
    popped (its depth, then its keys in order, its items pushed), each text, number, truth value
    and none when popped; the same pointers and words as ``value_problem``."""
    def pointer(path: tuple[Any, ...]) -> str:
        return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)

    todo: list[tuple[Any, tuple[Any, ...]]] = [(value, ())]
    while todo:
        v, path = todo.pop()
        t = type(v)
        if t is str:
            if any(0xD800 <= ord(c) <= 0xDFFF for c in v):
                return pointer(path), "a text holds a lone surrogate"
        elif t is int:
            if len(str(abs(v))) > jsontext.MAX_INT_DIGITS:
                return pointer(path), f"an integer with more than {jsontext.MAX_INT_DIGITS} digits"
        elif t is float:
            if v != v or v in (float("inf"), float("-inf")):
                return pointer(path), f"`{v}` is not JSON"
        elif t is Fraction:  # (a decimal of at most MAX_EXPONENT places, at most MAX_INT_DIGITS before its point)
            if (v * 10 ** jsontext.MAX_EXPONENT).denominator != 1:
                return pointer(path), f"a fraction no decimal of at most {jsontext.MAX_EXPONENT} places writes"
            if len(str(abs(int(v)))) > jsontext.MAX_INT_DIGITS:
                return pointer(path), f"a decimal with more than {jsontext.MAX_INT_DIGITS} digits before its point"
        elif t in (list, tuple, dict):
            if len(path) >= max_depth:
                return pointer(path), f"nested more than {max_depth} deep"
            for k, x in (v.items() if t is dict else enumerate(v)):
                if t is dict and type(k) is not str:
                    return pointer(path), f"a key that is not text (`{str(k)[:40]}`)"
                if t is dict and any(0xD800 <= ord(c) <= 0xDFFF for c in k):
                    return pointer(path), "a key holds a lone surrogate"
                todo.append((x, (*path, k)))
        elif not (v is None or t is bool):
            return pointer(path), f"a value of no JSON type (`{t.__name__}`)"
    return None


def test_the_walk_finds_the_last_item_s_problem_first() -> None:
    # (the order a stack pops: a later item, then what it holds, before an earlier one; a container's
    # keys before its items)
    value = {"a": float("nan"), "b": [1, {"c": "\ud800"}], "d": 2}
    assert jsontext.value_problem(value) == ("/b/1/c", "a text holds a lone surrogate") == _popped(value, 100)
    value = {"a": float("nan"), "b": [1, {"c": "\ud800", 3: 4}]}
    assert jsontext.value_problem(value) == ("/b/1", "a key that is not text (`3`)") == _popped(value, 100)
    assert jsontext.value_problem([[[[]]]], 3) == ("/0/0/0", "nested more than 3 deep") == _popped([[[[]]]], 3)
    big = [Fraction(1, 2), Fraction(10 ** jsontext.MAX_INT_DIGITS * 2 + 1, 2)]  # (1/2 is 0.5; the other, 402 digits)
    assert jsontext.value_problem(big) == ("/1", "a decimal with more than 401 digits before its point") == _popped(big, 100)


@settings(max_examples=300, deadline=None)
@given(_values)
def test_floats_are_read_in_every_holder(value: Any) -> None:
    found = jsontext.exact_numbers(value)
    stack = [found]
    while stack:
        v = stack.pop()
        assert type(v) is not float or v != v or v in (float("inf"), float("-inf"))
        stack.extend(v.values() if type(v) is dict else v if type(v) in (list, tuple) else ())
    assert (found is value) == (_floats(value) == 0)


def _floats(v: Any) -> int:
    if type(v) is float:
        return 1 if v == v and v not in (float("inf"), float("-inf")) else 0
    if type(v) in (list, tuple):
        return sum(map(_floats, v))
    return sum(map(_floats, v.values())) if type(v) is dict else 0


def test_the_tag_table_keeps_no_long_text() -> None:
    """The resolver's table of tags by text (``_TAGS``) outlives the file: a long plain text is
    resolved each time, never kept, so a big data file leaves nothing of itself in memory."""
    long = "x" * 5000
    assert safeyaml.load(f"a: {long}\nb: [{long}, short]\n") == {"a": long, "b": [long, "short"]}
    assert all(len(text) <= safeyaml._TAGGED_CHARS for text, _ in safeyaml._TAGS)
    assert ("short", (True, False)) in safeyaml._TAGS
