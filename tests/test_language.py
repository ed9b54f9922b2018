"""Semantics of each construct of the ruleset language, run through ``validator.api``."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from validator.api import RunError, load_ruleset


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "ruleval.toml").write_text("")
    return tmp_path


def ruleset(root: Path, text: str, name: str = "main.rules", **files: str) -> Any:
    for fname, body in files.items():
        (root / fname.replace("__", ".")).write_text(body, encoding="utf-8")
    (root / name).write_text(text, encoding="utf-8")
    rs = load_ruleset(root / name, use_cache=False)
    errors = [f"{d.code} {d.span}: {d.message}" for d in rs.diagnostics if d.is_error]
    assert not errors, errors
    return rs


def value(root: Path, expr: str, state: Any = None, prelude: str = "", **kw: Any) -> Any:
    rs = ruleset(root, f"{prelude}\nquery main = {expr}\n")
    return rs.run({} if state is None else state, **kw)


def eval_error(root: Path, text: str, state: Any = None, **kw: Any) -> str:
    rs = ruleset(root, text)
    with pytest.raises(RunError) as exc:
        rs.run({} if state is None else state, **kw)
    return exc.value.diagnostics[0].code


@pytest.mark.parametrize("expr, want", [
    ("let x = 2; let y = x * 3; x + y", 8),
    ("if 1 > 2 then \"a\" elif 2 > 1 then \"b\" else \"c\"", "b"),
    ("if false then 1 elif false then 2 else 3", 3),
    ("[x * x for x in range(5) if x % 2 == 0]", [0, 4, 16]),
    ("[[x, y] for x in range(3) for y in range(x)]", [[1, 0], [2, 0], [2, 1]]),
    ("{x % 3 for x in range(10)}", [0, 1, 2]),
    ("{x => x * 10 for x in [1, 2]}", {"1": 10, "2": 20}),
    ("[k + str(v) for k, v in {\"a\" => 1, \"b\" => 2}]", ["a1", "b2"]),
    ("[any(x > 3 for x in [1, 5]), all(x > 3 for x in [1, 5]), count(x > 0 for x in [1, 0, 2])]", [True, False, 2]),
    ("[sum(x for x in range(5)), max(x for x in [3, 9, 2]), min(x for x in [3, 9, 2])]", [10, 9, 2]),
    ("[none ?? 4, 0 ?? 4, {a: 1}.b ?? \"d\"]", [4, 0, "d"]),
    ("{a: 1, b: 2} with {b: 3, c: 4}", {"a": 1, "b": 3, "c": 4}),
    ("[3 / 6, 6 / 3, 7 // 2, 7 % 3, -2]", ["1/2", 2, 3, 1, -2]),
    ("[1 in [1, 2], 3 not in [1, 2], \"a\" in {\"a\" => 1}]", [True, True, True]),
    ("[{a: 1}.zz, {\"k\" => 1}[\"q\"]]", [None, None]),
    ("(fn(x, y) => x * y)(6, 7)", 42),
    ("let k = 10; let add = fn(x) => x + k; [add(1), add(2)]", [11, 12]),
    ("let make = fn(n) => fn(x) => x + n; make(5)(1)", 6),
    ("fold([1, 2, 3], 0, fn(a, x) => a + x)", 6),
    ("sorted([3, 1, 2])", [1, 2, 3]),
    # (texts only, or integers only, are sorted as they are; any other mix by the language's order)
    ('[sorted(["b", "a", "c"]), sorted([true, 2, 1, false]), sorted(["b", 1, none, [2], "a"]), sorted({3, 1})]',
     [["a", "b", "c"], [False, True, 1, 2], [None, 1, "a", "b", [2]], [1, 3]]),
    ('[join(["a", "b"], "-"), join(["a", 1, none, true, 3 / 6], ","), join([], "+"), join({"k" => 1}, "")]',
     ["a-b", "a,1,none,true,1/2", "", "k"]),
    ('[concat([1, 2], [3]), concat([1], {"x" => 2}), concat([], [])]', [[1, 2, 3], [1, "x"], []]),
])
def test_expressions(root: Path, expr: str, want: Any) -> None:
    assert value(root, expr) == want


def test_tables_absent_cells_and_data_tables(root: Path) -> None:
    rs = ruleset(root, '''
import "costs.yaml" as data
table cost[kind, ground] -> int? cite "R1" {
  | kind  | flat | hill |
  | foot  | 1    | 2    |
  | horse | 1    | -    |
}
table speed[kind] cite "R2" {
  | foot  | 1 |
  | horse | 3 |
}
table dcost[kind, ground] -> int? cite "R3" = data.cost
query main = [cost["foot", "hill"], cost["horse", "hill"], cost["ship", "flat"], speed["horse"],
              dcost["foot", "flat"], dcost["foot", "swamp"], dcost["elf", "flat"]]
''', costs__yaml="cost:\n  foot: {flat: 1, hill: 3}\n")
    assert rs.run({}) == [2, None, None, 3, 1, None, None]


@pytest.mark.parametrize("engine", ["reference", "backend"])
@pytest.mark.parametrize("lookup", ['cost[odds, 2]', 'dcost["foot", odds]'])
def test_a_table_lookup_that_misses_is_an_error_unless_its_result_is_optional(root: Path, engine: str,
                                                                               lookup: str) -> None:
    """A header typo (`4;1` for `4:1`) made every such attack `none` with no warning."""
    rs = ruleset(root, f'''
import "costs.yaml" as data
table cost[odds, die] -> str cite "R1" {{
  | odds  | 1    | 2    |
  | "3:1" | "AR" | "DR" |
  | "4;1" | "DR" | "DE" |
}}
table dcost[kind, ground] -> int cite "R3" = data.cost
def odds = "4:1"
query main = {lookup}
''', costs__yaml="cost:\n  foot: {flat: 1, hill: 3}\n")
    with pytest.raises(RunError) as err:
        rs.run({}, engine=engine)
    [d] = err.value.diagnostics
    assert d.code == "E002" and "has no cell for" in d.message and d.span.line in (3, 8)


def test_enums_records_and_inputs(root: Path) -> None:
    rs = ruleset(root, '''
enum Kind { foot, horse }
record Unit { kind: Kind, at: str, tired?: bool }
input units: list[Unit] at "/units"
input weather: str at "/weather" default "fair"
def fast(u) = u.kind == horse and not (u.tired ?? false)
query main = {fast: [fast(u) for u in units], weather: weather, member: horse == "horse", kinds: [foot, horse]}
''')
    state = {"units": [{"kind": "horse", "at": "a"}, {"kind": "horse", "at": "b", "tired": True}, {"kind": "foot", "at": "c"}]}
    assert rs.run(state) == {"fast": [True, False, False], "weather": "fair", "member": True, "kinds": ["foot", "horse"]}
    assert rs.run({**state, "weather": "rain"})["weather"] == "rain"


PROC = '''
input limit: int at "/limit"
procedure count_up(n) cite "R1" {
  var total = 0
  var seen = []
  step start cite "R1" {
    require n >= 0 else "n must not be negative" cite "R1"
    if n == 0 { stop }
    goto loop
  }
  step skipped cite "R2" { total := 1000 }
  step loop cite "R3" {
    for i in range(n) if i != 2 {
      if total >= limit { break }
      total := total + i
      seen := seen + [i]
      emit "added" {i: i}
    }
    if total > 100 { reject "too many" cite "R4" }
  }
}
query main(n) = count_up(n)
'''


def test_procedures(root: Path) -> None:
    rs = ruleset(root, PROC)
    out = rs.run({"limit": 4}, args=[6])
    assert out["status"] == "completed" and out["total"] == 4 and out["seen"] == [0, 1, 3]
    assert len(out["events"]) == 3
    assert rs.run({"limit": 4}, args=[0])["status"] == "stopped"
    rejected = rs.run({"limit": 4}, args=[-1])
    assert rejected["status"] == "rejected" and rejected["reason"] == "n must not be negative"
    assert rejected["step"] == "start" and "R1" in rejected["cites"]
    big = rs.run({"limit": 10_000}, args=[30])
    assert big["status"] == "rejected" and big["reason"] == "too many"


def test_decisions_three_cycle_settled_by_policy(root: Path) -> None:
    rs = ruleset(root, '''
def next = {"a" => "b", "b" => "c", "c" => "a"}
decision moves(x) cite "R1" = moves(next[x])
cycle moves cite "R2" {
  when len(cycle) == 3 => settle cycle as true cite "R2"
  otherwise => settle cycle as false cite "R2"
}
query main = [moves("a"), moves("b"), moves("c")]
''')
    assert rs.run({}) == [True, True, True]


def test_decision_paradox_is_e006(root: Path) -> None:
    assert eval_error(root, 'decision flips(x) cite "R1" = not flips(x)\nquery main = flips(1)\n') == "E006"


def test_decision_without_cycle(root: Path) -> None:
    rs = ruleset(root, 'decision ok(x) cite "R1" = x > 1 and (x > 5 or ok(x + 3))\nquery main = [ok(1), ok(2), ok(7)]\n')
    assert rs.run({}) == [False, True, True]


def test_extends_and_override(root: Path) -> None:
    (root / "base.rules").write_text('def limit = 3\ndef bonus = 1\nquery main = limit + bonus\n')
    rs = ruleset(root, 'extends "base.rules"\noverride def limit = 10\n', name="variant.rules")
    assert rs.run({}) == 11
    assert load_ruleset(root / "base.rules", use_cache=False).run({}) == 4


def test_module_import(root: Path) -> None:
    rs = ruleset(root, 'import "lib.rules" as lib\nquery main = [lib.double(4), lib.base]\n',
                 lib__rules="def base = 5\ndef double(x) = x * 2 + base\n")
    assert rs.run({}) == [13, 5]


def test_data_import(root: Path) -> None:
    rs = ruleset(root, 'import "d.json" as d\nquery main = [d.sizes.small, d.names[1], len(d.names)]\n',
                 d__json='{"sizes": {"small": 2}, "names": ["x", "y"]}')
    assert rs.run({}) == [2, "y", 2]


def findings(root: Path, text: str, **files: str) -> list[tuple[str, str, int, int, str | None, str]]:
    """(code, file, line, col, pointer, message) of each error of a ruleset, for the data checks."""
    for fname, body in files.items():
        (root / fname.replace("__", ".")).write_text(body, encoding="utf-8")
    (root / "main.rules").write_text(text, encoding="utf-8")
    rs = load_ruleset(root / "main.rules", use_cache=False, check_cache=False)
    return [(d.code, Path(d.span.file).name, d.span.line, d.span.col, d.pointer, d.message)
            for d in rs.diagnostics if d.is_error]


SIZES_SCHEMA = '{"type": "object", "properties": {"sizes": {"type": "array", "items": {"type": "integer"}}}}'


def test_data_with_a_schema_is_checked_when_the_ruleset_loads(root: Path) -> None:
    text = 'import "d.json" as d with schema "s.json"\nquery main = d\n'
    assert findings(root, text, d__json='{"sizes": [1, 2]}', s__json=SIZES_SCHEMA) == []
    assert findings(root, text, d__json='{"sizes": [1,\n  "two"]}', s__json=SIZES_SCHEMA) == [
        ("C026", "d.json", 2, 3, "/sizes/1", 'expected an integer, got "two"')]


@pytest.mark.parametrize("text, code, message", [
    ('import "lib.rules" as lib with schema "s.json"\nquery main = lib.x\n', "C015",
     "`with schema` checks a data file, and `lib.rules` is a ruleset"),
    ('import "d.json" as d with schema "nope.json"\nquery main = d\n', "C005", "data schema `nope.json` not found"),
    ('import "d.json" as d with schema "../../outside.json"\nquery main = d\n', "C007", None),
    ('import "d.json" as d with schema "bad.json"\nquery main = d\n', "C015", "data schema `bad.json` cannot be loaded"),
])
def test_a_data_schema_that_cannot_be_used_is_located_at_the_import(root: Path, text: str, code: str,
                                                                    message: str | None) -> None:
    found = findings(root, text, d__json="{}", lib__rules="def x = 1\n", bad__json="[1, 2")
    assert [(f[0], f[1], f[2], f[3]) for f in found] == [(code, "main.rules", 1, 1)]
    if message is not None:
        assert found[0][5] == message


def test_the_data_check_locates_each_finding_in_the_data_file(root: Path) -> None:
    text = ('import "d.yaml" as d\n'
            'query validate_data = [{pointer: "/d/sizes/" + str(e.index), message: "a size is at least 1", cites: []}\n'
            '    for e in enumerate(d.sizes) if e.item < 1]\n'
            'query main = d\n')
    assert findings(root, text, d__yaml="sizes:\n  - 3\n  - 0\n") == [
        ("C027", "d.yaml", 3, 5, "/sizes/1", "a size is at least 1")]


@pytest.mark.parametrize("pointer, where", [
    ("/d/sizes/7", ("main.rules", 1, 1, "/d/sizes/7")),  # leads nowhere in the file: at the import
    ("/x/y", ("main.rules", 2, 1, "/x/y")),  # names no import: at the query
])
def test_a_data_check_pointer_that_leads_nowhere(root: Path, pointer: str, where: tuple[str, int, int, str]) -> None:
    text = f'import "d.yaml" as d\nquery validate_data = [{{pointer: "{pointer}", message: "m", cites: []}}]\nquery main = d\n'
    assert [f[1:5] for f in findings(root, text, d__yaml="sizes: [1]\n")] == [where]


@pytest.mark.parametrize("text, code, message", [
    ("input n: int at \"/n\" default 0\ndef twice = n * 2\nquery validate_data = [twice]\n", "C028",
     "`validate_data` reads the input `n` through `twice`: it is run with no state"),
    ("input n: int at \"/n\" default 0\nquery validate_data = [n]\n", "C028",
     "`validate_data` reads the input `n`: it is run with no state"),
    ("query validate_data(x) = [x]\n", "C028", "`validate_data` takes parameters: it is run once, with nothing to pass"),
    ("query validate_data = 3\n", "E001", "`validate_data` must give a list of {pointer, message, cites}, not `3`"),
    ("query validate_data = [1 // 0]\n", "E003", None),
])
def test_a_data_check_that_cannot_run_says_why(root: Path, text: str, code: str, message: str | None) -> None:
    found = findings(root, text)
    assert [f[0] for f in found] == [code]
    if message is not None:
        assert found[0][5] == message


def test_the_data_check_waits_for_the_schema_and_for_a_clean_ruleset(root: Path) -> None:
    check = 'query validate_data = [{pointer: "/d", message: "always", cites: []}]\nquery main = d\n'
    assert [f[0] for f in findings(root, 'import "d.json" as d with schema "s.json"\n' + check,
                                   d__json='{"sizes": ["x"]}', s__json=SIZES_SCHEMA)] == ["C026"]
    assert [f[0] for f in findings(root, 'import "d.json" as d\n' + check + "def broken = nope\n",
                                   d__json="{}")] == ["C001"]


def test_a_variant_that_re_binds_data_keeps_the_base_schema(root: Path) -> None:
    (root / "base.rules").write_text('import "d.json" as d with schema "s.json"\nquery main = d\n')
    found = findings(root, 'extends "base.rules"\nimport "e.json" as d\n', e__json='{"sizes": [true]}',
                     d__json='{"sizes": [1]}', s__json=SIZES_SCHEMA)
    assert [f[:5] for f in found] == [("C026", "e.json", 1, 12, "/sizes/0")]


# ---------------------------------------------------------------- hex geometry

def _axial_distance(a: list[int], b: list[int]) -> int:
    dq, dr = a[0] - b[0], a[1] - b[1]
    return (abs(dq) + abs(dr) + abs(dq + dr)) // 2


def test_hex_neighbours_of_0304(root: Path) -> None:
    out = value(root, '[hex_neighbours("0304"), [hex_distance("0304", n) for n in hex_neighbours("0304")]]')
    neighbours, dists = out
    assert len(set(neighbours)) == 6 and "0304" not in neighbours
    assert {"0303", "0305"} <= set(neighbours)  # same column, rows above and below
    assert {n[:2] for n in neighbours} == {"02", "03", "04"}
    assert dists == [1] * 6


@pytest.mark.parametrize("layout", ["odd-q", "even-q", "odd-r", "even-r"])
def test_label_axial_round_trip(root: Path, layout: str) -> None:
    out = value(root, f'''[[l, hex_label(hex_axial(l, "{layout}")[0], hex_axial(l, "{layout}")[1], "{layout}"),
                             hex_axial(l, "{layout}")]
                           for l in keys(hex_grid(6, 5, "{layout}"))]''')
    assert len(out) == 30
    for label, back, _axial in out:
        assert back == label
    axials = {label: axial for label, _, axial in out}
    grid = value(root, f'hex_grid(6, 5, "{layout}")')
    for label, ns in grid.items():
        assert len(ns) <= 6
        for n in ns:
            assert _axial_distance(axials[label], axials[n]) == 1


def test_hex_distance_matches_axial(root: Path) -> None:
    out = value(root, '[hex_distance("0101", "0606"), hex_distance("0101", "0101"), hex_adjacent("0304", "0303")]')
    a = value(root, '[hex_axial("0101"), hex_axial("0606")]')
    assert out == [_axial_distance(a[0], a[1]), 0, True]


def test_odd_q_layout_shifts_odd_columns(root: Path) -> None:
    odd = set(value(root, 'hex_neighbours("0304", "odd-q")'))
    even = set(value(root, 'hex_neighbours("0304", "even-q")'))
    assert odd != even
    assert odd ^ even <= {"0203", "0205", "0403", "0405"}


# ---------------------------------------------------------------- graphs

GRAPH = '{"a" => ["b", "c"], "b" => ["a", "d"], "c" => ["a", "d"], "d" => ["b", "c", "e"], "e" => ["d"]}'


def test_reachable_with_cost_map(root: Path) -> None:
    out = value(root, f'reachable({GRAPH}, "a", 3, {{"a" => 1, "b" => 1, "c" => 5, "d" => 1, "e" => 1}})')
    assert out == {"a": 0, "b": 1, "d": 2, "e": 3}


def test_reachable_with_cost_function_and_can_pass(root: Path) -> None:
    cost = 'fn(f, t) => if t == "c" then none else 1'
    out = value(root, f'reachable({GRAPH}, "a", 5, {cost})')
    assert set(out) == {"a", "b", "d", "e"}
    blocked = value(root, f'reachable({GRAPH}, "a", 5, {cost}, fn(n) => n != "d")')
    assert set(blocked) == {"a", "b", "d"}


def test_reachable_refuses_a_cost_below_0(root: Path) -> None:
    # (a search that asks no cost of entering a node already settled is sound only with no cost below 0)
    for cost in ("fn(a, b) => 2 - b", '{"1" => 1, "2" => 1, "3" => -1}'):
        graph = '{"1" => ["2"], "2" => ["3"], "3" => []}' if cost.startswith("{") else "{1 => [2], 2 => [3]}"
        start = '"1"' if cost.startswith("{") else "1"
        for engine in ("reference", "backend"):
            assert eval_error(root, f"query main = reachable({graph}, {start}, 5, {cost})", engine=engine) == "E011"


def test_reachable_refuses_a_truth_value_as_a_cost(root: Path) -> None:
    # (`d + true` was taken as `d + 1`: a truth value is never a number, issue 42)
    for cost in ("fn(a, b) => true", '{"2" => 1, "3" => false}'):
        graph = '{"1" => ["2"], "2" => ["3"], "3" => []}'
        for engine in ("reference", "backend"):
            assert eval_error(root, f'query main = reachable({graph}, "1", 5, {cost})', engine=engine) == "E011"


def test_a_built_in_s_message_writes_values_in_the_language_s_notation(root: Path) -> None:
    # (a built-in's messages wrote Python's spelling: `'3'`, `Fraction(-1, 2)`)
    rs = ruleset(root, 'query main = reachable({"1" => ["2"], "2" => ["3"]}, "1", 5, {"2" => 1, "3" => -1/2})')
    for engine in ("reference", "backend"):
        with pytest.raises(RunError) as exc:
            rs.run({}, engine=engine)
        assert "a cost below 0 (-1/2) to enter `3`" in exc.value.diagnostics[0].message


def test_distance_is_the_fewest_steps_to_the_nearest_target(root: Path) -> None:
    out = value(root, f'[distance({GRAPH}, "a", ["e"]), distance({GRAPH}, "a", {{"d", "e"}}), distance({GRAPH}, "d", ["d", "a"]),'
                      f' distance({GRAPH}, "a", []), distance({{"a" => ["b"], "b" => []}}, "b", ["a"]),'
                      f' distance({{"x" => ["y"]}}, "q", ["y"])]')
    # (the edges are followed one way: `b` has none back to `a`; a node the graph does not list has none)
    assert out == [3, 2, 0, None, None, None]


def test_components_names_each_part_by_its_least_node(root: Path) -> None:
    out = value(root, f'[components({GRAPH}, ["e", "d", "b", "c"]), components({GRAPH}, ["e", "c", "b"]),'
                      f' components({GRAPH}, []), components({{1 => [2], 2 => [1], 3 => []}}, [3, 2, 1])]')
    assert out == [{"b": "b", "c": "b", "d": "b", "e": "b"}, {"b": "b", "c": "c", "e": "e"}, {},
                   {"1": 1, "2": 1, "3": 3}]


@pytest.mark.parametrize("expr, want", [
    ("[len({1, true}), len({0, false, none}), len(set([1, true, 1 == 1]))]", [2, 3, 2]),
    ('{1 => "a", true => "b"}', {"1": "a", "true": "b"}),
    ("[true in [1], 1 in [true], true in {1}, 1 in {true => 2}, true in (1, 2), false in [0]]", [False] * 6),
    ("[1 == true, 0 != false, [1] == [true], {a: 1} == {a: true}, {1} == {true}, (1, 2) == (true, 2)]",
     [False, True, False, False, False, False]),
    ("[true == true, [true] == [true], {a: [1]} == {a: [1]}, 2 in [1, true, 2], true in [1, true]]", [True] * 5),
    ("[keys({true => 1, 1 => 2}), list({true, 1, false, 0}), unique([1, true, 1]), [x for x in {true, 1}]]",
     [[True, 1], [False, True, 0, 1], [1, True], [True, 1]]),
    ("[index_of([1, true], true), remove([1, true], true), has({1 => 2}, true), get({true => 2}, 1), "
     '{true => 2}[1], {1 => 2}[true]]', [1, [1], False, None, None, None]),
    ('[put({1 => "a"}, true, "b"), group_by([1, 2, 3], fn(x) => x > 1), index_by([0, 1], fn(x) => x == 1)]',
     [{"1": "a", "true": "b"}, {"false": [1], "true": [2, 3]}, {"false": 0, "true": 1}]),
    ("[[[k, v] for k, v in {true => 1, 1 => 2}], items({false => 0}), str({true => 1, 1 => 2}), str({1, true})]",
     [[[True, 1], [1, 2]], [{"key": False, "value": 0}], "{true => 1, 1 => 2}", "{true, 1}"]),
    ('{1 => "a", "1" => "b", true => "c", "true" => "d"}', {"1": "a", '"1"': "b", "true": "c", '"true"': "d"}),
    ("{(1, 2) => 3}", {"(1, 2)": 3}),
])
def test_truth_values_are_never_numbers(root: Path, expr: str, want: Any) -> None:
    """Python's True == 1; the language's truth values equal no number, as items, keys, in `in` and `==`,
    on both engines; a map with keys of several kinds writes each in the notation, none lost."""
    for engine in ("reference", "backend"):
        assert value(root, expr, engine=engine) == want, engine


def test_graph_look_ups_and_sum_keep_truth_values_apart(root: Path) -> None:
    assert value(root, "[neighbours({1 => [2]}, true), adjacent({1 => [true]}, 1, 1), adjacent({true => [1]}, true, 1)]") \
        == [[], False, True]
    # (a literal list that mixes kinds is refused by `check`, C004; one it cannot see is E011 in a run)
    assert eval_error(root, "query main = sum([if x then true else 1 for x in [true, false]])") == "E011"


# `t(x)` gives `x` where `check` cannot see what it is (a literal mix is C004 at check time)
_HIDDEN = "def t(x) = x\ndef yes = t(true)\ndef no = t(false)"


@pytest.mark.parametrize("expr, want", [
    # graph searches keep the node `true` apart from the node `1`
    ("[path_exists({0 => [1]}, 0, yes), path_exists({0 => [yes]}, 0, 1), find_path({0 => [yes], yes => [5]}, 0, 5),"
     " distance({0 => [yes]}, 0, [1]), distance({0 => [1]}, 0, {yes}), find_path({0 => [1, yes]}, 0, yes)]",
     [False, False, [0, True, 5], None, None, [0, True]]),
    ("components({1 => [2], yes => [3]}, [1, 2, 3, yes])", {"true": True, "3": True, "1": 1, "2": 1}),
    ("[reachable({0 => [yes, 1]}, 0, 5, {1 => 1, yes => 2}), reachable({0 => [yes]}, 0, 5, {1 => 1}),"
     " path_cost([0, yes], {1 => 1}, 0)]", [{"0": 0, "true": 2, "1": 1}, {"0": 0}, None]),
    # max and min order truth values with truth values only
    ("[max([yes, no]), min([yes, no]), max_by([1, 2], fn(x) => x == 2), yes > no]", [True, False, 2, True]),
])
def test_graph_searches_and_orders_keep_truth_values_apart(root: Path, expr: str, want: Any) -> None:
    for engine in ("reference", "backend"):
        assert value(root, expr, prelude=_HIDDEN, engine=engine) == want, engine


@pytest.mark.parametrize("expr, code", [
    ("max([yes, 1])", "E011"), ("min([0, no])", "E011"), ("max_by([1, 2], fn(x) => if x == 1 then yes else 2)", "E011"),
    ("max([[1], [yes]])", "E011"), ("yes < 2", "E001"), ("[yes] < [2]", "E001"), ("(1, no) >= (1, 0)", "E001"),
    ("yes + 1", "E001"), ("yes * 3", "E001"), ("2 - no", "E001"), ("yes / 2", "E001"), ("7 // yes", "E001"),
    ("yes % 2", "E001"), ("-yes", "E001"), ("abs(yes)", "E011"), ("pad(yes, 2)", "E011"), ("pad(3, yes)", "E011"),
    ("range(yes)", "E011"), ("fraction(yes, 2)", "E011"),
])
def test_a_truth_value_is_no_number_to_order_or_compute_with(root: Path, expr: str, code: str) -> None:
    """Python's True < 2, True + 1 and max([True, 1]) all answer; the language refuses them, as `check`
    refuses them where it can see them."""
    for engine in ("reference", "backend"):
        assert eval_error(root, f"{_HIDDEN}\nquery main = {expr}\n", engine=engine) == code, (expr, engine)


def test_a_table_keeps_a_truth_value_apart_from_a_number(root: Path) -> None:
    """A grid's row `true` is not the row `1`, and a table over a map looks a truth value up as the map
    keeps it."""
    prelude = f"""{_HIDDEN}
table grid[k] -> int? cite "T-1" {{
  | true | 10 |
  | 0    | 20 |
}}
def src = {{1 => 5, true => 6}}
table over[k] -> int? cite "T-1" = src"""
    for engine in ("reference", "backend"):
        assert value(root, "[grid[yes], grid[1], grid[0], grid[no], over[1], over[yes], over[no]]", prelude=prelude,
                     engine=engine) == [10, None, 20, None, 5, 6, None], engine


def test_a_tuple_holding_a_truth_value_is_no_key(root: Path) -> None:
    assert eval_error(root, "query main = {(1, true)}") == "E009"
    assert eval_error(root, "query main = {(true, 1) => 2}") == "E009"
    assert value(root, "[(1, true) in {(1, 1)}, {(1, 1) => 2}[(1, true)]]") == [False, None]


_FUNCTIONS = """def add(a, b) = a + b
def sub(a, b) = a - b"""


@pytest.mark.parametrize("expr, code", [
    ("[f(5, 2) for f in {sub, add}]", "E009"), ("{add => 1}", "E009"), ("{(1, add)}", "E009"),
    ("{fn(x) => x}", "E009"), ("set([len, sub])", "E011"), ("group_by([1, 2], fn(x) => add)", "E001"),
    ("sorted([sub, add])", "E001"), ("sorted([{f: sub}, {f: add}])", "E001"), ("sort_by([1, 2], fn(x) => [add])", "E001"),
])
def test_a_function_is_no_key_and_has_no_order(root: Path, expr: str, code: str) -> None:
    """A set is walked in the order of values, which holds no function: a set of functions was walked
    by where Python had put them in memory, another order in another process."""
    for engine in ("reference", "backend"):
        assert eval_error(root, f"{_FUNCTIONS}\nquery main = {expr}\n", engine=engine) == code, (expr, engine)
    assert value(root, "[f(5, 2) for f in [sub, add]] + [len([add, add]), (1, add) in {(1, 2)}, unique([add])[0](1, 1)]",
                 prelude=_FUNCTIONS) == [3, 7, 2, False, 2]


def test_graph_built_ins_agree_on_a_node_and_itself(root: Path) -> None:
    """The path of no step: path_exists and find_path say what distance says (0 steps)."""
    out = value(root, f'[path_exists({GRAPH}, "a", "a"), find_path({GRAPH}, "a", "a"), distance({GRAPH}, "a", ["a"]),'
                      f' path_exists({GRAPH}, "a", "a", fn(n) => false), find_path({{"q" => []}}, "q", "q")]')
    assert out == [True, ["a"], 0, True, ["q"]]


@pytest.mark.parametrize("graph", ["{1 => [2], 2 => []}", "{1 => [], 2 => [1]}", "{2 => [1]}", "{1 => [2]}"])
def test_components_join_two_nodes_by_a_one_way_edge_either_way(root: Path, graph: str) -> None:
    assert value(root, f"[components({graph}, [1, 2, 3]), components({graph}, [2, 1])]") == [
        {"1": 1, "2": 1, "3": 3}, {"1": 1, "2": 1}]


@pytest.mark.parametrize("expr, want", [
    ('int("9999999999999999999")', 9999999999999999999), ('int(" -12345678901234567890 ")', -12345678901234567890),
    ('int("12")', 12), ('int("1.5")', None), ('int("")', None), ('int("-")', None),
    ("pad(-7, 3)", "-007"), ("pad(7, 3)", "007"), ("pad(-1234, 3)", "-1234"), ("pad(0, 2)", "00")])
def test_int_of_any_integer_text_and_pad_of_a_negative(root: Path, expr: str, want: Any) -> None:
    assert value(root, expr) == want


def test_int_of_a_text_too_long_to_read_is_an_error(root: Path) -> None:
    assert eval_error(root, 'query main = int("' + "9" * 5000 + '")') == "E011"


def test_a_decimal_in_a_state_is_read_exactly(root: Path) -> None:
    """A JSON number with a fraction is the decimal it writes: 0.1 is 1/10, never a binary float."""
    from validator.core import jsontext

    state = jsontext.loads('{"a": 0.1, "b": 0.2, "c": 1901.0, "d": 2.5e-3}', "state.json")
    assert state == {"a": Fraction(1, 10), "b": Fraction(1, 5), "c": 1901, "d": Fraction(1, 400)}
    assert type(state["c"]) is int
    rs = ruleset(root, 'input a: any at "/a"\ninput b: any at "/b"\ninput d: any at "/d"\n'
                       "query main = [a + b == 3/10, int(a), int(d * 1000), str(a)]\n")
    assert rs.run(state) == [True, 0, 2, "1/10"]


def test_a_decimal_is_read_exactly_whichever_way_it_comes_in(root: Path) -> None:
    """One definition of a decimal (``jsontext.exact_numbers``): a float from a Python caller (state,
    arguments, ``validate_state``), from a YAML case's state and from a YAML data file is the decimal
    it writes, as a JSON state's is: 0.1 + 0.2 == 3/10 and int(0.1) is 0 on every path."""
    from validator.tools.testing import load_suite, run_case

    rs = ruleset(root, 'import "d.yaml" as data\ninput a: any at "/a"\ninput b: any at "/b"\n'
                       "query main = [a + b == 3/10, int(a), str(b), data.x + data.y == 3/10, str(data.x)]\n"
                       "query arg(x) = [x + 1/5 == 3/10, str(x)]\n",
                 d__yaml="x: 0.1\ny: 0.2\n")
    want = [True, 0, "1/5", True, "1/10"]
    for engine in ("reference", "backend"):
        assert rs.run({"a": 0.1, "b": 0.2}, engine=engine) == want, engine  # the Python API
        assert rs.run({"a": 0.1, "b": 0.2}, engine=engine, validate=False) == want, engine
        assert rs.run({"a": 0, "b": 0}, query="arg", args=[0.1], engine=engine) == [True, "1/10"], engine
    (root / "cases.yaml").write_text("cases:\n  - id: yaml_state\n    ruleset: main.rules\n"
                                     "    state: {a: 0.1, b: 0.2}\n"
                                     '    expect: [true, 0, "1/5", true, "1/10"]\n')
    (case,) = load_suite([str(root / "cases.yaml")]).cases
    outcome = run_case(case)
    assert outcome.status == "passed", outcome.message
    # a schema's `multipleOf` sees the decimal too: 0.3 is a multiple of 0.1 (not of the float's 0.1)
    (root / "s.json").write_text('{"type": "object", "properties": {"a": {"multipleOf": 0.1}}}')
    strict = ruleset(root, 'schema "s.json"\ninput a: any at "/a"\nquery main = a\n', name="strict.rules")
    assert strict.state_schema_errors({"a": 0.3}) == [] and strict.run({"a": 0.3}) == "3/10"
    # and the quick check of a schema's bounds sees a decimal as the number it is
    from validator.core import jsontext

    (root / "b.json").write_text('{"type": "object", "properties": {"a": {"type": "number", "maximum": 1}}}')
    bounded = ruleset(root, 'schema "b.json"\ninput a: any at "/a"\nquery main = a\n', name="bounded.rules")
    for state in ({"a": 1.5}, jsontext.loads('{"a": 1.5}', "state.json")):
        assert [d.code for d in bounded.state_schema_errors(state)] == ["S002"], state


@pytest.mark.parametrize("query, refused, found", [("path_exists", False, True),
                                                    ("find_path", None, ["a", "b", "d", "e"])])
def test_path_search_asks_through_once_per_node(root: Path, query: str, refused: Any, found: Any) -> None:
    # `d` is met from `b` and from `c`, refused the first time: with three scripted dice (b, c, d), a
    # fourth question would run out of dice (E007)
    expr = f'{query}({GRAPH}, "a", "e", fn(n) => roll(1d6) > 3)'
    assert value(root, expr, dice=[6, 6, 1]) == refused
    assert value(root, expr, dice=[6, 6, 6]) == found


def test_path_exists_with_through(root: Path) -> None:
    inner = 'fn(n) => n in ["c", "d"]'
    out = value(root, f'[path_exists({GRAPH}, "a", "e"), path_exists({GRAPH}, "a", "e", {inner}), '
                      f'path_exists({GRAPH}, "a", "e", fn(n) => n == "c"), find_path({GRAPH}, "a", "e", {inner}), '
                      f'path_exists({GRAPH}, "a", "b", fn(n) => false)]')
    assert out == [True, True, False, ["a", "c", "d", "e"], True]


# ---------------------------------------------------------------- dice

def test_exact_two_d6_at_least_9(root: Path) -> None:
    out = value(root, "roll(2d6) >= 9", exact=True)
    probs = {o["result"]: Fraction(o["probability"]) for o in out["outcomes"]}
    assert probs == {True: Fraction(10, 36), False: Fraction(26, 36)}


def test_hit_dice_are_binomial(root: Path) -> None:
    from math import comb

    out = value(root, "roll(dice(4, [0, 0, 0, 0, 1, 1]))", exact=True)
    probs = {o["result"]: Fraction(o["probability"]) for o in out["outcomes"]}
    p = Fraction(1, 3)
    assert probs == {k: comb(4, k) * p**k * (1 - p) ** (4 - k) for k in range(5)}
    # odds over the dice's own denominator: 6^4 rolls, of which 2^k × 4^(4-k) × C(4, k) show k hits
    assert {o["odds"] for o in out["outcomes"]} == {"256/1296", "512/1296", "384/1296", "128/1296", "16/1296"}


def test_custom_faces_weigh_a_number_by_its_sides(root: Path) -> None:
    out = value(root, "roll(dice(2, [-1, 0, 1, 1]))", exact=True)
    probs = {o["result"]: Fraction(o["probability"]) for o in out["outcomes"]}
    assert probs == {-2: Fraction(1, 16), -1: Fraction(2, 16), 0: Fraction(5, 16), 1: Fraction(4, 16), 2: Fraction(4, 16)}


def test_scripted_and_seeded_dice(root: Path) -> None:
    # a scripted die gives the side rolled (1..sides); a custom die shows that side's number
    assert value(root, "[roll(2d6), roll(dice(3, [0, 0, 0, 0, 1, 1]))]", dice=[6, 3, 5, 1, 6]) == [9, 2]
    assert value(root, "roll(3d6)", seed=4) == value(root, "roll(3d6)", seed=4)
    assert value(root, "roll(dice(3, [10, 20]))", seed=4) in (30, 40, 50, 60)


@pytest.mark.parametrize("faces", ["[1]", "[]", "[1, true]", "[1, \"2\"]"])
def test_bad_faces_are_e011(root: Path, faces: str) -> None:
    assert eval_error(root, f"query main = roll(dice(2, {faces}))\n") == "E011"


def test_runaway_recursion_is_e005(root: Path) -> None:
    assert eval_error(root, "def down(n) = down(n + 1)\nquery main = down(0)\n") == "E005"


def test_hex_grid_numbered_from_zero_holds_100_by_100(root: Path) -> None:
    grid = value(root, "hex_grid(100, 100, \"odd-q\", 0)")
    assert len(grid) == 10_000 and "0000" in grid and "9999" in grid
    assert sorted(grid["0000"]) == ["0001", "0100"]  # a corner has two neighbours on an odd-q board
    assert value(root, "len(hex_grid(99, 99))") == 99 * 99
    assert eval_error(root, "query main = hex_grid(3, 3, \"odd-q\", 2)\n") == "E011"
    assert eval_error(root, "query main = hex_grid(100, 3)\n") == "E011"  # from 1, labels end at 99


def test_cell_override_changes_one_cell_of_an_extended_table(root: Path) -> None:
    (root / "base.rules").write_text(
        'table allowance[type, class] cite "A1" {\n'
        '  | type     | light | heavy |\n'
        '  | infantry | 2     | 1     |\n'
        '}\n'
        'table costs[k] cite "A1" = {woods: 2, clear: 1}\n'
        'query main = [allowance["infantry", "heavy"], allowance["infantry", "light"], costs["woods"], costs["clear"]]\n')
    (root / "errata.rules").write_text('extends "base.rules"\n'
                                       'override allowance["infantry", "heavy"] cite "E1" = 2\n'
                                       'override costs[woods] cite "E1" = 3\n')
    assert load_ruleset(root / "base.rules").run({}) == [1, 2, 2, 1]
    assert load_ruleset(root / "errata.rules").run({}) == [2, 2, 3, 1]


def test_cell_override_mistakes_are_located(root: Path) -> None:
    (root / "base.rules").write_text('table t[k] cite "A" {\n  | a | 1 |\n}\nquery main = t["a"]\n')
    (root / "bad.rules").write_text('extends "base.rules"\n'
                                    'override tt["a"] cite "E" = 2\n'
                                    'override t["a", "b"] cite "E" = 2\n'
                                    'override t["a"] = 2\n')
    (root / "alone.rules").write_text('table t[k] cite "A" {\n  | a | 1 |\n}\noverride t["a"] cite "E" = 2\n'
                                      'query main = t["a"]\n')
    codes = [(d.code, d.span.line) for d in load_ruleset(root / "bad.rules").diagnostics]
    assert ("C013", 2) in codes and ("C003", 3) in codes and ("C011", 4) in codes
    assert ("C013", 4) in [(d.code, d.span.line) for d in load_ruleset(root / "alone.rules").diagnostics]


def test_state_free_results_kept_across_runs_stay_right_and_cost_their_steps(root: Path) -> None:
    """A pure function of one argument keeps its results for the loaded ruleset's life; runs that
    read them still get the right values and are still stopped by a small step budget."""
    (root / "kept.rules").write_text(
        'def triangle(n) = sum(x for x in range(n + 1))\n'
        'input k: int at "/k"\n'
        'query main = [triangle(k), triangle(3)]\n')
    rs = load_ruleset(root / "kept.rules")
    assert rs.run({"k": 2000}) == [2001000, 6]
    assert rs.run({"k": 10}) == [55, 6]                      # another state, another argument
    assert rs.run({"k": 2000}) == [2001000, 6]               # served from what was kept
    with pytest.raises(RunError) as err:                      # kept, yet charged as if computed
        rs.run({"k": 2000}, budget=500)
    assert err.value.diagnostics[0].code == "E004"
    assert rs.run({"k": 2000}, explain=True) == [2001000, 6]  # traced runs compute afresh


def test_string_escapes(root: Path) -> None:
    assert value(root, r'["a\"b", "t\tn\n\r", "\u00e9\\", r"\d+"]') == ['a"b', "t\tn\n\r", "é\\", r"\d+"]
    (root / "bad.rules").write_text('query main = "x\\d"\n', encoding="utf-8")
    rs = load_ruleset(root / "bad.rules", use_cache=False)
    assert [(d.code, d.span.line, d.span.col) for d in rs.diagnostics] == [("P001", 1, 14)]
    assert "unknown escape" in rs.diagnostics[0].message


def test_the_run_after_the_state_check_rolls_its_own_dice(root: Path) -> None:
    """The run after `validate_state` takes over what the check computed on the same state (values,
    inputs), but nothing that rested on a die: the check rolls with its own seed, the run with the
    run's. A value that rolled (`r`), or one computed from an input whose default rolled (`big`),
    is the one a run without the check gives, seed by seed."""
    rs = ruleset(root, 'input x: int at "/x" default roll(1d1000)\ninput y: int at "/y" default 7\n'
                       "def r = roll(1d1000)\ndef big = x > 500\ndef y_ok = y > 0\n"
                       "query validate_state = if r > 0 and big in [true, false] and y_ok then [] "
                       'else [{pointer: "/y", message: "not positive"}]\n'
                       "query main = [x, r, big, y, y_ok]\n")
    runs = {s: rs.run({}, seed=s, validate=False) for s in range(1, 7)}
    assert len({tuple(v[:3]) for v in runs.values()}) > 1  # the seeds differ, so a roll of the check's would show
    for s, alone in runs.items():
        assert rs.run({}, seed=s) == alone
        assert alone[2] == (alone[0] > 500)
        fixed = {"x": 600, "y": 3}  # no input rolls: the values of no die are handed over
        assert rs.run(fixed, seed=s) == rs.run(fixed, seed=s, validate=False)
        assert rs.run(fixed, seed=s)[2:] == [True, 3, True]
    with pytest.raises(RunError) as exc:
        rs.run({"y": -1})
    assert exc.value.diagnostics[0].pointer == "/y"


def test_casefold_makes_two_spellings_of_a_name_one(root: Path) -> None:
    # composed and combining accents, any case, any script: one text; `lower` alone keeps them apart
    assert value(root, 'casefold("QUE\u0301BEC") == casefold("Québec")') is True
    assert value(root, 'lower("QUE\u0301BEC") == lower("Québec")') is False
    assert value(root, '[casefold("Straße"), casefold("ΣΊΣΥΦΟΣ"), casefold("Nördland")]') == ["strasse", "σίσυφοσ", "nördland"]
    assert eval_error(root, "query main = casefold(3)\n") == "E011"


def test_an_unknown_name_one_letter_from_enum_members_names_them_all(root: Path) -> None:
    """`DX` is one letter from `DE`, `DR` and `EX`, too short for the usual closeness measure: the help
    names every member one edit away (issue 44)."""
    (root / "a.rules").write_text('enum Outcome { AE, AR, EX, DR, DE }\nquery main = DX\n', encoding="utf-8")
    (d,) = [d for d in load_ruleset(root / "a.rules", use_cache=False).diagnostics if d.code == "C001"]
    assert d.help == "did you mean `DE`, `DR` or `EX`? (members of enum `Outcome`)"
    (root / "b.rules").write_text('enum Kind { foot, horse }\nquery main = foot == "hrose"\n',
                                  encoding="utf-8")
    (d,) = [d for d in load_ruleset(root / "b.rules", use_cache=False).diagnostics if d.code == "C016"]
    assert d.help == "did you mean `horse`? (a member of enum `Kind`)"


@pytest.mark.parametrize("engine", ["reference", "backend"])
@pytest.mark.parametrize("text, want", [
    ("const xs = [true, 1/2]\nquery main = xs[0] < xs[1]\n", "cannot compare `true` < `1/2`"),
    ("const xs = [none, [1, 2]]\nquery main = xs[1] < xs[0]\n", "cannot compare `[1, 2]` < `none`"),
])
def test_a_run_time_message_writes_values_in_the_language_s_notation(root: Path, engine: str, text: str,
                                                                       want: str) -> None:
    """Values in error messages are written as the language writes them, never in Python's spelling
    (`True`, `Fraction(1, 2)`, `None`)."""
    rs = ruleset(root, text)
    with pytest.raises(RunError) as exc:
        rs.run({}, engine=engine)
    assert [d.message for d in exc.value.diagnostics] == [want]


@pytest.mark.parametrize("engine", ["reference", "backend"])
@pytest.mark.parametrize("args", ["t(true), t(false)", "t(1/2), 0", "0, t(3/2)"])
def test_hex_label_takes_whole_coordinates_only(root: Path, engine: str, args: str) -> None:
    """A truth value or a fraction is no hex coordinate: `hex_label(true, false)` was "0100" and
    `hex_label(1/2, 0)` the label of 0 (Python's int() took them). (Hidden from the check, `t`, which
    refuses them where it sees them: tests/test_number_type.py.)"""
    assert eval_error(root, f"def t(x) = x\nquery main = hex_label({args})\n", engine=engine) == "E011"


@pytest.mark.parametrize("engine", ["reference", "backend"])
def test_a_function_that_rolls_keeps_its_memo_where_it_is_named_once(root: Path, engine: str) -> None:
    # (the backend leaves out a memo that cannot be seen, for a function named once in a value; one that
    # rolls a die, directly or through another, must keep it: the docs promise one roll per arguments)
    rs = ruleset(root, "def r(x) = roll(1d1000)\ndef d(x) = roll(1d1000)\ndef s(x) = d(x) + 0\n"
                       "def v = [[r(i) for i in [1, 1, 1]], [s(i) for i in [2, 2, 2]]]\nquery main = v")
    for seed in range(5):
        direct, through = rs.run({}, engine=engine, seed=seed)
        assert len(set(direct)) == 1 and len(set(through)) == 1, (seed, direct, through)


STATE_SCHEMA_TYPO = ('{"$schema": "https://json-schema.org/draft/2020-12/schema",\n "type": "object",\n'
                     ' "properties": {"n": {"type": 5}}}')


def test_a_state_schema_that_breaks_its_meta_schema_is_found_by_the_check(root: Path) -> None:
    # where jsonschema would raise at the first run: `check` (and CI) must say it, at the place in the file
    found = findings(root, 'schema "s.json"\nquery main = 1\n', s__json=STATE_SCHEMA_TYPO)
    assert found == [("C015", "s.json", 3, 31, "/properties/n/type",
                      'the state schema is invalid: expected "array", "boolean", "integer", "null", "number", '
                      '"object", "string" or a list, got 5')]  # (jsonschema's own words: `5 is not valid under any
    # of the given schemas`, which name neither what was wanted nor where the alternatives are)
    rs = load_ruleset(root / "main.rules", use_cache=False, check_cache=False)
    assert [r.span.line for d in rs.diagnostics for r in d.related] == [1]  # the `schema` directive
    with pytest.raises(RunError) as refused:  # a ruleset with an error runs nothing, and says why
        rs.run({"n": 1}, "main")
    assert [d.code for d in refused.value.diagnostics] == ["C015"]
    assert [d.code for d in rs.state_schema_errors({"n": 1})] == ["C015"]  # not a fast check's "certainly valid"


def test_a_state_schema_with_a_pattern_re2_cannot_run_is_found_by_the_check(root: Path) -> None:
    schema = ('{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",'
              ' "properties": {"n": {"type": "string", "pattern": "(?=a)a"}}}')
    found = findings(root, 'query main = 1\nschema "s.json"\n', s__json=schema)
    assert [f[:5] for f in found] == [("C015", "s.json", 1, 129, "/properties/n/pattern")]
    assert found[0][5].startswith('the state schema is invalid: expected the format "regex", got "(?=a)a"')


@pytest.mark.parametrize("schema, at", [
    ('{"$ref": "#"}', "/$ref"),
    ('{"if": {"$ref": "#"}, "then": {"type": "object"}}', "/if/$ref"),
    ('{"$defs": {"a": {"allOf": [{"$ref": "#/$defs/b"}]}, "b": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/a"}]}},\n'
     ' "properties": {"n": {"$ref": "#/$defs/a"}}}', "/$defs/a/allOf/0/$ref"),
])
def test_a_state_schema_whose_check_would_never_end_is_found_by_the_check(root: Path, schema: str, at: str) -> None:
    # a reference that comes back to itself without reading into the value: jsonschema would recurse until
    # Python stops it, and every state would be refused as "nested too deeply" (S001), blaming the state
    text = '{"$schema": "https://json-schema.org/draft/2020-12/schema", ' + schema[1:]
    found = findings(root, 'schema "s.json"\nquery main = 1\n', s__json=text)
    assert [(f[0], f[1], f[4]) for f in found] == [("C015", "s.json", at)]
    assert found[0][5] == ("the state schema refers back to itself without reading into the value: "
                           "checking a state would never end")
    rs = load_ruleset(root / "main.rules", use_cache=False, check_cache=False)
    assert [d.code for d in rs.state_schema_errors({"n": "x"})] == ["C015"]


@pytest.mark.parametrize("schema", [
    '{"$defs": {"t": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/t"}}}}},'
    ' "$ref": "#/$defs/t"}',  # (a tree: each reference reads into the value first)
    '{"properties": {"n": {"$ref": "#"}}}',
    '{"enum": [{"$ref": "#"}]}',  # (a value, not a schema)
    '{"$defs": {"d": {"$id": "https://example.com/d", "allOf": [{"$ref": "#"}], "type": "object",'
    ' "properties": {"n": {}}}}, "type": "object"}',  # (`#` inside `$id` is another document: not followed)
])
def test_a_state_schema_whose_references_read_into_the_value_is_usable(root: Path, schema: str) -> None:
    text = '{"$schema": "https://json-schema.org/draft/2020-12/schema", ' + schema[1:]
    assert findings(root, 'schema "s.json"\nquery main = 1\n', s__json=text) == []
