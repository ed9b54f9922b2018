"""Shared by the fuzz, property and robustness tests: bounded, derandomized hypothesis settings
(CI stays fast and repeatable) and the long mode switched on by RULEVAL_FUZZ_LONG=1."""

from __future__ import annotations

import copy
import os
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


class UnwrittenByMistake(AssertionError):
    """Source the backend wrote that Python refuses for another reason than nesting: a bug of the
    writer, which a run would hide by giving the unit to the reference."""


@contextmanager
def loud_writing() -> Iterator[None]:
    """While open, a generated function the backend gives up as a bug of its writer (``backend._compile_text``:
    Python refuses it for any reason but nesting past its limits, ``runtime.WRITER_BUG``) fails the test
    (``UnwrittenByMistake``, with the source) instead of being run by the reference, which would give the
    same answer. Every test has it (``conftest.loud_writing_everywhere``)."""
    from validator.engine import backend
    from validator.lib.runtime import WRITER_BUG, Unwritable

    real = backend._compile_text

    def strict(source: str, filename: str) -> Any:
        try:
            return real(source, filename)
        except Unwritable as err:
            if err.code == WRITER_BUG:
                raise UnwrittenByMistake(f"{filename}: {err.message}\n{source}") from None
            raise

    backend._compile_text = strict
    try:
        yield
    finally:
        backend._compile_text = real
