"""The checked program: the units of a loaded ruleset and its ``PASSES``, in order: binding (what
every global name in every unit means, ``bind``), the reference graph (which unit names which,
``Program.refs``, and so what each may do: recur, read decisions, depend on the state), names
(unknown names with "did you mean", duplicate fields and parameters, missing citations), arities,
tables, steps, statements. The passes of ``checker`` then add what needs the whole program (types,
citations, unused names). The engines (``reference``, ``backend``) run a program that checked
without errors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Collection, Iterator, Sequence, Union, cast

from . import ast as A
from ..lib.builtins import BUILTINS
from ..lib.patterns import check as pattern_problem
from ..core.diagnostics import Diagnostic, Related, Span, Suggestions, closest_name
from ..lib.values import as_key
from .bind import (binding, checks_key, grid_cells, sites, table_key, BuiltinRef, DataRef, Meanings, Member, ModuleRef,
                   Referee, Scope, TypeRef, UnitRef, Walker)
from .loader import Loaded, Namespace, decl_key, kind_of

DICE_BUILTINS = frozenset({"roll"})
DEFS = ("def", "rule")  # the kinds of a `def` (``Unit.kind``)


UnitDecl = Union[A.InputDecl, A.ConstDecl, A.TableDecl, A.DefDecl, A.DecisionDecl, A.CycleDecl, A.ProcedureDecl,
                 A.QueryDecl]


@dataclass
class Unit:
    """One definition of a namespace: what the passes and engines read of it, read off its declaration
    once (``build_program``)."""

    ns: str
    name: str
    # its declaration as written, shared by the variants of a base ruleset and a module imported twice:
    # only the key of what is kept per declaration (``bind.sites``, the names pass's ``_RESOLVED``, the
    # data check's run key), never read (the fields below are what it says)
    decl: object
    kind: str  # as messages name it: "def", "rule", "const", "input", "table", "decision", "cycle policy", ...
    span: Span
    cites: tuple[str, ...]
    params: tuple[A.Param, ...]
    arity: int | None  # None: a value, not a function
    ret: A.TypeRef | None  # the declared result (a const's or an input's type)
    # what it computes: a definition's, decision's or query's body, a const's value, an input's default,
    # a table's source (read where no cell has the keys)
    body: A.Expr | None
    stmts: tuple[A.Stmt, ...] = ()  # a procedure's
    cells: dict[tuple[Any, ...], A.Expr] = field(default_factory=dict)  # a table's (``table_cells``)
    grid: tuple[tuple[A.Expr, ...], ...] = ()  # a table's rows as written (a two-key table's header first)
    overrides: tuple[A.CellOverride, ...] = ()  # a table's: a variant's `override t[...]`, in order
    policy: Unit | None = None  # a decision's cycle policy (the first that names it)
    cycle: A.CycleDecl | None = None  # a cycle policy's own: the decisions it names, its policies
    pointer: str = ""  # an input's place in the state
    index: int = 0  # its number in the program: the memo keys of both engines name a unit by it
    used: bool = False  # named somewhere (for W101)
    uses_decisions: bool = False  # reads a decision, directly or through others
    rolls: bool = False  # its code names a built-in that rolls dice
    # reads no input, decision, procedure or die and calls nothing that may recur, directly or through
    # others: what it gives is the same in every run (see `reference`, "state-free definitions")
    state_free: bool = False
    recursive: bool = False  # lies on a cycle of the reference graph
    # its calls count toward the depth limit: a decision on a cycle, a unit on a cycle that passes
    # through no decision, or a function named as a value (``escaped``: its calls through the value
    # make no cycle of the graph). Every cycle so has a counted unit, and only cycles and function
    # values can nest without end; a chain of decisions (each move waiting for the next) counts one
    # call per decision
    counted: bool = False
    bound: dict[int, Referee] = field(default_factory=dict)  # what its nodes name (``bind.binding``)
    globals: tuple[Referee | None, ...] = ()  # what each global name and module member it writes means, each once
    # each namespace's meanings, shared by the program's units, from which it is bound (``bind``)
    meanings: dict[str, Meanings] | None = field(default=None, compare=False)
    types: dict[int, Any] | None = None  # its expression nodes' types (``types.node_types``), by node identity
    sites: list[Any] | None = None  # its code's sites (``bind.sites``), kept at the first need
    # the context its names, arity and type checks share, made at the first (``bind.checks_key``)
    checks_key: tuple[tuple[Any, ...], list[Any], tuple[Any, ...]] | None = None

    def bind(self) -> tuple[dict[int, Referee], tuple[Referee | None, ...]]:
        """The unit bound (``bound``, ``globals``) from its program's ``meanings``; a unit waiting for its
        first need of them (``bind_units``) is a plain ``Unit`` from then on."""
        found = binding(self, self.meanings) if self.meanings is not None else ({}, ())
        vars(self)["bound"], vars(self)["globals"] = found
        self.checks_key = None  # (made again from these at its first need)
        if type(self) is not Unit:
            self.__class__ = Unit
        return found

    @property
    def written(self) -> str:
        """Its name as written (what an override replaces is kept as `base of NAME`)."""
        return self.name.rpartition("base of ")[2]

    def __repr__(self) -> str:  # (a dataclass's writes every field: a failing test's report of a unit ran out of memory)
        return f"<{self.kind} {self.ns}:{self.name}>"


class _Unbound:
    """``bound`` (0) or ``globals`` (1) of a unit not bound yet (``_LazyUnit``): read, it binds the unit."""

    def __init__(self, at: int, name: str):
        self.at, self.name = at, name

    def __get__(self, unit: Unit | None, owner: Any = None) -> Any:
        return self if unit is None else unit.bind()[self.at]

    def __set__(self, unit: Unit, value: Any) -> None:
        vars(unit)[self.name] = value


class _LazyUnit(Unit):
    """A unit bound at the first need of its binding (``bind_units``), when it becomes a plain ``Unit``:
    a class apart, so that reading a bound unit's fields stays a plain attribute read (a descriptor on
    ``Unit`` itself would keep CPython from specialising every read of ``bound``: a cold check 0.5 %
    more instructions)."""

    bound = _Unbound(0, "bound")  # type: ignore[assignment]
    globals = _Unbound(1, "globals")  # type: ignore[assignment]


@dataclass
class Program:
    loaded: Loaded
    units: dict[tuple[str, str], Unit] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    refs: dict[tuple[str, str], set[tuple[str, str]]] = field(default_factory=dict)  # unit -> units it names

    enums: dict[str, dict[str, str]] = field(default_factory=dict)  # per namespace: member -> its enum
    # whether a run may roll dice: some unit names a dice built-in (``Unit.rolls``, both set by ``analyse``);
    # one that cannot never holds a die, so no value of it is forced, and its runs read no dice
    rolls: bool = False

    def __repr__(self) -> str:  # (as ``Unit.__repr__``)
        return f"<program {self.entry.key}: {len(self.units)} units>"

    @property
    def entry(self) -> Namespace:
        return self.loaded.entry

    def members(self, nskey: str) -> dict[str, str]:
        """The enum members a namespace's code may name, each with its enum's name."""
        found = self.enums.get(nskey)
        if found is None:
            found = self.enums[nskey] = {m: d.name for d in self.loaded.namespaces[nskey].defs.values()
                                         if isinstance(d, A.EnumDecl) for m in d.members}
        return found

    def query(self, name: str) -> Unit | None:
        unit = self.units.get((self.entry.key, name))
        if unit is not None and unit.kind == "query":
            return unit
        return None

    def queries(self) -> list[str]:
        return sorted(n for (ns, n), u in self.units.items() if ns == self.entry.key and u.kind == "query")

    def missing_query(self, name: str, path: str) -> tuple[Span, str]:
        """Where a run of a query the program lacks is said (E008), and its help: at the query of the
        closest name, the one likely meant (`did you mean`); else at the `ruleset` line of the entry
        file ``path`` (the ruleset that lacks it, where it declares itself), else that file's first line."""
        known = self.queries()
        close = closest_name(name, known)
        listed = f"queries: {', '.join(known) or 'none'}"
        unit = self.query(close) if close is not None else None
        if unit is not None and unit.span.line:
            return unit.span, f"did you mean `{close}`? {listed}"
        header = self.entry.header
        return (header.span if header is not None and header.span.line else Span(path, 1, 1)), listed

    def inputs(self) -> list[Unit]:
        return [u for u in self.units.values() if u.kind == "input"]


def build_program(loaded: Loaded, checks: bool = True, graph: Any = None) -> Program:
    """The program of ``loaded``, through ``PASSES``; without ``checks``, only the passes that make what
    the engines read (binding and the reference graph, the first ``MAKING``): the others give findings
    alone, which a caller holding them already (a load's check cache entry) need not make again, and
    ``check_program`` runs them later. Given ``graph``, the reference graph a load of the same files
    found (``graph_json``, kept with its check), that graph is taken (``kept_graph``) and each unit bound
    at its first need (``bind_units``), if it fits the program; else both are made."""
    program = Program(loaded)
    for ns in loaded.namespaces.values():
        for key, d in ns.defs.items():
            if not isinstance(d, (A.EnumDecl, A.RecordDecl)):
                program.units[(ns.key, key)] = unit = _unit(ns, key, d)
                unit.index = len(program.units)
    for (nskey, _), unit in program.units.items():
        for name in unit.cycle.names if unit.cycle is not None else ():
            target = program.units.get((nskey, name))
            if target is not None and target.policy is None:
                target.policy = unit
    if graph is not None and not checks and kept_graph(program, graph):
        bind_units(program, lazily=True)
        return program
    for _name, check in PASSES if checks else PASSES[:MAKING]:
        check(program)
    return program


def check_program(program: Program) -> None:
    """The passes of ``PASSES`` that ``build_program`` left out without ``checks``: their findings are
    added to ``program.diagnostics``."""
    for _name, check in PASSES[MAKING:]:
        check(program)


_BODY = {A.ConstDecl: "value", A.InputDecl: "default", A.TableDecl: "source"}  # (the field of the unit's code)


def _unit(ns: Namespace, key: str, d: UnitDecl) -> Unit:
    params = getattr(d, "params", None)
    body = _BODY.get(type(d), "body")
    unit = Unit(ns.key, key, d, kind_of(d), d.span, getattr(d, "cites", ()), params or (),
                None if params is None else len(params), getattr(d, "ret", None) or getattr(d, "type", None),
                None if isinstance(d, (A.ProcedureDecl, A.CycleDecl)) else getattr(d, body))
    if isinstance(d, A.ProcedureDecl):
        unit.stmts = d.body
    elif isinstance(d, A.TableDecl):
        unit.grid, unit.overrides = d.grid or (), tuple(ns.cell_overrides.get(key, ()))
        unit.cells = table_cells(unit)
    elif isinstance(d, A.InputDecl):
        unit.pointer = d.pointer
    elif isinstance(d, A.CycleDecl):
        unit.cycle = d
    return unit


# ---------------------------------------------------------------- the reference graph


def analyse(program: Program) -> None:
    """What the reference graph says of each unit: it is used (named somewhere, or a cycle policy), it
    may recur (and which count toward the depth limit), it reads decisions, it is state-free."""
    program.refs = refs = {k: {(r.unit.ns, r.unit.name) for r in u.globals if isinstance(r, UnitRef)}
                           for k, u in program.units.items()}
    named = set().union(*refs.values())
    for k, u in program.units.items():
        u.used = u.cycle is not None or k in named
    decisions = {k for k, u in program.units.items() if u.kind == "decision"}
    for k in (cyclic := _on_cycles(refs)):
        unit = program.units[k]
        unit.recursive = True
        unit.counted = k in decisions
    for k in _on_cycles({k: (refs[k] & cyclic) - decisions for k in cyclic - decisions}):  # (cycles of the graph too)
        program.units[k].counted = True
    for unit in escaped(program):
        unit.counted = True
    for k in _readers_of(decisions, refs):
        program.units[k].uses_decisions = True
    stateful = {k for k, u in program.units.items() if u.kind not in (*DEFS, "const", "table")}
    for u in program.units.values():
        u.rolls = any(isinstance(r, BuiltinRef) and r.builtin.name in DICE_BUILTINS for r in u.globals)
    program.rolls = any(u.rolls for u in program.units.values())
    stateful |= {k for k, u in program.units.items() if u.rolls}
    # nor anything that may reach a unit that recurs: its value alone would cut short a recursion the
    # run makes, and with it the depth limit's verdict (E005)
    stateful |= {k for k, u in program.units.items() if u.recursive}
    stateful = _readers_of(stateful, refs)
    for k, u in program.units.items():
        u.state_free = k not in stateful


def escaped(program: Program) -> Iterator[Unit]:
    """The functions some unit names as a value (not as what it calls or looks up): they may be
    called through the value, by a parameter or a local of any name."""
    for unit in program.units.values():
        meant, at = unit.globals, 0  # (what each site's names, then members, mean: ``bind.binding``)
        for found in sites(unit):
            for i in found.valued():
                ref = meant[at + i]
                if isinstance(ref, UnitRef) and ref.unit.arity is not None:
                    yield ref.unit
            at += len(found.names) + len(found.fields)


def _readers_of(seeds: set[Any], refs: dict[Any, set[Any]]) -> set[Any]:
    """The seeds and every definition that reads one of them, directly or through others."""
    readers: dict[Any, list[Any]] = {}  # (the graph's edges reversed, for definitions of the graph)
    for k, deps in refs.items():
        for dep in deps:
            readers.setdefault(dep, []).append(k)
    found = set(seeds)
    todo = list(found)
    while todo:
        for k in readers.get(todo.pop(), ()):
            if k not in found:
                found.add(k)
                todo.append(k)
    return found


def _on_cycles(refs: dict[Any, set[Any]]) -> set[Any]:
    """The nodes of the graph that lie on a cycle (Tarjan's strongly connected components, iterative)."""
    index: dict[Any, int] = {}
    low: dict[Any, int] = {}
    stack: list[Any] = []
    on_stack: set[Any] = set()
    found: set[Any] = set()
    for root in refs:
        if root in index:
            continue
        work = [(root, iter(refs.get(root, ())))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in refs:
                    continue
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(refs.get(child, ()))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    x = stack.pop()
                    on_stack.discard(x)
                    component.append(x)
                    if x == node:
                        break
                if len(component) > 1 or node in refs.get(node, ()):
                    found.update(component)
    return found


# ---------------------------------------------------------------- the check of every body


def one_edit_apart(a: str, b: str) -> bool:
    """One letter changed, added, dropped, or two neighbours swapped (`DX` and `DE`; `EX` and `XE`)."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]
                                  and a[diff[1]] == b[diff[0]])
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))


def member_help(name: str, members: dict[str, str]) -> str | None:
    """A "did you mean" naming every enum member one edit away from ``name`` (short member names are
    too far apart for the usual closeness measure: `DX` is one letter from `DE`, `DR` and `EX`)."""
    near = sorted(m for m in members if one_edit_apart(name, m) or one_edit_apart(name.upper(), m))
    if not near:
        return None
    said = ", ".join(f"`{m}`" for m in near[:-1]) + (f" or `{near[-1]}`" if len(near) > 1 else f"`{near[-1]}`")
    enums = sorted({members[m] for m in near})
    return f"did you mean {said}? ({'members' if len(near) > 1 else 'a member'} of enum {', '.join(f'`{e}`' for e in enums)})"


class _Pass:
    """A pass that reports what it finds to ``diags``."""

    diags: list[Diagnostic]

    def error(self, code: str, message: str, span: Span, help: str | None = None,
              related: tuple[Related, ...] = ()) -> None:
        self.diags.append(Diagnostic(code, message, span, help=help, related=related))


class Resolver(Walker, _Pass):
    """Walks every unit's body with its scopes and reports what cannot mean anything."""

    def __init__(self, program: Program):
        self.program = program
        self.loaded = program.loaded
        self.diags = program.diagnostics
        self.suggestions = Suggestions()
        self.ns: Namespace = program.loaded.entry
        self.defaulted: set[int] = set()  # the left operands of `??`: a data field missing there is none
        self.bound: dict[int, Referee] = {}  # the unit's (``Unit.bound``)
        self.member_sets = {key: frozenset(program.members(key).items()) for key in program.loaded.namespaces}

    def check(self) -> None:
        for (nskey, _), unit in list(self.program.units.items()):
            self.ns = self.loaded.namespaces[nskey]
            self.shared_unit(unit)
        for (nskey, _), unit in self.program.units.items():
            for name in unit.cycle.names if unit.cycle is not None else ():
                target = self.program.units.get((nskey, name))
                if target is None or target.kind != "decision" or target.policy is None:
                    self.error("C019", f"cycle policy for `{name}`, which is not a decision", unit.span)
                elif target.policy is not unit:
                    self.error("C002", f"decision `{name}` has a second cycle policy", unit.span,
                               related=(Related(target.policy.span, "first here"),))

    def shared_unit(self, unit: Unit) -> None:
        """``unit``'s check, once per context (``_RESOLVED``): what each global name and module member it
        writes is bound to (``bind.bound_globals``) and its namespace's enum members. Not shared: a
        cycle policy's check, a table's that a variant overrides cells of."""
        key, holds, data = checks_key(unit, self.program.entry.key)
        context = (self.member_sets[self.ns.key], key,  # (of data, its fields)
                   tuple([frozenset(v) if isinstance(v, dict) else None for v in data]) if data else ())
        _RESOLVED.once(unit.decl, context if unit.cycle is None and not unit.overrides else None, holds, self.diags,
                       self.unit, unit)

    def unit(self, unit: Unit) -> None:
        if unit.kind in ("rule", "table", "decision", "procedure") and not unit.cites:
            self.error("C011", f"`{unit.written}` cites no clause", unit.span,
                       help='add `cite "ID"` naming the clause it implements')
        for i, p in enumerate(unit.params):
            if any(q.name == p.name for q in unit.params[:i]):
                self.error("C002", f"parameter `{p.name}` appears twice", p.span)
        self.bound = unit.bound
        self.walk_unit(unit)

    # -- names

    def unknown(self, name: str, span: Span, env: Scope) -> None:
        members = self.program.members(self.ns.key)
        known: tuple[Collection[str], ...] = (env, self.ns.defs, self.ns.data, self.ns.modules, BUILTINS, members)
        hint: str | None = None
        if self.suggestions.affordable(sum(map(len, known))):  # (bounded over the whole check)
            close = closest_name(name, [c for names in known for c in names if " " not in c])
            hint = f"did you mean `{close}`?" if close else member_help(name, members)
        if name == A.BASE:
            hint = "`base` is the definition an `override` replaces, and means nothing elsewhere"
        self.error("C001", f"unknown name `{name}`", span, help=hint)

    def named_as_value(self, found: Referee, name: str, span: Span) -> None:
        if isinstance(found, UnitRef) and found.unit.kind == "table":
            self.error("C004", f"table `{name}` is looked up with `{name}[...]`", span)
        elif isinstance(found, ModuleRef):
            self.error("C004", f"`{name}` is a module; use `{name}.NAME`", span)
        elif isinstance(found, TypeRef):
            self.error("C004", f"`{name}` is a type, not a value", span)

    # -- expressions

    def x_Name(self, e: A.Name, env: Scope) -> None:
        if e.id in env:
            return
        found = self.bound.get(id(e))
        if found is None:
            self.unknown(e.id, e.span, env)
        else:
            self.named_as_value(found, e.id, e.span)

    def x_RecordLit(self, e: A.RecordLit, env: Scope) -> None:
        seen: set[str] = set()
        for k, _ in e.items:
            if k in seen:
                self.error("C002", f"field `{k}` appears twice", e.span)
            seen.add(k)
        self.node(e.items, env)

    def x_Compare(self, e: A.Compare, env: Scope) -> None:
        members = self.program.members(self.ns.key)
        for lit, other in ((e.left, e.right), (e.right, e.left)):
            if isinstance(lit, A.Str) and isinstance(other, A.Name) and other.id in members and lit.value not in members:
                self.error("C016", f"`{lit.value}` is not a member of enum `{members[other.id]}`", lit.span,
                           help=member_help(lit.value, {m: t for m, t in members.items() if t == members[other.id]}))
        self.node(e, env)

    def x_BinOp(self, e: A.BinOp, env: Scope) -> None:
        if e.op == "??":
            self.defaulted.add(id(e.left))
        self.node(e, env)

    def x_Field(self, e: A.Field, env: Scope) -> None:
        if isinstance(e.obj, A.Name) and e.obj.id not in env:
            found = self.bound.get(id(e.obj))
            if isinstance(found, ModuleRef):
                target = self.bound.get(id(e))
                if not isinstance(target, (UnitRef, DataRef, Member)):
                    close = self.suggestions.closest(e.name, found.ns.defs)
                    self.error("C001", f"module `{e.obj.id}` has no `{e.name}`", e.span,
                               help=f"did you mean `{e.obj.id}.{close}`?" if close else None)
                    return
                self.named_as_value(target, e.name, e.span)
                return
            if isinstance(found, DataRef) and isinstance(found.value, dict):
                if e.name not in found.value and id(e) not in self.defaulted and not self.schema_requires(found.value, e.name):
                    # (`d.f ?? x`: the data may leave f out; a field its schema requires is the schema's
                    # C026, at the data file the user writes, not one C012 per read in the rules)
                    close = self.suggestions.closest(e.name, found.value)
                    self.error("C012", f"data `{e.obj.id}` has no field `{e.name}`", e.span,
                               help=f"did you mean `{close}`?" if close else None)
                return
        self.expr(e.obj, env)

    def schema_requires(self, value: dict[str, Any], name: str) -> bool:
        """Whether the JSON Schema a data import of ``value`` names requires its field ``name``."""
        for ns in self.loaded.namespaces.values():
            for bound_data in ns.data.values():
                if bound_data.value is value and bound_data.schema is not None:
                    required = bound_data.schema.value.get("required")
                    if isinstance(required, list) and name in required:
                        return True
        return False

    def x_Index(self, e: A.Index, env: Scope) -> None:
        self.node(e.keys if id(e) in self.bound else e, env)  # (a table's lookup: only its keys)

    def x_Call(self, e: A.Call, env: Scope) -> None:
        keyed = isinstance(e.func, A.Name) and e.func.id in TABLE_BUILTINS and isinstance(self.bound.get(id(e.func)), BuiltinRef)
        self.node(tuple(a for a in e.args if not (keyed and named_table(a, self.bound))), env)  # (`rows(t)` names a table)
        self.node(e.kwargs, env)
        if isinstance(e.func, A.Name) and e.func.id not in env:
            if id(e.func) not in self.bound:
                self.unknown(e.func.id, e.func.span, env)
            return
        if isinstance(e.func, A.Field) and isinstance(e.func.obj, A.Name) and e.func.obj.id not in env:
            if isinstance(self.bound.get(id(e.func.obj)), ModuleRef):
                if id(e.func) not in self.bound:
                    self.error("C001", f"module `{e.func.obj.id}` has no `{e.func.name}`", e.func.span)
                return
        self.expr(e.func, env)


def check_arities(program: Program) -> None:
    """Every call and lookup against what it names (``Unit.bound``): a built-in's or a definition's
    number of arguments (C003), a call of what is no function (C018), a lookup with as many keys as
    the table has (C003), a pattern a built-in is given written out (C014); shared as the names check
    is (``_ARITIES``): it reads, besides the declaration, only what its names are bound to."""
    start = len(program.diagnostics)
    for unit in program.units.values():
        context, holds, _ = checks_key(unit, program.entry.key)  # (of data, nothing)
        _ARITIES.once(unit.decl, None if unit.overrides else context, holds, program.diagnostics, _arities, unit,
                      program.diagnostics)
    _override_arities(program, start)


def _override_arities(program: Program, start: int) -> None:
    """An override taking another number of parameters than the definition it replaces, which the
    extended rulesets' files call as before: one C003 at the override, where the author can change it,
    instead of one at each of those calls (a call written in the override's own file stays its own)."""
    changed: dict[Span, tuple[A.Decl, A.Decl, int, int]] = {}
    for ns in program.loaded.namespaces.values():
        for decl, prev in ns.replaced:
            now, before = getattr(decl, "params", None), getattr(prev, "params", None)
            if isinstance(now, tuple) and isinstance(before, tuple) and len(now) != len(before):
                changed[decl.span] = (decl, prev, len(now), len(before))
    if not changed:
        return
    found = program.diagnostics[start:]
    called: set[Span] = set()
    kept = []
    for d in found:
        if d.code == "C003" and d.related and d.related[0].span in changed and d.span.file != d.related[0].span.file:
            called.add(d.related[0].span)
        else:
            kept.append(d)
    del program.diagnostics[start:]
    program.diagnostics.extend(kept)
    for at in sorted(called, key=lambda sp: (sp.file, sp.line, sp.col)):
        decl, prev, n, m = changed[at]
        program.diagnostics.append(Diagnostic(
            "C003", f"`override` of `{decl_key(decl)}` takes {n} parameter{'s' if n != 1 else ''}, but the "
                    f"definition it replaces takes {m}, and the extended rulesets call it so", decl.span,
            related=(Related(prev.span, "the definition it replaces"),),
            help=f"keep its {m} parameter{'s' if m != 1 else ''}; a new value it needs can be a `def` of its own"))


def _arities(unit: Unit, diags: list[Diagnostic]) -> None:
    for found in sites(unit):
        for call in found.calls:
            _check_call(call, unit.bound, diags)
        for e in found.lookups:
            table = unit.bound.get(id(e))
            if isinstance(table, UnitRef) and len(e.keys) != table.unit.arity:
                diags.append(Diagnostic("C003", f"table `{cast(A.Name, e.obj).id}` has {table.unit.arity} keys, "
                                                f"not {len(e.keys)}", e.span))
            elif table is None and len(e.keys) != 1:
                diags.append(Diagnostic("C003", "only tables take several keys", e.span))


TABLE_BUILTINS = frozenset({"rows", "columns"})  # built-ins given a table's name, not a value


def named_table(e: A.Expr, bound: dict[int, Referee]) -> Unit | None:
    """The table ``e`` names (`t`, or a module's `m.t`), else None."""
    ref = bound.get(id(e)) if isinstance(e, (A.Name, A.Field)) else None
    return ref.unit if isinstance(ref, UnitRef) and ref.unit.kind == "table" else None


def _check_call(e: A.Call, bound: dict[int, Referee], diags: list[Diagnostic]) -> None:
    target = bound.get(id(e.func))
    if target is None:
        return  # a local, a field of a value, or a name the names pass finds unknown
    f = e.func
    fname = f.id if isinstance(f, A.Name) else f"{cast(A.Name, cast(A.Field, f).obj).id}.{cast(A.Field, f).name}"

    def error(code: str, message: str, where: Span = e.span, **more: Any) -> None:
        diags.append(Diagnostic(code, message, where, **more))

    if isinstance(target, BuiltinRef):
        obj = target.builtin
        n = len(e.args) + len(e.kwargs)
        if not obj.min_args <= n <= obj.max_args:
            want = str(obj.min_args) if obj.min_args == obj.max_args else f"{obj.min_args} to {obj.max_args}"
            error("C003", f"`{obj.name}` takes {want} argument{'s' if obj.max_args != 1 else ''}, not {n}")
            return
        if obj.name in TABLE_BUILTINS:
            table = named_table(e.args[0], bound)
            if table is None:
                error("C004", f"`{obj.name}` takes a table's name: `{obj.name}(t)` for a table `t`", e.args[0].span)
            elif obj.name == "columns" and table.arity != 2:
                error("C003", f"table `{table.written}` has one key: its keys are `rows({table.written})`", e.args[0].span)
            return
        patterns = (e.args[1],) if obj.name in ("match", "search") and len(e.args) >= 2 else \
            e.args[1].items if obj.name == "match_first" and len(e.args) >= 2 and isinstance(e.args[1], A.ListLit) else ()
        for item in patterns:
            problem = pattern_problem(item.value) if isinstance(item, A.Str) else None
            if problem is not None:
                error("C014", f"invalid pattern: {problem}", item.span,
                      help="patterns are RE2 regular expressions (no back-references or look-around)")
    elif isinstance(target, UnitRef):
        unit = target.unit
        if e.kwargs:
            error("C003", f"`{fname}` takes no named arguments")
        if unit.kind == "table":
            error("C018", f"table `{fname}` is looked up with `{fname}[...]`, not called")
        elif unit.arity is None:
            error("C018", f"`{fname}` is a value, not a function", help=f"write `{fname}` without parentheses")
        elif unit.arity != len(e.args):
            error("C003", f"`{fname}` takes {unit.arity} argument{'s' if unit.arity != 1 else ''}, not {len(e.args)}",
                  related=(Related(unit.span, "defined here"),))
    else:
        error("C018", f"`{fname}` is not a function")


class Tables(_Pass):
    """Each table's grid and a variant's overrides of its cells, well formed (C009, C003, C011, C013);
    each lookup whose literal key no row or column has (C029)."""

    def __init__(self, program: Program):
        self.program, self.diags, self.suggestions = program, program.diagnostics, Suggestions()

    def check(self) -> None:
        for ns in self.program.loaded.namespaces.values():
            for name, overrides in ns.cell_overrides.items():
                if not isinstance(ns.defs.get(name), A.TableDecl):
                    tables = [n for n, x in ns.defs.items() if isinstance(x, A.TableDecl)]
                    close = self.suggestions.closest(name, tables)
                    for ov in overrides:
                        self.error("C013", f"`override {name}[...]`: the extended rulesets have no table `{name}`",
                                   ov.span, help=f"did you mean `{close}`?" if close else None)
        malformed = set()  # (their lookups' keys are not checked: C009 is what is wrong)
        for unit in self.program.units.values():
            before = len(self.diags)
            if unit.kind == "table":
                self.table(unit)
            if len(self.diags) > before and any(d.code == "C009" for d in self.diags[before:]):
                malformed.add(unit.index)
        for unit in self.program.units.values():
            for found in sites(unit):
                for e in found.lookups:
                    table = unit.bound.get(id(e))
                    if isinstance(table, UnitRef) and len(e.keys) == table.unit.arity and table.unit.index not in malformed:
                        self.keys_known(table.unit, e.keys, unit.bound)

    def keys_known(self, unit: Unit, keys: tuple[A.Expr, ...], bound: dict[int, Referee]) -> None:
        """A key written as a literal (or an enum's member) that no row or column of a grid table has:
        the lookup could only miss, an error at run time unless the table's result is optional."""
        if unit.body is not None or (unit.ret is not None and unit.ret.optional):
            return
        known: list[set[Any]] = [set(), set()]
        for cell in unit.cells:
            for i, k in enumerate(cell):
                known[i].add(k)
        for i, k in enumerate(keys):
            if isinstance(k, (A.Str, A.Int, A.Bool)) and not isinstance(k.value, bool):
                value = k.value
            elif isinstance(k, A.Name) and isinstance(bound.get(id(k)), Member):
                value = k.id
            else:
                continue
            if value not in known[i]:
                close = self.suggestions.closest(str(value), known[i])
                self.error("C029", f"table `{unit.written}` has no {'column' if i else 'row'} `{value}`", k.span,
                           help=f"did you mean `{close}`?" if close else
                           "declare the table's result optional (`-> T?`) if a miss should give none",
                           related=(Related(unit.span, "the table"),))

    def table(self, d: Unit) -> None:
        for ov in d.overrides:
            if len(ov.keys) != len(d.params):
                self.error("C003", f"table `{d.written}` has {len(d.params)} keys, not {len(ov.keys)}", ov.span)
                continue
            if not ov.cites:
                self.error("C011", f"the override of a cell of `{d.written}` cites no clause", ov.span,
                           help='add `cite "ID"` naming the clause (or errata) it implements')
            for k in ov.keys:
                self.table_key(k, d)
        if d.body is not None:
            return
        self.cells_outside(d)
        grid, n = d.grid, len(d.params)
        if n not in (1, 2) or len(grid) < n:
            self.error("C009", f"table `{d.written}` needs a header row and at least one row" if n == 2 else
                       f"a table written as a grid has one or two keys, `{d.written}` has {n}", d.span)
            return
        cols = [self.table_key(c, d) for c in grid[0][1:]] if n == 2 else [None]  # (a one-key table: one column)
        if len(set(cols)) != len(cols):
            self.error("C009", f"table `{d.written}` has a repeated column", grid[0][0].span)
        seen: set[tuple[Any, ...]] = set()
        for row in grid[n - 1:]:
            if len(row) != len(cols) + 1 and n == 2:
                self.error("C009", f"row has {len(row)} cells, the header has {len(cols) + 1}", row[0].span,
                           help=f"every row of `{d.written}` needs one cell per column")
            elif len(row) != 2 and n == 1:
                self.error("C009", f"a one-key table row has 2 cells (key, value), not {len(row)}", row[0].span)
            else:
                rk = self.table_key(row[0], d)
                for ck, cell in zip(cols, row[1:]):
                    if (rk, ck) in seen:
                        self.error("C009", f"table `{d.written}` has {'row' if n == 2 else 'key'} `{rk}` twice",
                                   row[0].span)
                    if not isinstance(cell, A.Absent):
                        seen.add((rk, ck))

    def cells_outside(self, d: Unit) -> None:
        """W107: a cell override whose key no row (or column) of the grid has adds a cell rather than
        changing one; a slip in an errata's key would leave the table as it was without a word."""
        known: list[set[Any]] = [set() for _ in d.params]
        for cell, _ in grid_cells(d):
            for i, k in enumerate(cell):
                if i < len(known):
                    known[i].add(k)
        if not all(known):
            return  # (a malformed grid: C009 says so)
        for ov in d.overrides:
            if len(ov.keys) != len(known):
                continue
            for i, k in enumerate(ov.keys):
                raw = table_key(k)
                key = None if raw is None else as_key(raw)
                if key is not None and key not in known[i]:
                    close = self.suggestions.closest(str(key), [str(x) for x in known[i]])
                    where = "column" if i else "row"
                    self.diags.append(Diagnostic(
                        "W107", f"`override {d.written}[...]` adds a {where} `{key}`, which the table's grid does not have",
                        k.span, help=f"did you mean `{close}`?" if close else
                        "a new row or column is read only by lookups that name it; check the key",
                        related=(Related(d.span, "the table"),)))
                    break

    def table_key(self, cell: Any, d: Unit) -> Any:
        key = table_key(cell)
        if key is None:
            self.error("C009", f"table `{d.written}`: a row or column key must be a name, text or number", cell.span)
        return key


class Statements(Walker, _Pass):
    """Each statement of a procedure where it may stand (C020: only `var` and steps at its top, no
    step in a step, `break` and `continue` in a loop) and `:=` only to its `var`s (C022)."""

    def __init__(self, diags: list[Diagnostic]):
        self.diags, self.in_loop = diags, 0

    def procedure(self, unit: Unit) -> None:
        env: Scope = {p.name: p for p in unit.params}
        for s in unit.stmts:
            if isinstance(s, (A.Var, A.Step)):
                env = super().stmt(s, env)
            else:
                self.error("C020", "only `var` declarations and `step`s may stand at the top of a procedure", s.span)

    def expr(self, e: Any, env: Scope) -> None:
        pass  # (no statement stands in an expression)

    def stmt(self, s: A.Stmt, env: Scope) -> Scope:
        if isinstance(s, A.Assign) and not isinstance(env.get(s.name), A.Var):
            self.error("C022", f"`{s.name}` is not a procedure variable", s.span,
                       help=f"declare it with `var {s.name} = ...` at the top of the procedure")
        elif isinstance(s, (A.Break, A.Continue)) and not self.in_loop:
            self.error("C020", f"`{'break' if isinstance(s, A.Break) else 'continue'}` outside a loop", s.span)
        elif isinstance(s, A.Step):
            self.error("C020", "a step may not contain another step", s.span)
            return env
        elif isinstance(s, A.Emit):
            if s.event in ENGINE_EVENTS:
                self.error("C002", f"`{s.event}` is the event the engine records {ENGINE_EVENTS[s.event]}, "
                                   "not one an `emit` may make", s.span,
                           help="name the event otherwise: a reader of the events takes this one for the engine's")
            self.payload(s)
        self.in_loop += isinstance(s, A.For)
        env = super().stmt(s, env)
        self.in_loop -= isinstance(s, A.For)
        return env

    def payload(self, s: A.Emit) -> None:
        """C002: a payload field named twice, or named as a field every event has (``EVENT_FIELDS``),
        which it would overwrite: a payload's `cites` would stand for the clauses the event cites."""
        seen: set[str] = set()
        for k, v in s.payload:
            if k in EVENT_FIELDS:
                hint = "the clauses an event cites are its `cite`" if k == "cites" else "an event has one"
                self.error("C002", f"`{k}` is a field of every event ({EVENT_FIELDS[k]}), not one of its payload",
                           v.span, help=f"name the payload's field otherwise: {hint}")
            elif k in seen:
                self.error("C002", f"field `{k}` appears twice", v.span)
            seen.add(k)


# the fields of every emitted event, which its payload may not name (``Statements.payload``)
EVENT_FIELDS = {"event": "its name", "step": "the step that emitted it", "cites": "the clauses it cites"}
# the events the engines record themselves (``reference.procedure_end``), whose names no `emit` may take
REJECTED_EVENT = "rejected"  # the event of a procedure rejected, with its step, reason and cites
ENGINE_EVENTS = {REJECTED_EVENT: "when a procedure is rejected (`reject`, a failed `require`)"}


def check_steps(program: Program) -> None:
    for unit in _procedures(program):
        _check_steps(unit.stmts, program.diagnostics)


def _check_steps(body: tuple[A.Stmt, ...], diags: list[Diagnostic]) -> None:
    """A procedure's steps: named once (C002), each citing its clause (C011), every `goto` naming one
    (C017), none after a step that certainly leaves (``ast.leaves``: its last `goto`/`stop`/`reject`, or an
    `if`/`else` all of whose ways do) that no `goto` names (W102)."""
    steps = [s for s in body if isinstance(s, A.Step)]
    names = [s.name for s in steps]
    seen: dict[str, A.Step] = {}
    for s in steps:
        if s.name in seen:
            diags.append(Diagnostic("C002", f"step `{s.name}` appears twice", s.span,
                                    related=(Related(seen[s.name].span, "first here"),)))
        seen[s.name] = s
        if not s.cites:
            diags.append(Diagnostic("C011", f"step `{s.name}` cites no clause", s.span,
                                    help='add `cite "ID"` naming the clause the step implements'))
    gotos = [s for s in A.nodes(body) if isinstance(s, A.Goto)]
    for g in gotos:
        if g.target not in names:
            close = closest_name(g.target, names)
            diags.append(Diagnostic("C017", f"no step named `{g.target}`", g.span,
                                    help=f"did you mean `{close}`?" if close else f"steps: {', '.join(names[:20])}"
                                                                                  + (", ..." if len(names) > 20 else "")))
    targets = {g.target for g in gotos}
    for prev, s in zip(steps, steps[1:]):
        if A.leaves(prev.body, in_loop=False) and s.name not in targets:
            diags.append(Diagnostic("W102", f"step `{s.name}` can never run", s.span,
                                    help=f"step `{prev.name}` always leaves before it and no `goto` names it"))


# the checks that found nothing, by declaration and context (``Resolver.shared_unit``, ``check_arities``)
_RESOLVED = A.ContextMemo()
_ARITIES = A.ContextMemo()


def table_cells(unit: Unit) -> dict[tuple[Any, ...], A.Expr]:
    """A table's cells by their keys (``Unit.cells``), the one merge every reader uses: its grid's
    (``bind.grid_cells``), then a variant's `override t[...]` (the last one wins). Keys with no cell
    are a miss (``runtime.table_miss``); a lookup finds its cell by ``cell_key``."""
    cells = dict(grid_cells(unit))
    for ov in unit.overrides:
        cells[tuple(as_key(table_key(k)) for k in ov.keys)] = ov.value
    return cells


def cell_key(keys: Sequence[Any]) -> tuple[Any, ...]:
    """The keys of a table lookup as ``table_cells`` keeps them (``TypeError`` for a key that cannot be
    one, which finds no cell)."""
    return tuple([as_key(k) for k in keys])


def _procedures(program: Program) -> Iterator[Unit]:
    return (u for u in program.units.values() if u.kind == "procedure")


def check_statements(program: Program) -> None:
    for unit in _procedures(program):
        Statements(program.diagnostics).procedure(unit)


def bind_units(program: Program, lazily: bool = False) -> None:
    """Every unit bound (``bind.binding``), each global name looked up once per namespace; ``lazily``, each
    at its first need instead (``Unit.bound``): a load whose reference graph is kept (``kept_graph``) binds
    only the units something reads (a warm run plays kept writings, which read none)."""
    meanings = {key: Meanings(program, ns) for key, ns in program.loaded.namespaces.items()}
    for unit in program.units.values():
        unit.meanings = meanings
        if lazily:
            unit.__class__ = _LazyUnit
        else:
            unit.bind()


# ---------------------------------------------------------------- the reference graph, kept

_FLAGS = ("used", "recursive", "counted", "uses_decisions", "rolls", "state_free")


def graph_json(program: Program) -> dict[str, Any] | None:
    """What ``analyse`` found (``Program.refs``, ``Program.rolls`` and each unit's ``_FLAGS``) as JSON, each
    unit by its number: kept with a load's check (``api``), which depends on the same files. None for a
    program whose graph names what is not one of its units."""
    at = {k: u.index for k, u in program.units.items()}
    if not all(r in at for named in program.refs.values() for r in named) or program.refs.keys() != at.keys():
        return None
    return {"units": [[u.ns, u.name, u.index] for u in program.units.values()],
            "refs": [sorted(at[r] for r in program.refs[k]) for k in program.units],
            "flags": [[getattr(u, f) for f in _FLAGS] for u in program.units.values()], "rolls": program.rolls}


def kept_graph(program: Program, graph: Any) -> bool:
    """Sets what ``analyse`` would (``graph_json``'s) from ``graph``, if it names this program's units in
    order and holds only their numbers and truth values; else sets nothing and says so."""
    units = list(program.units.items())
    try:
        if (type(graph) is not dict or graph.get("units") != [[u.ns, u.name, u.index] for _, u in units]
                or type(graph["rolls"]) is not bool or len(graph["refs"]) != len(units)
                or len(graph["flags"]) != len(units)):
            return False
        keys = {u.index: k for k, u in units}
        if not all(type(named) is list and all(type(i) is int for i in named) for named in graph["refs"]):
            return False
        refs = {k: {keys[i] for i in named} for (k, _), named in zip(units, graph["refs"])}
        flags = graph["flags"]
        if not all(type(f) is list and len(f) == len(_FLAGS) and all(type(b) is bool for b in f) for f in flags):
            return False
    except (KeyError, TypeError):
        return False
    program.refs, program.rolls = refs, graph["rolls"]
    for (_, unit), found in zip(units, flags):
        for f, b in zip(_FLAGS, found):
            setattr(unit, f, b)
    return True


# the passes that make the program, in order: each adds its findings to ``Program.diagnostics``
# (``checker.PASSES`` then add what needs the whole program)
PASSES: tuple[tuple[str, Callable[[Program], None]], ...] = (
    ("binding", bind_units), ("reference graph", analyse), ("names", lambda p: Resolver(p).check()),
    ("arities", check_arities), ("tables", lambda p: Tables(p).check()), ("steps", check_steps),
    ("statements", check_statements))
MAKING = 2  # the first passes of ``PASSES``, which make what the engines read; the others only find
