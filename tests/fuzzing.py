"""Shared by the fuzz, property and robustness tests: bounded, derandomized hypothesis settings
(CI stays fast and repeatable) and the long mode switched on by RULEVAL_FUZZ_LONG=1."""

from __future__ import annotations

import copy
import os
import warnings
from contextlib import contextmanager
from typing import Any, Iterator

from hypothesis import HealthCheck, settings

LONG = os.environ.get("RULEVAL_FUZZ_LONG") == "1"


def bounded(examples: int, long_examples: int | None = None) -> settings:
    """``examples`` per test normally; ``long_examples`` (default 50 times more) in the long mode."""
    n = (long_examples or examples * 50) if LONG else examples
    return settings(derandomize=True, max_examples=n, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))


def json_paths(v: Any, here: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value, its root first, as the keys and indexes that lead there."""
    out = [here]
    if isinstance(v, dict):
        for k, x in v.items():
            out += json_paths(x, here + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            out += json_paths(x, here + (i,))
    return out


def mutated(doc: Any, path: tuple[Any, ...], how: str, value: Any, key: str = "zz_extra") -> Any:
    """A copy of ``doc`` with ``value`` at ``path``: replacing what is there, deleting it (``how`` is
    "delete"), or ("add") under ``key`` in the object there or at the end of the array there (at a
    place holding neither, replacing it)."""
    if not path:
        return value
    doc = copy.deepcopy(doc)
    parent = doc
    for p in path[:-1]:
        parent = parent[p]
    last = path[-1]
    if how == "delete":
        del parent[last]
    elif how == "add" and isinstance(parent[last], dict):
        parent[last][key] = value
    elif how == "add" and isinstance(parent[last], list):
        parent[last].append(value)
    else:
        parent[last] = value
    return doc


# Python's refusals of code nested past its own limits: the one documented reason the backend gives a
# unit up to the reference when it compiles it (``backend._compile_text``, E005)
NESTING = ("too many statically nested blocks", "too many levels of indentation", "too many nested parentheses")


class UnwrittenByMistake(AssertionError):
    """Source the backend wrote that Python refuses for another reason than nesting: a bug of the
    writer, which a run would hide by giving the unit to the reference."""


@contextmanager
def loud_writing() -> Iterator[None]:
    """While open, a generated function Python refuses to compile for any reason but nesting past its
    limits (``NESTING``, a recursion or memory error) fails the test (``UnwrittenByMistake``) instead
    of being given up (``Unwritable``) and run by the reference, which would give the same answer."""
    from validator.engine import backend

    real = backend._compile_text

    def strict(source: str, filename: str) -> Any:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SyntaxWarning)
                return compile(source, filename, "exec")
        except SyntaxError as exc:
            if not any(m in str(exc.msg) for m in NESTING):
                raise UnwrittenByMistake(f"{filename}: {exc.msg} (line {exc.lineno})\n{source}") from None
        except (RecursionError, MemoryError):
            pass
        return real(source, filename)  # (which gives it up, E005)

    backend._compile_text = strict
    try:
        yield
    finally:
        backend._compile_text = real
