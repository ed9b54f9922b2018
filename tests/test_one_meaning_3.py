"""More defects where the checker and the engines, or two tools, gave one thing two meanings
(session 33): each has one meaning, said once."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_one_meaning import check_codes

ENGINES = ["backend", "reference"]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "ruleval.toml").write_text("")
    return tmp_path


# -- 1. `require c` narrows the rest of its block as `if c` narrows its body: the rest runs only where c holds


NARROW = '''ruleset t "t"
def maybe(x) = if x > 0 then x else none
const nil = none
procedure p(x) cite "P-1" {
  var out = 0
  var v = maybe(x)
  step s cite "S-1" {
    let r = {x: maybe(x), y: none}
    let n = maybe(x)
    let m = none
    BODY
  }
  step t cite "S-2" {
    LATER
  }
}
query main(x) = p(x)
'''


def body(code: str, later: str = "out := 1") -> str:
    return NARROW.replace("BODY", code).replace("LATER", later)


@pytest.mark.parametrize("code", [
    'require r.y != none else "no"\n    out := r.y + 1',  # (was C004: r.y taken for none where it is not)
    'require m != none else "no"\n    out := m + 1',
    'require m != none and r.y != none else "no"\n    out := m + r.y',
    'require not (m == none or r.y == none) else "no"\n    out := m + r.y',
    'if x > 1 {\n      require m != none else "no"\n      out := m * 2\n    }',
    'for i in [1, 2] {\n      require m != none else "no"\n      out := m + i\n    }',
    'require v != none else "no"\n    out := v + 1',
])
def test_require_narrows_the_rest_of_its_block(root: Path, code: str) -> None:
    assert check_codes(root, body(code)) == []


@pytest.mark.parametrize("code, later, bad", [
    ('require m == none else "no"\n    out := m + 1', "out := 1", "m + 1"),  # the test holding: none
    ('require m != none or x > 1 else "no"\n    out := m + 1', "out := 1", "m + 1"),  # an `or` tells nothing
    ('if x > 1 {\n      require m != none else "no"\n    }\n    out := m + 1', "out := 1", "m + 1"),  # not past its block
    ('for i in [1] {\n      require m != none else "no"\n    }\n    out := m + 1', "out := 1", "m + 1"),
    ('require nil != none else "no"', "out := nil + 1", "nil + 1"),  # nor into another step (a `goto` may reach it)
    ('require r.y != none else "no"\n    out := r.x + r.y\n    let q = {y: none}\n    out := q.y + 1', "out := 1",
     "q.y + 1"),
])
def test_require_tells_nothing_past_its_block_nor_what_it_does_not_test(root: Path, code: str, later: str,
                                                                        bad: str) -> None:
    assert check_codes(root, body(code, later)) == [("C004", bad)]


@pytest.mark.parametrize("code, bad", [
    ('require v == none else "no"\n    out := v + 1', [("C004", "v + 1")]),
    ('require v == none else "no"\n    v := 3\n    out := v + 1', []),
    ('require v == none else "no"\n    if x > 1 { v := 3 }\n    out := v + 1', []),
    ('require v == none else "no"\n    for i in [1] { out := v + 1\n      v := i }', []),
])
def test_what_a_require_tells_of_a_var_holds_until_the_var_may_change(root: Path, code: str,
                                                                        bad: list[tuple[str, str]]) -> None:
    """As after an `if`'s test: not after a `:=` of it, nor after a block, nor in a loop, that may change it."""
    assert check_codes(root, body(code)) == bad
