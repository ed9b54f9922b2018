"""A query's typed parameters hold at run time (docs/language.md, "Declarations"; docs/diagnostics.md,
S008): every argument a run is given from outside (the API's ``args``, `--arg`, a test case's `args`) is
checked against its parameter's declared type at the query's entry, before anything runs, the same for
both engines; a mismatch is S008 at the argument's pointer (exit 3), never an E001 inside the ruleset
nor a wrong answer. Untyped parameters and `any` take anything."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from validator.api import RunError
from small_rulesets import loaded, project

ENGINES = ("reference", "backend")

RULES = '''ruleset t.args "typed query parameters"
record R { a: int, b?: str }
record Outer { inner: R, tags: list[str] }
enum E { x, y }
query num(n: int) = n == 3
query rec(r: R) = r.a + 1
query outer(o: Outer) = o.inner.a
query ints(xs: list[int]) = len(xs)
query texts(s: set[str]) = s == {"a", "b"}
query scores(m: map[str, int]) = m["a"] + 1
query maybe(t: str?) = t == none
query flag(b: bool) = b
query word(e: E) = e
query anything(v: any) = v
query untyped(v) = v
query both(a: str, n: int) = a + str(n)
query deep(m: map[str, list[R]]) = len(m)
'''


@pytest.fixture(scope="module")
def rs(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return loaded(tmp_path_factory.mktemp("args"), RULES)


def refused(rs: Any, query: str, args: list[Any], engine: str) -> Any:
    with pytest.raises(RunError) as caught:
        rs.run({}, query, args, engine=engine)
    assert caught.value.kind == "state"
    [d] = caught.value.diagnostics
    assert d.code == "S008", str(d)
    return d


# (query, arguments, the pointer of the argument at fault, words the message holds)
WRONG = [
    ("num", ["3"], "/0", ["`num`", "`n`", "int", '"3"']),  # the text "3" is no number: `n == 3` was false
    ("num", [True], "/0", ["`n`", "true"]),  # a truth value is no number
    ("num", [0.5], "/0", ["`n`", "0.5"]),  # `int` takes whole numbers
    ("rec", [{"b": "x"}], "/0", ["`rec`", "`r`", "`a`"]),  # a record missing a field
    ("rec", [{"a": "x"}], "/0/a", ["`r`", "int", '"x"']),
    ("rec", [{"a": 1, "b": 2}], "/0/b", ["str", "2"]),  # an optional field, when given, has its type
    ("rec", [[1]], "/0", ["`R`", "[1]"]),
    ("outer", [{"inner": {"a": 1}, "tags": ["t", 3]}], "/0/tags/1", ["str", "3"]),
    ("outer", [{"inner": {}, "tags": []}], "/0/inner", ["`a`"]),
    ("ints", [[1, "2"]], "/0/1", ["int", '"2"']),
    ("ints", [{"0": 1}], "/0", ["list[int]"]),
    ("texts", [["a", 1]], "/0/1", ["str", "1"]),
    ("texts", ["ab"], "/0", ["set[str]"]),
    ("scores", [{"a": "1"}], "/0/a", ["int", '"1"']),
    ("scores", [[1]], "/0", ["map[str, int]"]),
    ("maybe", [1], "/0", ["str?", "1"]),
    ("flag", [1], "/0", ["bool", "1"]),
    ("word", ["z"], "/0", ["`E`", '"z"', "x", "y"]),
    ("both", ["a", "1"], "/1", ["`both`", "`n`", '"1"']),
    ("deep", [{"k": [{"a": 1}, {"a": None}]}], "/0/k/1/a", ["int", "null"]),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("query,args,pointer,words", WRONG)
def test_an_argument_of_another_type_is_refused_at_its_pointer(rs: Any, engine: str, query: str, args: list[Any],
                                                                pointer: str, words: list[str]) -> None:
    d = refused(rs, query, args, engine)
    assert d.pointer == pointer
    for word in words:
        assert word in d.message, (word, d.message)
    # said as input, not at a line of the ruleset (the caller's mistake, not the ruleset's)
    assert not d.span.file.endswith(".rules")
    # the parameter's declaration is named as a note
    assert d.related and d.related[0].span.file.endswith("main.rules") and d.related[0].span.line > 0


# (query, arguments, the answer)
RIGHT = [
    ("num", [3], True),
    ("num", [3.0], True),  # (read exactly: the whole number 3)
    ("rec", [{"a": 1}], 2),
    ("rec", [{"a": 1, "b": "x", "extra": [1]}], 2),  # fields the record does not declare are kept, unchecked
    ("outer", [{"inner": {"a": 4}, "tags": []}], 4),
    ("ints", [[1, 2]], 2),
    ("texts", [["b", "a"]], True),  # an array given for a set is that set: `s == {"a", "b"}` holds
    ("texts", [["a", "b", "a"]], True),
    ("scores", [{"a": 1}], 2),
    ("maybe", [None], True),
    ("maybe", ["t"], False),
    ("flag", [False], False),
    ("word", ["y"], "y"),
    ("anything", [{"k": [1, None]}], {"k": [1, None]}),
    ("untyped", ["3"], "3"),
    ("untyped", [{"z": 1}], {"z": 1}),
    ("both", ["a", 1], "a1"),
    ("deep", [{"k": [{"a": 1}]}], 1),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("query,args,answer", RIGHT)
def test_an_argument_of_its_type_runs(rs: Any, engine: str, query: str, args: list[Any], answer: Any) -> None:
    got = rs.run({}, query, args, engine=engine)
    assert got == answer and type(got) is type(answer)


def test_every_argument_at_fault_is_said(rs: Any) -> None:
    with pytest.raises(RunError) as caught:
        rs.run({}, "both", [1, "1"])
    assert [d.pointer for d in caught.value.diagnostics] == ["/0", "/1"]


def test_a_python_tuple_is_no_list(rs: Any) -> None:
    d = refused(rs, "ints", [(1, 2)], "backend")
    assert d.pointer == "/0" and "the tuple [1, 2]" in d.message, d.message


def test_the_count_of_arguments_is_still_said_first(rs: Any) -> None:
    with pytest.raises(RunError) as caught:
        rs.run({}, "num", ["3", 4])
    assert [d.code for d in caught.value.diagnostics] == ["E008"]


def test_the_command_line_says_it_with_exit_3(cli: Any, tmp_path: Path) -> None:
    path = project(tmp_path, RULES)
    r = cli("run", str(path), "--query", "num", "--arg", '"3"')
    assert r.code == 3, r.err
    assert "error[S008]" in r.err and "`n`" in r.err and "--arg" in r.err
    assert cli("run", str(path), "--query", "num", "--arg", "3").code == 0


def test_a_test_case_is_said_at_its_args(cli: Any, tmp_path: Path) -> None:
    project(tmp_path, RULES, files={"cases.yaml": "ruleset: main.rules\ncases:\n  - id: wrong\n    query: num\n    state: {}\n"
                                                  "    args:\n      - \"3\"\n    expect: {result: false}\n"})
    r = cli("test", str(tmp_path / "cases.yaml"))
    assert r.code == 3, r.out + r.err
    said = r.out + r.err
    assert "S008" in said and "cases.yaml:7:" in said, said
