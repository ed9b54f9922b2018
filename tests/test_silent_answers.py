"""Answers the language gave without a word where it should have said something (session 36, task lang).

`int(x)` reads a number (its whole part) or a text (the integer it writes, none for a text that writes
none: docs/language.md, Built-ins). A value of another kind, a list, a record, a map, none, is no text:
`int([1])` gave none, as if a text had been read and found no integer, so `int(xs) ?? 0` answered 0 for
a list without a warning. It is E011 at the run, both engines alike, and C004 at check where the
argument's type is known (as `int(true)` is: tests/test_int_of_truth.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from test_number_type import _errors, _load, _refusals, _underlined  # (one way to load a text and read its findings)

ENGINES = ("reference", "backend")


# ---------------------------------------------------------------- int of what is no number nor text


@pytest.mark.parametrize("call, underlined, shown", [
    ("int([1])", "[1]", "list[int]"), ("int({a: 1})", "{a: 1}", "{a: int}"), ('int({"a" => 1})', '{"a" => 1}', "map[str, int]"),
    ("int(none)", "none", "none"), ("int({1, 2})", "{1, 2}", "set[int]"),
    ('abs("3")', '"3"', "str"), ("fraction(1, [2])", "[2]", "list[int]"),
])
def test_int_of_a_value_known_to_be_no_number_nor_text_is_c004(tmp_path: Path, call: str, underlined: str,
                                                                shown: str) -> None:
    text = f"query main = {call}\n"
    found = [(d.code, _underlined(text, d), d.message) for d in _errors(_load(tmp_path, text))]
    assert [(code, at) for code, at, _ in found] == [("C004", underlined)], found
    assert f"not `{shown}`" in found[0][2], found


@pytest.mark.parametrize("given, shown", [
    ("[1]", "[1]"), ("{a: 1}", "{a: 1}"), ('{"a" => 1}', '{"a" => 1}'), ("none", "none"), ("(1, 2)", "(1, 2)"),
])
def test_int_of_a_value_the_check_cannot_see_is_e011_in_both_engines(tmp_path: Path, given: str, shown: str) -> None:
    rs = _load(tmp_path, f"def n(x) = x\nquery main = int(n({given})) ?? 0\n")
    assert _errors(rs) == [], _errors(rs)
    said = _refusals(rs, {})
    assert said[0] == said[1], said  # (one meaning, one message)
    [d] = said[0]
    assert d.code == "E011" and d.message == f"int needs a number or a text, not `{shown}`", d


@pytest.mark.parametrize("call, said", [
    ('abs(n("3"))', 'abs needs a number, not `"3"`'), ("abs(n([1]))", "abs needs a number, not `[1]`"),
    ("abs(n(none))", "abs needs a number, not `none`"), ("abs(n(2d6))", "abs needs a number, not `2d6`"),
    ('fraction(n("1"), 2)', 'fraction needs numbers, not `"1"`'),
    ("fraction(1, n({a: 2}))", "fraction needs numbers, not `{a: 2}`"),
    ("fraction(2, n(none))", "fraction needs numbers, not `none`"),  # (Python's Fraction(2, None) is 2: it was)
])
def test_abs_and_fraction_of_what_is_no_number_are_e011_as_int_s_are(tmp_path: Path, call: str, said: str) -> None:
    """docs/diagnostics.md: a built-in given an argument it cannot use is E011. `int([1])` was, but `abs("3")`
    was E001 (Python's refusal, in its words: "cannot work on arguments of these kinds"), and
    `fraction(2, none)` answered 2."""
    rs = _load(tmp_path, f"def n(x) = x\nquery main = {call}\n")
    assert _errors(rs) == [], _errors(rs)
    found = _refusals(rs, {})
    assert found[0] == found[1], found  # (one meaning, one message)
    [d] = found[0]
    assert (d.code, d.message) == ("E011", said), d


@pytest.mark.parametrize("call, want", [("abs(n(-3))", 3), ("abs(n(-7/2))", "7/2"), ("fraction(n(6), n(4))", "3/2"),
                                        ("fraction(n(1/2), 3)", "1/6"), ("fraction(n(4), 2)", 2)])
def test_abs_and_fraction_of_numbers_are_as_before(tmp_path: Path, call: str, want: object) -> None:
    rs = _load(tmp_path, f"def n(x) = x\nquery main = {call}\n")
    for engine in ENGINES:
        assert rs.run({}, engine=engine) == want, engine


@pytest.mark.parametrize("call, want", [
    ('int(n("x"))', None), ('int(n(" -12 "))', -12), ("int(n(7/2))", 3), ("int(k)", None), ("int(n(t))", None),
])
def test_int_still_reads_texts_and_numbers(tmp_path: Path, call: str, want: object) -> None:
    rs = _load(tmp_path, f"enum K {{ a, b }}\nconst k: K = \"a\"\ndef t = str([1])\ndef n(x) = x\nquery main = {call}\n")
    assert _errors(rs) == [], _errors(rs)
    for engine in ENGINES:
        assert rs.run({}, engine=engine) == want, engine


# ---------------------------------------------------------------- a die compared with what is no number


def _outcomes(rs: object, engine: str) -> list[tuple[str, object]]:
    out = rs.run({}, exact=True, engine=engine)  # type: ignore[attr-defined]
    return [(o["probability"], o["result"]) for o in out["outcomes"]]


@pytest.mark.parametrize("expr, want", [
    ("roll(1d6) == n(true)", False), ("n(true) == roll(1d6)", False), ("roll(1d6) != n(true)", True),
    ("roll(1d6) == n(none)", False), ('roll(1d6) == n("1")', False),
])
def test_a_die_is_never_equal_to_what_is_no_number_in_exact_mode(tmp_path: Path, expr: str, want: bool) -> None:
    """A truth value is never equal to a number (docs/language.md, "Equality of kinds"), a die's face neither:
    in exact mode `roll(1d6) == true` held on the face 1 (Python's 1 == True), with probability 1/6, where a
    seeded run said false."""
    rs = _load(tmp_path, f"def n(x) = x\nquery main = {expr}\n")
    assert _errors(rs) == [], _errors(rs)
    for engine in ENGINES:
        assert _outcomes(rs, engine) == [("1/1", want)], engine
        assert rs.run({}, seed=3, engine=engine) is want, engine


@pytest.mark.parametrize("expr, shown", [
    ('roll(1d6) < n("x")', '`"x"`'), ("roll(1d6) >= n([1])", "`[1]`"), ("n(true) < roll(1d6)", "`true`"),
])
def test_a_die_ordered_with_what_is_no_number_says_so_in_the_language_s_notation(tmp_path: Path, expr: str,
                                                                                 shown: str) -> None:
    """The exact mode's message wrote the other value as Python writes it (`'x'`); it is now the seeded
    run's, the value in the language's notation, in both engines."""
    rs = _load(tmp_path, f"def n(x) = x\nquery main = {expr}\n")
    assert _errors(rs) == [], _errors(rs)
    said = _refusals(rs, {}, exact=True)
    assert said[0] == said[1], said
    [d] = said[0]
    assert d.code == "E001" and d.message.startswith("cannot compare `") and shown in d.message, d
    assert "'" not in d.message, d


# ---------------------------------------------------------------- explain of a state its own check refuses


CHECKED = """ruleset t.v "a state check"
clauses "clauses.yaml"
input units: list[str] at "/units" default []
rule known(u) cite "X-1" = u in ["a", "b"]
rule unit_problem(u) cite "X-2" = if known(u) then none else "`" + u + "` is no place"
def problems = [{pointer: "/units/" + str(e.index), message: p, cites: ["X-2"]}
  for e in enumerate(units) for p in [unit_problem(e.item)] if p != none]
query validate_state = problems
query main = len(units)
"""


def _checked(tmp_path: Path) -> Path:
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "clauses.yaml").write_text("clauses:\n  X-1: known places\n  X-2: a unit on a place\n")
    (tmp_path / "v.rules").write_text(CHECKED)
    return tmp_path / "v.rules"


def test_explain_of_a_refused_state_names_the_cited_rule_that_refused_it(tmp_path: Path, cli: object) -> None:
    """`ruleval explain` of a state the ruleset's `validate_state` refused said the S002 alone: the trace of
    the check, which rule refused it and what that rule read, was dropped with the run. The refusal now
    notes, at the rule, the cited call that gave its message and the cited calls it made (the rules'
    own text: `unit_problem` refuses `zz` because `known("zz")` is false)."""
    path = _checked(tmp_path)
    (tmp_path / "bad.json").write_text('{"units": ["a", "zz"]}')
    said = cli("explain", str(path), "--state", str(tmp_path / "bad.json"), "--format", "json")  # type: ignore[operator]
    assert said.code == 3, said
    [d] = json.loads(said.out)
    assert (d["code"], d["pointer"]) == ("S002", "/units/1"), d
    assert d["related"] == [{"location": f"{path}:5:1", "message": '`unit_problem("zz")` (X-2) gave this'},
                            {"location": f"{path}:4:1", "message": 'read `known("zz")` (X-1) = false'}], d
    text = cli("explain", str(path), "--state", str(tmp_path / "bad.json"))  # type: ignore[operator]
    assert text.code == 3 and "(X-2) gave this" in text.out + text.err, text  # (as a note, in the text too)


def test_a_refusal_outside_explain_and_a_state_the_check_accepts_are_as_before(tmp_path: Path, cli: object) -> None:
    path = _checked(tmp_path)
    (tmp_path / "bad.json").write_text('{"units": ["zz"]}')
    (tmp_path / "good.json").write_text('{"units": ["a"]}')
    refused = cli("run", str(path), "--state", str(tmp_path / "bad.json"))  # type: ignore[operator]
    assert refused.code == 3 and "S002" in refused.out + refused.err and "note" not in refused.out + refused.err
    good = cli("explain", str(path), "--state", str(tmp_path / "good.json"))  # type: ignore[operator]
    assert good.code == 0 and good.out == "no cited rule was called\n", good  # (the check's calls are not the query's)


# ---------------------------------------------------------------- one display for a run's messages


@pytest.mark.parametrize("expr, said", [
    ('-n("3")', 'cannot negate `"3"`'),
    ('[a for a, b in n(["xy"])]', 'cannot unpack `"xy"` into 2 names'),
    ('n("abc").x', '`"abc"` has no fields (looking for `x`)'),
    ('n("f")(1)', '`"f"` is not a function'),
    ('t[n("a\\"b")]', 'table `t` has no cell for ["a\\"b"]'),
])
def test_a_text_a_run_refuses_is_written_in_its_quotes_in_both_engines(tmp_path: Path, expr: str, said: str) -> None:
    """The reference wrote a value in a run's message by two displays, `show` (a text as it is) and `brief` (a
    text in its quotes), and chose `show` where it refused a value for its kind: `-"3"` said `cannot negate
    \\`3\\``, as if of the number 3, and a table's text key was put in quotes by hand, unescaped. It writes
    every value by `brief` now (one display, with a `quoted` flag for the built-ins that name a text they read)."""
    (tmp_path / "clauses.yaml").write_text("clauses:\n  X-1: a table\n")
    text = 'clauses "clauses.yaml"\ntable t[k] -> int cite "X-1" {\n  | "x" | 1 |\n}\n' + f"def n(x) = x\nquery main = {expr}\n"
    rs = _load(tmp_path, text)
    assert _errors(rs) == [], _errors(rs)
    said_by = _refusals(rs, {})
    assert said_by[0] == said_by[1], said_by
    assert [d.message for d in said_by[0]] == [said], said_by


# ---------------------------------------------------------------- `with` on a declared record and on a plain one


WITH_DECLS = "record R { a: int, b?: str }\nconst r: R = {a: 1}\n"


@pytest.mark.parametrize("text, code, underlined", [
    ('query main = r with {a: "x"}\n', "C004", '"x"'),
    ("query main = r with {c: 1}\n", "C012", "c"),  # (a label R does not declare: underlined, not its value)
    ('query main = r with {a: 2, "cc": [1, 2]}\n', "C012", '"cc"'),
    ("query main = (r with {a: 2}).c\n", "C012", "(r with {a: 2}).c"),  # (the copy is an R: its fields are R's)
    ('def f(x: R) = x with {a: "x"}\nquery main = f(r)\n', "C004", '"x"'),
    ('def f() -> list[R] = [x with {a: "x"} for x in [r]]\nquery main = f()\n', "C004", '"x"'),
])
def test_with_on_a_declared_record_keeps_its_declared_fields(tmp_path: Path, text: str, code: str,
                                                             underlined: str) -> None:
    """docs/language.md, Declarations: `with` on a value of a declared record `R` gives an `R`."""
    text = WITH_DECLS + text
    found = [(d.code, _underlined(text, d)) for d in _errors(_load(tmp_path, text))]
    assert found == [(code, underlined)], found


@pytest.mark.parametrize("text, help", [
    ("def g() -> R = {a: 1} with {c: 2}\nquery main = g()\n", "`R` has no field `c`"),
    ("def g() -> R = ({a: 1} with {b: \"x\"}) with {c: 2}\nquery main = g()\n", "`R` has no field `c`"),
    ("def g() -> R = {a: 1, c: 2} with {b: \"x\"}\nquery main = g()\n", "`R` has no field `c`"),
    ("def g(r: R) = r\nquery main = g({a: 1} with {c: 2})\n", "`R` has no field `c`"),
])
def test_with_on_a_literal_where_a_record_is_declared_is_held_as_the_literal(tmp_path: Path, text: str,
                                                                              help: str) -> None:
    """A record literal written where `R` is declared has no label `R` does not declare (C004); a `with` on one
    is written there as much, but `{a: 1} with {c: 2}` checked clean as an `R` with a slip `c`."""
    text = WITH_DECLS + text
    found = [(d.code, d.help) for d in _errors(_load(tmp_path, text))]
    assert found == [("C004", help)], found


@pytest.mark.parametrize("text", [
    "def g() -> R = {a: 1} with {b: \"x\"}\nquery main = g()\n",
    "def g() -> R = {a: none} with {a: 2}\nquery main = g()\n",  # (the `with`'s value is the field's)
    "def g() -> R = ({a: 1} with {a: 2}) with {b: \"y\"}\nquery main = g()\n",
])
def test_with_on_a_literal_that_is_the_record_declared_fits(tmp_path: Path, text: str) -> None:
    rs = _load(tmp_path, WITH_DECLS + text)
    assert _errors(rs) == [], _errors(rs)


@pytest.mark.parametrize("text, want", [
    ('query main = ({a: 1} with {a: "x"}).a\n', "x"),  # (a plain record: nothing declared to keep)
    ("query main = ({a: 1} with {c: 2}).c\n", 2),
    ("def g(x) = r with {a: x}\nquery main = g(5).a\n", 5),
])
def test_with_on_a_plain_record_has_the_fields_given(tmp_path: Path, text: str, want: object) -> None:
    rs = _load(tmp_path, WITH_DECLS + text)
    assert _errors(rs) == [], _errors(rs)
    for engine in ENGINES:
        assert rs.run({}, engine=engine) == want, engine


# ---------------------------------------------------------------- a text where an enum is declared


@pytest.mark.parametrize("text, underlined", [
    ('const c: R = {a: 1, k: "z"}\nquery main = c\n', '"z"'),
    ('def f(k: K) = k\nquery main = f("hrose")\n', '"hrose"'),
    ('query main = r with {k: "z"}\n', '"z"'),
    ('def f(b: bool) -> K = if b then "foot" else "hrose"\nquery main = f(true)\n', '"hrose"'),
    ('def f() -> list[K] = ["foot", "z"]\nquery main = f()\n', '"z"'),
])
def test_a_text_that_is_no_member_where_an_enum_is_declared_is_c016(tmp_path: Path, text: str, underlined: str) -> None:
    """An enum's members are texts, so a text fits where the enum is declared; but a text literal that is no
    member (`"z"` for `k: K`) checked clean, and the run carried a value no state could give (a state's is
    checked, S002), to be compared with the members and never found equal. It is C016, as a text literal
    compared with a member is, with the members one edit away."""
    text = 'enum K { foot, horse }\nrecord R { a: int, k: K }\nconst r: R = {a: 1, k: "foot"}\n' + text
    found = [(d.code, _underlined(text, d)) for d in _errors(_load(tmp_path, text))]
    assert found == [("C016", underlined)], found


@pytest.mark.parametrize("text", ['def f(n: int) = n\nquery main = f("x")\n',
                                  'const r: R = {a: 1, k: "foot"}\nquery main = r with {a: "x"}\n'])
def test_a_text_where_no_enum_is_declared_is_c004_as_before(tmp_path: Path, text: str) -> None:
    text = 'enum K { foot, horse }\nrecord R { a: int, k: K }\n' + text
    found = [(d.code, _underlined(text, d)) for d in _errors(_load(tmp_path, text))]
    assert found == [("C004", '"x"')], found


def test_a_member_written_as_a_text_still_fits(tmp_path: Path) -> None:
    text = ('enum K { foot, horse }\nrecord R { a: int, k: K }\ndef f(k: K) = k\n'
            'query main = [f("horse"), ({a: 1, k: "foot"} with {k: "horse"}).k]\n')
    rs = _load(tmp_path, text)
    assert _errors(rs) == [], _errors(rs)
    for engine in ENGINES:
        assert rs.run({}, engine=engine) == ["horse", "horse"], engine


# ---------------------------------------------------------------- none where a declared type is no `T?`


NONE_DECLS = "record R { a: int, b?: int, c: int? }\nconst r: R = {a: 1, c: 2}\ndef f(n: int) = n + 1\n"


@pytest.mark.parametrize("text, underlined", [
    ("const s: R = {a: none, c: 2}\nquery main = s\n", "none"),
    ("query main = r with {a: none}\n", "none"),
    ("query main = f(none)\n", "none"),
    ("query main = (let x = none; f(x))\n", "x"),  # (a name known to be none: its `let`'s value is the literal)
    ("def g(b: bool) -> int = if b then 1 else none\nquery main = g(true)\n", "none"),
    ("def g() -> list[int] = [1, none]\nquery main = g()\n", "none"),
])
def test_none_where_a_declared_type_is_no_optional_one_is_c004(tmp_path: Path, text: str, underlined: str) -> None:
    """docs/language.md, Types: `T?` is a `T` or none, so none is no `int`. Yet none fitted every declared type
    at check (`{a: none}` for `a: int`, `f(none)` for `n: int`), and the run carried it to where it was read:
    an error far from the slip, or, where only compared, an answer. C004 at the none, its help naming `int?`."""
    text = NONE_DECLS + text
    found = [(d.code, _underlined(text, d), d.help) for d in _errors(_load(tmp_path, text))]
    assert [(code, at) for code, at, _ in found] == [("C004", underlined)], found
    assert "declare `int?`" in (found[0][2] or ""), found


@pytest.mark.parametrize("text", [
    "query main = [r with {b: none}, r with {c: none}, {a: 1, b: none, c: none}]\n",  # (fields that may be none)
    "def g(n: int?) = n\nquery main = g(none)\n",
    "def g(n) = n\ndef h(x: any) = x\nquery main = [g(none), h(none)]\n",
    'const m: map[str, int?] = {"k" => none}\nquery main = if m["k"] == none then 0 else f(m["k"])\n',
    "def maybe(b: bool) = if b then 1 else none\nquery main = f(maybe(true))\n",  # (an `int?`: left to the run)
])
def test_none_where_none_may_be_or_may_not_be_is_left_to_the_run(tmp_path: Path, text: str) -> None:
    rs = _load(tmp_path, NONE_DECLS + text)
    assert _errors(rs) == [], _errors(rs)


# ---------------------------------------------------------------- dice where a number is read


@pytest.mark.parametrize("call", ["abs(2d6)", "int(2d6)", "fraction(1, 2d6)", "[1, 2, 3][2d6]"])
def test_dice_where_a_number_is_read_is_c004(tmp_path: Path, call: str) -> None:
    """`2d6` is dice, no number (docs/language.md, Dice: `roll(2d6)` is the sum of a roll), and the run refuses
    it where a number is read (E011, E001 for an index); the check took dice for a die's face there."""
    text = f"query main = {call}\n"
    found = [(d.code, _underlined(text, d), d.help) for d in _errors(_load(tmp_path, text))]
    assert found == [("C004", "2d6", "dice are not a roll: `roll(d)` rolls the dice `d`")], found


def test_a_roll_where_a_number_is_read_fits(tmp_path: Path) -> None:
    rs = _load(tmp_path, "query main = abs(roll(1d6)) + [0, 1, 2, 3, 4, 5, 6][roll(1d6)] + int(roll(1d6))\n")
    assert _errors(rs) == [], _errors(rs)
    for engine in ENGINES:
        assert rs.run({}, engine=engine, dice=[2, 3, 4]) == 9, engine
