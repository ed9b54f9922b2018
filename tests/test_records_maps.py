"""Records and maps are two kinds of value (docs/language.md, "Records and maps"): made apart, read
alike, never equal to each other (but `{}`, which is both), written in their own notations, and a
state's objects read as records except where an input declares a map. Each check runs on both engines."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest

from validator.api import RunError, load_ruleset
from validator.lib.values import Map, equal, order_key, to_json, tree_size, write_value

_ROOT = Path(tempfile.mkdtemp(prefix="ruleval-records-maps-"))
(_ROOT / "ruleval.toml").write_text("")
ENGINES = ("reference", "backend")


def run(body: str, state: Any = None, engine: str = "backend", decls: str = "") -> Any:
    path = _ROOT / "main.rules"
    path.write_text(f'ruleset t.kinds "kinds"\n{decls}\nquery main = {body}\n', encoding="utf-8")
    rs = load_ruleset(path, use_cache=False)
    assert rs.ok, [str(d) for d in rs.diagnostics]
    return rs.run(state or {}, engine=engine)


# (expression, what it gives as the docs say it)
KINDS = [
    ('str({k: 1})', "{k: 1}"),
    ('str({"k" => 1})', '{"k" => 1}'),
    ('{k: 1} == {"k" => 1}', False),
    ('{k: 1} != {"k" => 1}', True),
    ('{"k" => 1} == {"k" => 1}', True),
    ('[{k: 1}] == [{"k" => 1}]', False),
    ('{k: 1} in [{"k" => 1}]', False),
    ('len(unique([{k: 1}, {"k" => 1}, {k: 1}]))', 2),
    ('index_of([{k: 1}, {"k" => 1}], {"k" => 1})', 1),
    ('{} == remove({k: 1}, "k")', True),  # `{}` is the empty record and the empty map
    ('str(remove({k: 1}, "k"))', "{}"),
    ('str({k => v + 1 for k, v in {a: 1}})', '{"a" => 2}'),  # a comprehension makes a map
    ('str({k: 1} with {j: 2})', "{k: 1, j: 2}"),
    ('str({"k" => 1} with {j: 2})', '{"k" => 1, "j" => 2}'),
    ('str({} with {j: 2})', "{j: 2}"),
    ('str(put({k: 1}, "j", 2))', "{k: 1, j: 2}"),
    ('str(put({k: 1}, 2, 2))', '{"k" => 1, 2 => 2}'),
    ('str(put({}, "j", 2))', '{"j" => 2}'),
    ('str(pick({"k" => 1, "j" => 2}, ["j"]))', '{"j" => 2}'),
    ('str(pick({k: 1, j: 2}, ["j"]))', "{j: 2}"),
    ('str(merge({k: 1}, {j: 2}))', "{k: 1, j: 2}"),
    ('str(merge({k: 1}, {"j" => 2}))', '{"k" => 1, "j" => 2}'),
    ('str(merge({}, {j: 2}))', "{j: 2}"),
    ('str(group_by([1, 2, 3], fn(x) => x % 2))', "{1 => [1, 3], 0 => [2]}"),
    ('str(index_by(["a"], fn(x) => x))', '{"a" => "a"}'),
    ('str(sorted([{"a" => 1}, {b: 1}, {}, {a: 1}]))', '[{}, {a: 1}, {b: 1}, {"a" => 1}]'),
    # read alike: fields, indexes, loops, the built-ins that read maps
    ('[{"k" => 1}.k, {k: 1}["k"], get({k: 1}, "k"), has({"k" => 1}, "k"), keys({k: 1}), values({"k" => 1})]',
     [1, 1, 1, True, ["k"], [1]]),
    ('[k + str(v) for k, v in {a: 1, b: 2}] + [k for k in {"c" => 3}]', ["a1", "b2", "c"]),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("expr", "want"), KINDS)
def test_records_and_maps_are_two_kinds(expr: str, want: Any, engine: str) -> None:
    assert run(expr, engine=engine) == want


@pytest.mark.parametrize("engine", ENGINES)
def test_a_state_object_is_a_record_unless_its_input_declares_a_map(engine: str) -> None:
    decls = "\n".join([
        'input plain: any at "/plain"',
        'input one: map[str, int] at "/one"',
        'input deep: map[str, list[map[str, int]]]? at "/deep"',
        'input units: list[any] at "/units"',
    ])
    state = {"plain": {"a": 1}, "one": {"a": 1}, "deep": {"x": [{"b": 2}]}, "units": [{"a": 1}]}
    out = run('[str(plain), str(one), str(deep), str(units), plain == {a: 1}, one == {"a" => 1}, plain == one]',
              state, engine, decls)
    assert out == ["{a: 1}", '{"a" => 1}', '{"x" => [{"b" => 2}]}', "[{a: 1}]", True, True, False]
    assert run("str(deep)", {**state, "deep": None}, engine, decls) == "none"


@pytest.mark.parametrize("engine", ENGINES)
def test_a_map_declared_in_a_named_record_is_read_as_a_map_at_every_depth(engine: str) -> None:
    """The declared type is followed through named records, lists, maps and recursive records: a
    record inside a list inside a record, a field declared a map there, a map of records."""
    decls = "\n".join([
        "record Army { name: str, strength: map[str, int], tags: list[str]? }",
        "record Side { armies: list[Army], notes: any, reserve: map[str, Army] }",
        "record Tree { label: str, weights: map[str, int], kids: list[Tree] }",
        'input sides: list[Side] at "/sides"',
        'input one: Army at "/one"',
        'input tree: Tree at "/tree"',
        'input loose: map[str, any] at "/loose"',
    ])
    army = {"name": "a", "strength": {"x": 1}, "tags": None}
    state = {"sides": [{"armies": [army], "notes": {"n": 1},
                        "reserve": {"r": {"name": "b", "strength": {}, "tags": ["t"]}}}],
             "one": army, "loose": {"k": {"z": 1}},
             "tree": {"label": "root", "weights": {"w": 1},
                      "kids": [{"label": "leaf", "weights": {"v": 2}, "kids": []}]}}
    out = run("[str(sides), str(one), str(tree), str(loose), sides[0].armies[0].strength == {\"x\" => 1}, "
              "one == {name: \"a\", strength: {\"x\" => 1}, tags: none}]", state, engine, decls)
    assert out == [
        '[{armies: [{name: "a", strength: {"x" => 1}, tags: none}], notes: {n: 1}, '
        'reserve: {"r" => {name: "b", strength: {}, tags: ["t"]}}}]',
        '{name: "a", strength: {"x" => 1}, tags: none}',
        '{label: "root", weights: {"w" => 1}, kids: [{label: "leaf", weights: {"v" => 2}, kids: []}]}',
        '{"k" => {z: 1}}', True, True]
    # a value of another shape than declared is refused at its pointer (tests/test_input_types.py)
    with pytest.raises(RunError) as refused:
        run("str(one)", {**state, "one": {"name": "a", "strength": [1], "tags": None}}, engine, decls)
    assert [(d.code, d.pointer) for d in refused.value.diagnostics] == [("S002", "/one/strength")]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_query_argument_is_read_by_its_declared_type_as_an_input_is(engine: str) -> None:
    """Arguments given from outside (the API's ``args``, `--arg`, a case's `args`) are read as a
    state's inputs are: an object is a record, except where the query's parameter declares a map, at
    every depth (through lists and named records); an exact run reads them alike on every path."""
    path = _ROOT / "args.rules"
    path.write_text('ruleset t.args "args"\n'
                    "record Side { name: str, strength: map[str, int] }\n"
                    'query one(m: map[str, int]) = [str(m), m == {"a" => 1}]\n'
                    "query sides(s: list[Side]) = [str(x) for x in s]\n"
                    "query loose(m) = str(m)\n"
                    "query rolled(m: map[str, int]) = str(m) + str(roll(1d2))\n", encoding="utf-8")
    rs = load_ruleset(path, use_cache=False)
    assert rs.ok, [str(d) for d in rs.diagnostics]
    assert rs.run({}, "one", [{"a": 1}], engine=engine) == ['{"a" => 1}', True]
    assert rs.run({}, "sides", [[{"name": "x", "strength": {"b": 2}}]], engine=engine) == \
        ['{name: "x", strength: {"b" => 2}}']
    assert rs.run({}, "loose", [{"a": 1}], engine=engine) == "{a: 1}"
    exact = rs.run({}, "rolled", [{"a": 1}], exact=True, engine=engine)
    assert [o["result"] for o in exact["outcomes"]] == ['{"a" => 1}1', '{"a" => 1}2']


def test_a_query_argument_on_the_command_line_is_read_by_its_declared_type(cli) -> None:
    path = _ROOT / "cli_args.rules"
    path.write_text('ruleset t.args "args"\nquery one(m: map[str, int]) = str(m)\n', encoding="utf-8")
    r = cli("run", str(path), "--query", "one", "--arg", '{"a": 1}', "--format", "json")
    assert r.code == 0 and json.loads(r.out) == '{"a" => 1}', r.out + r.err


@pytest.mark.parametrize("engine", ENGINES)
def test_a_data_file_is_read_by_the_type_its_import_declares(engine: str, tmp_path: Path) -> None:
    """`import "f.yaml" as d: T` reads the file as an input of type T reads the state: the objects T
    declares maps (through lists and named records) are maps, the others records; without a type
    every object is a record, as before; a variant re-binding the alias keeps the type."""
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "board.yaml").write_text("sides:\n  - {name: north, strength: {inf: 3}}\nterrain: {a: plain}\n")
    (tmp_path / "other.yaml").write_text("sides: []\nterrain: {b: hill}\n")
    (tmp_path / "main.rules").write_text(
        'ruleset t.data "data"\n'
        "record Side { name: str, strength: map[str, int] }\n"
        "record Board { sides: list[Side], terrain: map[str, str] }\n"
        'import "board.yaml" as board: Board\n'
        'import "board.yaml" as raw\n'
        'query main = [str(board), board.terrain == {"a" => "plain"}, str(raw)]\n', encoding="utf-8")
    (tmp_path / "variant.rules").write_text('ruleset t.variant "variant"\nextends "main.rules"\n'
                                            'import "other.yaml" as board\n', encoding="utf-8")
    rs = load_ruleset(tmp_path / "main.rules", use_cache=False)
    assert rs.ok, [str(d) for d in rs.diagnostics]
    assert rs.run({}, engine=engine) == [
        '{sides: [{name: "north", strength: {"inf" => 3}}], terrain: {"a" => "plain"}}', True,
        '{sides: [{name: "north", strength: {inf: 3}}], terrain: {a: "plain"}}']
    variant = load_ruleset(tmp_path / "variant.rules", use_cache=False)
    assert variant.ok and variant.run({}, engine=engine)[0] == '{sides: [], terrain: {"b" => "hill"}}'
    from validator.lang.syntax import parse_module
    from validator.tools.symbols import occurrences

    text = (tmp_path / "main.rules").read_text(encoding="utf-8")  # the language server sees the type's names
    assert ("Board", 4, 31) in {(o.name, o.span.line, o.span.col) for o in occurrences(parse_module(text, "m"), text, set())
                                if o.kind == "type"}


def test_a_type_on_an_import_names_known_types_of_data_only(tmp_path: Path) -> None:
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "board.yaml").write_text("a: 1\n")
    (tmp_path / "lib.rules").write_text('ruleset t.lib "lib"\ndef x = 1\n')
    (tmp_path / "main.rules").write_text('ruleset t.bad "bad"\nimport "board.yaml" as board: Bord\n'
                                         'import "lib.rules" as lib: map[str, int]\nquery main = [board, lib.x]\n')
    rs = load_ruleset(tmp_path / "main.rules", use_cache=False)
    found = sorted((d.code, d.span.line, d.span.col) for d in rs.diagnostics if d.is_error)
    assert found == [("C001", 2, 31), ("C004", 3, 28)]


def test_a_map_is_written_as_json_as_a_record_is() -> None:
    """JSON has objects only: a record and a map with the same entries give the same JSON."""
    record = {"a": [1, {"b": frozenset({2, 1})}], "c": None}
    as_map = Map({"a": [1, Map({"b": frozenset({2, 1})})], "c": None})
    assert json.dumps(to_json(as_map)) == json.dumps(to_json(record))
    assert type(to_json(as_map)) is dict and type(to_json(as_map)["a"][1]) is dict
    assert to_json(Map({1: "a", "1": "b"})) == {"1": "a", '"1"': "b"}


def test_equality_order_and_size_of_the_two_kinds() -> None:
    assert Map({"k": 1}) != {"k": 1} and {"k": 1} != Map({"k": 1}) and not Map({"k": 1}) == {"k": 1}
    assert Map() == {} and {} == Map() and Map({"k": 1}) == Map({"k": 1})
    assert not equal([Map({"k": 1})], [{"k": 1}]) and equal([Map({"k": 1})], [Map({"k": 1})])
    assert order_key({}) == order_key(Map()) < order_key({"z": 9}) < order_key(Map({"a": 0}))
    assert tree_size(Map({"k": [1, 2]}), 100) == tree_size({"k": [1, 2]}, 100) == 5
    assert write_value([{}, Map(), {"if": 1}, Map({"if": 1})]) == '[{}, {}, {"if": 1}, {"if" => 1}]'


# `{}` made in every way the language makes it: one value, whatever made it
EMPTIES = ['{}', 'remove({k: 1}, "k")', 'remove({"k" => 1}, "k")', '{k => 1 for k in []}',
           'pick({"a" => 1}, [])', 'pick({a: 1}, [])', 'merge({}, remove({"k" => 1}, "k"))', 'group_by([], fn(x) => x)']


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("empty", EMPTIES)
def test_the_empty_value_takes_the_kind_of_what_is_added_to_it(empty: str, engine: str) -> None:
    """`{}` has no kind to keep: `with` adds labels and makes a record, `put` a key and makes a map
    (a text key too), `merge` takes the kind of the one with entries; the same for `{}` however it
    was made (docs/language.md, "Records and maps")."""
    exprs = [f"str({empty})", f"{empty} == {{}}", f"str({empty} with {{a: 1}})", f'str(put({empty}, "a", 1))',
             f"str(put({empty}, 1, 1))", f"str(merge({empty}, {{a: 1}}))", f'str(merge({{"a" => 1}}, {empty}))',
             f"str(merge({empty}, {empty}))", f'str(fold(["x", "y"], {empty}, fn(m, k) => put(m, k, len(k))))',
             f'{empty} with {{a: 1}} == {{a: 1}}', f'put({empty}, "a", 1) == {{"a" => 1}}']
    assert run("[" + ", ".join(exprs) + "]", engine=engine) == [
        "{}", True, "{a: 1}", '{"a" => 1}', "{1 => 1}", "{a: 1}", '{"a" => 1}', "{}", '{"x" => 1, "y" => 1}',
        True, True]
