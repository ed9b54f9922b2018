"""The checked program: the units of a loaded ruleset, what the reference graph says of them, and
the check of every name, arity, table, step and statement in them.

A *unit* is one definition of a namespace (a value, function, rule, table, decision, cycle policy,
procedure, query or input). ``build_program`` makes them, works out from the graph of which unit
names which (``Program.refs``) what each may do (recur, read decisions, depend on the state), and
walks every body with its scopes (``Resolver``), reporting what cannot mean anything: unknown
names (with "did you mean"), wrong arities, tables looked up wrongly, duplicate fields and
parameters, misshapen tables, missing citations, unknown steps, statements out of place. The
passes of ``checker`` then add what needs the whole program (types, citations, unused names).
The engines (``reference``, ``backend``) run a program that checked without errors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Collection, Sequence, cast

from . import ast as A
from ..lib.builtins import BUILTINS
from ..lib.patterns import check as pattern_problem
from ..core.diagnostics import Diagnostic, Related, Span, Suggestions, closest_name
from ..lib.values import as_key
from .loader import Loaded, Namespace

DICE_BUILTINS = frozenset({"roll"})


@dataclass
class Unit:
    """One definition of a namespace."""

    ns: str
    name: str
    decl: Any
    arity: int | None = None  # None: a value, not a function
    index: int = 0  # its number in the program: the memo keys of both engines name a unit by it
    used: bool = False  # named somewhere (for W101)
    uses_decisions: bool = False  # reads a decision, directly or through others
    # reads no input, decision, procedure or die and calls nothing that may recur, directly or through
    # others: what it gives is the same in every run (see `reference`, "state-free definitions")
    state_free: bool = False
    recursive: bool = False  # lies on a cycle of the reference graph
    # its calls count toward the depth limit: a decision on a cycle, or a unit on a cycle that passes
    # through no decision. Every cycle so has a counted unit, and only cycles can nest without end; a
    # chain of decisions (each move waiting for the next) counts one call per decision
    counted: bool = False


@dataclass
class Program:
    loaded: Loaded
    units: dict[tuple[str, str], Unit] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
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

    def inputs(self) -> list[Unit]:
        return [u for u in self.units.values() if isinstance(u.decl, A.InputDecl)]


def build_program(loaded: Loaded) -> Program:
    program = Program(loaded)
    for ns in loaded.namespaces.values():
        for key, d in ns.defs.items():
            if isinstance(d, (A.EnumDecl, A.RecordDecl)):
                continue
            arity = None
            if isinstance(d, A.DefDecl) and d.params is not None:
                arity = len(d.params)
            elif isinstance(d, (A.DecisionDecl, A.ProcedureDecl, A.QueryDecl, A.TableDecl)):
                arity = len(d.params)
            program.units[(ns.key, key)] = Unit(ns.key, key, d, arity=arity, index=len(program.units) + 1)
    _analyse(program)
    Resolver(program).check()
    return program


# ---------------------------------------------------------------- the reference graph


def _analyse(program: Program) -> None:
    """What the reference graph says of each unit: it may recur (and which count toward the depth
    limit), it reads decisions, it is state-free."""
    refs: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for (nskey, key), unit in program.units.items():
        names = A.per_node("global names", unit.decl, global_names)
        ns = program.loaded.namespaces[nskey]
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
    program.refs = refs
    decisions = {k for k, u in program.units.items() if isinstance(u.decl, A.DecisionDecl)}
    for k in _on_cycles(refs):
        unit = program.units[k]
        unit.recursive = True
        unit.counted = k in decisions
    for k in _on_cycles({k: deps - decisions for k, deps in refs.items() if k not in decisions}):
        program.units[k].counted = True
    for k in _readers_of(decisions, refs):
        program.units[k].uses_decisions = True
    stateful = {k for k, u in program.units.items() if not isinstance(u.decl, (A.DefDecl, A.ConstDecl, A.TableDecl))}
    for k, deps in refs.items():
        if any(n.split(".")[-1] in DICE_BUILTINS for _, n in deps):  # conservative: a shadowing name counts too
            stateful.add(k)
    # nor anything that may reach a unit that recurs: its value alone would cut short a recursion the
    # run makes, and with it the depth limit's verdict (E005)
    stateful |= {k for k, u in program.units.items() if u.recursive}
    stateful = _readers_of(stateful, refs)
    for k, u in program.units.items():
        u.state_free = k not in stateful


def global_names(decl: Any) -> frozenset[str]:
    names: set[str] = set()
    _collect_names(decl, names)
    return frozenset(names)


def sorted_global_names(decl: Any) -> tuple[str, ...]:
    """The global names a declaration mentions, in order (a check's context lists what they mean),
    kept per declaration."""
    return A.per_node("sorted global names", decl,
                      lambda d: tuple(sorted(A.per_node("global names", d, global_names))))


def _collect_names(node: Any, out: set[str]) -> None:
    """Every global name a declaration mentions (``m.x`` for module members)."""
    if isinstance(node, A.Name):
        out.add(node.id)
        return
    if isinstance(node, A.Field) and isinstance(node.obj, A.Name):
        out.add(f"{node.obj.id}.{node.name}")
        out.add(node.obj.id)
        return
    if isinstance(node, (list, tuple)):
        for x in node:
            _collect_names(x, out)
        return
    if isinstance(node, A.Node):
        for fname in node._compared:
            _collect_names(getattr(node, fname), out)


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


# ---------------------------------------------------------------- the check of every body


class _Scope:
    """A function body or a lambda: `:=` may only assign a `var` of its own scope."""


@dataclass(frozen=True)
class _Local:
    scope: _Scope
    mutable: bool = False


Env = dict[str, _Local]


def cycle_policy(ns: Namespace, decision: str) -> A.CycleDecl | None:
    """The cycle policy that names a decision, if any."""
    for d in ns.defs.values():
        if isinstance(d, A.CycleDecl) and decision in d.names:
            return d
    return None


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


def global_meaning(program: Program, ns: Namespace, enum_members: dict[str, str], name: str) -> tuple[str, Any] | None:
    """What a global name means in a namespace, first match wins: ("unit", unit), ("type", decl) for
    an enum or record used as a value, ("data", value), ("enum", name) for a member, ("builtin", b),
    ("module", key); none when it is unknown."""
    unit = program.units.get((ns.key, name))
    if unit is not None:
        return ("unit", unit)
    if name in ns.defs:
        return ("type", ns.defs[name])
    if name in ns.data:
        return ("data", ns.data[name].value)
    if name in enum_members:
        return ("enum", name)
    if name in BUILTINS:
        return ("builtin", BUILTINS[name])
    if name in ns.modules:
        return ("module", ns.modules[name])
    return None


class Resolver:
    """Walks every unit's body with its scopes and reports what cannot mean anything."""

    def __init__(self, program: Program):
        self.program = program
        self.loaded = program.loaded
        self.diags = program.diagnostics
        self.suggestions = Suggestions()
        self.ns: Namespace = program.loaded.entry
        self.enum_members: dict[str, dict[str, str]] = {}
        for ns in self.loaded.namespaces.values():
            self.enum_members[ns.key] = {m: d.name for d in ns.defs.values() if isinstance(d, A.EnumDecl)
                                         for m in d.members}
        self.proc_steps: list[str] | None = None
        self.in_loop = 0
        self.defaulted: set[int] = set()  # the left operands of `??`: a data field missing there is none
        # the definitions the check of the current unit marked used: ("" for its own namespace, or a
        # module's key; name), kept with a check that found nothing (``_RESOLVED``)
        self.marked: list[tuple[str, str]] | None = None
        self.summaries: dict[tuple[str, str], Any] = {}
        self.member_summaries: dict[str, frozenset[tuple[str, str]]] = {}

    def error(self, code: str, message: str, span: Span, help: str | None = None,
              related: tuple[Related, ...] = ()) -> None:
        self.diags.append(Diagnostic(code, message, span, help=help, related=related))

    def check(self) -> None:
        for (nskey, _), unit in list(self.program.units.items()):
            self.ns = self.loaded.namespaces[nskey]
            self.shared_unit(unit)
        for ns in self.loaded.namespaces.values():
            for name, overrides in ns.cell_overrides.items():
                if not isinstance(ns.defs.get(name), A.TableDecl):
                    tables = [n for n, x in ns.defs.items() if isinstance(x, A.TableDecl)]
                    close = self.suggestions.closest(name, tables)
                    for ov in overrides:
                        self.error("C013", f"`override {name}[...]`: the extended rulesets have no table `{name}`",
                                   ov.span, help=f"did you mean `{close}`?" if close else None)
        for (nskey, _), unit in self.program.units.items():
            if not isinstance(unit.decl, A.CycleDecl):
                continue
            for name in unit.decl.names:
                target = self.program.units.get((nskey, name))
                if target is None or not isinstance(target.decl, A.DecisionDecl):
                    self.error("C019", f"cycle policy for `{name}`, which is not a decision", unit.decl.span)
                    continue
                covering = [d for d in self.loaded.namespaces[nskey].defs.values()
                            if isinstance(d, A.CycleDecl) and name in d.names]
                if covering[0] is not unit.decl:
                    self.error("C002", f"decision `{name}` has a second cycle policy", unit.decl.span,
                               related=(Related(covering[0].span, "first here"),))

    def shared_unit(self, unit: Unit) -> None:
        """``unit``'s check, once per context (``_RESOLVED``): a check that found nothing finds nothing
        again, and marks the same definitions used, wherever what it reads means the same; this is
        what each variant of a base ruleset would otherwise check again in every base definition."""
        context = self.context(unit)
        if context is not None:
            used = _RESOLVED.get(unit.decl, context)
            if used is not A.MISSING:
                for where, name in cast(tuple[tuple[str, str], ...], used):
                    self.program.units[(where or self.ns.key, name)].used = True
                return
        before = len(self.diags)
        self.marked = []
        self.unit(unit)
        if context is not None and len(self.diags) == before:
            _RESOLVED.put(unit.decl, context, tuple(self.marked))
        self.marked = None

    def context(self, unit: Unit) -> tuple[Any, ...] | None:
        """What the check of ``unit`` reads besides its declaration: the meaning (``summary``) of every
        global name the declaration mentions, and its namespace's enum members; None for what is not
        shared (a cycle policy, a table a variant overrides cells of)."""
        d = unit.decl
        if isinstance(d, A.CycleDecl) or (isinstance(d, A.TableDecl) and self.ns.cell_overrides.get(d.name)):
            return None
        members = self.member_summaries.get(self.ns.key)
        if members is None:
            members = self.member_summaries[self.ns.key] = frozenset(self.enum_members.get(self.ns.key, {}).items())
        names = sorted_global_names(d)
        return (members, tuple(self.summary(n) for n in names))

    def summary(self, name: str) -> Any:
        """What the check reads of a global name's meaning in the current namespace (``m.x``: of the
        member of a module): for a definition its kind and arity, for data the fields it has."""
        key = (self.ns.key, name)
        if key in self.summaries:
            return self.summaries[key]
        alias, dot, member = name.partition(".")
        found = global_meaning(self.program, self.ns, self.enum_members.get(self.ns.key, {}), alias)
        if not dot:
            out = _summary_of(self.program, found)
        elif found is not None and found[0] == "module":
            sub = self.loaded.namespaces[found[1]]
            meaning = global_meaning(self.program, sub, self.enum_members.get(sub.key, {}), member)
            out = ("module", found[1], _summary_of(self.program, meaning))
        else:
            out = None  # `x.f` of a value: a field, read at run time (`x` itself is summarised)
        self.summaries[key] = out
        return out

    def unit(self, unit: Unit) -> None:
        d = unit.decl
        if isinstance(d, A.ConstDecl):
            self.expr(d.value, {}, _Scope())
        elif isinstance(d, A.DefDecl):
            self.cites(d, d.kind == "rule")
            scope = _Scope()
            self.expr(d.body, self.params(d.params or (), scope), scope)
        elif isinstance(d, A.QueryDecl):
            scope = _Scope()
            self.expr(d.body, self.params(d.params, scope), scope)
        elif isinstance(d, A.InputDecl):
            if d.default is not None:
                self.expr(d.default, {}, _Scope())
        elif isinstance(d, A.TableDecl):
            self.cites(d, True)
            self.table(d)
        elif isinstance(d, A.DecisionDecl):
            self.cites(d, True)
            self.decision(unit, d)
        elif isinstance(d, A.CycleDecl):
            unit.used = True  # (a policy is read by its decisions' resolution, never named)
            self.cycle(d)
        elif isinstance(d, A.ProcedureDecl):
            self.cites(d, True)
            self.procedure(d)

    def cites(self, d: Any, required: bool) -> None:
        if required and not d.cites:
            self.error("C011", f"`{d.name}` cites no clause", d.span, help='add `cite "ID"` naming the clause it implements')

    def params(self, params: tuple[A.Param, ...], scope: _Scope) -> Env:
        env: Env = {}
        for p in params:
            if p.name in env:
                self.error("C002", f"parameter `{p.name}` appears twice", p.span)
            env[p.name] = _Local(scope)
        return env

    # -- names

    def lookup_global(self, name: str, ns: Namespace | None = None) -> tuple[str, Any] | None:
        ns = ns or self.ns
        found = global_meaning(self.program, ns, self.enum_members.get(ns.key, {}), name)
        if found is not None and found[0] == "unit":
            found[1].used = True
            if self.marked is not None:
                self.marked.append(("" if ns.key == self.ns.key else ns.key, name))
        return found

    def unknown(self, name: str, span: Span, env: Env) -> None:
        members = self.enum_members.get(self.ns.key, {})
        known: tuple[Collection[str], ...] = (env, self.ns.defs, self.ns.data, self.ns.modules, BUILTINS, members)
        hint: str | None = None
        if self.suggestions.affordable(sum(map(len, known))):  # (bounded over the whole check)
            close = closest_name(name, [c for names in known for c in names if " " not in c])
            hint = f"did you mean `{close}`?" if close else member_help(name, members)
        if name == A.BASE:
            hint = "`base` is the definition an `override` replaces, and means nothing elsewhere"
        self.error("C001", f"unknown name `{name}`", span, help=hint)

    def global_value(self, found: tuple[str, Any], name: str, span: Span) -> None:
        kind, obj = found
        if kind == "unit" and isinstance(obj.decl, A.TableDecl):
            self.error("C004", f"table `{name}` is looked up with `{name}[...]`", span)
        elif kind == "module":
            self.error("C004", f"`{name}` is a module; use `{name}.NAME`", span)
        elif kind == "type":
            self.error("C004", f"`{name}` is a type, not a value", span)

    # -- expressions

    def expr(self, e: A.Expr, env: Env, scope: _Scope) -> None:
        getattr(self, "x_" + type(e).__name__)(e, env, scope)

    def exprs(self, es: Any, env: Env, scope: _Scope) -> None:
        for e in es:
            self.expr(e, env, scope)

    def x_Int(self, e: A.Int, env: Env, scope: _Scope) -> None:
        pass

    x_Str = x_Bool = x_NoneLit = x_Dice = x_Int

    def x_Absent(self, e: A.Absent, env: Env, scope: _Scope) -> None:
        self.error("P001", "`-` (absent) only stands alone in a table cell", e.span)

    def x_Name(self, e: A.Name, env: Env, scope: _Scope) -> None:
        if e.id in env:
            return
        found = self.lookup_global(e.id)
        if found is None:
            self.unknown(e.id, e.span, env)
        else:
            self.global_value(found, e.id, e.span)

    def x_ListLit(self, e: A.ListLit, env: Env, scope: _Scope) -> None:
        self.exprs(e.items, env, scope)

    x_SetLit = x_TupleLit = x_ListLit

    def x_RecordLit(self, e: A.RecordLit, env: Env, scope: _Scope) -> None:
        seen: set[str] = set()
        for k, _ in e.items:
            if k in seen:
                self.error("C002", f"field `{k}` appears twice", e.span)
            seen.add(k)
        self.exprs([v for _, v in e.items], env, scope)

    def x_MapLit(self, e: A.MapLit, env: Env, scope: _Scope) -> None:
        for k, v in e.items:
            self.expr(k, env, scope)
            self.expr(v, env, scope)

    def x_Comp(self, e: A.Comp, env: Env, scope: _Scope) -> None:
        inner = dict(env)
        for cf in e.fors:
            self.expr(cf.iter, inner, scope)
            inner = {**inner, **{n: _Local(scope) for n in cf.names}}
            if cf.cond is not None:
                self.expr(cf.cond, inner, scope)
        self.expr(e.elem, inner, scope)
        if e.key is not None:
            self.expr(e.key, inner, scope)

    def x_Let(self, e: A.Let, env: Env, scope: _Scope) -> None:
        self.expr(e.value, env, scope)
        self.expr(e.body, {**env, e.name: _Local(scope)}, scope)

    def x_If(self, e: A.If, env: Env, scope: _Scope) -> None:
        for c, v in e.branches:
            self.expr(c, env, scope)
            self.expr(v, env, scope)
        self.expr(e.otherwise, env, scope)

    def x_Lambda(self, e: A.Lambda, env: Env, scope: _Scope) -> None:
        inner_scope = _Scope()
        inner = dict(env)
        for p in e.params:
            inner[p.name] = _Local(inner_scope)
        self.expr(e.body, inner, inner_scope)

    def x_BoolOp(self, e: A.BoolOp, env: Env, scope: _Scope) -> None:
        self.exprs(e.items, env, scope)

    def x_Not(self, e: A.Not, env: Env, scope: _Scope) -> None:
        self.expr(e.operand, env, scope)

    x_Neg = x_Not

    def x_Compare(self, e: A.Compare, env: Env, scope: _Scope) -> None:
        members = self.enum_members.get(self.ns.key, {})
        for lit, other in ((e.left, e.right), (e.right, e.left)):
            if isinstance(lit, A.Str) and isinstance(other, A.Name) and other.id in members and lit.value not in members:
                self.error("C016", f"`{lit.value}` is not a member of enum `{members[other.id]}`", lit.span,
                           help=member_help(lit.value, {m: t for m, t in members.items() if t == members[other.id]}))
        self.expr(e.left, env, scope)
        self.expr(e.right, env, scope)

    def x_BinOp(self, e: A.BinOp, env: Env, scope: _Scope) -> None:
        if e.op == "??":
            self.defaulted.add(id(e.left))
        self.expr(e.left, env, scope)
        self.expr(e.right, env, scope)

    def x_Field(self, e: A.Field, env: Env, scope: _Scope) -> None:
        if isinstance(e.obj, A.Name) and e.obj.id not in env:
            found = self.lookup_global(e.obj.id)
            if found is not None and found[0] == "module":
                sub = self.loaded.namespaces[found[1]]
                target = self.lookup_global(e.name, sub)
                if target is None or target[0] not in ("unit", "data", "enum"):
                    close = self.suggestions.closest(e.name, sub.defs)
                    self.error("C001", f"module `{e.obj.id}` has no `{e.name}`", e.span,
                               help=f"did you mean `{e.obj.id}.{close}`?" if close else None)
                    return
                self.global_value(target, e.name, e.span)
                return
            if found is not None and found[0] == "data" and isinstance(found[1], dict):
                if e.name not in found[1] and id(e) not in self.defaulted:  # `d.f ?? x`: the data may leave f out
                    close = self.suggestions.closest(e.name, found[1])
                    self.error("C012", f"data `{e.obj.id}` has no field `{e.name}`", e.span,
                               help=f"did you mean `{close}`?" if close else None)
                return
        self.expr(e.obj, env, scope)

    def x_Index(self, e: A.Index, env: Env, scope: _Scope) -> None:
        if isinstance(e.obj, A.Name) and e.obj.id not in env:
            found = self.lookup_global(e.obj.id)
            if found is not None and found[0] == "unit" and isinstance(found[1].decl, A.TableDecl):
                if len(e.keys) != found[1].arity:
                    self.error("C003", f"table `{e.obj.id}` has {found[1].arity} keys, not {len(e.keys)}", e.span)
                else:
                    self.table_keys_known(found[1], e.keys, env)
                self.exprs(e.keys, env, scope)
                return
        if len(e.keys) != 1:
            self.error("C003", "only tables take several keys", e.span)
        self.expr(e.obj, env, scope)
        self.expr(e.keys[0], env, scope)

    def table_keys_known(self, unit: Unit, keys: tuple[A.Expr, ...], env: Env) -> None:
        """A key written as a literal (or an enum's member) that no row or column of a grid table has:
        the lookup could only miss, an error at run time unless the table's result is optional."""
        d: A.TableDecl = unit.decl
        if d.source is not None or (d.ret is not None and d.ret.optional):
            return
        members = self.enum_members.get(self.ns.key, {})
        known = table_keys(self.loaded.namespaces[unit.ns], unit)
        for i, k in enumerate(keys):
            if isinstance(k, (A.Str, A.Int, A.Bool)) and not isinstance(k.value, bool):
                value = k.value
            elif isinstance(k, A.Name) and k.id not in env and k.id in members and k.id not in self.ns.defs:
                value = k.id
            else:
                continue
            if value not in known[i]:
                close = self.suggestions.closest(str(value), known[i])
                self.error("C029", f"table `{d.name}` has no {'column' if i else 'row'} `{value}`", k.span,
                           help=f"did you mean `{close}`?" if close else
                           "declare the table's result optional (`-> T?`) if a miss should give none",
                           related=(Related(d.span, "the table"),))

    def x_With(self, e: A.With, env: Env, scope: _Scope) -> None:
        self.expr(e.obj, env, scope)
        self.exprs([v for _, v in e.items], env, scope)

    def x_Call(self, e: A.Call, env: Env, scope: _Scope) -> None:
        self.exprs(e.args, env, scope)
        self.exprs([v for _, v in e.kwargs], env, scope)
        span = e.span
        target: tuple[str, Any] | None = None
        fname = None
        if isinstance(e.func, A.Name) and e.func.id not in env:
            fname = e.func.id
            target = self.lookup_global(fname)
            if target is None:
                self.unknown(fname, e.func.span, env)
                return
        elif isinstance(e.func, A.Field) and isinstance(e.func.obj, A.Name) and e.func.obj.id not in env:
            found = self.lookup_global(e.func.obj.id)
            if found is not None and found[0] == "module":
                sub = self.loaded.namespaces[found[1]]
                fname = f"{e.func.obj.id}.{e.func.name}"
                target = self.lookup_global(e.func.name, sub)
                if target is None:
                    self.error("C001", f"module `{e.func.obj.id}` has no `{e.func.name}`", e.func.span)
                    return
        if target is None:
            self.expr(e.func, env, scope)
            return
        kind, obj = target
        if kind == "builtin":
            n = len(e.args) + len(e.kwargs)
            if not obj.min_args <= n <= obj.max_args:
                want = str(obj.min_args) if obj.min_args == obj.max_args else f"{obj.min_args} to {obj.max_args}"
                self.error("C003", f"`{obj.name}` takes {want} argument{'s' if obj.max_args != 1 else ''}, not {n}", span)
            elif obj.name in ("match", "search") and len(e.args) >= 2 and isinstance(e.args[1], A.Str):
                problem = pattern_problem(e.args[1].value)
                if problem is not None:
                    self.error("C014", f"invalid pattern: {problem}", e.args[1].span,
                               help="patterns are RE2 regular expressions (no back-references or look-around)")
            elif obj.name == "match_first" and len(e.args) >= 2 and isinstance(e.args[1], A.ListLit):
                for item in e.args[1].items:
                    problem = pattern_problem(item.value) if isinstance(item, A.Str) else None
                    if problem is not None:
                        self.error("C014", f"invalid pattern: {problem}", item.span,
                                   help="patterns are RE2 regular expressions (no back-references or look-around)")
        elif kind == "unit":
            unit: Unit = obj
            if e.kwargs:
                self.error("C003", f"`{fname}` takes no named arguments", span)
            if isinstance(unit.decl, A.TableDecl):
                self.error("C018", f"table `{fname}` is looked up with `{fname}[...]`, not called", span)
            elif unit.arity is None:
                self.error("C018", f"`{fname}` is a value, not a function", span, help=f"write `{fname}` without parentheses")
            elif unit.arity != len(e.args):
                self.error("C003", f"`{fname}` takes {unit.arity} argument{'s' if unit.arity != 1 else ''}, "
                                   f"not {len(e.args)}", span, related=(Related(unit.decl.span, "defined here"),))
        else:
            self.error("C018", f"`{fname}` is not a function", span)

    # -- tables

    def table(self, d: A.TableDecl) -> None:
        for ov in self.ns.cell_overrides.get(d.name, []):
            if len(ov.keys) != len(d.params):
                self.error("C003", f"table `{d.name}` has {len(d.params)} keys, not {len(ov.keys)}", ov.span)
                continue
            if not ov.cites:
                self.error("C011", f"the override of a cell of `{d.name}` cites no clause", ov.span,
                           help='add `cite "ID"` naming the clause (or errata) it implements')
            for k in ov.keys:
                self.table_key(k, d)
            self.expr(ov.value, {}, _Scope())
        if d.source is not None:
            self.expr(d.source, {}, _Scope())
            return
        grid = d.grid or ()
        nparams = len(d.params)
        seen: set[tuple[Any, ...]] = set()
        if nparams == 2:
            if len(grid) < 2:
                self.error("C009", f"table `{d.name}` needs a header row and at least one row", d.span)
                return
            header = grid[0]
            cols = [self.table_key(c, d) for c in header[1:]]
            if len(set(cols)) != len(cols):
                self.error("C009", f"table `{d.name}` has a repeated column", _span_of(header[0]))
            for row in grid[1:]:
                if len(row) != len(header):
                    self.error("C009", f"row has {len(row)} cells, the header has {len(header)}", _span_of(row[0]),
                               help=f"every row of `{d.name}` needs one cell per column")
                    continue
                rk = self.table_key(row[0], d)
                for ck, cell in zip(cols, row[1:]):
                    if (rk, ck) in seen:
                        self.error("C009", f"table `{d.name}` has row `{rk}` twice", _span_of(row[0]))
                    if not isinstance(cell, A.Absent):
                        seen.add((rk, ck))
                        self.expr(cell, {}, _Scope())
        elif nparams == 1:
            for row in grid:
                if len(row) != 2:
                    self.error("C009", f"a one-key table row has 2 cells (key, value), not {len(row)}", _span_of(row[0]))
                    continue
                rk = self.table_key(row[0], d)
                if (rk,) in seen:
                    self.error("C009", f"table `{d.name}` has key `{rk}` twice", _span_of(row[0]))
                if not isinstance(row[1], A.Absent):
                    seen.add((rk,))
                    self.expr(row[1], {}, _Scope())
        else:
            self.error("C009", f"a table written as a grid has one or two keys, `{d.name}` has {nparams}", d.span)

    def table_key(self, cell: Any, d: A.TableDecl) -> Any:
        if isinstance(cell, A.Name):
            return cell.id
        if isinstance(cell, (A.Str, A.Int, A.Bool)):
            return cell.value
        self.error("C009", f"table `{d.name}`: a row or column key must be a name, text or number", _span_of(cell))
        return None

    # -- decisions and procedures

    def decision(self, unit: Unit, d: A.DecisionDecl) -> None:
        scope = _Scope()
        self.expr(d.body, self.params(d.params, scope), scope)

    def cycle(self, d: A.CycleDecl) -> None:
        """A cycle policy's parts read `cycle`: the decisions of the cycle, as `{decision, args}` records."""
        pscope = _Scope()
        penv: Env = {"cycle": _Local(pscope)}
        for pol in d.policies:
            if pol.when is not None:
                self.expr(pol.when, penv, pscope)
            self.expr(pol.targets, penv, pscope)
            self.expr(pol.value, penv, pscope)

    def procedure(self, d: A.ProcedureDecl) -> None:
        scope = _Scope()
        env = self.params(d.params, scope)
        seen_steps: dict[str, A.Step] = {}
        for s in d.body:
            if isinstance(s, A.Step) and s.name in seen_steps:
                self.error("C002", f"step `{s.name}` appears twice", s.span,
                           related=(Related(seen_steps[s.name].span, "first here"),))
            if isinstance(s, A.Step):
                seen_steps[s.name] = s
        self.proc_steps = [s.name for s in d.body if isinstance(s, A.Step)]
        for s in d.body:
            if isinstance(s, A.Var):
                self.expr(s.value, env, scope)
                env = {**env, s.name: _Local(scope, mutable=True)}
            elif isinstance(s, A.Step):
                if not s.cites:
                    self.error("C011", f"step `{s.name}` cites no clause", s.span,
                               help='add `cite "ID"` naming the clause the step implements')
                self.block(s.body, env, scope)
            else:
                self.error("C020", "only `var` declarations and `step`s may stand at the top of a procedure", _span_of(s))
        self.proc_steps = None
        self.unreachable_steps(d)

    def unreachable_steps(self, d: A.ProcedureDecl) -> None:
        """A step after an unconditional ``goto``/``stop``/``reject`` that no ``goto`` names is dead."""
        steps = [s for s in d.body if isinstance(s, A.Step)]
        targets: set[str] = set()
        for s in steps:
            _collect_gotos(s.body, targets)
        for prev, s in zip(steps, steps[1:]):
            if prev.body and isinstance(prev.body[-1], (A.Goto, A.Stop, A.Reject)) and s.name not in targets:
                self.diags.append(Diagnostic("W102", f"step `{s.name}` can never run", s.span,
                                             help=f"step `{prev.name}` always leaves before it and no `goto` names it"))

    def block(self, stmts: tuple[A.Stmt, ...], env: Env, scope: _Scope) -> None:
        for s in stmts:
            env = self.stmt(s, env, scope)

    def stmt(self, s: A.Stmt, env: Env, scope: _Scope) -> Env:
        if isinstance(s, (A.Var, A.LetStmt)):
            self.expr(s.value, env, scope)
            return {**env, s.name: _Local(scope, mutable=isinstance(s, A.Var))}
        if isinstance(s, A.Assign):
            target = env.get(s.name)
            self.expr(s.value, env, scope)
            if target is None or not target.mutable:
                self.error("C022", f"`{s.name}` is not a procedure variable", s.span,
                           help=f"declare it with `var {s.name} = ...` at the top of the procedure")
            elif target.scope is not scope:
                self.error("C022", f"`{s.name}` cannot be assigned from inside a lambda", s.span)
        elif isinstance(s, A.IfStmt):
            for c, b in s.branches:
                self.expr(c, env, scope)
                self.block(b, env, scope)
            if s.otherwise is not None:
                self.block(s.otherwise, env, scope)
        elif isinstance(s, A.For):
            self.expr(s.iter, env, scope)
            inner = {**env, s.name: _Local(scope)}
            if s.cond is not None:
                self.expr(s.cond, inner, scope)
            self.in_loop += 1
            self.block(s.body, inner, scope)
            self.in_loop -= 1
        elif isinstance(s, A.Goto):
            if self.proc_steps is not None and s.target not in self.proc_steps:
                close = self.suggestions.closest(s.target, self.proc_steps)
                self.error("C017", f"no step named `{s.target}`", s.span,
                           help=f"did you mean `{close}`?" if close else f"steps: {', '.join(self.proc_steps[:20])}"
                                                                      + (", ..." if len(self.proc_steps) > 20 else ""))
        elif isinstance(s, (A.Break, A.Continue)):
            if not self.in_loop:
                self.error("C020", f"`{'break' if isinstance(s, A.Break) else 'continue'}` outside a loop", s.span)
        elif isinstance(s, A.Emit):
            self.exprs([v for _, v in s.payload], env, scope)
        elif isinstance(s, A.Require):
            self.expr(s.cond, env, scope)
        elif isinstance(s, A.Step):
            self.error("C020", "a step may not contain another step", s.span)
        elif not isinstance(s, (A.Stop, A.Reject)):
            self.error("C020", "statement not allowed here", _span_of(s))
        return env


# what a check that found nothing marked used, by declaration and context (``Resolver.shared_unit``)
_RESOLVED = A.ContextMemo()


def _summary_of(program: Program, found: tuple[str, Any] | None) -> Any:
    """What the check of a body reads of a global name's meaning (``global_meaning``): a definition's
    kind and arity, the fields of data that is a record, a built-in's name, a module's key."""
    if found is None:
        return None
    kind, obj = found
    if kind == "unit":
        if isinstance(obj.decl, A.TableDecl):  # a lookup's literal keys are checked against its keys
            return ("unit", "TableDecl", obj.arity, obj.decl.ret, table_keys(program.loaded.namespaces[obj.ns], obj))
        return ("unit", type(obj.decl).__name__, obj.arity)
    if kind == "data":
        return ("data", frozenset(obj) if isinstance(obj, dict) else None)
    if kind == "builtin":
        return ("builtin", obj.name)
    if kind == "module":
        return ("module", obj)
    return (kind,)  # an enum or record named as a value, an enum's member


def table_key(cell: A.Expr) -> Any:
    """A grid's row or column key as written: a name stands for its own text."""
    if isinstance(cell, A.Name):
        return cell.id
    if isinstance(cell, (A.Str, A.Int, A.Bool)):
        return cell.value
    return None


def table_cells(ns: Namespace, unit: Unit) -> dict[tuple[Any, ...], A.Expr]:
    """A table's cells by their keys, the one merge every reader uses: its grid (the header row names
    the columns of a two-key table; an absent cell `-` is a cell, it gives none), then a variant's
    `override t[...]` (the last one wins). Keys with no cell are a miss (``runtime.table_miss``). Each
    key is kept as a map's key is (``values.as_key``): a row `true` is not the row `1`; a lookup
    finds its cell by ``cell_key``."""
    d: A.TableDecl = unit.decl
    grid = d.grid or ()
    cells: dict[tuple[Any, ...], A.Expr] = {}
    if len(d.params) == 1:
        for row in grid:
            if len(row) == 2:
                cells[(as_key(table_key(row[0])),)] = row[1]
    elif len(d.params) == 2 and len(grid) >= 2:
        header = [as_key(table_key(c)) for c in grid[0][1:]]
        for row in grid[1:]:
            if len(row) == len(grid[0]):
                for col, cell in zip(header, row[1:]):
                    cells[(as_key(table_key(row[0])), col)] = cell
    for ov in ns.cell_overrides.get(unit.name, ()):
        cells[tuple(as_key(table_key(k)) for k in ov.keys)] = ov.value
    return cells


def cell_key(keys: Sequence[Any]) -> tuple[Any, ...]:
    """The keys of a table lookup as ``table_cells`` keeps them (``TypeError`` for a key that cannot be
    one, which finds no cell)."""
    return tuple([as_key(k) for k in keys])


def table_keys(ns: Namespace, unit: Unit) -> tuple[frozenset[Any], ...]:
    """The keys each position of a grid table's lookup may take (rows, then columns; a misshapen row's
    too, which is C009's business)."""
    grid = unit.decl.grid or ()
    two = len(unit.decl.params) == 2
    keys: list[set[Any]] = [{table_key(row[0]) for row in grid[two:] if row}, set()]
    if two and grid:
        keys[1] = {table_key(c) for c in grid[0][1:]}
    for ov in ns.cell_overrides.get(unit.name, ()):
        for i, k in enumerate(ov.keys[:2]):
            keys[i].add(table_key(k))
    return tuple(frozenset(k) for k in keys[:len(unit.decl.params)])


def _span_of(node: Any) -> Span:
    return getattr(node, "span", Span("<unknown>"))


def _collect_gotos(stmts: tuple[A.Stmt, ...], out: set[str]) -> None:
    for s in stmts:
        if isinstance(s, A.Goto):
            out.add(s.target)
        elif isinstance(s, A.IfStmt):
            for _, b in s.branches:
                _collect_gotos(b, out)
            if s.otherwise:
                _collect_gotos(s.otherwise, out)
        elif isinstance(s, (A.For, A.Step)):
            _collect_gotos(s.body, out)
