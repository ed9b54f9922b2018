"""Conversion of run-time values to JSON: sets become sorted lists, fractions "n/d" strings."""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

from .runtime import RandomValue


# ---------------------------------------------------------------- the order of values

# The language's one order of values (docs/language.md, "Order"): none, then truth values (false before
# true), numbers, texts (by code point), lists and tuples (item by item, a prefix first), records and
# maps (by their entries in key order). A set is walked in this order everywhere (loops, comprehensions,
# built-ins, `str`, JSON), so what a run does depends only on what a set holds, never on Python's
# hashes, which differ from process to process for texts. Maps and records are walked in the order
# their entries were put (literal, comprehension, state or data order): that order is a value's own.

_TEXTS, _INTS = frozenset({str}), frozenset({int})


def order_key(v: Any) -> Any:
    """The sort key of a value in the language's order (``in_order``)."""
    t = type(v)  # the common cases by exact type first (Fraction's isinstance goes through its ABC)
    if t is str:
        return (3, v)
    if t is int:
        return (2, v)
    if t is list:  # texts in it without a call each
        return (4, tuple([(3, x) if type(x) is str else order_key(x) for x in v]))
    if isinstance(v, (list, tuple)):
        return (4, tuple(order_key(x) for x in v))
    if v is None:
        return (0, 0)
    if isinstance(v, bool):
        return (1, int(v))
    if isinstance(v, (int, Fraction, float)):
        return (2, v)
    if isinstance(v, str):
        return (3, v)
    if isinstance(v, dict):
        return (5, tuple(sorted((order_key(k), order_key(x)) for k, x in v.items())))
    if isinstance(v, (set, frozenset)):
        return (6, tuple(order_key(x) for x in in_order(v)))
    return (7, repr(v))


def in_order(items: Any) -> list[Any]:
    """The items sorted in the language's order (``order_key``): texts only, or integers only (no truth
    values), compared as they are (the same order, with no key made for each)."""
    if _INTS.issuperset(map(type, items)) or _TEXTS.issuperset(map(type, items)):
        return sorted(items)
    return sorted(items, key=order_key)


def walked(coll: Any) -> Any:
    """What walking a collection gives, in the language's order of walking: a set's items in the order
    of values, anything else (a list, a map's keys, a generator) as it is."""
    t = type(coll)
    if t is frozenset or t is set:
        return in_order(coll)
    return coll


MAX_OUTPUT_NODES = 2_000_000  # a result or an event list larger than this is not written
MAX_INT_BITS = 14_000  # about 4 200 digits: below Python's limit for turning an integer into text


# parts still allowed in the value being written by ``written`` (None: no bound)
_LEFT: list[int | None] = [None]


def written(v: Any, limit: int = MAX_OUTPUT_NODES) -> Any:
    """``to_json`` of a value of at most ``limit`` parts counted as a tree (a value built by sharing
    can be small in memory and astronomically large written out); ``ValueError`` past it."""
    _LEFT[0] = limit
    try:
        return to_json(v)
    finally:
        _LEFT[0] = None


def _spend(n: int) -> None:
    left = _LEFT[0]
    if left is not None:
        left -= n
        _LEFT[0] = left
        if left < 0:
            raise ValueError(f"a value of more than {MAX_OUTPUT_NODES} parts is too large to write")


def to_json(v: Any) -> Any:
    t = type(v)  # the commonest values first: records, then texts, lists
    if t is dict:
        return _map(v)
    if t is str or v is None or t is bool or (t is int and v.bit_length() <= MAX_INT_BITS):
        return v
    if t is list:
        return _items(v)
    if isinstance(v, dict):
        return _map(dict(v))
    if isinstance(v, (list, tuple)):
        _spend(len(v))
        return [x if type(x) is str else to_json(x) for x in v]
    if isinstance(v, int) and not isinstance(v, bool) and v.bit_length() > MAX_INT_BITS:
        raise ValueError(f"an integer of {v.bit_length()} bits is too large to write")
    if isinstance(v, (bool, int, str, float)):
        return v
    if isinstance(v, Fraction):
        return v.numerator if v.denominator == 1 else f"{v.numerator}/{v.denominator}"
    if isinstance(v, (set, frozenset)):
        _spend(len(v))
        return [to_json(x) for x in in_order(v)]
    if isinstance(v, RandomValue):
        return v.collapse()  # a result is a use: fork over the values it can take
    if callable(v):
        if _LEFT[0] is not None:  # a result (``written``) holding a function: never written as a stand-in
            raise ValueError(FUNCTION_IN_RESULT)
        return "<function>"
    return str(v)


FUNCTION_IN_RESULT = "it holds a function, which has no JSON form"


def _map(v: dict[Any, Any]) -> Any:
    """A map or record, written by ``_items``."""
    return _items([v])[0]


def _items(xs: list[Any]) -> list[Any]:
    """A list's items: texts as they are, maps and records copied whole, then only their entries that
    are no text, none or truth value replaced; a list of maps in one is written by one call for all
    of them (a result's orders, its units), not one each."""
    if _LEFT[0] is not None:
        _spend(len(xs) + sum(len(v) for v in xs if type(v) is dict))
    done = xs.copy()
    for j, v in enumerate(xs):
        tv = type(v)
        if tv is not dict:
            if tv is not str:
                done[j] = to_json(v)
            continue
        out = v.copy()
        texts = True  # all keys are texts (a record's always are)
        for k, x in v.items():  # (a loop, not a comprehension: the type of x is looked up once)
            if type(k) is not str:
                texts = False
            tx = type(x)
            if tx is str or x is None or tx is bool:
                continue
            if tx is list:  # (short lists of texts, such as cites, the commonest: copied, no call)
                c = x.copy()
                i = 0
                for y in x:
                    ty = type(y)
                    if ty is not str:
                        if ty is dict:  # a list of records: all of them at once
                            c = _items(x)
                            break
                        c[i] = to_json(y)
                    i += 1
                out[k] = c
            elif tx is dict:
                out[k] = _map(x)
            else:
                out[k] = to_json(x)
        done[j] = out if texts else {key_text(k): x for k, x in out.items()}
    return done


# ---------------------------------------------------------------- what a value costs to walk

_CONTAINERS = (list, tuple, dict, frozenset, set)


def tree_size(v: Any, limit: int) -> int:
    """The number of values in ``v`` counted as a tree (a list holding one list ten times counts it ten
    times): what comparing, hashing or writing it walks. The count stops past ``limit``. Values never
    change once made and hold no cycle, so the tree is walked as the graph it is, each distinct
    container once."""
    t = type(v)
    if t not in _CONTAINERS:
        return 1
    cap = limit + 1
    sizes: dict[int, int] = {}
    stack: list[tuple[Any, bool]] = [(v, False)]
    while stack:
        x, children_done = stack.pop()
        kids: Any = [y for kv in x.items() for y in kv] if isinstance(x, dict) else x
        if children_done:
            total = 1
            for c in kids:
                total += sizes.get(id(c), 1) if type(c) in _CONTAINERS else 1
                if total > cap:
                    total = cap
                    break
            sizes[id(x)] = total
            continue
        if id(x) in sizes:
            continue
        stack.append((x, True))
        stack.extend((c, False) for c in kids if type(c) in _CONTAINERS and id(c) not in sizes)
    return sizes[id(v)]


def write_value(v: Any, limit: int = MAX_OUTPUT_NODES) -> str:
    """A value in the language's notation: `none`, `true`, `1/2`, `"text"` inside a collection,
    `[1, 2]`, `(1, 2)`, `{a: 1}` (a record), `{"k" => 1}` (a map), `{1, 2}` (a set). Raises
    ``ValueError`` for a value of more than ``limit`` parts."""
    if tree_size(v, limit) > limit:
        raise ValueError(f"a value of more than {limit} parts is too large to write")
    return _write(v, top=True)


def _write(v: Any, top: bool = False) -> str:
    if v is None:
        return "none"
    if v is True or v is False:
        return "true" if v else "false"
    if isinstance(v, str):
        return v if top else json.dumps(v, ensure_ascii=False)
    if isinstance(v, Fraction):
        return f"{v.numerator}/{v.denominator}" if v.denominator != 1 else str(v.numerator)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, list):
        return "[" + ", ".join(_write(x) for x in v) + "]"
    if isinstance(v, tuple):
        return "(" + ", ".join(_write(x) for x in v) + ("," if len(v) == 1 else "") + ")"
    if isinstance(v, (set, frozenset)):
        return "{" + ", ".join(_write(x) for x in in_order(v)) + "}"
    if isinstance(v, dict):
        if not v:
            return "{}"
        if all(isinstance(k, str) and k.isidentifier() for k in v):
            return "{" + ", ".join(f"{k}: {_write(x)}" for k, x in v.items()) + "}"
        return "{" + ", ".join(f"{_write(k)} => {_write(x)}" for k, x in v.items()) + "}"
    if isinstance(v, RandomValue):
        return v.describe()
    if callable(v):
        return "<function>"
    return str(v)


def key_text(k: Any) -> str:
    """A map key as a JSON object's key: a text as it is, anything else in the language's notation."""
    return k if type(k) is str else _write(k)


def number_cost(op: str, x: Any, y: Any) -> int:
    """Arithmetic on large numbers: multiplying, dividing and reducing a fraction cost the square of
    their size in 64 Kib units (nothing for numbers of ordinary size). Adding integers costs nothing:
    it grows a number by one bit at most."""
    if op in ("+", "-") and isinstance(x, int) and isinstance(y, int):
        return 0
    bx = x.bit_length() if isinstance(x, int) else x.numerator.bit_length() + x.denominator.bit_length()
    by = y.bit_length() if isinstance(y, int) else y.numerator.bit_length() + y.denominator.bit_length()
    return (bx + by) * (bx + by) >> 16
