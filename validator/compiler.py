"""Compile checked namespaces into Python closures.

Each expression becomes a function ``ev(frame)``; ``frame[0]`` is the run's ``Context`` and the
other slots hold parameters and ``let`` bindings (a lambda's ``frame[1]`` is its parent's frame).
Nothing here generates Python source: closures are built from the AST only.

This module is the driver (units, programs, the order of compilation); the layers below it are
``compile_control``, ``compile_defs`` and ``compile_expr``, with shared helpers in ``closures``.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any, Callable

from . import ast as A
from .diagnostics import Diagnostic
from .loader import Loaded, Namespace

from .closures import (Ev, FnScope, _DICE_BUILTINS, _collect_names)
from .compile_control import ControlCompiler


@dataclass
class Unit:
    """One compiled definition."""

    ns: str
    name: str
    decl: Any
    fn: Callable[..., Any] | None = None  # (ctx, *args)
    arity: int | None = None  # None: a value, not a function
    uses_decisions: bool = False
    used: bool = False
    # reads no input, decision, procedure or dice and calls no unit that may recur (even indirectly): a
    # value of it is the same in every run of the program, and computing it takes the same path, so a
    # zero-argument one is computed once per program, not once per run (results of functions likewise)
    state_free: bool = False
    body_fn: list[Any] | None = None  # a decision: [its body's function, its closure] (see ``compile_control``)
    resume: Callable[..., Any] | None = None  # a decision: its resolution past a guessed first value
    memo_stats: list[int] | None = None  # a function: [calls computed, calls answered from the memo]
    # lies on a cycle of the reference graph (it may call itself, through any chain)
    recursive: bool = False
    # its calls count toward the depth limit: a decision on a cycle, or a unit on a cycle that passes
    # through no decision. Every cycle so has a counted unit, and only cycles can nest without end; a
    # chain of decisions (each move waiting for the next) counts one call per decision, not one per
    # function between them
    counted: bool = False
    # named by decision bodies alone (no function, value, query or cycle policy): each of its calls comes
    # from evaluating one decision, whose value is kept once resolved
    decisions_only: bool = False
    # its number in the program: the memo keys of both engines name a unit by it
    index: int = 0


@dataclass
class Program:
    loaded: Loaded
    units: dict[tuple[str, str], Unit] = field(default_factory=dict)
    inputs: list[tuple[str, A.InputDecl, Ev | None]] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    run_seconds: float = 0.0  # time its runs took so far on closures (see ``codegen.note_run``)
    generated: dict[str, Any] | None = None  # set once the units run generated code
    refs: dict[tuple[str, str], set[tuple[str, str]]] = field(default_factory=dict)  # unit -> units it names

    @property
    def entry(self) -> Namespace:
        return self.loaded.entry

    def query(self, name: str) -> Unit | None:
        unit = self.units.get((self.entry.key, name))
        if unit is not None and isinstance(unit.decl, A.QueryDecl):
            return unit
        return None

    def queries(self) -> list[str]:
        return sorted(n for (ns, n), u in self.units.items() if ns == self.entry.key and isinstance(u.decl, A.QueryDecl))


# ---------------------------------------------------------------- the compiler


class Compiler(ControlCompiler):
    def __init__(self, loaded: Loaded):
        self.loaded = loaded
        self.program = Program(loaded)
        self.diags = self.program.diagnostics
        self.ns: Namespace = loaded.entry
        self.current: Unit | None = None
        self.enum_members: dict[str, dict[str, str]] = {}
        self.proc_steps: list[str] | None = None
        self.in_loop = 0
        self.defaulted: set[int] = set()

    def compile(self) -> Program:
        for ns in self.loaded.namespaces.values():
            members: dict[str, str] = {}
            for d in ns.defs.values():
                if isinstance(d, A.EnumDecl):
                    for m in d.members:
                        members[m] = d.name
            self.enum_members[ns.key] = members
            for key, d in ns.defs.items():
                if isinstance(d, (A.EnumDecl, A.RecordDecl)):
                    continue
                arity = None
                if isinstance(d, A.DefDecl) and d.params is not None:
                    arity = len(d.params)
                elif isinstance(d, (A.DecisionDecl, A.ProcedureDecl, A.QueryDecl)):
                    arity = len(d.params)
                elif isinstance(d, A.TableDecl):
                    arity = len(d.params)
                self.program.units[(ns.key, key)] = Unit(ns.key, key, d, arity=arity,
                                                          index=len(self.program.units) + 1)
        self._mark_decision_users()
        for (nskey, _), unit in list(self.program.units.items()):
            self.ns = self.loaded.namespaces[nskey]
            self.current = unit
            self.compile_unit(unit)
        for ns in self.loaded.namespaces.values():
            for name, overrides in ns.cell_overrides.items():
                if not isinstance(ns.defs.get(name), A.TableDecl):
                    tables = [n for n, x in ns.defs.items() if isinstance(x, A.TableDecl)]
                    close = difflib.get_close_matches(name, tables, 1)
                    for ov in overrides:
                        self.error("C013", f"`override {name}[...]`: the extended rulesets have no table `{name}`",
                                   ov.span, help=f"did you mean `{close[0]}`?" if close else None)
        for (nskey, _), unit in self.program.units.items():
            if isinstance(unit.decl, A.CycleDecl):
                target = self.program.units.get((nskey, unit.decl.name))
                if target is None or not isinstance(target.decl, A.DecisionDecl):
                    self.error("C019", f"cycle policy for `{unit.decl.name}`, which is not a decision", unit.decl.span)
        return self.program

    def _mark_decision_users(self) -> None:
        """What the reference graph says of each unit: it may recur, it reads decisions (so may not be
        cached across guesses), only decisions name it, it is state-free."""
        refs: dict[tuple[str, str], set[tuple[str, str]]] = {}
        for (nskey, key), unit in self.program.units.items():
            names = A.per_node("global names", unit.decl, _global_names)
            ns = self.loaded.namespaces[nskey]
            out = set()
            for n in names:
                if "." in n:
                    alias, _, rest = n.partition(".")
                    sub = ns.modules.get(alias)
                    if sub is not None:
                        out.add((sub, rest))
                else:
                    out.add((nskey, n))
            refs[(nskey, key)] = out
        self.program.refs = refs
        decisions = {k for k, u in self.program.units.items() if isinstance(u.decl, A.DecisionDecl)}
        for k in _on_cycles(refs):
            unit = self.program.units[k]
            unit.recursive = True
            unit.counted = k in decisions
        for k in _on_cycles({k: deps - decisions for k, deps in refs.items() if k not in decisions}):
            self.program.units[k].counted = True
        namers: dict[tuple[str, str], set[tuple[str, str]]] = {}
        for k, deps in refs.items():
            for dep in deps:
                namers.setdefault(dep, set()).add(k)
        for k, named_by in namers.items():
            if k in self.program.units and named_by <= decisions:
                self.program.units[k].decisions_only = True
        users = _readers_of(decisions, refs)
        for k in users:
            self.program.units[k].uses_decisions = True
        stateful = {k for k, u in self.program.units.items()
                    if not isinstance(u.decl, (A.DefDecl, A.ConstDecl, A.TableDecl))}
        for k, deps in refs.items():
            if any(n in _DICE_BUILTINS for _, n in deps):  # conservative: a shadowing name counts too
                stateful.add(k)
        # nor anything that may reach a unit that recurs: a result kept from an earlier run would
        # cut short a recursion a fresh process makes, and with it the depth limit's verdict (E005)
        stateful |= {k for k, u in self.program.units.items() if u.recursive}
        stateful = _readers_of(stateful, refs)
        for k, u in self.program.units.items():
            u.state_free = k not in stateful

    def compile_unit(self, unit: Unit) -> None:
        d = unit.decl
        if isinstance(d, A.ConstDecl):
            body = self.expr(d.value, {}, FnScope())
            unit.fn = self._value_fn(unit, body, FnScope())
        elif isinstance(d, A.DefDecl):
            self._check_cites(d, d.kind == "rule")
            scope = FnScope()
            env = self._params(d.params or (), scope)
            body = self.expr(d.body, env, scope)
            if d.params is None:
                unit.fn = self._value_fn(unit, body, scope)
            else:
                unit.fn = self._function(unit, body, scope, len(d.params), d.span, d.cites if d.kind == "rule" else None)
        elif isinstance(d, A.QueryDecl):
            scope = FnScope()
            env = self._params(d.params, scope)
            body = self.expr(d.body, env, scope)
            unit.fn = self._function(unit, body, scope, len(d.params), d.span, None)
        elif isinstance(d, A.InputDecl):
            default = self.expr(d.default, {}, FnScope()) if d.default is not None else None
            self.program.inputs.append((unit.ns, d, default))
            key = (unit.ns, unit.name)
            unit.fn = lambda ctx, _k=key: ctx.inputs[_k]
        elif isinstance(d, A.TableDecl):
            self._check_cites(d, True)
            unit.fn = self.table(d)
        elif isinstance(d, A.DecisionDecl):
            self._check_cites(d, True)
            unit.fn = self.decision(unit, d)
        elif isinstance(d, A.CycleDecl):
            unit.fn = None
        elif isinstance(d, A.ProcedureDecl):
            self._check_cites(d, True)
            unit.fn = self.procedure(unit, d)

    def _check_cites(self, d: Any, required: bool) -> None:
        if required and not d.cites:
            self.error("C011", f"`{d.name}` cites no clause", d.span,
                       help='add `cite "ID"` naming the clause it implements')

def _global_names(decl: Any) -> frozenset[str]:
    names: set[str] = set()
    _collect_names(decl, names)
    return frozenset(names)


def _readers_of(seeds: set[Any], refs: dict[Any, set[Any]]) -> set[Any]:
    """The seeds and every definition that reads one of them, directly or through others."""
    found = set(seeds)
    changed = True
    while changed:
        changed = False
        for k, deps in refs.items():
            if k not in found and deps & found:
                found.add(k)
                changed = True
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


def compile_program(loaded: Loaded) -> Program:
    return Compiler(loaded).compile()
