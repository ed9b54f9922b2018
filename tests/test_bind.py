"""The binding stage (``validator.lang.bind``, issue 41): what each global name means is decided once
per unit, beside the shared AST, and the engines read it instead of looking names up."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from validator.api import load_ruleset
from validator.lang import ast as A
from validator.lang import bind

BASE = 'ruleset t.base\ndef bonus = 1\ndef strength(n) = n + bonus\nquery main = strength(1)\n'
# the base's `strength` is one declaration object, read in two namespaces: the variant's (where
# `bonus` is the override) and the imported module's (where it is the base's own)
VARIANT = '''ruleset t.variant
extends "base.rules"
import "base.rules" as std
override def bonus = 10
query both = {mine: strength(1), theirs: std.strength(1), lam: [fn(bonus) => bonus * 2][0](3),
              comp: [bonus for bonus in [7]], member: std.bonus}
'''
WANT = {"mine": 11, "theirs": 2, "lam": 6, "comp": [7], "member": 1}


def _load(root: Path) -> Any:
    (root / "ruleval.toml").write_text("")
    (root / "base.rules").write_text(BASE)
    (root / "variant.rules").write_text(VARIANT)
    rs = load_ruleset(root / "variant.rules", use_cache=False)
    assert not [d for d in rs.diagnostics if d.is_error], [str(d) for d in rs.diagnostics]
    return rs


@pytest.mark.parametrize("engine", ["reference", "backend"])
def test_a_shared_declaration_is_bound_in_each_namespace_that_reads_it(tmp_path: Path, engine: str) -> None:
    rs = _load(tmp_path)
    assert rs.run({}, query="both", engine=engine) == WANT
    program = rs.program
    units = [u for u in program.units.values() if u.name == "strength"]
    assert len(units) == 2 and units[0].decl is units[1].decl  # one declaration, two units
    assert program.entry.key in {u.ns for u in units}
    for unit in units:  # `bonus` is its own namespace's: the variant's override, or the module's own
        [name] = [n for n in _names(unit.decl) if n.id == "bonus"]
        ref = unit.bound[id(name)]
        assert isinstance(ref, bind.UnitRef) and ref.unit.ns == unit.ns and ref.unit.name == "bonus"


@pytest.mark.parametrize("engine", ["reference", "backend"])
def test_no_name_is_looked_up_once_the_units_are_bound(tmp_path: Path, engine: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    rs = _load(tmp_path)
    assert rs.run({}, query="both", engine=engine) == WANT

    def looked_up(*args: Any) -> Any:
        raise AssertionError(f"a name looked up while a rule runs: {args[-1]}")

    monkeypatch.setattr(bind, "meaning", looked_up)
    assert rs.run({}, query="both", engine="reference") == WANT
    assert rs.run({}, query="both", engine="backend") == WANT


def test_each_local_is_a_slot_and_each_global_a_referee(tmp_path: Path) -> None:
    rs = _load(tmp_path)
    program = rs.program
    both = program.units[(program.entry.key, "both")]
    bound = both.bound
    kinds = {n.id: type(bound.get(id(n))).__name__ for n in _names(both.decl)}
    # `bonus` is a lambda's parameter and a comprehension's name there; `std` a module
    assert kinds == {"bonus": "Local", "strength": "UnitRef", "std": "ModuleRef"}
    lam = next(x for x in _walk(both.decl) if isinstance(x, A.Lambda))
    comp = next(x for x in _walk(both.decl) if isinstance(x, A.Comp))
    # the two `bonus` are two locals: each read is bound to its own binder's slot
    assert bound[id(lam.body.left)] == bound[id(lam.params[0])] != bound[id(comp.fors[0])] == bound[id(comp.elem)]


SHADOW = '''ruleset t.shadow
def x = 100
def y = 1000
def f(x) = let g = fn(y) => x + y + (let x = 1; x); [g(y) for y in [10, 20]] + [g(5)]
def adders(n) = [fn(k) => k + i for i in range(n)]
def late(n) = let fs = adders(n); [f(7) for f in fs]
query main = {f: f(2), late: late(3), outer: [x, y],
              nested: (fn(a) => fn(b) => (fn(a) => a + b)(a * 10))(4)(5),
              pass_self: let h = fn(self, m) => if m == 0 then 0 else self(self, m - 1) + m; h(h, 4)}
'''
SHADOW_WANT = {"f": [13, 23, 8], "late": [7, 8, 9], "outer": [100, 1000], "nested": 45, "pass_self": 10}


@pytest.mark.parametrize("engine", ["reference", "backend"])
def test_locals_read_their_own_slot(tmp_path: Path, engine: str) -> None:
    """A local shadowing a global, a `let` shadowing a parameter inside a lambda, a lambda reading an
    outer local, lambdas made in a loop each keeping their turn's value, a lambda returned by a lambda
    reading its maker's parameter, a lambda calling itself (each call's parameter read after the call
it makes): each read is its own binder's slot, on both engines."""
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "shadow.rules").write_text(SHADOW)
    rs = load_ruleset(tmp_path / "shadow.rules", use_cache=False)
    assert not [d for d in rs.diagnostics if d.is_error], [str(d) for d in rs.diagnostics]
    assert rs.run({}, engine=engine) == SHADOW_WANT


@pytest.mark.parametrize("engine", ["reference", "backend"])
def test_no_local_is_looked_up_by_its_name(tmp_path: Path, engine: str) -> None:
    """Once bound, the locals' names could be anything: the runs read slots, never names (the names
    of every binder and every local read are changed under the engines, then put back)."""
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "shadow.rules").write_text(SHADOW)
    rs = load_ruleset(tmp_path / "shadow.rules", use_cache=False)
    program = rs.program
    changed: list[tuple[Any, str, Any]] = []
    for unit in program.units.values():
        for node in _walk(unit.decl):
            if isinstance(node, A.Name) and isinstance(unit.bound.get(id(node)), bind.Local):
                changed.append((node, "id", node.id))
            elif isinstance(node, (A.Let, A.Param)):
                changed.append((node, "name", node.name))
            elif isinstance(node, A.CompFor):
                changed.append((node, "names", node.names))
    assert len(changed) > 20
    try:
        for node, attr, value in changed:
            object.__setattr__(node, attr, ("#renamed",) * len(value) if attr == "names" else "#renamed")
        assert rs.run({}, engine=engine) == SHADOW_WANT
    finally:
        for node, attr, value in changed:
            object.__setattr__(node, attr, value)


def _walk(node: Any) -> list[Any]:
    if isinstance(node, tuple):
        return [n for x in node for n in _walk(x)]
    if isinstance(node, A.Node):
        return [node, *(n for f in node._compared for n in _walk(getattr(node, f)))]
    return []


def _names(node: Any) -> list[A.Name]:
    if isinstance(node, A.Name):
        return [node]
    if isinstance(node, tuple):
        return [n for x in node for n in _names(x)]
    if isinstance(node, A.Node):
        return [n for f in node._compared for n in _names(getattr(node, f))]
    return []


def test_the_type_pass_keeps_each_node_s_type_beside_the_binding(tmp_path: Path) -> None:
    """The type pass walks with the binder's scopes (``bind.Walker``): a local's reads have the type
    of what binds it, and every expression node's type is kept per unit, by the node's identity."""
    from validator.lang.types import node_types, show

    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "typed.rules").write_text('def x = "text"\n'
                                          'def f(x: int) = let m = x + 1; [m * 2 for k in ["a"]] + [len(k) for k in [[x]]]\n'
                                          'query main = f(2)\n')
    rs = load_ruleset(tmp_path / "typed.rules", use_cache=False)
    assert not [d for d in rs.diagnostics if d.is_error], [str(d) for d in rs.diagnostics]
    program = rs.program
    unit = program.units[(program.entry.key, "f")]
    types, bound = node_types(program, unit), unit.bound
    shown = [f"{type(n).__name__} {getattr(n, 'id', '')}: {show(types[id(n)])}" for n in _walk(unit.body)
             if id(n) in types]
    assert shown == ["Let : list[int]", "BinOp : int", "Name x: int", "Int : int", "BinOp : list[int]",
                     "Comp : list[int]", "BinOp : int", "Name m: int", "Int : int", "ListLit : list[str]", "Str : str",
                     "Comp : list[int]", "Call : int", "Name k: list[int]", "ListLit : list[list[int]]",
                     "ListLit : list[int]", "Name x: int"]  # (the second `k` is the second loop's)
    reads = [n for n in _walk(unit.body) if isinstance(n, A.Name) and n.id in ("x", "m", "k")]
    assert all(isinstance(bound[id(n)], bind.Local) for n in reads)  # (`x` the parameter, not the global text)
    assert rs.run({}) == [6, 1]


# ---------------------------------------------------------------- units carry typed fields

TABLES = '''ruleset t.tables
table odds[ratio, roll] -> int cite "T" {
  | ratio | "1" | "2" |
  | "1:1" | 10  | 20  |
  | "2:1" | 30  | 40  |
}
const base_bonus cite "T" = 1
input level: int at "/level" default 2
input name: str at "/name"
rule score(r, n) cite "T" = odds[r, n] + base_bonus + level
decision a(k) cite "T" = b(k)
decision b(k) cite "T" = not a(k)
cycle a, b cite "T" {
  when any(c.decision == "b" for c in cycle) => settle [c for c in cycle if c.decision == "b"] as true cite "T"
}
procedure act(n) cite "T" {
  var total = 0
  step add cite "T" {
    for i in range(n) { total := total + odds["2:1", "1"] }
    if total > 50 { goto done }
  }
  step more cite "T" {
    total := total + 1
  }
  step done cite "T" {
    emit "added" {total: total}
  }
}
query main = {score: score("1:1", "2"), over: score("2:1", "2"), name: name, cycle: [a(1), b(1)], act: act(2).total}
'''
ERRATA = '''ruleset t.errata
extends "tables.rules"
override odds["2:1", "2"] cite "T" = 99
'''
WANT_TABLES = {"score": 20 + 1 + 5, "over": 99 + 1 + 5, "name": "x", "cycle": [True, True], "act": 60,
               "events": [{"cites": ["T"], "event": "added", "step": "done", "total": 60}]}


@pytest.mark.parametrize("engine", ["reference", "backend"])
def test_the_engines_read_the_units_typed_fields_not_their_declarations(tmp_path: Path, engine: str) -> None:
    """Every unit's declaration replaced, once the program is built and bound, by a blank one of the
    same kind (no field at all): a run reads only what the unit carries (its body, parameters, merged
    cells, cycle policy, span, clauses), so it gives what it gave before."""
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "tables.rules").write_text(TABLES)
    (tmp_path / "errata.rules").write_text(ERRATA)
    rs = load_ruleset(tmp_path / "errata.rules", use_cache=False)
    assert not [d for d in rs.diagnostics if d.is_error], [str(d) for d in rs.diagnostics]
    state = {"level": 5, "name": "x"}
    assert rs.run(state, engine=engine) == WANT_TABLES
    program = rs.program
    odds = program.units[(program.entry.key, "odds")]
    # the table's cells: the grid with the errata's override merged, by the keys a lookup gives
    assert {k: getattr(c, "value", None) for k, c in odds.cells.items()} == {
        ("1:1", "1"): 10, ("1:1", "2"): 20, ("2:1", "1"): 30, ("2:1", "2"): 99}
    assert program.units[(program.entry.key, "a")].policy is program.units[(program.entry.key, "cycle a,b")]
    fresh = load_ruleset(tmp_path / "errata.rules", use_cache=False)
    for unit in fresh.program.units.values():
        unit.decl = object.__new__(type(unit.decl))  # type: ignore[assignment]
    assert fresh.run(state, engine=engine) == WANT_TABLES


def test_binding_is_the_checks_first_pass_and_arities_and_tables_are_passes_of_their_own(tmp_path: Path) -> None:
    """Every unit is bound as the program is made, before anything runs (``program.PASSES`` begins
    with it; a load whose check is kept binds each at its first need: tests/test_fresh_caches.py); arities
    and tables are passes of their own over the bound program, each with its diagnostics."""
    from validator.lang import program as P

    assert [name for name, _ in P.PASSES][:5] == ["binding", "reference graph", "names", "arities", "tables"]
    rs = _load(tmp_path)
    both = rs.program.units[(rs.program.entry.key, "both")]
    assert any(isinstance(r, bind.UnitRef) and r.unit.name == "strength" for r in both.bound.values())
    (tmp_path / "bad.rules").write_text('table t[k] -> int cite "X" {\n  | "a" | 1 |\n  | "a" | 2 |\n}\n'
                                        'table s[k] -> int cite "X" {\n  | "a" | 1 |\n}\n'
                                        'def f(x) = x\nquery main = [f(1, 2), t["a", "b"], s["z"]]\n')
    found = load_ruleset(tmp_path / "bad.rules", use_cache=False).program
    seen = {}
    for name, check in P.PASSES:
        if name in ("arities", "tables"):
            before = len(found.diagnostics)
            check(found)
            seen[name] = sorted(d.code for d in found.diagnostics[before:])
    assert seen == {"arities": ["C003", "C003"], "tables": ["C009", "C029"]}


@pytest.mark.parametrize("engine", ["reference", "backend"])
def test_no_step_or_cycle_policy_is_looked_up_by_name(tmp_path: Path, engine: str) -> None:
    """A `goto` carries its step and a decision its cycle policy's unit from binding on: with every
    `goto`'s target renamed and every policy's unit filed under another key, runs give what they gave."""
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "tables.rules").write_text(TABLES)
    (tmp_path / "errata.rules").write_text(ERRATA)
    rs = load_ruleset(tmp_path / "errata.rules", use_cache=False)
    state = {"level": 5, "name": "x"}
    units = rs.program.units
    gotos = [n for u in units.values() for n in _walk(u.stmts) if isinstance(n, A.Goto)]
    policies = [k for k, u in units.items() if u.cycle is not None]
    assert gotos and policies
    for g in gotos:
        object.__setattr__(g, "target", "#renamed")
    for ns, name in policies:
        units[(ns, "#" + name)] = units.pop((ns, name))
    try:
        assert rs.run(state, engine=engine) == WANT_TABLES
    finally:
        for g in gotos:
            object.__setattr__(g, "target", "done")


NESTED = '''ruleset t.nested
procedure inner(n) cite "T" {
  var k = n
  step only cite "IN" { emit "inner" {k: k} }
}
procedure outer(n) cite "T" {
  var total = 0
  step last cite "C" {
    total := inner(n).k
    emit "after" {total: total}
  }
}
query main = outer(3)
'''


@pytest.mark.parametrize("engine", ["reference", "backend"])
def test_an_emit_after_a_procedure_call_keeps_its_step_and_clauses(tmp_path: Path, engine: str) -> None:
    """An `emit` is bound to the step it stands in: after a call of another procedure it still names
    its step and cites its clauses (it gave `step: none` and no clauses when its step was found by
    the name of the step running, which the inner procedure had cleared)."""
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "nested.rules").write_text(NESTED)
    rs = load_ruleset(tmp_path / "nested.rules", use_cache=False)
    assert not [d for d in rs.diagnostics if d.is_error], [str(d) for d in rs.diagnostics]
    assert rs.run({}, engine=engine)["events"] == [{"event": "inner", "step": "only", "cites": ["IN"], "k": 3},
                                                   {"event": "after", "step": "last", "cites": ["C"], "total": 3}]


MALFORMED = '''ruleset t.malformed
table three[a, b, c] -> int cite "X" {
  | x | y | z |
  | p | 1 | 2 |
}
table one[a] -> int cite "X" {
  | p | q | 1 |
  | r | 2 |
}
table two[a, b] -> int cite "X" {
  | - | c1 | c2 |
  | r1 | nothing |
  | r2 | 1 | 2 |
}
table bare[a, b] -> int cite "X" {
  | - | c1 |
}
query main = [three["p", "q", "r"], one["r"], two["r2", "c1"], bare["a", "b"]]
'''


def test_a_malformed_table_gives_its_C009_only(tmp_path: Path) -> None:
    """A grid the tables pass refuses (C009: three keys, a row of the wrong length, no rows) says so,
    and nothing else: its misshapen rows' cells are not read as names (C001 `y`, `q`, `nothing`), its
    lookups' keys are not checked against rows it does not have (C029), and a lookup of a three-key
    grid with literal keys is no internal error."""
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "malformed.rules").write_text(MALFORMED)
    found = load_ruleset(tmp_path / "malformed.rules", use_cache=False).diagnostics
    assert sorted((d.code, d.span.line) for d in found if d.is_error) == [("C009", 2), ("C009", 7), ("C009", 12),
                                                                          ("C009", 15)]


RUNAWAY = '''ruleset t.runaway
def spin(spin, n) = spin(spin, n + 1)
def twice(f, n) = f(f, n + 1)
query shadowed = spin(spin, 0)
query passed = twice(twice, 0)
'''


@pytest.mark.parametrize("engine", ["reference", "backend"])
@pytest.mark.parametrize("query, unit", [("shadowed", "spin"), ("passed", "twice")])
def test_a_runaway_recursion_through_a_function_value_stops_in_its_unit(tmp_path: Path, engine: str, query: str,
                                                                       unit: str) -> None:
    """A function that calls itself through a value (its parameter, named like it or not) is on no
    cycle of the reference graph, as a local that shadows a global is no reference: it is counted
    toward the depth limit because it is named as a value, so the runaway is the depth limit's E005
    in that function (not the interpreter's own stack, reported at the query)."""
    from validator.api import RunError

    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "runaway.rules").write_text(RUNAWAY)
    rs = load_ruleset(tmp_path / "runaway.rules", use_cache=False)
    assert not [d for d in rs.diagnostics if d.is_error], [str(d) for d in rs.diagnostics]
    found = rs.program.units[(rs.program.entry.key, unit)]
    assert found.counted and not found.recursive
    with pytest.raises(RunError) as raised:
        rs.run({}, query=query, engine=engine)
    [d] = raised.value.diagnostics
    assert (d.code, d.span.line) == ("E005", 2 if unit == "spin" else 3) and f"(in `{unit}`)" in d.message


def test_the_functions_named_as_values_are_those_some_node_names_so(tmp_path: Path) -> None:
    """``program.escaped`` reads, per unit, the names and members its sites name somewhere as a value
    (``Sites.valued``, kept per declaration) against what each means (``Unit.globals``): the same
    functions as every name and member node not called nor looked up, read against ``Unit.bound``."""
    from validator.lang import program as P
    from validator.lang.bind import UnitRef, sites

    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "lib.rules").write_text('ruleset t.lib\ndef f(x) = x\ndef g(x) = x + 1\nquery main = f(1)\n')
    (tmp_path / "use.rules").write_text(RUNAWAY.replace("ruleset t.runaway\n", 'ruleset t.use\nimport "lib.rules" as lib\n')
                                        + "query member = let h = lib.f; h(lib.g(1))\n")
    root = Path(__file__).resolve().parent.parent
    paths = [tmp_path / "use.rules", *(root / "rulesets" / f for f in ("diplomacy/standard.rules", "jomini/re.rules",
                                                                       "his/his.rules"))]
    for path in paths:
        rs = load_ruleset(path, use_cache=False)
        assert not [d for d in rs.diagnostics if d.is_error], path
        program = rs.program
        by_nodes = {(ref.unit.ns, ref.unit.name) for unit in program.units.values() for found in sites(unit)
                    for nodes in (*found.names.values(), *found.fields.values()) for node in nodes
                    if node not in found.used and isinstance(ref := unit.bound.get(node), UnitRef)
                    and ref.unit.arity is not None}
        assert {(u.ns, u.name) for u in P.escaped(program)} == by_nodes, path
        if path.name == "use.rules":
            assert {name for _, name in by_nodes} == {"spin", "twice", "f"}


def test_a_program_and_its_units_are_written_short(tmp_path: Path) -> None:
    """A failing test's report writes what it holds: a program or unit written as a dataclass (every
    field: bindings, types, the loaded ruleset) could run a test worker out of memory."""
    program = _load(tmp_path).program
    unit = program.units[(program.entry.key, "strength")]
    assert repr(unit) == f"<def {program.entry.key}:strength>"
    assert repr(program) == f"<program {program.entry.key}: {len(program.units)} units>"
    assert max(len(repr(u)) for u in program.units.values()) < 200 and len(repr(program)) < 200
