"""Mistakes `check` can see are refused there, and what only a run finds is reported in the
language's words, the same by both engines (issue 41): no Python message reaches a user."""

from __future__ import annotations

from pathlib import Path

import pytest

from validator.api import RunError, load_ruleset

PYTHON_WORDS = ("not supported between", "unsupported operand", "<generator", "object at 0x", "instances of")


def _check(tmp_path: Path, text: str) -> list[tuple[str, int, str]]:
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "main.rules").write_text(text)
    rs = load_ruleset(tmp_path / "main.rules", use_cache=False)
    return [(d.code, d.span.line, d.message) for d in rs.diagnostics if d.is_error]


@pytest.mark.parametrize("text, line, words", [
    ('const a = 1\nconst b = 2\nquery main = min(a, b)\n', 3, "`min` needs a list"),
    ('query main = max([1, "a"])\n', 1, "mix `int` and `str`"),
    ('query main = min([[1], 2])\n', 1, "mix `list[int]` and `int`"),
    ('query main = sum(["a", "b"])\n', 1, "`sum` adds numbers"),
    ('query main = len(x for x in [1, 2])\n', 1, "not a generator"),
    ('query main = true < 1\n', 1, "cannot compare `bool` < `int`"),
    ('query main(n: int) -> str = n\n', 1, "declared to return `str`"),
    ('table t[k] -> int cite "R1" {\n  | a | "x" |\n}\nquery main = t["a"]\n', 2, "declared as `int`"),
    ('table t[k] -> int cite "R1" {\n  | a | 1 |\n}\nquery main = t["a"] + "x"\n', 4, "cannot compute `int` + `str`"),
    ('def busts(n: int) = n > 21\nquery main = busts("one")\n', 2, "parameter `n` of `busts`"),
    # a built-in whose definition gives one kind of value whatever its arguments (it was `any` to the
    # checker, so `upper(p) + 1` passed check and failed each run)
    ('def f(p) = upper(p) + 1\nquery main = f("a")\n', 1, "cannot compute `str` + `int`"),
    ('def f(xs) = join(xs, ", ") - 1\nquery main = f(["a"])\n', 1, "cannot compute `str` - `int`"),
    ('def f(n) = str(n) < 2\nquery main = f(1)\n', 1, "cannot compare `str` < `int`"),
    ('def f(p: int) = 1\nquery main = f(starts_with("ab", "a"))\n', 2, "parameter `p` of `f`"),
])
def test_a_static_mistake_is_refused_by_check(tmp_path: Path, text: str, line: int, words: str) -> None:
    found = _check(tmp_path, text)
    assert [(c, ln) for c, ln, _ in found] == [("C004", line)], found
    assert words in found[0][2], found


@pytest.mark.parametrize("engine", ["reference", "backend"])
@pytest.mark.parametrize("call, arg, words", [
    ("max", '[1, "a"]', "mix numbers and texts"),
    ("min", '[[1], 2]', "mix lists and numbers"),
    ("sum", '["a", "b"]', "adds numbers, not texts"),
    ("len", 'x for x in [1, 2]', "len needs a collection"),
])
def test_a_builtin_refusing_its_argument_says_so_in_the_language_s_words(
        tmp_path: Path, engine: str, call: str, arg: str, words: str) -> None:
    """The argument passes through an untyped parameter, so only the run sees it."""
    assert _check(tmp_path, f"def f(x) = {call}(x)\nquery main = f({arg})\n") == []
    rs = load_ruleset(tmp_path / "main.rules", use_cache=False)
    with pytest.raises(RunError) as err:
        rs.run({}, engine=engine)
    [d] = err.value.diagnostics
    assert d.code == "E011" and d.span.line == 1 and words in d.message, d
    assert not any(w in d.message for w in PYTHON_WORDS), d.message


@pytest.mark.parametrize("text, line", [
    ('def f(n) = f(n + 1)\nquery main = f(0)\n', 1),
    ('rule f(n) cite "R1" = 1 + f(n - 1)\nquery main = f(3)\n', 1),
    ('def f(n) = let m = f(n); m\nquery main = f(3)\n', 1),
    ('def f(n) = if f(n) > 0 then 1 else 2\nquery main = f(3)\n', 1),
    ('def total = total + 1\nquery main = total\n', 1),
])
def test_a_definition_that_calls_itself_on_every_path_is_said_by_check(tmp_path: Path, text: str, line: int) -> None:
    """A runaway recursion passed check and failed each run (E005 after 150 calls): a call of itself
    that every evaluation makes is W106 at that call."""
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "clauses.yaml").write_text('clauses:\n  R1: "a rule"\n')
    (tmp_path / "main.rules").write_text('clauses "clauses.yaml"\n' + text)
    rs = load_ruleset(tmp_path / "main.rules", use_cache=False)
    found = [(d.code, d.span.line - 1) for d in rs.diagnostics]
    assert found == [("W106", line)], [d.message for d in rs.diagnostics]


@pytest.mark.parametrize("body", [
    "if n <= 0 then 0 else 1 + f(n - 1)", "n <= 0 or f(n - 1)", "none ?? f(n)", "[f(m) for m in range(0, n)]",
    "g(fn(m) => f(m))", "let f = fn(m) => m; f(n)",
])
def test_a_recursion_with_a_way_out_is_not_said(tmp_path: Path, body: str) -> None:
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "main.rules").write_text(f"def g(h) = h(0)\ndef f(n) = {body}\nquery main = f(3)\n")
    rs = load_ruleset(tmp_path / "main.rules", use_cache=False)
    assert [d.code for d in rs.diagnostics if d.code == "W106"] == [], [d.message for d in rs.diagnostics]
