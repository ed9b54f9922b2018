"""The binding stage, the check's first pass: what every name in a unit means, decided once.

``meaning`` is the one lookup of a global name. ``Sites`` walks a declaration with its scopes for the
nodes that name something: a global name (``Name``), a module's member (``Field``), a table's lookup
(``Index``), and each local's numbered slot (``Local``: a ``Name`` or ``Assign`` that reads or sets
one; a node that binds locals, such as a parameter, `let`, `var` or loop, is kept with its first),
and the step a `goto` or `emit` means (``StepRef``).
``binding`` keeps, for each, its *referee*. Declarations are shared (the variants of a base ruleset,
a module imported twice), so referees lie beside the nodes, per unit, by the node's identity
(``Unit.bound``); both engines read them and look no name up while a rule runs.

``Walker`` is the walk: a default descent over every node, with the scoping of the language written
once; a pass overrides the nodes it cares about.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Iterable, Union

from . import ast as A
from ..lib.builtins import BUILTINS, Builtin
from ..lib.values import as_key

if TYPE_CHECKING:
    from .loader import Namespace
    from .program import Program, Unit


@dataclass(frozen=True, slots=True)
class UnitRef:
    """A definition of the program (a table's lookup too: ``Index`` of a table)."""

    unit: Unit


@dataclass(frozen=True, slots=True)
class TypeRef:
    """An enum or record named as a value (C004)."""

    decl: A.Decl


@dataclass(frozen=True, slots=True)
class DataRef:
    """Imported data: its value."""

    value: Any


@dataclass(frozen=True, slots=True)
class Member:
    """An enum's member: its value is its name."""

    name: str


@dataclass(frozen=True, slots=True)
class BuiltinRef:
    builtin: Builtin


@dataclass(frozen=True, slots=True)
class ModuleRef:
    """An imported ruleset's alias."""

    ns: Namespace


@dataclass(frozen=True, slots=True)
class Local:
    """A local of the unit: its slot in the frame of a call of the unit's code."""

    slot: int


@dataclass(frozen=True, slots=True)
class StepRef:
    """A procedure's step: the one a `goto` names, or the one an `emit` stands in (whose clauses it
    cites when it cites none); ``at``, its place among the procedure's steps."""

    at: int
    step: A.Step


Referee = Union[UnitRef, TypeRef, DataRef, Member, BuiltinRef, ModuleRef, Local, StepRef]


def slot(bound: dict[int, Referee], node: Any) -> int:
    """The slot of the local ``node`` reads or assigns, or of the first name it binds."""
    local = bound[id(node)]
    assert isinstance(local, Local)
    return local.slot


def meaning(program: Program, ns: Namespace, name: str) -> Referee | None:
    """What a global name means in a namespace, first match wins: a definition, an enum or record, data,
    an enum's member, a built-in, a module; none when it is unknown."""
    unit = program.units.get((ns.key, name))
    if unit is not None:
        return UnitRef(unit)
    if name in ns.defs:
        return TypeRef(ns.defs[name])
    if name in ns.data:
        return DataRef(ns.data[name].value)
    if name in program.members(ns.key):
        return Member(name)
    if name in BUILTINS:
        return BuiltinRef(BUILTINS[name])
    if name in ns.modules:
        return ModuleRef(program.loaded.namespaces[ns.modules[name]])
    return None


Scope = dict[str, Any]  # the local names in force, each with the node that binds it


class Walker:
    """A unit's body walked with its scopes (the local names in force): every node's fields are
    descended into unless a method ``x_KIND`` for its kind says otherwise; the scoping of parameters,
    `let`, lambdas, comprehensions, `for`, `var` and statement blocks is written here once."""

    def walk_unit(self, unit: Unit) -> None:
        env = self.bind_params(unit.params, {})  # (a table's keys have slots, and no cell sees them)
        if unit.kind == "table":
            for code in table_code(unit):
                self.cell(code)
            return
        self.block(unit.stmts, env)
        if unit.body is not None:
            self.expr(unit.body, env)
        for pol in unit.cycle.policies if unit.cycle is not None else ():
            self.node((pol.when, pol.targets, pol.value), self.bind({}, unit.cycle, ("cycle",)))

    def cell(self, code: A.Expr) -> None:
        """A table's cell or source: evaluated in a frame of its own."""
        self.expr(code, {})

    def bind(self, env: Scope, binder: Any, names: tuple[str, ...]) -> Scope:
        """``env`` and ``names``, bound by ``binder``: every scope of the language is made here."""
        return env | dict.fromkeys(names, binder)

    def bind_params(self, params: Iterable[A.Param], env: Scope) -> Scope:
        for p in params:
            env = self.bind(env, p, (p.name,))
        return env

    _methods: ClassVar[dict[type, Any]] = {}  # each walker class's ``x_KIND`` of a node class (None: the default)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._methods = {}

    def expr(self, e: Any, env: Scope) -> None:
        kind = type(e)
        try:
            method = self._methods[kind]
        except KeyError:
            method = self._methods[kind] = getattr(type(self), "x_" + kind.__name__, None)
        if method is not None:
            method(self, e, env)
        else:
            self.node(e, env)

    def node(self, n: Any, env: Scope) -> None:
        """The default descent: every field, in order."""
        for x in n if isinstance(n, tuple) else n._values(n.__dict__):
            if isinstance(x, A.Node):
                self.expr(x, env)
            elif isinstance(x, tuple):
                self.node(x, env)

    def x_Let(self, e: A.Let, env: Scope) -> None:
        self.expr(e.value, env)
        self.expr(e.body, self.bind(env, e, (e.name,)))

    def x_Lambda(self, e: A.Lambda, env: Scope) -> None:
        self.expr(e.body, self.bind_params(e.params, env))

    def x_Comp(self, e: A.Comp, env: Scope) -> None:
        for cf in e.fors:
            self.expr(cf.iter, env)
            env = self.bind(env, cf, cf.names)
            if cf.cond is not None:
                self.expr(cf.cond, env)
        self.expr(e.elem, env)
        if e.key is not None:
            self.expr(e.key, env)

    def block(self, stmts: tuple[A.Stmt, ...], env: Scope) -> None:
        for s in stmts:
            env = self.stmt(s, env)

    def stmt(self, s: Any, env: Scope) -> Scope:
        """A statement; the scope of the statements after it."""
        if isinstance(s, (A.Var, A.LetStmt)):
            self.expr(s.value, env)
            return self.bind(env, s, (s.name,))
        if isinstance(s, A.IfStmt):
            for c, b in s.branches:
                self.expr(c, env)
                self.block(b, env)
            if s.otherwise is not None:
                self.block(s.otherwise, env)
        elif isinstance(s, A.For):
            self.expr(s.iter, env)
            inner = self.bind(env, s, (s.name,))
            if s.cond is not None:
                self.expr(s.cond, inner)
            self.block(s.body, inner)
        elif isinstance(s, A.Step):
            self.block(s.body, env)
        else:
            self.node(s, env)
        return env


class Sites(Walker):
    """Each name no local hides and each module member (`m.x`) written on one, once, with the nodes
    that write it (so that what it means is looked up once per unit, ``binding``); every lookup (`x[k]`)
    and call of such a name or member, and each local's slot (the
    nodes that bind, read or assign one): kept per declaration (``A.per_node``), whichever namespace
    reads it; the arity and table passes read calls and lookups."""

    def __init__(self) -> None:
        self.names: dict[str, list[int]] = {}
        self.fields: dict[tuple[str, str], list[int]] = {}
        self.lookups: list[A.Index] = []
        self.calls: list[A.Call] = []
        self.used: set[int] = set()  # the names and members called or looked up
        self.locals: dict[int, Referee] = {}  # (and the step of each `goto` and `emit`)
        self.slots = 0  # the slots numbered so far
        self.steps: dict[str, StepRef] = {}
        self.step: StepRef | None = None  # the step walked
        self._valued: tuple[int, ...] | None = None  # (``valued``)

    def valued(self) -> tuple[int, ...]:
        """Which of the global names and module members written here (``names``, then ``fields``, in
        order, as ``binding`` lists what they mean) are somewhere named as a value: not (only) as
        what is called or looked up. Made at the first need, for every program that binds them."""
        if self._valued is None:
            used = self.used
            self._valued = tuple(i for i, nodes in enumerate((*self.names.values(), *self.fields.values()))
                                 if any(node not in used for node in nodes))
        return self._valued

    def cell(self, code: A.Expr) -> None:
        pass  # (in a walk of the unit: each cell's sites are kept apart, ``sites``)

    def walk_unit(self, unit: Unit) -> None:
        steps = [s for s in unit.stmts if isinstance(s, A.Step)]
        self.steps = {s.name: StepRef(i, s) for i, s in reversed(list(enumerate(steps)))}
        super().walk_unit(unit)

    def bind(self, env: Scope, binder: Any, names: tuple[str, ...]) -> Scope:
        if id(binder) not in self.locals:  # (a `for`'s name is in scope in its condition and its body)
            self.locals[id(binder)] = Local(self.slots)
            self.slots += len(names)
        first = slot(self.locals, binder)
        return env | {n: Local(first + i) for i, n in enumerate(names)}

    def x_Name(self, e: A.Name, env: Scope) -> None:
        if e.id in env:
            self.locals[id(e)] = env[e.id]
        else:
            self.names.setdefault(e.id, []).append(id(e))

    def stmt(self, s: Any, env: Scope) -> Scope:
        if isinstance(s, A.Assign) and s.name in env:
            self.locals[id(s)] = env[s.name]
        elif isinstance(s, A.Step):
            self.step = self.steps[s.name]
        elif isinstance(s, A.Emit) and self.step is not None:
            self.locals[id(s)] = self.step
        elif isinstance(s, A.Goto) and s.target in self.steps:
            self.locals[id(s)] = self.steps[s.target]
        return super().stmt(s, env)

    def x_Field(self, e: A.Field, env: Scope) -> None:
        self.expr(e.obj, env)
        if isinstance(e.obj, A.Name) and e.obj.id not in env:
            self.fields.setdefault((e.obj.id, e.name), []).append(id(e))

    def x_Index(self, e: A.Index, env: Scope) -> None:
        self.node(e, env)
        self.lookups.append(e)
        if isinstance(e.obj, A.Name) and e.obj.id not in env:
            self.used.add(id(e.obj))

    def x_Call(self, e: A.Call, env: Scope) -> None:
        self.node(e, env)
        f = e.func.obj if isinstance(e.func, A.Field) else e.func
        if isinstance(f, A.Name) and f.id not in env:
            self.calls.append(e)
            self.used.add(id(e.func))


def sites(unit: Unit) -> list[Sites]:
    """The sites of a unit's code: its declaration's (a table's: its keys'), then a table's, cell by cell
    (``table_code``), each cell's locals numbered apart; kept per declaration and per cell, and the
    list on the unit (``Unit.sites``: binding and the passes after it each ask, once per unit; what it
    is made of, the unit's declaration, kind and a table's grid, cells and source, is set when the
    unit is made, ``program._unit``)."""
    kept = unit.sites
    if kept is not None:
        return kept

    def walk(node: object) -> Sites:
        found = Sites()
        if node is unit.decl:
            found.walk_unit(unit)
        else:
            found.expr(node, {})  # (a cell: a frame of its own, as ``Walker.cell``)
        return found

    kept = unit.sites = [A.per_node("sites", node, walk)
                         for node in (unit.decl, *(table_code(unit) if unit.kind == "table" else ()))]
    return kept


def table_key(cell: A.Expr) -> Any:
    """A grid's row or column key as written: a name stands for its own text."""
    if isinstance(cell, A.Name):
        return cell.id
    if isinstance(cell, (A.Str, A.Int, A.Bool)):
        return cell.value
    return None


def grid_cells(unit: Unit) -> list[tuple[tuple[Any, ...], A.Expr]]:
    """A table's grid as cells with their keys, in order: the header row names the columns of a two-key
    table; an absent cell `-` is a cell (it gives none); a misshapen row gives none (it is C009's). Each
    key is kept as a map's key is (``values.as_key``): a row `true` is not the row `1`."""
    grid, n = unit.grid, len(unit.params)
    if n == 1:
        return [((as_key(table_key(row[0])),), row[1]) for row in grid if len(row) == 2]
    if n != 2 or len(grid) < 2:
        return []
    header = [as_key(table_key(c)) for c in grid[0][1:]]
    return [((as_key(table_key(row[0])), col), cell) for row in grid[1:] if len(row) == len(grid[0])
            for col, cell in zip(header, row[1:])]


def table_code(unit: Unit) -> list[A.Expr]:
    """A table's code: every cell of its grid (``grid_cells``; one a variant overrides too) and of the
    overrides (``Unit.cells``), but the absent ones (`-`), and its source."""
    cells = [c for _, c in grid_cells(unit) if not isinstance(c, A.Absent)]
    written = {id(c) for c in cells}
    cells += [c for c in unit.cells.values() if id(c) not in written and not isinstance(c, A.Absent)]
    return cells + ([unit.body] if unit.body is not None else [])


def place(ns: str, entry: str) -> str:
    """A namespace as cache keys name it: "" for the ruleset's own ``entry`` (a variant's is its base's)."""
    return "" if ns == entry else ns


def unit_key(u: Unit, entry: str) -> tuple[Any, ...]:
    """A definition as a part of a cache key (``data.run_key``, ``written.key``): where it is (``place``), its
    name, declaration (by ``id``: the caller holds ``u.decl``), kind, arity and the analysis's flags."""
    return (place(u.ns, entry), u.name, id(u.decl), u.kind, u.arity, u.state_free, u.recursive, u.counted, u.uses_decisions)


def bound_globals(unit: Unit, entry: str, holds: list[Any], data: Callable[[Any], Any] | None = None) -> tuple[Any, ...]:
    """What each global name and module member ``unit``'s code writes is bound to (``Unit.bound``), as
    a part of a cache key (what a declaration's checks read of it, ``program.Resolver`` and
    ``types.check_types``; a data check's run, ``data.run_key``): a definition by where it is ("" in
    the ruleset's own namespace ``entry``), its name and declaration; an enum or a record by the
    object, data by what ``data`` says the reader reads of its value (by default the value itself);
    a member, a built-in or a module by its name. ``holds`` gets the objects named by ``id``, which
    the key's entry keeps (no identity is then reused while it lives).

    A definition is named so, not by its whole ``unit_key``, and that is enough for the checks of a
    declaration: its kind, arity, parameters, result type and body are read off its declaration alone
    (``program._unit``), so one declaration object is one kind and arity in every program; and the
    analysis's flags, which another program may set otherwise for the same declaration (a callee
    overridden to read an input), are read by no check kept by this context (the names, arity and
    type checks; tests/test_check_sharing.py flips them all and finds the same). The keys of what
    does read the flags, a data check's run and a writing, add the ``unit_key`` of each definition
    they reach."""
    def summary(found: Referee | None) -> Any:
        if isinstance(found, UnitRef):
            u = found.unit
            holds.append(u.decl)
            return ("unit", place(u.ns, entry), u.name, id(u.decl))
        if isinstance(found, DataRef) and data is not None:
            return ("data", data(found.value))
        if isinstance(found, (TypeRef, DataRef)):
            obj = found.decl if isinstance(found, TypeRef) else found.value
            holds.append(obj)
            return (type(found).__name__, id(obj))
        if isinstance(found, BuiltinRef):
            return ("builtin", found.builtin.name)
        if isinstance(found, ModuleRef):
            return ("module", found.ns.key)
        return ("member", found.name) if isinstance(found, Member) else None  # (none: an unknown name)

    return tuple(map(summary, unit.globals))


def checks_key(unit: Unit, entry: str) -> tuple[tuple[Any, ...], list[Any], tuple[Any, ...]]:
    """The part of the context of ``unit``'s names, arity and type checks (``program.Resolver``,
    ``program.check_arities``, ``types.check_types``) that is the unit's own, made at its first need and
    kept on the unit (``Unit.checks_key``), so one key serves the three checks: ``bound_globals`` with
    data named by nothing, the objects it names by ``id`` (for the entry's ``holds``), and the value of
    each data it names, in order (the names check adds what fields each has).

    Kept on the unit, it is the key each check would make afresh: it is a function of ``entry`` (the
    unit's program's entry namespace, one per program, and a unit is of one program) and of
    ``Unit.globals``, set once per program by binding (``program.bind_units``, the first pass, before
    any check) and never set again; and of what each referee holds, set when the referee is made and
    not changed after: a definition's namespace, name and declaration, an enum's or a record's
    declaration, a built-in's, a module's and a member's name, data's value (whose fields are read at
    the names check, once per unit as before). tests/test_check_sharing.py checks it against a fresh
    ``bound_globals`` after every pass, and each variant there that changes one thing a base's
    declarations are checked against gets its own findings."""
    kept = unit.checks_key
    if kept is None:
        holds: list[Any] = []
        key = bound_globals(unit, entry, holds, _nothing)
        kept = unit.checks_key = (key, holds, tuple([r.value for r in unit.globals if isinstance(r, DataRef)]))
    return kept


def _nothing(value: Any) -> None:
    """Data as the arity and type checks' contexts name it: by nothing (they read no data's value)."""
    return None


class Meanings(dict[str, Union[Referee, None]]):
    """What each global name means in one namespace (``meaning``), looked up at its first need."""

    def __init__(self, program: Program, ns: Namespace) -> None:  # (empty)
        self.program, self.ns = program, ns

    def __missing__(self, name: str) -> Referee | None:
        found = self[name] = meaning(self.program, self.ns, name)
        return found


def binding(unit: Unit, meanings: dict[str, Meanings]) -> tuple[dict[int, Referee], tuple[Referee | None, ...]]:
    """The referees of ``unit``'s nodes, by the node's identity (``Unit.bound``), and what each global
    name and module member its code writes means, each once, in order (``Unit.globals``: for each of
    its sites, its names then its module members, in their order; none for one that means nothing);
    ``meanings``: each namespace's, by its key."""
    here = meanings[unit.ns]
    bound: dict[int, Referee] = {}
    found_globals: list[Referee | None] = []
    for found in sites(unit):
        bound.update(found.locals)
        refs = [here[name] for name in found.names]
        refs += [meanings[module.ns.key][name] if isinstance(module := here[alias], ModuleRef) else None
                 for alias, name in found.fields]
        bound.update({node: ref for ref, nodes in zip(refs, (*found.names.values(), *found.fields.values()))
                      if ref is not None for node in nodes})
        for e in found.lookups:  # (of a table by its name)
            if isinstance(e.obj, A.Name) and isinstance(table := bound.get(id(e.obj)), UnitRef) and table.unit.kind == "table":
                bound[id(e)] = table
        found_globals += refs
    return bound, tuple(found_globals)
