"""The binding stage: what every global name in a unit means, decided once, before anything runs.

``meaning`` is the one lookup of a global name. ``binding`` walks a unit's body with its scopes and
keeps, for each node that names something (``Name``, a module's member ``Field``, a table lookup
``Index``, ``Assign``), its *referee*: a global, or a local's numbered slot (``Local``; a node that
binds locals, such as a parameter, `let`, `var` or loop, is kept with its first). Declarations are
shared (the variants of a base ruleset, a module imported twice), so a referee is kept beside the
node, per unit, by the node's identity; both engines read it and look no name up while a rule runs.

``Walker`` is that walk: a default descent over every node, with the scoping of the language written
once; a pass overrides the nodes it cares about.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Union

from . import ast as A
from ..lib.builtins import BUILTINS, Builtin

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

    decl: Any


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


Referee = Union[UnitRef, TypeRef, DataRef, Member, BuiltinRef, ModuleRef, Local]


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

    def walk_unit(self, program: Program, unit: Unit) -> None:
        from .program import table_cells

        d = unit.decl
        if isinstance(d, A.TableDecl):
            self.bind_params(d.params, {})  # (its keys have slots, and no cell sees them)
            for cell in table_cells(program.loaded.namespaces[unit.ns], unit).values():
                self.expr(cell, {})
            if d.source is not None:
                self.expr(d.source, {})
        elif isinstance(d, A.CycleDecl):
            for pol in d.policies:
                self.node((pol.when, pol.targets, pol.value), self.bind({}, d, ("cycle",)))
        elif isinstance(d, A.ProcedureDecl):
            self.block(d.body, self.bind_params(d.params, {}))
        else:
            body = getattr(d, "body", None) or getattr(d, "value", None) or getattr(d, "default", None)
            if body is not None:
                self.expr(body, self.bind_params(getattr(d, "params", None) or (), {}))

    def bind(self, env: Scope, binder: Any, names: tuple[str, ...]) -> Scope:
        """``env`` and ``names``, bound by ``binder``: every scope of the language is made here."""
        return env | dict.fromkeys(names, binder)

    def bind_params(self, params: Iterable[A.Param], env: Scope) -> Scope:
        for p in params:
            env = self.bind(env, p, (p.name,))
        return env

    def expr(self, e: Any, env: Scope) -> None:
        method = getattr(self, "x_" + type(e).__name__, None)
        if method is not None:
            method(e, env)
        else:
            self.node(e, env)

    def node(self, n: Any, env: Scope) -> None:
        """The default descent: every field, in order."""
        for x in n if isinstance(n, tuple) else (getattr(n, f) for f in n._compared):
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


class Binder(Walker):
    """Keeps the referee of every node of a unit that names something (``binding``)."""

    def __init__(self, program: Program, ns: Namespace):
        self.program, self.ns = program, ns
        self.bound: dict[int, Referee] = {}
        self.slots = 0  # the unit's slots numbered so far

    def bind(self, env: Scope, binder: Any, names: tuple[str, ...]) -> Scope:
        if id(binder) not in self.bound:  # (a `for`'s name is in scope in its condition and its body)
            self.bound[id(binder)] = Local(self.slots)
            self.slots += len(names)
        return env | {n: Local(slot(self.bound, binder) + i) for i, n in enumerate(names)}

    def x_Name(self, e: A.Name, env: Scope) -> None:
        found = env.get(e.id) or meaning(self.program, self.ns, e.id)
        if found is not None:
            self.bound[id(e)] = found

    def stmt(self, s: Any, env: Scope) -> Scope:
        if isinstance(s, A.Assign) and s.name in env:
            self.bound[id(s)] = env[s.name]
        return super().stmt(s, env)

    def x_Field(self, e: A.Field, env: Scope) -> None:
        self.expr(e.obj, env)
        module = self.bound.get(id(e.obj)) if isinstance(e.obj, A.Name) else None
        if isinstance(module, ModuleRef):
            found = meaning(self.program, module.ns, e.name)
            if found is not None:
                self.bound[id(e)] = found

    def x_Index(self, e: A.Index, env: Scope) -> None:
        self.node(e, env)
        table = self.bound.get(id(e.obj)) if isinstance(e.obj, A.Name) else None
        if isinstance(table, UnitRef) and isinstance(table.unit.decl, A.TableDecl):
            self.bound[id(e)] = table


def binding(program: Program, unit: Unit) -> dict[int, Referee]:
    """The referees of ``unit``'s nodes, by the node's identity; bound at the first need."""
    if unit.bound is None:
        binder = Binder(program, program.loaded.namespaces[unit.ns])
        binder.walk_unit(program, unit)
        unit.bound = binder.bound
    return unit.bound
