"""A value from outside that does not fit an optional type (`T?`) is told that null would have: the message
of an enum's, a record's, a list's or a map's walk said what `T` takes and not that null is taken too
(``kinds._enum``: "expected a member of the enum `E` (a, b), got 3" for an `E?`). Its type's `T` alone says
nothing of null."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from test_number_type import _errors, _load, _refusals  # (one way to load a text and read its findings)

DECLS = "enum E { a, b }\nrecord R { x: int }\n"


def _refusal(tmp_path: Path, param: str, arg: Any) -> str:
    rs = _load(tmp_path, f"{DECLS}query main({param}) = 1\n")
    assert _errors(rs) == []
    [ref], [back] = _refusals(rs, {}, "main", args=[arg])
    assert ref.code == back.code == "S008", (ref, back)
    assert ref.message == back.message, (ref, back)
    return ref.message  # type: ignore[no-any-return]


@pytest.mark.parametrize("param, arg, expected", [
    ("v: E?", 3, "a member of the enum `E` (a, b) or null"),
    ("v: R?", 3, "the record `R` (an object) or null"),
    ("v: list[int]?", 3, "`list[int]?` (a list or null)"),
    ("v: map[str, int]?", 3, "`map[str, int]?` (an object or null)"),
    ("v: int?", "3", "`int?` (an integer or null)"),
    ("v: list[E?]", [3], "a member of the enum `E` (a, b) or null"),  # (an item that may be null)
])
def test_an_optional_type_s_refusal_says_null_is_taken(tmp_path: Path, param: str, arg: Any, expected: str) -> None:
    said = _refusal(tmp_path, param, arg)
    assert f"expected {expected}, got" in said, said


@pytest.mark.parametrize("param, arg", [("v: E", 3), ("v: R", 3), ("v: list[E]", [None]), ("v: int", "3"),
                                        ("v: list[int]", 3)])
def test_a_type_that_takes_no_null_says_nothing_of_it(tmp_path: Path, param: str, arg: Any) -> None:
    said = _refusal(tmp_path, param, arg)
    assert "null" not in said.split("got")[0], said
