"""`int` has one meaning, a whole number, and `number` is any number, a fraction too (docs/language.md,
"Declarations"): the checker types `/` as `number`, so that `f(1/2)` against `f(n: int)` is C004 at the
argument, as a query's entry refuses `0.5` for an `int` (S008); an `int` fits where a `number` is
declared, not the reverse.

The types of arithmetic are held to a table written here, by hand, and that table to what the runs
give: whatever this file says is an `int` comes out whole on fractions too, and whatever it says is a
`number` can come out a fraction."""

from __future__ import annotations

import itertools
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from validator.api import RunError, check_text, load_ruleset
from validator.tools.symbols import Index


def _load(tmp_path: Path, text: str) -> Any:
    (tmp_path / "ruleval.toml").write_text("")
    path = tmp_path / "main.rules"
    path.write_text(text, encoding="utf-8")
    return load_ruleset(path, use_cache=False)


def _errors(rs: Any) -> list[Any]:
    return [d for d in rs.diagnostics if d.is_error]


def _refusals(rs: Any, *args: Any, **kwargs: Any) -> list[list[Any]]:
    """What each engine, the reference's then the backend's, refuses the run ``rs.run(*args, **kwargs)``
    with (its diagnostics): a test holds the two to say the same."""
    said = []
    for engine in ("reference", "backend"):
        with pytest.raises(RunError) as exc:
            rs.run(*args, engine=engine, **kwargs)
        said.append(exc.value.diagnostics)
    return said


def _underlined(text: str, d: Any) -> str:
    return text.splitlines()[d.span.line - 1][d.span.col - 1:d.span.end_col - 1]  # type: ignore[no-any-return]


WANTS = "def wants_int(n: int) = n\ndef wants_number(n: number) = n\n"


# ---------------------------------------------------------------- the lines


def test_a_fraction_for_an_int_parameter_is_c004_at_the_argument(tmp_path: Path) -> None:
    text = "def f(n: int) = n + 1\nquery main = f(1/2)\n"
    [d] = _errors(_load(tmp_path, text))
    assert (d.code, d.span.line, d.span.col, _underlined(text, d)) == ("C004", 2, 16, "1/2"), d
    assert "`int`" in d.message and "`number`" in d.message, d.message
    assert d.help is not None and "`//`" in d.help and "`number`" in d.help, d.help


def test_whole_division_fits_an_int_and_runs(tmp_path: Path) -> None:
    rs = _load(tmp_path, "def f(n: int) = n + 1\nquery main = f(4//2)\n")
    assert _errors(rs) == []
    assert rs.run({}, "main", engine="reference") == 3


def test_a_number_parameter_takes_a_fraction_and_an_int(tmp_path: Path) -> None:
    rs = _load(tmp_path, "def g(x: number) = x * 2\nquery main = [g(1/2), g(3)]\n")
    assert _errors(rs) == []
    assert rs.run({}, "main", engine="reference") == [1, 6]


@pytest.mark.parametrize("text, underlined", [
    ("const k: int = 1/2\nquery main = k\n", "1/2"),
    ("query main -> int = 3/4\n", "3/4"),
    ("def h(xs: list[int]) = len(xs)\nquery main = h([1, 1/2])\n", "[1, 1/2]"),
    ("table t[k] -> int cite \"T-1\" {\n  | a | 1/3 |\n}\nquery main = t[\"a\"]\n", "1/3"),
])
def test_a_number_where_an_int_is_declared_is_c004_with_the_help(tmp_path: Path, text: str, underlined: str) -> None:
    found = _errors(_load(tmp_path, text))
    assert [(d.code, _underlined(text, d)) for d in found] == [("C004", underlined)], found
    assert "`//`" in (found[0].help or ""), found[0]


def test_an_int_where_a_number_is_declared_is_no_error(tmp_path: Path) -> None:
    text = ("const k: number = 3\ndef h(xs: list[number]) = len(xs)\n"
            "query main -> number = k + h([1, 2])\n")
    rs = _load(tmp_path, text)
    assert _errors(rs) == []
    assert rs.run({}, "main", engine="reference") == 5


# ---------------------------------------------------------------- arithmetic, by a table of its own

# what `L op R` is, `i` an `int` and `x` a `number`: `/` may give a fraction whatever it divides, `//` never
# does; `+ - * %` of two whole numbers are whole, and of a fraction may be one
TABLE = {
    "+": {("i", "i"): "int", ("i", "x"): "number", ("x", "i"): "number", ("x", "x"): "number"},
    "-": {("i", "i"): "int", ("i", "x"): "number", ("x", "i"): "number", ("x", "x"): "number"},
    "*": {("i", "i"): "int", ("i", "x"): "number", ("x", "i"): "number", ("x", "x"): "number"},
    "%": {("i", "i"): "int", ("i", "x"): "number", ("x", "i"): "number", ("x", "x"): "number"},
    "/": {("i", "i"): "number", ("i", "x"): "number", ("x", "i"): "number", ("x", "x"): "number"},
    "//": {("i", "i"): "int", ("i", "x"): "int", ("x", "i"): "int", ("x", "x"): "int"},
}
ROWS = [(op, a, b, t) for op, by in TABLE.items() for (a, b), t in by.items()]
NEG = {"i": "int", "x": "number"}


def _typed_as(tmp_path: Path, expr: str) -> str:
    """What the checker takes ``expr`` (of `i: int` and `x: number`) for: `int` where it fits an `int`
    parameter, `number` where it fits a `number` one alone."""
    text = WANTS + f"def probe(i: int, x: number) = [wants_int({expr}), wants_number({expr})]\n"
    found = _errors(_load(tmp_path, text))
    if not found:
        return "int"
    assert [(d.code, _underlined(text, d)) for d in found] == [("C004", expr)], found
    assert "this is `number`" in found[0].message, found[0].message
    return "number"


@pytest.mark.parametrize("op, a, b, want", ROWS)
def test_arithmetic_is_typed_as_the_table_says(tmp_path: Path, op: str, a: str, b: str, want: str) -> None:
    assert _typed_as(tmp_path, f"{a} {op} {b}") == want


@pytest.mark.parametrize("a", ["i", "x"])
def test_negation_keeps_the_type(tmp_path: Path, a: str) -> None:
    assert _typed_as(tmp_path, f"-{a}") == NEG[a]


SAMPLES = {"i": [-7, -1, 2, 3], "x": [Fraction(7, 2), Fraction(-1, 4), 2, -5]}  # (fractions JSON writes)


def test_the_table_holds_of_what_runs_give(tmp_path: Path) -> None:
    """An `int` row is whole on every sample (fractions for `x` too); a `number` row is a fraction on some."""
    queries = "".join(f"query r{n}(i: number, x: number) = i {op} x\n" for n, (op, _, _, _) in enumerate(ROWS))
    rs = _load(tmp_path, queries + "query neg(v: number) = -v\n")
    assert _errors(rs) == []
    for n, (op, a, b, want) in enumerate(ROWS):
        got = [rs.evaluate({}, f"r{n}", [p, q], engine="reference").value for p, q in itertools.product(SAMPLES[a], SAMPLES[b])]
        whole = [type(v) is int for v in got]
        assert all(whole) if want == "int" else not all(whole), (op, a, b, got)
    assert all(type(rs.evaluate({}, "neg", [v]).value) is int for v in SAMPLES["i"])


def test_numbers_compare_with_one_another_not_with_texts(tmp_path: Path) -> None:
    assert _errors(_load(tmp_path, "query main = 1/2 < 1 and 1 >= 1/3 and 2/4 == 1/2\n")) == []
    text = 'query main = 1/2 < "a"\n'
    assert [d.code for d in _errors(_load(tmp_path, text))] == ["C004"]


def test_an_int_and_a_fraction_as_the_ways_of_an_if_are_a_number(tmp_path: Path) -> None:
    assert _typed_as(tmp_path, "if i > 0 then i else x") == "number"
    assert _typed_as(tmp_path, "if i > 0 then i else i // 2") == "int"


# ---------------------------------------------------------------- built-ins


@pytest.mark.parametrize("expr, want", [
    ("abs(i)", "int"), ("abs(x)", "number"), ("fraction(i, 2)", "number"), ("int(x)", "int"),
    ('int("12") ?? 0', "int"), ("sum([i, i])", "int"), ("sum([i, x])", "number"), ("sum([x for _ in range(i)])", "number"),
    ("max([i, x])", "number"), ("min([i, 2])", "int"), ("len([x])", "int"), ("count([x > 0])", "int"),
    ("index_of([x], x) ?? 0", "int"), ("x // 1", "int"),
])
def test_a_built_in_s_result_is_typed(tmp_path: Path, expr: str, want: str) -> None:
    assert _typed_as(tmp_path, expr) == want


def test_fraction_gives_a_fraction(tmp_path: Path) -> None:
    """(The row above that types `fraction` a `number`, held to its run.)"""
    rs = _load(tmp_path, "query main = [fraction(1, 2), abs(-1/3), int(7/2)]\n")
    assert rs.evaluate({}, "main").value == [Fraction(1, 2), Fraction(1, 3), 3]


@pytest.mark.parametrize("call, underlined, mended", [
    ("range(i / 2)", "i / 2", "range(i // 2)"), ("range(0, x)", "x", "range(0, x // 1)"),
    ("slice([1, 2], x)", "x", "slice([1, 2], x // 1)"), ("slice([1, 2], 0, i / 2)", "i / 2", "slice([1, 2], 0, i // 2)"),
    ("rand(1, 2, x)", "x", "rand(1, 2, x // 1)"), ("roll(dice(x, 6))", "x", "roll(dice(x // 1, 6))"),
    ("hex_label(x, 1)", "x", "hex_label(x // 1, 1)"), ("hex_grid(2, x)", "x", "hex_grid(2, x // 1)"),
    ("pad(7, x)", "x", "pad(7, x // 1)"), ("pad(i / 2, 3)", "i / 2", "pad(i // 2, 3)"),
])
def test_a_built_in_that_counts_or_indexes_takes_no_number(tmp_path: Path, call: str, underlined: str,
                                                             mended: str) -> None:
    """Where a built-in's definition takes a whole number (``takes`` "whole"), a `number` is C004 at it, with
    the help; the call mended with `//` checks clean and runs."""
    probe = "def probe(i: int, x: number) = {}\nquery main = probe(3, 5/2)\n"
    text = probe.format(call)
    found = _errors(_load(tmp_path, text))
    assert [(d.code, _underlined(text, d)) for d in found] == [("C004", underlined)], found
    assert "a whole number" in found[0].message and "`//`" in (found[0].help or ""), found[0]
    rs = _load(tmp_path, probe.format(mended))
    assert _errors(rs) == []
    rs.run({}, "main", seed=1, engine="reference")


def _whole_arguments() -> list[tuple[str, int]]:
    from validator.lib.builtins import BUILTINS

    return [(b.name, i) for b in BUILTINS.values() for i, kind in enumerate(b.takes) if kind == "whole"]


@pytest.mark.parametrize(("name", "at"), _whole_arguments())
def test_every_declared_whole_argument_is_checked_as_the_run_refuses_a_fraction(tmp_path: Path, name: str,
                                                                                at: int) -> None:
    """Generic: each argument a built-in's definition declares a whole number is C004 where it is `1/2`, and
    the run, given `1/2` the check cannot see, refuses it too (in both engines): one meaning."""
    from validator.api import RunError
    from validator.lib.builtins import BUILTINS

    b = BUILTINS[name]
    other = {"map": '{"a" => 1}', "items": "[1, 2]", "sized": "[1, 2]"}
    args = ["1/2" if i == at else other.get(b.takes[i] if i < len(b.takes) else "", "2")
            for i in range(max(b.min_args, at + 1))]
    if name == "hex_grid" and at != 3 and len(args) > 2:
        args[2] = '"odd-q"'  # (its layout)
    text = f"query main = {name}({', '.join(args)})\n"
    found = _errors(_load(tmp_path, text))
    assert [(d.code, _underlined(text, d)) for d in found] == [("C004", "1/2")], (text, found)
    rs = _load(tmp_path, f"def n(x) = x\nquery main = {name}({', '.join(f'n({a})' for a in args)})\n")
    assert _errors(rs) == []
    for engine in ("reference", "backend"):
        with pytest.raises(RunError):
            rs.run({}, engine=engine)


def test_none_where_a_whole_number_is_taken_is_left_to_the_run(tmp_path: Path) -> None:
    """(`slice(xs, 1, none)` is `slice(xs, 1)`, and `range(3, none)` `range(3)`: the check refuses neither.)"""
    rs = _load(tmp_path, "query main = [slice([1, 2, 3], 1, none), range(3, none)]\n")
    assert _errors(rs) == []
    assert rs.run({}, engine="reference") == [[2, 3], [0, 1, 2]]


def test_the_built_ins_that_count_or_index_declare_it() -> None:
    assert {("range", 0), ("range", 1), ("slice", 1), ("slice", 2), ("rand", 2), ("dice", 0), ("hex_label", 0),
            ("hex_label", 1), ("hex_grid", 0), ("hex_grid", 1), ("hex_grid", 3), ("pad", 0), ("pad", 1)
            } <= set(_whole_arguments())


# ---------------------------------------------------------------- a query's entry


RULES = "query half(x: number) = x\nquery whole(n: int) = n\n"


@pytest.mark.parametrize("engine", ["reference", "backend"])
def test_a_number_parameter_takes_any_number_at_the_entry(tmp_path: Path, engine: str) -> None:
    rs = _load(tmp_path, RULES)
    for given in [Fraction(1, 2), 0.5]:
        got = rs.evaluate({}, "half", [given], engine=engine).value
        assert (type(got), got) == (Fraction, Fraction(1, 2))
    assert type(rs.evaluate({}, "half", [3], engine=engine).value) is int


def test_the_command_line_gives_a_number_parameter_its_exact_value(cli: Any, tmp_path: Path) -> None:
    (tmp_path / "ruleval.toml").write_text("")
    path = tmp_path / "main.rules"
    path.write_text(RULES, encoding="utf-8")
    ok = cli("run", str(path), "--query", "half", "--arg", "0.5")
    assert (ok.code, ok.out.strip()) == (0, "1/2"), ok.err
    for query, arg, declared in [("half", '"0.5"', "number"), ("half", "true", "number"), ("whole", "0.5", "int")]:
        bad = cli("run", str(path), "--query", query, "--arg", arg)
        assert bad.code == 3, (query, arg, bad.err)
        assert "error[S008]" in bad.err and f"(declared `{declared}`)" in bad.err, bad.err


# ---------------------------------------------------------------- what the editor shows


def test_a_hover_writes_number(tmp_path: Path) -> None:
    (tmp_path / "ruleval.toml").write_text("")
    text = "def half(n: int) = n / 2\nquery main = (let h = half(3); h)\n"
    rs = check_text(tmp_path / "main.rules", text)
    index = Index(rs)
    shown = next(iter(rs.program.loaded.modules))
    hovers = {}
    lines = text.splitlines()
    for name, line in [("half", 1), ("h", 2)]:
        occ = index.at(shown, line - 1, lines[line - 1].rindex(name))  # (0-based, as an editor asks; the last one)
        assert occ is not None and occ.name == name, occ
        target = index.meaning(shown, occ)
        assert target is not None
        hovers[name] = index.hover(target)
    assert "def half(n: int) -> number" in hovers["half"], hovers
    assert "h: number" in hovers["h"], hovers
