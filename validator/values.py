"""Conversion of run-time values to JSON: sets become sorted lists, fractions "n/d" strings."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from .runtime import RandomValue


def _order(v: Any) -> Any:
    if isinstance(v, str):
        return (1, v)
    if isinstance(v, (int, float)):
        return (0, v)
    return (2, repr(v))


MAX_INT_BITS = 14_000  # about 4 200 digits: below Python's limit for turning an integer into text


def to_json(v: Any) -> Any:
    t = type(v)  # the commonest values first: records, then texts, lists
    if t is dict:
        return _map(v)
    if t is str or v is None or t is bool:
        return v
    if t is list:
        return _items(v)
    if isinstance(v, dict):
        return _map(dict(v))
    if isinstance(v, (list, tuple)):
        return [x if type(x) is str else to_json(x) for x in v]
    if isinstance(v, int) and not isinstance(v, bool) and v.bit_length() > MAX_INT_BITS:
        raise ValueError(f"an integer of {v.bit_length()} bits is too large to write")
    if isinstance(v, (bool, int, str, float)):
        return v
    if isinstance(v, Fraction):
        return v.numerator if v.denominator == 1 else f"{v.numerator}/{v.denominator}"
    if isinstance(v, (set, frozenset)):
        return [to_json(x) for x in sorted(v, key=_order)]
    if isinstance(v, RandomValue):
        return v.collapse()  # a result is a use: fork over the values it can take
    if callable(v):
        return "<function>"
    return str(v)


def _map(v: dict[Any, Any]) -> Any:
    """A map or record, written by ``_items``."""
    return _items([v])[0]


def _items(xs: list[Any]) -> list[Any]:
    """A list's items: texts as they are, maps and records copied whole, then only their entries that
    are no text, none or truth value replaced; a list of maps in one is written by one call for all
    of them (a result's orders, its units), not one each."""
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
        done[j] = out if texts else {k if type(k) is str else "none" if k is None else str(k): x for k, x in out.items()}
    return done
