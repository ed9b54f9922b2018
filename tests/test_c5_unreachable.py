"""W102 (a step that can never run) knows a step leaves by the one definition of "this block
certainly leaves" (``ast.leaves``) the type checker narrows with: a step that ends in an `if`/`else`
all of whose ways jump leaves as surely as one that ends in a `goto`. `break`/`continue` at a step's
level are no loop's (C020) and leave nothing there, so they make no step unreachable."""

from __future__ import annotations

from pathlib import Path

import pytest

from validator.api import check_text


def said(tmp_path: Path, first: str) -> list[tuple[str, str]]:
    text = ("procedure turn cite \"R1\" {\n"
            "  var n = 0\n"
            f"  step one cite \"R1\" {{ {first} }}\n"
            "  step two cite \"R1\" { emit \"two\" {} }\n"
            "  step three cite \"R1\" { emit \"three\" {} }\n"
            "}\n"
            "query main = turn()\n")
    rs = check_text(tmp_path / "main.rules", text)
    lines = text.splitlines()
    assert not [d for d in rs.diagnostics if d.is_error and d.code != "C020"], rs.diagnostics  # (read and checked)
    return [(d.code, lines[d.span.line - 1][d.span.col - 1:d.span.end_col - 1] if d.span.line == d.span.end_line else
             lines[d.span.line - 1][d.span.col - 1:]) for d in rs.diagnostics if d.code in ("W102", "C020")]


@pytest.mark.parametrize("first", [
    "if n > 0 { goto three } else { stop }",
    "if n > 0 { goto three } elif n < 0 { reject \"no\" } else { goto three }",
    "emit \"one\" {} if n > 0 { goto three } else { if n < 0 { stop } else { goto three } }",
])
def test_a_step_ending_in_an_if_all_of_whose_ways_jump_makes_the_next_unreachable(tmp_path: Path, first: str) -> None:
    assert said(tmp_path, first) == [("W102", 'step two cite "R1" { emit "two" {} }')]


@pytest.mark.parametrize("first", [
    "if n > 0 { goto three }",  # (no `else`: falls through when n <= 0)
    "if n > 0 { goto three } else { emit \"one\" {} }",
    "for x in [1] { stop }",  # (a loop may take no turn)
])
def test_a_step_that_may_fall_through_makes_nothing_unreachable(tmp_path: Path, first: str) -> None:
    assert said(tmp_path, first) == []


def test_break_at_a_step_level_is_refused_and_leaves_nothing(tmp_path: Path) -> None:
    assert said(tmp_path, "if n > 0 { goto three } else { break }") == [("C020", "break")]
