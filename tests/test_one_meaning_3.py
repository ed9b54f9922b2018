"""More defects where the checker and the engines, or two tools, gave one thing two meanings
(session 33): each has one meaning, said once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from test_one_meaning import check_codes
from validator.api import RunError, load_ruleset

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


def checked(root: Path, text: str) -> Any:
    """The ruleset ``text``, which the check passes."""
    (root / "run.rules").write_text(text, encoding="utf-8")
    rs = load_ruleset(root / "run.rules", use_cache=False)
    assert rs.ok, [str(d) for d in rs.diagnostics]
    return rs


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


# -- 2. a text is no collection: no built-in walks its characters, as no loop does; `len` and `slice` read a text


TEXT = '"ab"'
# each built-in's call with `X` where it is given a text, one call for each argument its definition declares a
# collection (``Builtin.takes``), the others such that the call would run
CALLS = {
    ("len", 0): "len(X)", ("count", 0): "count(X)", ("any", 0): "any(X)", ("all", 0): "all(X)", ("sum", 0): "sum(X)",
    ("max", 0): "max(X)", ("min", 0): "min(X)", ("sorted", 0): "sorted(X)", ("sort_by", 0): "sort_by(X, fn(c) => c)",
    ("index_of", 0): 'index_of(X, "a")', ("first", 0): "first(X)", ("last", 0): "last(X)",
    ("reverse", 0): "reverse(X)", ("set", 0): "set(X)", ("tuple", 0): "tuple(X)", ("list", 0): "list(X)",
    ("unique", 0): "unique(X)", ("keys", 0): "keys(X)", ("values", 0): "values(X)", ("items", 0): "items(X)",
    ("get", 0): "get(X, 0)", ("pick", 0): 'pick(X, ["a"])', ("pick", 1): 'pick({"a" => 1}, X)',
    ("has", 0): 'has(X, "a")', ("put", 0): 'put(X, "a", 1)', ("remove", 0): 'remove(X, "a")',
    ("merge", 0): "merge(X, {})", ("merge", 1): "merge({}, X)", ("append", 0): 'append(X, "c")',
    ("concat", 0): 'concat(X, ["c"])', ("concat", 1): 'concat(["c"], X)',
    ("union", 0): 'union(X, ["c"])', ("union", 1): 'union(["c"], X)',
    ("intersection", 0): 'intersection(X, ["a"])', ("intersection", 1): 'intersection(["a"], X)',
    ("difference", 0): 'difference(X, ["a"])', ("difference", 1): 'difference(["a"], X)',
    ("group_by", 0): "group_by(X, fn(c) => c)", ("index_by", 0): "index_by(X, fn(c) => c)",
    ("max_by", 0): "max_by(X, fn(c) => c)", ("min_by", 0): "min_by(X, fn(c) => c)",
    ("fold", 0): 'fold(X, "", fn(a, c) => a + c)', ("scan", 0): 'scan(X, "", fn(a, c) => a + c)',
    ("enumerate", 0): "enumerate(X)", ("zip", 0): "zip(X, [1, 2])", ("zip", 1): "zip([1, 2], X)",
    ("slice", 0): "slice(X, 1)", ("join", 0): 'join(X, "-")', ("choice", 2): 'choice(1, "k", X)',
    ("shuffle", 2): 'shuffle(1, "k", X)', ("distance", 2): 'distance({"a" => ["b"]}, "a", X)',
    ("components", 1): 'components({"a" => ["b"]}, X)', ("path_cost", 0): 'path_cost(X, {"a" => 1, "b" => 1}, 0)',
}
READ_AS_TEXT = {"len", "slice"}  # (the number of a text's characters, and a text cut from one)


def test_every_collection_argument_is_given_a_text_here() -> None:
    from validator.lib.builtins import BUILTINS

    declared = {(b.name, i) for b in BUILTINS.values() for i, kind in enumerate(b.takes)
                if kind and kind != "whole"}  # (a whole number's: tests/test_number_type.py)
    assert declared == set(CALLS)


@pytest.mark.parametrize("at", sorted(CALLS), ids=lambda at: f"{at[0]}-{at[1]}")
def test_a_built_in_given_a_text_is_refused_by_the_check_as_by_the_run(root: Path, at: tuple[str, int]) -> None:
    """`first("ab")`, `fold("ab", ...)`, `enumerate("ab")`, `join("ab", "-")` walked the characters while
    `count("ab")`, `sum("ab")`, `sorted("ab")` were C004, and `for c in "ab"` too: a text is no collection
    (docs/language.md, Built-ins). The check's finding where it sees the text, the run's (E011, the built-in
    refusing it) where it does not, alike in both engines: one meaning."""
    call = CALLS[at]
    codes = check_codes(root, f'ruleset t "t"\nquery main = {call.replace("X", TEXT)}\n')
    # (`opaque(...)`: a text the check does not know to be one)
    rs = checked(root, f'ruleset t "t"\ndef opaque(x) = x\nquery main = {call.replace("X", f"opaque({TEXT})")}\n')
    if at[0] in READ_AS_TEXT:
        assert codes == []
        assert len({repr(rs.run({}, engine=engine)) for engine in ENGINES}) == 1
        return
    assert codes == [("C004", TEXT)], codes
    refused = []
    for engine in ENGINES:
        with pytest.raises(RunError) as exc:
            rs.run({}, engine=engine)
        d = exc.value.diagnostics[0]
        assert d.code == "E011" and '`"ab"`' in d.message and "needs a" in d.message, (engine, d)  # (a built-in's refusal)
        refused.append((d.message, d.span))
    assert refused[0] == refused[1]


@pytest.mark.parametrize("engine", ENGINES)
def test_len_and_slice_read_a_text(root: Path, engine: str) -> None:
    rs = checked(root, 'ruleset t "t"\nquery main = [len("abc"), slice("abc", 1), slice("abc", 0, 2), len(split("a b"))]\n')
    assert rs.run({}, engine=engine) == [3, "bc", "ab", 2]


# -- 3. "cited" is what a run's trace cited (its rules, steps, events...), never a clause id a value carries


def _sides(root: Path, value: str) -> list[str]:
    """Two rulesets that differ at n = 2, where OLD's value carries a clause id, X-9, that nothing of it
    that ran cites; ``value`` the query's, of `verdict(n)`."""
    paths = []
    for side, cite, least in (("old", "X-1", 2), ("new", "X-2", 1)):
        (root / f"{side}.rules").write_text(
            f'ruleset t.{side} "{side}"\ninput n: int at "/n" default 0\nrule big(n) cite "{cite}" = n > {least}\n'
            'def verdict(n) = if big(n) then {ok: true, cites: []} else {ok: false, cites: ["X-9"]}\n'
            f'query main = {value}\nquery generate(seed) = {{n: seed}}\n', encoding="utf-8")
        paths.append(str(root / f"{side}.rules"))
    return paths


@pytest.mark.parametrize("value", ["verdict(n)", "[verdict(n)]"])
def test_diff_says_cited_only_of_what_a_run_cited(root: Path, cli, value: str) -> None:  # type: ignore[no-untyped-def]
    """`diff` listed as "cited only by OLD" every `cites` list in the result (X-9, which a value carries
    and nothing that ran cites), and, where the result is a list (no room for the trace in its JSON), not
    the rules that ran (X-1, X-2) at all; `coverage` counts only what the run's trace cited."""
    old, new = _sides(root, value)
    r = cli("diff", old, new, "--generate", "4")
    assert r.code == 1, r.err
    assert "cited only by OLD: X-1\n" in r.out and "cited only by NEW: X-2\n" in r.out, r.out
    said = [line for line in r.out.splitlines() if "cited only by" in line or "(only " in line]  # (and the figures')
    assert said and not [line for line in said if "X-9" in line], said
    data = json.loads(cli("diff", old, new, "--generate", "4", "--format", "json").out)
    assert [d["cited_only_by"] for d in data["differences"]] == [{"OLD": ["X-1"], "NEW": ["X-2"]}]


@pytest.mark.parametrize("engine", ENGINES)
def test_get_reads_a_map_or_a_list_and_the_check_refuses_a_set_as_the_run_does(root: Path, engine: str) -> None:
    """`get({1, 2}, 0)` passed the check (its first argument was declared any collection) and the run
    refused it (a set has no keys nor positions)."""
    assert check_codes(root, 'ruleset t "t"\nquery main = get({1, 2}, 0)\n') == [("C004", "{1, 2}")]
    rs = checked(root, 'ruleset t "t"\ndef opaque(x) = x\nquery main = get(opaque({1, 2}), 0)\n')
    with pytest.raises(RunError) as exc:
        rs.run({}, engine=engine)
    assert exc.value.diagnostics[0].code == "E011"
    ok = checked(root, 'ruleset t "t"\nquery main = [get([5, 6], 1), get({"a" => 1}, "a"), get({a: 2}, "a"), get([], 3, 0)]\n')
    assert ok.run({}, engine=engine) == [6, 1, 2, 0]


# -- 4. an `if` whose blocks but one certainly jump narrows the rest of its block as `require` does: the rest runs
# only through the block that may fall through (or, with no `else`, where every test failed)


@pytest.mark.parametrize("code", [
    'if m == none { reject "no" }\n    out := m + 1',  # (was C004: m taken for none where it is not)
    'if r.y == none { stop }\n    out := r.y + 1',
    'if r.y == none { goto t }\n    out := r.y + 1',
    'if v == none { reject "no" }\n    out := v + 1',
    'if m == none or r.y == none { stop }\n    out := m + r.y',
    'if x > 1 { reject "big" } elif m == none { stop }\n    out := m + 1',
    'if m == none { out := 2\n      reject "no" }\n    out := m + 1',
    'if m == none {\n      if x > 1 { reject "a" } elif x > 0 { goto t } else { stop }\n    }\n    out := m + 1',
    'if m != none { out := 2 } else { reject "no" }\n    out := m + 1',
    'if x > 1 { stop } elif m != none { out := 2 } else { reject "no" }\n    out := m + 1',
    'if v == none { v := 3\n      goto t }\n    out := v + 1',  # (the block that changes v jumps)
    'for i in [1, 2] {\n      if m == none { continue }\n      out := m + i\n    }',
    'for i in [1, 2] {\n      if r.y == none { break }\n      out := r.y + i\n    }',
    'if x > 1 {\n      if m == none { reject "no" }\n      out := m * 2\n    }',
])
def test_an_if_whose_other_blocks_jump_narrows_the_rest_of_its_block(root: Path, code: str) -> None:
    assert check_codes(root, body(code)) == []


@pytest.mark.parametrize("code, later, bad", [
    ('if m != none { reject "no" }\n    out := m + 1', "out := 1", "m + 1"),  # the test failing: none
    ('if m == none { out := 2 }\n    out := m + 1', "out := 1", "m + 1"),  # a block that falls through
    ('if m == none {\n      if x > 1 { reject "no" }\n    }\n    out := m + 1', "out := 1", "m + 1"),  # (no else)
    ('if m == none {\n      if x > 1 { reject "no" } else { out := 2 }\n    }\n    out := m + 1', "out := 1", "m + 1"),
    ('if m == none {\n      for i in [1] { stop }\n    }\n    out := m + 1', "out := 1", "m + 1"),  # (no turn)
    ('if m == none { stop } elif x > 1 { out := 2 }\n    out := m + 1', "out := 1", "m + 1"),  # two ways through
    ('if m == none { out := 2 } else { out := 3 }\n    out := m + 1', "out := 1", "m + 1"),
    ('if m == none and x > 1 { reject "no" }\n    out := m + 1', "out := 1", "m + 1"),  # a failed `and`: nothing
    ('if x > 1 {\n      if m == none { reject "no" }\n    }\n    out := m + 1', "out := 1", "m + 1"),  # not past its block
    ('for i in [1] {\n      if m == none { continue }\n    }\n    out := m + 1', "out := 1", "m + 1"),
    ('if nil == none { stop }', "out := nil + 1", "nil + 1"),  # nor into another step (a `goto` may reach it)
])
def test_an_if_that_may_fall_through_tells_nothing_past_it(root: Path, code: str, later: str, bad: str) -> None:
    assert check_codes(root, body(code, later)) == [("C004", bad)]


@pytest.mark.parametrize("code, bad", [
    ('if v != none { reject "no" }\n    out := v + 1', [("C004", "v + 1")]),
    ('if v != none { reject "no" }\n    v := 3\n    out := v + 1', []),
    ('if v != none { reject "no" }\n    if x > 1 { v := 3 }\n    out := v + 1', []),
    ('if v != none { reject "no" }\n    for i in [1] { out := v + 1\n      v := i }', []),
    ('if v == none { v := 3 } else { reject "no" }\n    out := v + 1', []),  # (the block through changes v)
    ('if v != none { stop } elif x > 1 { v := 3\n      reject "no" }\n    out := v + 1', [("C004", "v + 1")]),
])
def test_what_an_if_that_jumps_tells_of_a_var_holds_until_the_var_may_change(root: Path, code: str,
                                                                             bad: list[tuple[str, str]]) -> None:
    """As after a `require`: not after a `:=` of it, nor after a block, nor in a loop, nor through a block that may
    change it."""
    assert check_codes(root, body(code)) == bad
