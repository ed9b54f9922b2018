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
    t = type(v)  # the commonest values first
    if t is str or v is None or t is bool:
        return v
    if isinstance(v, dict):  # text keys, and text, none and truth values, as they are, without a call
        out: dict[str, Any] = {}
        for k, x in v.items():  # (a loop, not a comprehension: the type of x is looked up once)
            tx = type(x)
            out[k if type(k) is str else "none" if k is None else str(k)] = (
                x if tx is str or x is None or tx is bool
                else [y if type(y) is str else to_json(y) for y in x] if tx is list else to_json(x))
        return out
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
