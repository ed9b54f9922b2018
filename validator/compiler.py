"""Compile checked namespaces into Python closures.

Each expression becomes a function ``ev(frame)``; ``frame[0]`` is the run's ``Context`` and the
other slots hold parameters and ``let`` bindings (a lambda's ``frame[1]`` is its parent's frame).
Nothing here generates Python source: closures are built from the AST only.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable

from . import ast as A
from .builtins import BUILTINS, Builtin, CallError, DiceSpec, compile_pattern
from .diagnostics import Diagnostic, Related, Span
from .loader import Loaded, Namespace, decl_key
from .runtime import (GUESSING, RESOLVED, BreakSignal, Context, ContinueSignal, EvalError, GotoSignal,
                      RejectSignal, Settlement, StopSignal)

Ev = Callable[[list[Any]], Any]
Exec = Callable[[list[Any]], None]


def _argkey(v: Any) -> Any:
    try:
        hash(v)
        return v
    except TypeError:
        return ("#id", id(v))


def _show(v: Any) -> str:
    text = repr(v) if not isinstance(v, str) else v
    return text if len(text) <= 40 else text[:37] + "..."


# ---------------------------------------------------------------- scopes


class FnScope:
    """Slot allocation for one function body (or lambda)."""

    def __init__(self, parent: "FnScope | None" = None):
        self.parent = parent
        self.nslots = 2 if parent is not None else 1

    def alloc(self) -> int:
        slot = self.nslots
        self.nslots += 1
        return slot


@dataclass(frozen=True)
class Local:
    scope: FnScope
    slot: int
    mutable: bool = False


Env = dict[str, Local]


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
    # reads no input, decision, procedure or dice (even indirectly): a value of it is the same in every
    # run of the program, so a zero-argument one is computed once per program, not once per run
    state_free: bool = False


@dataclass
class Program:
    loaded: Loaded
    units: dict[tuple[str, str], Unit] = field(default_factory=dict)
    inputs: list[tuple[str, A.InputDecl, Ev | None]] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)

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


class Compiler:
    def __init__(self, loaded: Loaded):
        self.loaded = loaded
        self.program = Program(loaded)
        self.diags = self.program.diagnostics
        self.ns: Namespace = loaded.entry
        self.current: Unit | None = None
        self.enum_members: dict[str, dict[str, str]] = {}
        self.proc_steps: list[str] | None = None
        self.in_loop = 0

    def error(self, code: str, message: str, span: Span, help: str | None = None,
              related: tuple[Related, ...] = ()) -> None:
        self.diags.append(Diagnostic(code, message, span, help=help, related=related))

    # -- driver
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
                self.program.units[(ns.key, key)] = Unit(ns.key, key, d, arity=arity)
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
        """A value that reads a decision may not be cached across guesses; find them all."""
        refs: dict[tuple[str, str], set[tuple[str, str]]] = {}
        for (nskey, key), unit in self.program.units.items():
            names: set[str] = set()
            _collect_names(unit.decl, names)
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
        users = {k for k, u in self.program.units.items() if isinstance(u.decl, A.DecisionDecl)}
        changed = True
        while changed:
            changed = False
            for k, deps in refs.items():
                if k not in users and deps & users:
                    users.add(k)
                    changed = True
        for k in users:
            self.program.units[k].uses_decisions = True
        stateful = {k for k, u in self.program.units.items()
                    if not isinstance(u.decl, (A.DefDecl, A.ConstDecl, A.TableDecl))}
        for k, deps in refs.items():
            if any(n in _DICE_BUILTINS for _, n in deps):  # conservative: a shadowing name counts too
                stateful.add(k)
        changed = True
        while changed:
            changed = False
            for k, deps in refs.items():
                if k not in stateful and deps & stateful:
                    stateful.add(k)
                    changed = True
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

    def _params(self, params: tuple[A.Param, ...], scope: FnScope) -> Env:
        env: Env = {}
        seen: set[str] = set()
        for p in params:
            if p.name in seen:
                self.error("C002", f"parameter `{p.name}` appears twice", p.span)
            seen.add(p.name)
            env[p.name] = Local(scope, scope.alloc())
        return env

    def _value_fn(self, unit: Unit, body: Ev, scope: FnScope) -> Callable[..., Any]:
        key = (unit.ns, unit.name)
        nslots = scope.nslots
        span = unit.decl.span
        always = not unit.uses_decisions
        # state-free: kept for the program's life as [value, steps it took]; a hit charges those steps,
        # so a run with a small budget still stops where it would have. Traced runs compute it afresh.
        kept: list[Any] = []
        state_free = unit.state_free

        def kept_value(ctx: Context) -> Any:
            # charged once per run, as computing it would be; later reads in the run are free
            memo = ctx.memo
            if key in memo:
                return memo[key]
            ctx.steps += kept[1]
            if ctx.steps > ctx.budget:
                raise ctx.over_budget(span)
            memo[key] = kept[0]
            return kept[0]

        def value(ctx: Context) -> Any:
            if kept and not ctx.trace:
                return kept_value(ctx)
            memo = ctx.memo
            if key in memo and memo[key] is not _PENDING:
                if key in ctx.tainted:
                    ctx.rolls += 1  # reading a value that depends on dice taints the reader too
                return memo[key]
            if ctx.depth >= ctx.depth_limit:
                raise EvalError("E005", f"recursion deeper than {ctx.depth_limit} calls", span)
            frame = [ctx] + [None] * (nslots - 1)
            ctx.depth += 1
            memo[key] = _PENDING
            rolls = ctx.rolls
            steps = ctx.steps
            guesses = ctx.guesses
            try:
                result = body(frame)
            finally:
                ctx.depth -= 1
                if memo.get(key) is _PENDING:
                    del memo[key]
            # a value reading decisions is final (so cacheable) when it read no guessed one; traced runs
            # keep it only outside a resolution, so that every decision read is shown where it happens
            if always or ctx.guesses == guesses and (ctx.resolving == 0 or not ctx.trace):
                _keep(ctx, key, result, always)
                if ctx.rolls != rolls:
                    ctx.tainted.add(key)
                elif state_free and not kept:
                    kept[:] = [result, ctx.steps - steps]
            return result

        def guarded(ctx: Context) -> Any:
            if kept and not ctx.trace:
                return kept_value(ctx)
            hit = ctx.memo.get(key, _PENDING)
            if hit is not _PENDING:
                if ctx.tainted and key in ctx.tainted:
                    ctx.rolls += 1  # reading a value that depends on dice taints the reader too
                return hit
            if key in ctx.memo:  # pending: being computed
                raise EvalError("E005", f"`{unit.name}` depends on itself", span)
            return value(ctx)

        return guarded

    def _function(self, unit: Unit, body: Ev, scope: FnScope, nparams: int, span: Span,
                  cites: tuple[str, ...] | None) -> Callable[..., Any]:
        nslots = scope.nslots
        pad = [None] * (nslots - 1 - nparams)
        name = unit.name
        # Pure functions are memoized per run: `def`/`rule` calls always, when they read no decision,
        # and otherwise only outside a resolution (then every decision they read is final).
        memoize = isinstance(unit.decl, A.DefDecl)
        always = not unit.uses_decisions
        ukey = (unit.ns, unit.name)

        def invoke(ctx: Context, *args: Any) -> Any:
            ctx.steps += 1
            if ctx.steps > ctx.budget:
                raise ctx.over_budget(span)
            if ctx.depth >= ctx.depth_limit:
                raise EvalError("E005", f"recursion deeper than {ctx.depth_limit} calls (in `{name}`)", span,
                                help="a rule calls itself without reaching a base case")
            mkey = None
            if memoize and not ctx.trace:
                mkey = (ukey, *[a if type(a) in _PRIMITIVES else id(a) for a in args])
                hit = ctx.memo.get(mkey)
                if hit is not None and _same_args(hit[0], args):
                    if mkey in ctx.tainted:
                        ctx.rolls += 1
                    return hit[1]
            frame = [ctx, *args, *pad]
            ctx.depth += 1
            rolls = ctx.rolls
            guesses = ctx.guesses
            try:
                if cites is not None and ctx.trace:
                    return _traced(ctx, name, args, cites, lambda: body(frame))
                result = body(frame)
            finally:
                ctx.depth -= 1
            if mkey is not None and (always or ctx.guesses == guesses):
                _keep(ctx, mkey, (args, result), always)  # the arguments are kept so an id is never reused
                if ctx.rolls != rolls:
                    ctx.tainted.add(mkey)
            return result

        # The same, specialised for one and two arguments (most calls): no argument tuples or lists.
        if nparams == 1:
            tail = pad
            # state-free (a pure function of its argument and the program): what it computed for a
            # primitive argument is kept for the program's life as (argument, value, steps it took);
            # the first call in a run charges those steps, as computing it would (see `kept_value`)
            life: dict[Any, tuple[Any, Any, int]] | None = {} if memoize and unit.state_free else None

            def invoke1(ctx: Context, a: Any) -> Any:
                if ctx.trace:
                    return invoke(ctx, a)
                ctx.steps += 1
                if ctx.steps > ctx.budget:
                    raise ctx.over_budget(span)
                if ctx.depth >= ctx.depth_limit:
                    return invoke(ctx, a)  # raises the located E005
                mkey = None
                if memoize:
                    ta = type(a)
                    prim = ta in _PRIMITIVES
                    mkey = (ukey, a if prim else id(a))
                    hit = ctx.memo.get(mkey)
                    if hit is not None:
                        k = hit[0][0]
                        if k is a or (prim and type(k) is ta and k == a):
                            if ctx.tainted and mkey in ctx.tainted:
                                ctx.rolls += 1
                            return hit[1]
                    if life is not None and prim:
                        kept1 = life.get(a)
                        if kept1 is not None and type(kept1[0]) is ta:
                            ctx.steps += kept1[2]
                            if ctx.steps > ctx.budget:
                                raise ctx.over_budget(span)
                            ctx.memo[mkey] = ((a,), kept1[1])
                            return kept1[1]
                frame = [ctx, a, *tail] if tail else [ctx, a]
                ctx.depth += 1
                rolls = ctx.rolls
                guesses = ctx.guesses
                steps = ctx.steps
                try:
                    result = body(frame)
                finally:
                    ctx.depth -= 1
                if mkey is not None:
                    if life is not None and prim and len(life) < _LIFE_CAP:
                        life[a] = (a, result, ctx.steps - steps)
                    if always:
                        ctx.memo[mkey] = ((a,), result)
                    elif ctx.guesses == guesses:
                        _keep(ctx, mkey, ((a,), result), always)
                    else:
                        return result
                    if ctx.rolls != rolls:
                        ctx.tainted.add(mkey)
                return result

            return invoke1
        if nparams == 2:
            tail = pad

            def invoke2(ctx: Context, a: Any, b: Any) -> Any:
                if ctx.trace:
                    return invoke(ctx, a, b)
                ctx.steps += 1
                if ctx.steps > ctx.budget:
                    raise ctx.over_budget(span)
                if ctx.depth >= ctx.depth_limit:
                    return invoke(ctx, a, b)  # raises the located E005
                mkey = None
                if memoize:
                    ta, tb = type(a), type(b)
                    pa, pb = ta in _PRIMITIVES, tb in _PRIMITIVES
                    mkey = (ukey, a if pa else id(a), b if pb else id(b))
                    hit = ctx.memo.get(mkey)
                    if hit is not None:
                        ka, kb = hit[0]
                        if ((ka is a or (pa and type(ka) is ta and ka == a))
                                and (kb is b or (pb and type(kb) is tb and kb == b))):
                            if ctx.tainted and mkey in ctx.tainted:
                                ctx.rolls += 1
                            return hit[1]
                frame = [ctx, a, b, *tail] if tail else [ctx, a, b]
                ctx.depth += 1
                rolls = ctx.rolls
                guesses = ctx.guesses
                try:
                    result = body(frame)
                finally:
                    ctx.depth -= 1
                if mkey is not None:
                    if always:
                        ctx.memo[mkey] = ((a, b), result)
                    elif ctx.guesses == guesses:
                        _keep(ctx, mkey, ((a, b), result), always)
                    else:
                        return result
                    if ctx.rolls != rolls:
                        ctx.tainted.add(mkey)
                return result

            return invoke2
        return invoke

    # -- tables
    def cell_overrides(self, d: A.TableDecl) -> dict[tuple[Any, ...], Ev]:
        """The cells that variants set with ``override t[k...] = v``, in order (later ones win)."""
        out: dict[tuple[Any, ...], Ev] = {}
        for ov in self.ns.cell_overrides.get(d.name, []):
            if len(ov.keys) != len(d.params):
                self.error("C003", f"table `{d.name}` has {len(d.params)} keys, not {len(ov.keys)}", ov.span)
                continue
            if not ov.cites:
                self.error("C011", f"the override of a cell of `{d.name}` cites no clause", ov.span,
                           help='add `cite "ID"` naming the clause (or errata) it implements')
            out[tuple(self._table_key(k, d) for k in ov.keys)] = self.expr(ov.value, {}, FnScope())
        return out

    def table(self, d: A.TableDecl) -> Callable[..., Any]:
        nparams = len(d.params)
        overridden = self.cell_overrides(d)
        if d.source is not None:
            src = self.expr(d.source, {}, FnScope())

            def lookup_src(ctx: Context, *keys: Any) -> Any:
                if overridden:
                    try:
                        cell = overridden.get(keys)
                    except TypeError:
                        cell = None
                    if cell is not None:
                        return cell([ctx])
                v = src([ctx])
                for k in keys:
                    if not isinstance(v, dict):
                        return None
                    try:
                        v = v.get(k)
                    except TypeError:
                        return None
                return v

            return lookup_src
        grid = d.grid or ()
        cells: dict[tuple[Any, ...], Ev] = {}
        if nparams == 2:
            if len(grid) < 2:
                self.error("C009", f"table `{d.name}` needs a header row and at least one row", d.span)
                return lambda ctx, *k: None
            header = grid[0]
            cols = [self._table_key(c, d) for c in header[1:]]
            if len(set(cols)) != len(cols):
                self.error("C009", f"table `{d.name}` has a repeated column", _span_of(header[0]))
            for row in grid[1:]:
                if len(row) != len(header):
                    self.error("C009", f"row has {len(row)} cells, the header has {len(header)}", _span_of(row[0]),
                               help=f"every row of `{d.name}` needs one cell per column")
                    continue
                rk = self._table_key(row[0], d)
                for ck, cell in zip(cols, row[1:]):
                    if (rk, ck) in cells:
                        self.error("C009", f"table `{d.name}` has row `{rk}` twice", _span_of(row[0]))
                    if not isinstance(cell, A.Absent):
                        cells[(rk, ck)] = self.expr(cell, {}, FnScope())
        elif nparams == 1:
            for row in grid:
                if len(row) != 2:
                    self.error("C009", f"a one-key table row has 2 cells (key, value), not {len(row)}", _span_of(row[0]))
                    continue
                rk = self._table_key(row[0], d)
                if (rk,) in cells:
                    self.error("C009", f"table `{d.name}` has key `{rk}` twice", _span_of(row[0]))
                if not isinstance(row[1], A.Absent):
                    cells[(rk,)] = self.expr(row[1], {}, FnScope())
        else:
            self.error("C009", f"a table written as a grid has one or two keys, `{d.name}` has {nparams}", d.span)
        cells.update(overridden)

        def lookup(ctx: Context, *keys: Any) -> Any:
            try:
                cell = cells.get(keys)
            except TypeError:
                return None
            return None if cell is None else cell([ctx])

        return lookup

    def _table_key(self, cell: Any, d: A.TableDecl) -> Any:
        if isinstance(cell, A.Name):
            return cell.id
        if isinstance(cell, (A.Str, A.Int)):
            return cell.value
        if isinstance(cell, A.Bool):
            return cell.value
        self.error("C009", f"table `{d.name}`: a row or column key must be a name, text or number", _span_of(cell))
        return None

    # -- decisions
    def decision(self, unit: Unit, d: A.DecisionDecl) -> Callable[..., Any]:
        scope = FnScope()
        env = self._params(d.params, scope)
        body = self.expr(d.body, env, scope)
        adjudicate = self._function(unit, body, scope, len(d.params), d.span, d.cites)
        dec_id = unit.name
        nskey = unit.ns
        program = self.program
        cycle_unit_key = (nskey, f"cycle {d.name}")
        policies: list[tuple[Ev | None, Ev, Ev, tuple[str, ...], Span]] = []
        pscope = FnScope()
        penv: Env = {"cycle": Local(pscope, pscope.alloc())}
        cyc = self.loaded.namespaces[nskey].defs.get(f"cycle {d.name}")
        if isinstance(cyc, A.CycleDecl):
            program.units[cycle_unit_key].used = True
            for pol in cyc.policies:
                when = self.expr(pol.when, penv, pscope) if pol.when is not None else None
                targets = self.expr(pol.targets, penv, pscope)
                value = self.expr(pol.value, penv, pscope)
                policies.append((when, targets, value, pol.cites or cyc.cites, pol.span))
        pslots = pscope.nslots
        nparams = len(d.params)
        span = d.span

        def settle(ctx: Context, members: list[Any]) -> None:
            mine = [m for m in members if m[0] == dec_id]
            args = [ctx.decisions[m] for m in mine]
            shown = [a[0] if nparams == 1 else list(a) for a in args]
            frame = [ctx, shown] + [None] * (pslots - 2)
            for when, targets, value, cites, pspan in policies:
                if when is not None and not when(frame):
                    continue
                chosen = targets(frame)
                val = value(frame)
                wanted = {_argkey(t) if nparams == 1 else tuple(_argkey(x) for x in t) for t in chosen}
                settled = 0
                for m, a in zip(mine, args):
                    k = _argkey(a[0]) if nparams == 1 else tuple(_argkey(x) for x in a)
                    if k in wanted:
                        ctx.dstate[m] = RESOLVED
                        ctx.dvalue[m] = val
                        ctx.settled[m] = Settlement(m, val, cites, tuple(members))
                        settled += 1
                for m in members:
                    if ctx.dstate.get(m) != RESOLVED:
                        ctx.dstate.pop(m, None)
                if ctx.trace:
                    ctx.cycles.append({"decision": dec_id, "members": [_jsonish(s) for s in shown],
                                       "settled": [_jsonish(t) for t in chosen], "value": _jsonish(val),
                                       "cites": list(cites)})
                if settled == 0:
                    raise EvalError("E006", f"the cycle policy for `{dec_id}` settled none of the {len(members)} "
                                            "decisions of the cycle", pspan)
                return
            raise EvalError("E006", f"cycle among `{dec_id}` decisions and no policy of `cycle {dec_id}` applies",
                            span, help=f"add a `cycle {dec_id}` policy (e.g. `otherwise => settle cycle as false`)")

        def resolve(ctx: Context, *args: Any) -> Any:
            key = (dec_id, *[_argkey(a) for a in args])
            st = ctx.dstate.get(key, 0)
            if st == RESOLVED:
                if ctx.tainted and ("#decision", key) in ctx.tainted:
                    ctx.rolls += 1  # a value resting on dice taints its readers too
                return ctx.dvalue[key]
            if ctx.trace and ctx.dstack:
                ctx.decision_edges.add((ctx.dstack[-1], key))
            if st == GUESSING:
                # every read is recorded (even if already listed), so that a decision reading a guessed
                # value is itself provisional and not wrongly resolved
                ctx.deplist.append(key)
                ctx.guesses += 1
                return ctx.dvalue[key]
            guesses = ctx.guesses
            rolls = ctx.rolls
            ctx.resolving += 1
            try:
                value = resolve_fresh(ctx, key, args)
            finally:
                ctx.resolving -= 1
            if ctx.dstate.get(key) == RESOLVED:
                # final: the guesses read on the way do not make the reader provisional
                ctx.guesses = guesses
                if ctx.rolls != rolls:
                    ctx.tainted.add(("#decision", key))
            else:
                ctx.guesses = guesses + 1
            return value

        def unset(ctx: Context, keys: list[Any]) -> None:
            undone = False
            for k in keys:
                if ctx.dstate.pop(k, None) == RESOLVED:
                    undone = True
            if undone:
                ctx.undo_resolved()

        def resolve_fresh(ctx: Context, key: Any, args: tuple[Any, ...]) -> Any:
            deplist = ctx.deplist
            ctx.decisions[key] = args
            old = len(deplist)
            ctx.dstate[key] = GUESSING
            ctx.dvalue[key] = False
            if ctx.trace:
                ctx.dstack.append(key)
                try:
                    first = adjudicate(ctx, *args)
                finally:
                    ctx.dstack.pop()
            else:
                first = adjudicate(ctx, *args)
            if len(deplist) == old:
                if ctx.dstate.get(key) != RESOLVED:
                    ctx.dstate[key] = RESOLVED
                    ctx.dvalue[key] = first
                return ctx.dvalue[key]
            if deplist[old] != key:
                deplist.append(key)
                ctx.dvalue[key] = first
                return first
            unset(ctx, deplist[old:])
            del deplist[old:]
            ctx.dstate[key] = GUESSING
            ctx.dvalue[key] = True
            second = adjudicate(ctx, *args)
            if first == second:
                unset(ctx, deplist[old:])
                del deplist[old:]
                ctx.dstate[key] = RESOLVED
                ctx.dvalue[key] = first
                return first
            members = list(deplist[old:])
            if key not in members:
                members.insert(0, key)
            del deplist[old:]
            settle(ctx, members)
            return resolve(ctx, *args)

        return resolve

    # -- procedures
    def procedure(self, unit: Unit, d: A.ProcedureDecl) -> Callable[..., Any]:
        scope = FnScope()
        env = self._params(d.params, scope)
        steps: list[tuple[str, tuple[str, ...], Exec]] = []
        prelude: list[Exec] = []
        var_slots: dict[str, int] = {}
        step_names = [s.name for s in d.body if isinstance(s, A.Step)]
        seen_steps: dict[str, A.Step] = {}
        for s in d.body:
            if isinstance(s, A.Step) and s.name in seen_steps:
                self.error("C002", f"step `{s.name}` appears twice", s.span,
                           related=(Related(seen_steps[s.name].span, "first here"),))
            if isinstance(s, A.Step):
                seen_steps[s.name] = s
        self.proc_steps = step_names
        self.step_cites: dict[str, tuple[str, ...]] = {}  # this procedure's own; emits capture it
        for s in d.body:
            if isinstance(s, A.Var):
                slot = scope.alloc()
                value = self.expr(s.value, env, scope)
                env = {**env, s.name: Local(scope, slot, mutable=True)}
                var_slots[s.name] = slot
                prelude.append(_store(slot, value))
            elif isinstance(s, A.Step):
                if not s.cites:
                    self.error("C011", f"step `{s.name}` cites no clause", s.span,
                               help='add `cite "ID"` naming the clause the step implements')
                body, _ = self.block(s.body, env, scope)
                steps.append((s.name, s.cites, body))
            else:
                self.error("C020", "only `var` declarations and `step`s may stand at the top of a procedure", _span_of(s))
        self.proc_steps = None
        self._unreachable_steps(d)
        index = {name: i for i, (name, _, _) in enumerate(steps)}
        nslots = scope.nslots
        nparams = len(d.params)
        pad = [None] * (nslots - 1 - nparams)
        proc_cites = d.cites
        span = d.span

        def run(ctx: Context, *args: Any) -> Any:
            ctx.steps += 1
            if ctx.steps > ctx.budget:
                raise ctx.over_budget(span)
            frame = [ctx, *args, *pad]
            for p in prelude:
                p(frame)
            status, reason, cites, where = "completed", None, list(proc_cites), None
            i = 0
            jumps = 0
            while i < len(steps):
                sname, scites, body = steps[i]
                ctx.current_step = sname
                try:
                    body(frame)
                    i += 1
                except GotoSignal as g:
                    jumps += 1
                    ctx.steps += 1
                    if ctx.steps > ctx.budget:
                        raise ctx.over_budget(span) from None
                    i = index[g.target]
                except StopSignal:
                    status = "stopped"
                    where = sname
                    break
                except RejectSignal as r:
                    status, reason, where = "rejected", r.message, sname
                    cites = list(r.cites or scites)
                    ctx.events.append({"event": "rejected", "step": sname, "reason": r.message, "cites": cites})
                    break
            ctx.current_step = None
            out: dict[str, Any] = {"status": status}
            if reason is not None:
                out["reason"] = reason
                out["cites"] = cites
            if where is not None:
                out["step"] = where
            for vname, slot in var_slots.items():
                out[vname] = frame[slot]
            return out

        self.step_cites.update({n: c for n, c, _ in steps})
        return run

    def _unreachable_steps(self, d: A.ProcedureDecl) -> None:
        """A step after an unconditional ``goto``/``stop``/``reject`` that no ``goto`` names is dead."""
        steps = [s for s in d.body if isinstance(s, A.Step)]
        targets: set[str] = set()
        for s in steps:
            _collect_gotos(s.body, targets)
        for prev, s in zip(steps, steps[1:]):
            if prev.body and isinstance(prev.body[-1], (A.Goto, A.Stop, A.Reject)) and s.name not in targets:
                self.diags.append(Diagnostic("W102", f"step `{s.name}` can never run", s.span,
                                             help=f"step `{prev.name}` always leaves before it and no `goto` names it"))

    def block(self, stmts: tuple[A.Stmt, ...], env: Env, scope: FnScope) -> tuple[Exec, Env]:
        execs: list[Exec] = []
        for s in stmts:
            ex, env = self.stmt(s, env, scope)
            if ex is not None:
                execs.append(ex)
        if len(execs) == 1:
            return execs[0], env
        items = tuple(execs)

        def run_block(f: list[Any]) -> None:
            for e in items:
                e(f)

        return run_block, env

    def stmt(self, s: A.Stmt, env: Env, scope: FnScope) -> tuple[Exec | None, Env]:
        if isinstance(s, (A.Var, A.LetStmt)):
            value = self.expr(s.value, env, scope)
            slot = scope.alloc()
            return _store(slot, value), {**env, s.name: Local(scope, slot, mutable=isinstance(s, A.Var))}
        if isinstance(s, A.Assign):
            target = env.get(s.name)
            value = self.expr(s.value, env, scope)
            if target is None or not target.mutable:
                self.error("C022", f"`{s.name}` is not a procedure variable", s.span,
                           help=f"declare it with `var {s.name} = ...` at the top of the procedure")
                return None, env
            if target.scope is not scope:
                self.error("C022", f"`{s.name}` cannot be assigned from inside a lambda", s.span)
                return None, env
            return _store(target.slot, value), env
        if isinstance(s, A.IfStmt):
            branches = [(self.expr(c, env, scope), self.block(b, env, scope)[0]) for c, b in s.branches]
            otherwise = self.block(s.otherwise, env, scope)[0] if s.otherwise is not None else None

            def run_if(f: list[Any]) -> None:
                for cond, body in branches:
                    if cond(f):
                        body(f)
                        return
                if otherwise is not None:
                    otherwise(f)

            return run_if, env
        if isinstance(s, A.For):
            it = self.expr(s.iter, env, scope)
            slot = scope.alloc()
            inner = {**env, s.name: Local(scope, slot)}
            cond = self.expr(s.cond, inner, scope) if s.cond is not None else None
            self.in_loop += 1
            body, _ = self.block(s.body, inner, scope)
            self.in_loop -= 1
            span = s.span

            def run_for(f: list[Any]) -> None:
                ctx = f[0]
                for x in _iterate(it(f), span):
                    ctx.steps += 1
                    if ctx.steps > ctx.budget:
                        raise ctx.over_budget(span)
                    f[slot] = x
                    if cond is not None and not cond(f):
                        continue
                    try:
                        body(f)
                    except ContinueSignal:
                        continue
                    except BreakSignal:
                        break

            return run_for, env
        if isinstance(s, A.Goto):
            if self.proc_steps is not None and s.target not in self.proc_steps:
                close = difflib.get_close_matches(s.target, self.proc_steps, 1)
                self.error("C017", f"no step named `{s.target}`", s.span,
                           help=f"did you mean `{close[0]}`?" if close else f"steps: {', '.join(self.proc_steps)}")
            step_name = s.target

            def run_goto(f: list[Any]) -> None:
                raise GotoSignal(step_name)

            return run_goto, env
        if isinstance(s, A.Stop):
            def run_stop(f: list[Any]) -> None:
                raise StopSignal()
            return run_stop, env
        if isinstance(s, (A.Break, A.Continue)):
            if not self.in_loop:
                self.error("C020", f"`{'break' if isinstance(s, A.Break) else 'continue'}` outside a loop", s.span)
            sig = BreakSignal if isinstance(s, A.Break) else ContinueSignal

            def run_loopctl(f: list[Any]) -> None:
                raise sig()

            return run_loopctl, env
        if isinstance(s, A.Emit):
            payload = [(k, self.expr(v, env, scope)) for k, v in s.payload]
            event, cites = s.event, s.cites
            step_cites_of = getattr(self, "step_cites", {})

            def run_emit(f: list[Any]) -> None:
                ctx = f[0]
                rec: dict[str, Any] = {"event": event, "step": ctx.current_step}
                step_cites = list(cites) or list(step_cites_of.get(ctx.current_step, ()))
                rec["cites"] = step_cites
                for k, v in payload:
                    rec[k] = v(f)
                ctx.events.append(rec)

            return run_emit, env
        if isinstance(s, A.Require):
            cond = self.expr(s.cond, env, scope)
            message, cites = s.message, s.cites

            def run_require(f: list[Any]) -> None:
                if not cond(f):
                    raise RejectSignal(message, cites, f[0].current_step)

            return run_require, env
        if isinstance(s, A.Reject):
            message, cites = s.message, s.cites

            def run_reject(f: list[Any]) -> None:
                raise RejectSignal(message, cites, f[0].current_step)

            return run_reject, env
        if isinstance(s, A.Step):
            self.error("C020", "a step may not contain another step", s.span)
            return None, env
        self.error("C020", "statement not allowed here", _span_of(s))
        return None, env

    # -- expressions
    def expr(self, e: A.Expr, env: Env, scope: FnScope) -> Ev:
        method = getattr(self, "x_" + type(e).__name__)
        return method(e, env, scope)  # type: ignore[no-any-return]

    def x_Int(self, e: A.Int, env: Env, scope: FnScope) -> Ev:
        return _const(e.value)

    def x_Str(self, e: A.Str, env: Env, scope: FnScope) -> Ev:
        return _const(e.value)

    def x_Bool(self, e: A.Bool, env: Env, scope: FnScope) -> Ev:
        return _const(e.value)

    def x_NoneLit(self, e: A.NoneLit, env: Env, scope: FnScope) -> Ev:
        return _const(None)

    def x_Dice(self, e: A.Dice, env: Env, scope: FnScope) -> Ev:
        spec = DiceSpec(e.count, e.sides)
        return lambda f: spec

    def x_Absent(self, e: A.Absent, env: Env, scope: FnScope) -> Ev:
        self.error("P001", "`-` (absent) only stands alone in a table cell", e.span)
        return lambda f: None

    def _local(self, loc: Local, scope: FnScope) -> Ev:
        hops = 0
        s: FnScope | None = scope
        while s is not None and s is not loc.scope:
            s = s.parent
            hops += 1
        slot = loc.slot
        if hops == 0:
            get = lambda f: f[slot]  # noqa: E731
            get.slot = slot  # type: ignore[attr-defined]
            return get
        if hops == 1:
            return lambda f: f[1][slot]

        def deep(f: list[Any]) -> Any:
            for _ in range(hops):
                f = f[1]
            return f[slot]

        return deep

    def lookup_global(self, name: str, span: Span, ns: Namespace | None = None) -> tuple[str, Any] | None:
        ns = ns or self.ns
        key = (ns.key, name)
        unit = self.program.units.get(key)
        if unit is not None:
            unit.used = True
            return ("unit", unit)
        if name in ns.defs:  # enum or record used as a value
            return ("type", ns.defs[name])
        if name in ns.data:
            return ("data", ns.data[name].value)
        member = self.enum_members.get(ns.key, {}).get(name)
        if member is not None:
            return ("enum", name)
        if name in BUILTINS:
            return ("builtin", BUILTINS[name])
        if name in ns.modules:
            return ("module", ns.modules[name])
        return None

    def unknown(self, name: str, span: Span, env: Env) -> None:
        candidates = list(env) + list(self.ns.defs) + list(self.ns.data) + list(self.ns.modules) + list(BUILTINS)
        candidates += list(self.enum_members.get(self.ns.key, {}))
        close = difflib.get_close_matches(name, [c for c in candidates if not c.startswith("cycle ")], 1)
        self.error("C001", f"unknown name `{name}`", span, help=f"did you mean `{close[0]}`?" if close else None)

    def x_Name(self, e: A.Name, env: Env, scope: FnScope) -> Ev:
        if e.id in env:
            return self._local(env[e.id], scope)
        found = self.lookup_global(e.id, e.span)
        if found is None:
            self.unknown(e.id, e.span, env)
            return lambda f: None
        return self._global_value(found, e.id, e.span)

    def _global_value(self, found: tuple[str, Any], name: str, span: Span) -> Ev:
        kind, obj = found
        if kind == "unit":
            unit: Unit = obj
            if isinstance(unit.decl, A.TableDecl):
                self.error("C004", f"table `{name}` is looked up with `{name}[...]`", span)
                return lambda f: None
            if unit.arity is None:
                read = lambda f: unit.fn(f[0])  # type: ignore[misc]  # noqa: E731
                read.unit = unit  # type: ignore[attr-defined]  # lets enclosing expressions read it inline
                return read
            return lambda f: unit.fn
        if kind == "data":
            return _const(obj)
        if kind == "enum":
            return _const(name)
        if kind == "builtin":
            b: Builtin = obj
            return lambda f: _builtin_value(b, span)
        if kind == "module":
            self.error("C004", f"`{name}` is a module; use `{name}.NAME`", span)
            return lambda f: None
        self.error("C004", f"`{name}` is a type, not a value", span)
        return lambda f: None

    def x_ListLit(self, e: A.ListLit, env: Env, scope: FnScope) -> Ev:
        items = [self.expr(i, env, scope) for i in e.items]
        if all(hasattr(i, "const") for i in items):
            return _const([i.const for i in items])  # type: ignore[attr-defined]
        return lambda f: [i(f) for i in items]

    def x_SetLit(self, e: A.SetLit, env: Env, scope: FnScope) -> Ev:
        items = [self.expr(i, env, scope) for i in e.items]
        span = e.span

        def make_set(f: list[Any]) -> frozenset[Any]:
            try:
                return frozenset(i(f) for i in items)
            except TypeError:
                raise EvalError("E009", "set items must be numbers, text or lists", span) from None

        return make_set

    def x_RecordLit(self, e: A.RecordLit, env: Env, scope: FnScope) -> Ev:
        seen: set[str] = set()
        for k, _ in e.items:
            if k in seen:
                self.error("C002", f"field `{k}` appears twice", e.span)
            seen.add(k)
        items = [(k, self.expr(v, env, scope)) for k, v in e.items]
        if all(hasattr(v, "const") for _, v in items):
            return _const({k: v.const for k, v in items})  # type: ignore[attr-defined]
        return lambda f: {k: v(f) for k, v in items}

    def x_MapLit(self, e: A.MapLit, env: Env, scope: FnScope) -> Ev:
        items = [(self.expr(k, env, scope), self.expr(v, env, scope)) for k, v in e.items]
        span = e.span

        def make_map(f: list[Any]) -> dict[Any, Any]:
            try:
                return {k(f): v(f) for k, v in items}
            except TypeError:
                raise EvalError("E009", "map keys must be numbers, text or lists", span) from None

        return make_map

    def x_Comp(self, e: A.Comp, env: Env, scope: FnScope) -> Ev:
        inner = dict(env)
        loops: list[tuple[Ev, tuple[int, ...], Ev | None, Span]] = []
        for cf in e.fors:
            it = self.expr(cf.iter, inner, scope)
            slots = tuple(scope.alloc() for _ in cf.names)
            inner = {**inner, **{n: Local(scope, s) for n, s in zip(cf.names, slots)}}
            cond = self.expr(cf.cond, inner, scope) if cf.cond is not None else None
            loops.append((it, slots, cond, cf.span))
        elem = self.expr(e.elem, inner, scope)
        key = self.expr(e.key, inner, scope) if e.key is not None else None
        span = e.span

        def gen(f: list[Any], depth: int = 0) -> Any:
            it, slots, cond, lspan = loops[depth]
            ctx = f[0]
            seq = _iterate(it(f), lspan)
            if isinstance(seq, (list, tuple, dict, frozenset, set)):
                ctx.steps += len(seq)
                if ctx.steps > ctx.budget:
                    raise ctx.over_budget(lspan)
            last = depth == len(loops) - 1
            for x in seq:
                if len(slots) == 1:
                    f[slots[0]] = x
                else:
                    _unpack(f, slots, x, seq, lspan)
                if cond is not None and not cond(f):
                    continue
                if last:
                    yield f
                else:
                    yield from gen(f, depth + 1)

        if len(loops) == 1:
            single = self._single_loop(e.kind, loops[0], elem, key, span)
            if single is not None:
                return single
        if len(loops) == 1 and len(loops[0][1]) == 1 and e.kind == "list":
            it0, (slot0,), cond0, lspan0 = loops[0]

            def fast_list(f: list[Any]) -> list[Any]:
                seq = _iterate(it0(f), lspan0)
                ctx = f[0]
                if isinstance(seq, (list, tuple, dict, frozenset, set)):
                    ctx.steps += len(seq)
                    if ctx.steps > ctx.budget:
                        raise ctx.over_budget(lspan0)
                out = []
                for x in seq:
                    f[slot0] = x
                    if cond0 is None or cond0(f):
                        out.append(elem(f))
                return out

            return fast_list
        if e.kind == "list":
            return lambda f: [elem(g) for g in gen(f)]
        if e.kind == "set":
            def make_set(f: list[Any]) -> frozenset[Any]:
                try:
                    return frozenset(elem(g) for g in gen(f))
                except TypeError:
                    raise EvalError("E009", "set items must be numbers, text or lists", span) from None
            return make_set
        if e.kind == "map":
            assert key is not None

            def make_map(f: list[Any]) -> dict[Any, Any]:
                try:
                    return {key(g): elem(g) for g in gen(f)}
                except TypeError:
                    raise EvalError("E009", "map keys must be numbers, text or lists", span) from None
            return make_map
        return lambda f: (elem(g) for g in gen(f))

    def _single_loop(self, kind: str, loop: tuple[Ev, tuple[int, ...], Ev | None, Span], elem: Ev, key: Ev | None,
                     span: Span) -> Ev | None:
        """One `for` (the common case), as a plain Python loop: no nested generators."""
        it0, slots, cond0, lspan0 = loop
        budgeted = (list, tuple, dict, frozenset, set)

        def items(f: list[Any]) -> Any:
            seq = _iterate(it0(f), lspan0)
            if isinstance(seq, budgeted):
                ctx = f[0]
                ctx.steps += len(seq)
                if ctx.steps > ctx.budget:
                    raise ctx.over_budget(lspan0)
            return seq

        slot0 = slots[0]
        if len(slots) == 1:
            def walk(f: list[Any]) -> Any:
                for x in items(f):
                    f[slot0] = x
                    if cond0 is None or cond0(f):
                        yield f
        elif len(slots) == 2:
            s0, s1 = slots

            def walk(f: list[Any]) -> Any:
                seq = items(f)
                if isinstance(seq, dict):
                    for x, y in seq.items():
                        f[s0] = x
                        f[s1] = y
                        if cond0 is None or cond0(f):
                            yield f
                    return
                for x in seq:
                    _unpack(f, slots, x, seq, lspan0)
                    if cond0 is None or cond0(f):
                        yield f
        else:
            return None
        if kind == "list" and len(slots) == 1:
            return None  # the list fast path below
        if kind == "list":
            return lambda f: [elem(g) for g in walk(f)]
        if kind == "set":
            def make_set(f: list[Any]) -> frozenset[Any]:
                try:
                    if len(slots) == 1:
                        out = []
                        for x in items(f):
                            f[slot0] = x
                            if cond0 is None or cond0(f):
                                out.append(elem(f))
                        return frozenset(out)
                    return frozenset([elem(g) for g in walk(f)])
                except TypeError:
                    raise EvalError("E009", "set items must be numbers, text or lists", span) from None
            return make_set
        if kind == "map":
            assert key is not None

            def make_map(f: list[Any]) -> dict[Any, Any]:
                out = {}
                try:
                    if len(slots) == 1:
                        for x in items(f):
                            f[slot0] = x
                            if cond0 is None or cond0(f):
                                k = key(f)  # the key first, as everywhere (dice are rolled in order)
                                out[k] = elem(f)
                    else:
                        for g in walk(f):
                            k = key(g)
                            out[k] = elem(g)
                except TypeError:
                    raise EvalError("E009", "map keys must be numbers, text or lists", span) from None
                return out
            return make_map
        return lambda f: (elem(g) for g in walk(f))

    def x_Let(self, e: A.Let, env: Env, scope: FnScope) -> Ev:
        value = self.expr(e.value, env, scope)
        slot = scope.alloc()
        body = self.expr(e.body, {**env, e.name: Local(scope, slot)}, scope)
        # `let a = ...; let b = ...; body` as one closure: the bindings in order, then the body
        inner = getattr(body, "let_chain", None)
        chain = [(slot, value)] + inner[0] if inner is not None else [(slot, value)]
        rest: Ev = inner[1] if inner is not None else body
        out: Ev
        if len(chain) == 1:
            def let(f: list[Any]) -> Any:
                f[slot] = value(f)
                return rest(f)
            out = let
        elif len(chain) == 2:
            (s0, v0), (s1, v1) = chain

            def let2(f: list[Any]) -> Any:
                f[s0] = v0(f)
                f[s1] = v1(f)
                return rest(f)
            out = let2
        else:
            bindings = tuple(chain)

            def lets(f: list[Any]) -> Any:
                for s, v in bindings:
                    f[s] = v(f)
                return rest(f)
            out = lets
        out.let_chain = (chain, rest)  # type: ignore[attr-defined]
        return out

    def x_If(self, e: A.If, env: Env, scope: FnScope) -> Ev:
        branches = [(self.expr(c, env, scope), self.expr(v, env, scope)) for c, v in e.branches]
        otherwise = self.expr(e.otherwise, env, scope)
        if len(branches) == 1:
            c0, v0 = branches[0]
            return lambda f: v0(f) if c0(f) else otherwise(f)

        def if_chain(f: list[Any]) -> Any:
            for c, v in branches:
                if c(f):
                    return v(f)
            return otherwise(f)

        return if_chain

    def x_Lambda(self, e: A.Lambda, env: Env, scope: FnScope) -> Ev:
        inner = FnScope(scope)
        lenv = dict(env)
        for p in e.params:
            lenv[p.name] = Local(inner, inner.alloc())
        body = self.expr(e.body, lenv, inner)
        nparams = len(e.params)
        pad = inner.nslots - 2 - nparams
        span = e.span

        def make(f: list[Any]) -> Callable[..., Any]:
            def closure(ctx: Context, *args: Any) -> Any:
                if len(args) != nparams:
                    raise EvalError("E001", f"this function takes {nparams} arguments, not {len(args)}", span)
                ctx.steps += 1
                if ctx.steps > ctx.budget:
                    raise ctx.over_budget(span)
                return body([ctx, f, *args, *([None] * pad)])
            return closure

        return make

    def x_BoolOp(self, e: A.BoolOp, env: Env, scope: FnScope) -> Ev:
        items = [self.expr(i, env, scope) for i in e.items]
        # plain conditionals, not bool() calls or generators: the same truth tests, fewer calls
        if e.op == "and":
            if len(items) == 2:
                a, b = items
                return lambda f: (True if b(f) else False) if a(f) else False

            def all_of(f: list[Any]) -> bool:
                for i in items:
                    if not i(f):
                        return False
                return True
            return all_of
        if len(items) == 2:
            a, b = items
            return lambda f: True if a(f) else (True if b(f) else False)

        def any_of(f: list[Any]) -> bool:
            for i in items:
                if i(f):
                    return True
            return False
        return any_of

    def x_Not(self, e: A.Not, env: Env, scope: FnScope) -> Ev:
        a = self.expr(e.operand, env, scope)
        return lambda f: not a(f)

    def x_Compare(self, e: A.Compare, env: Env, scope: FnScope) -> Ev:
        self._check_enum_literal(e)
        a = self.expr(e.left, env, scope)
        b = self.expr(e.right, env, scope)
        span, op = e.span, e.op
        if op in ("==", "!=") and not hasattr(a, "const"):
            fused = _fused_equality(op == "==", a, b)
            if fused is not None:
                return fused
        if op == "==":
            return lambda f: a(f) == b(f)
        if op == "!=":
            return lambda f: a(f) != b(f)
        if op in ("in", "notin"):
            neg = op == "notin"

            def failed_member(coll: Any) -> bool:
                if coll is None:
                    return neg
                raise EvalError("E001", f"`in` needs a list, set, map or text on its right, not `{_show(coll)}`",
                                span) from None

            sa = getattr(a, "slot", None)
            bunit: Unit | None = getattr(b, "unit", None)
            if sa is not None and bunit is not None:  # `x in some_value`, the commonest shape
                def member_local_value(f: list[Any]) -> bool:
                    x, coll = f[sa], bunit.fn(f[0])  # type: ignore[misc]
                    try:
                        found = x in coll
                    except TypeError:
                        return failed_member(coll)
                    return not found if neg else found
                return member_local_value

            def member(f: list[Any]) -> bool:
                x, coll = a(f), b(f)
                try:
                    found = x in coll
                except TypeError:
                    return failed_member(coll)
                return not found if neg else found

            return member
        pyop = _ORDER_OPS[op]

        def order(f: list[Any]) -> bool:
            x, y = a(f), b(f)
            try:
                return pyop(x, y)  # type: ignore[no-any-return]
            except TypeError:
                raise EvalError("E001", f"cannot compare `{_show(x)}` {op} `{_show(y)}`", span) from None

        return order

    def _check_enum_literal(self, e: A.Compare) -> None:
        """``u.kind == "horze"`` against an enum-typed side: the literal must be a member."""
        members = self.enum_members.get(self.ns.key, {})
        for lit, other in ((e.left, e.right), (e.right, e.left)):
            if isinstance(lit, A.Str) and isinstance(other, A.Name) and other.id in members and lit.value not in members:
                enum = members[other.id]
                self.error("C016", f"`{lit.value}` is not a member of enum `{enum}`", lit.span)

    def x_BinOp(self, e: A.BinOp, env: Env, scope: FnScope) -> Ev:
        a = self.expr(e.left, env, scope)
        b = self.expr(e.right, env, scope)
        span, op = e.span, e.op
        if op == "??":
            def coalesce(f: list[Any]) -> Any:
                x = a(f)
                return b(f) if x is None else x
            return coalesce
        if op == "+":
            def add(f: list[Any]) -> Any:
                x, y = a(f), b(f)
                _charge_size(f[0], span, "+", x, y)
                try:
                    return x + y
                except TypeError:
                    raise EvalError("E001", f"cannot add `{_show(x)}` and `{_show(y)}`", span) from None
            return add
        if op in ("/", "//", "%"):
            def divide(f: list[Any]) -> Any:
                x, y = a(f), b(f)
                try:
                    if op == "/":
                        if isinstance(x, int) and isinstance(y, int):
                            q = Fraction(x, y)
                            return q.numerator if q.denominator == 1 else q
                        return x / y
                    return x // y if op == "//" else x % y
                except ZeroDivisionError:
                    raise EvalError("E003", "division by zero", span) from None
                except TypeError:
                    raise EvalError("E001", f"cannot divide `{_show(x)}` by `{_show(y)}`", span) from None
            return divide
        pyop = _ARITH_OPS[op]

        def arith(f: list[Any]) -> Any:
            x, y = a(f), b(f)
            _charge_size(f[0], span, op, x, y)
            try:
                return pyop(x, y)
            except TypeError:
                raise EvalError("E001", f"cannot compute `{_show(x)}` {op} `{_show(y)}`", span) from None

        return arith

    def x_Neg(self, e: A.Neg, env: Env, scope: FnScope) -> Ev:
        a = self.expr(e.operand, env, scope)
        span = e.span

        def neg(f: list[Any]) -> Any:
            x = a(f)
            try:
                return -x
            except TypeError:
                raise EvalError("E001", f"cannot negate `{_show(x)}`", span) from None

        return neg

    def x_Field(self, e: A.Field, env: Env, scope: FnScope) -> Ev:
        if isinstance(e.obj, A.Name) and e.obj.id not in env:
            found = self.lookup_global(e.obj.id, e.obj.span)
            if found is not None and found[0] == "module":
                sub = self.loaded.namespaces[found[1]]
                target = self.lookup_global(e.name, e.span, sub)
                if target is None or target[0] not in ("unit", "data", "enum"):
                    close = difflib.get_close_matches(e.name, list(sub.defs), 1)
                    self.error("C001", f"module `{e.obj.id}` has no `{e.name}`", e.span,
                               help=f"did you mean `{e.obj.id}.{close[0]}`?" if close else None)
                    return lambda f: None
                return self._global_value(target, e.name, e.span)
            if found is not None and found[0] == "data":
                data = found[1]
                if isinstance(data, dict):
                    if e.name not in data:
                        close = difflib.get_close_matches(e.name, [str(k) for k in data], 1)
                        self.error("C012", f"data `{e.obj.id}` has no field `{e.name}`", e.span,
                                   help=f"did you mean `{close[0]}`?" if close else None)
                        return lambda f: None
                    value = data[e.name]
                    return lambda f: value
        obj = self.expr(e.obj, env, scope)
        name, span = e.name, e.span

        def fail(o: Any) -> Any:
            if hasattr(o, "get"):  # a mapping that is not a plain dict
                return o.get(name)
            if o is None:
                raise EvalError("E002", f"field `{name}` of none", span,
                                help=f"guard with `x != none`, or use `(x ?? default).{name}`")
            raise EvalError("E001", f"`{_show(o)}` has no fields (looking for `{name}`)", span)

        if hasattr(obj, "const") and type(obj.const) is dict:  # type: ignore[attr-defined]
            return _const(obj.const.get(name))  # type: ignore[attr-defined]
        slot = getattr(obj, "slot", None)
        if slot is not None:
            def local_field(f: list[Any]) -> Any:
                o = f[slot]
                if type(o) is dict:
                    return o.get(name)
                return fail(o)
            local_field.field_of = (slot, name, fail)  # type: ignore[attr-defined]  # read inline by comparisons
            return local_field

        def field(f: list[Any]) -> Any:
            o = obj(f)
            if type(o) is dict:
                return o.get(name)
            return fail(o)

        return field

    def x_Index(self, e: A.Index, env: Env, scope: FnScope) -> Ev:
        if isinstance(e.obj, A.Name) and e.obj.id not in env:
            found = self.lookup_global(e.obj.id, e.obj.span)
            if found is not None and found[0] == "unit" and isinstance(found[1].decl, A.TableDecl):
                unit: Unit = found[1]
                if len(e.keys) != unit.arity:
                    self.error("C003", f"table `{e.obj.id}` has {unit.arity} keys, not {len(e.keys)}", e.span)
                keys = [self.expr(k, env, scope) for k in e.keys]
                if len(keys) == 2:
                    k0, k1 = keys
                    return lambda f: unit.fn(f[0], k0(f), k1(f))  # type: ignore[misc]
                return lambda f: unit.fn(f[0], *[k(f) for k in keys])  # type: ignore[misc]
        if len(e.keys) != 1:
            self.error("C003", "only tables take several keys", e.span)
        obj = self.expr(e.obj, env, scope)
        key = self.expr(e.keys[0], env, scope)
        span = e.span
        # Indexing is the hottest node of the bundled rulesets. The variants below read a local slot,
        # a zero-argument value or a constant key inline instead of through their own closure: each
        # saves a Python call per evaluation. They differ only in where `o` and `k` come from, and
        # all fall back to `slow` for anything but a map lookup.

        def slow(o: Any, k: Any) -> Any:
            if type(o) is list and type(k) is int and -len(o) <= k < len(o):
                return o[k]
            if isinstance(o, dict):
                try:
                    return o.get(k)
                except TypeError:
                    raise EvalError("E009", f"`{_show(k)}` cannot be a key", span) from None
            if isinstance(o, (list, tuple, str)):
                if not isinstance(k, int) or isinstance(k, bool):
                    raise EvalError("E001", f"a list index must be an integer, not `{_show(k)}`", span)
                if -len(o) <= k < len(o):
                    return o[k]
                raise EvalError("E002", f"index {k} outside a list of {len(o)} items", span)
            if o is None:
                raise EvalError("E002", "indexing none", span)
            raise EvalError("E001", f"`{_show(o)}` cannot be indexed", span)

        kslot = getattr(key, "slot", None)
        oslot = getattr(obj, "slot", None)
        ounit: Unit | None = getattr(obj, "unit", None)
        # the commonest shapes read their operands inline: `m[k]` for a value `m` and a local `k`,
        # `x.y[0]`, `x["k"]`, `x[k]` for locals
        if hasattr(key, "const") and type(key.const) in (str, int):  # type: ignore[attr-defined]
            c = key.const  # type: ignore[attr-defined]
            if type(c) is int:
                def index_num(f: list[Any]) -> Any:
                    o = obj(f)
                    if type(o) is list and -len(o) <= c < len(o):
                        return o[c]
                    return slow(o, c)
                return index_num
            if oslot is not None:
                def index_local_text(f: list[Any]) -> Any:
                    o = f[oslot]
                    if type(o) is dict:
                        return o.get(c)
                    return slow(o, c)
                return index_local_text

            def index_text(f: list[Any]) -> Any:
                o = obj(f)
                if type(o) is dict:
                    return o.get(c)
                return slow(o, c)
            return index_text
        if ounit is not None and kslot is not None:
            def index_value_local(f: list[Any]) -> Any:
                o, k = ounit.fn(f[0]), f[kslot]  # type: ignore[misc]
                if type(o) is dict:
                    try:
                        return o.get(k)
                    except TypeError:
                        pass
                return slow(o, k)
            return index_value_local
        if ounit is not None:
            def index_value(f: list[Any]) -> Any:
                o = ounit.fn(f[0])  # type: ignore[misc]
                k = key(f)
                if type(o) is dict:
                    try:
                        return o.get(k)
                    except TypeError:
                        pass
                return slow(o, k)
            return index_value
        if oslot is not None and kslot is not None:
            def index_locals(f: list[Any]) -> Any:
                o, k = f[oslot], f[kslot]
                if type(o) is dict:
                    try:
                        return o.get(k)
                    except TypeError:
                        pass
                return slow(o, k)
            return index_locals
        if kslot is not None:
            def index_local(f: list[Any]) -> Any:
                o, k = obj(f), f[kslot]
                if type(o) is dict:
                    try:
                        return o.get(k)
                    except TypeError:
                        pass
                return slow(o, k)
            return index_local

        def index(f: list[Any]) -> Any:
            o, k = obj(f), key(f)
            if type(o) is dict:
                try:
                    return o.get(k)
                except TypeError:
                    pass
            return slow(o, k)

        return index

    def x_With(self, e: A.With, env: Env, scope: FnScope) -> Ev:
        obj = self.expr(e.obj, env, scope)
        items = [(k, self.expr(v, env, scope)) for k, v in e.items]
        span = e.span

        def with_(f: list[Any]) -> Any:
            o = obj(f)
            if not isinstance(o, dict):
                raise EvalError("E001", f"`with` needs a record, not `{_show(o)}`", span)
            out = dict(o)
            for k, v in items:
                out[k] = v(f)
            return out

        return with_

    def x_Call(self, e: A.Call, env: Env, scope: FnScope) -> Ev:
        args = [self.expr(a, env, scope) for a in e.args]
        kwargs = [(k, self.expr(v, env, scope)) for k, v in e.kwargs]
        span = e.span
        target: tuple[str, Any] | None = None
        fname = None
        if isinstance(e.func, A.Name) and e.func.id not in env:
            fname = e.func.id
            target = self.lookup_global(fname, e.func.span)
            if target is None:
                self.unknown(fname, e.func.span, env)
                return lambda f: None
        elif isinstance(e.func, A.Field) and isinstance(e.func.obj, A.Name) and e.func.obj.id not in env:
            found = self.lookup_global(e.func.obj.id, e.func.obj.span)
            if found is not None and found[0] == "module":
                sub = self.loaded.namespaces[found[1]]
                fname = f"{e.func.obj.id}.{e.func.name}"
                target = self.lookup_global(e.func.name, e.func.span, sub)
                if target is None:
                    self.error("C001", f"module `{e.func.obj.id}` has no `{e.func.name}`", e.func.span)
                    return lambda f: None
        if target is not None:
            kind, obj = target
            if kind == "builtin":
                return self._call_builtin(obj, args, kwargs, e)
            if kind == "unit":
                unit: Unit = obj
                if kwargs:
                    self.error("C003", f"`{fname}` takes no named arguments", span)
                if isinstance(unit.decl, A.TableDecl):
                    self.error("C018", f"table `{fname}` is looked up with `{fname}[...]`, not called", span)
                    return lambda f: None
                if unit.arity is None:
                    self.error("C018", f"`{fname}` is a value, not a function", span,
                               help=f"write `{fname}` without parentheses")
                    return lambda f: None
                if unit.arity != len(args):
                    self.error("C003", f"`{fname}` takes {unit.arity} argument{'s' if unit.arity != 1 else ''}, "
                                       f"not {len(args)}", span,
                               related=(Related(unit.decl.span, "defined here"),))
                    return lambda f: None
                if len(args) == 1:
                    a0 = args[0]
                    s0 = getattr(a0, "slot", None)
                    if s0 is not None:
                        return lambda f: unit.fn(f[0], f[s0])  # type: ignore[misc]
                    lf = getattr(a0, "field_of", None)
                    if lf is not None:
                        fs, fname, fail = lf

                        def call_on_field(f: list[Any]) -> Any:
                            o = f[fs]
                            return unit.fn(f[0], o.get(fname) if type(o) is dict else fail(o))  # type: ignore[misc]
                        return call_on_field
                    return lambda f: unit.fn(f[0], a0(f))  # type: ignore[misc]
                if len(args) == 2:
                    a0, a1 = args
                    i0: int | None = getattr(a0, "slot", None)
                    i1: int | None = getattr(a1, "slot", None)
                    if i0 is not None and i1 is not None:
                        j0, j1 = i0, i1
                        return lambda f: unit.fn(f[0], f[j0], f[j1])  # type: ignore[misc]
                    if i0 is not None and hasattr(a1, "const"):
                        j0, c1 = i0, a1.const  # type: ignore[attr-defined]
                        return lambda f: unit.fn(f[0], f[j0], c1)  # type: ignore[misc]
                    if hasattr(a0, "const") and i1 is not None:
                        c0, j1 = a0.const, i1  # type: ignore[attr-defined]
                        return lambda f: unit.fn(f[0], c0, f[j1])  # type: ignore[misc]
                    return lambda f: unit.fn(f[0], a0(f), a1(f))  # type: ignore[misc]
                return lambda f: unit.fn(f[0], *[a(f) for a in args])  # type: ignore[misc]
            if kind in ("enum", "data", "type", "module"):
                self.error("C018", f"`{fname}` is not a function", span)
                return lambda f: None
        func = self.expr(e.func, env, scope)

        def call_dynamic(f: list[Any]) -> Any:
            fn = func(f)
            if not callable(fn):
                raise EvalError("E001", f"`{_show(fn)}` is not a function", span)
            try:
                return fn(f[0], *[a(f) for a in args])
            except CallError as err:
                if f[0].steps > f[0].budget:  # a built-in that ran out of steps: the budget, not the argument
                    raise f[0].over_budget(span) from None
                raise EvalError("E011", str(err), span) from None

        return call_dynamic

    def _call_builtin(self, b: Builtin, args: list[Ev], kwargs: list[tuple[str, Ev]], e: A.Call) -> Ev:
        span = e.span
        n = len(args) + len(kwargs)
        if not b.min_args <= n <= b.max_args:
            want = str(b.min_args) if b.min_args == b.max_args else f"{b.min_args} to {b.max_args}"
            self.error("C003", f"`{b.name}` takes {want} argument{'s' if b.max_args != 1 else ''}, not {n}", span)
            return lambda f: None
        if b.name == "match" and len(e.args) == 2 and isinstance(e.args[1], A.Str):
            try:
                compile_pattern(e.args[1].value)
            except re.error as exc:
                self.error("C014", f"invalid pattern: {exc}", e.args[1].span)
        kwnames = [k for k, _ in kwargs]
        kwfns = [v for _, v in kwargs]
        fn = b.fn
        needs_ctx = b.needs_ctx

        def failed(f: list[Any], err: Exception) -> Exception:
            if isinstance(err, EvalError):
                if not err.span.line:  # raised deep in a built-in (e.g. dice): locate it at the call
                    err.span = span
                return err
            if isinstance(err, CallError):
                if f[0].steps > f[0].budget:  # a built-in that ran out of steps: the budget, not the argument
                    return f[0].over_budget(span)
                return EvalError("E011", f"{b.name}: {err}", span)
            if isinstance(err, TypeError):
                return EvalError("E001", f"{b.name}: {err}", span)
            return EvalError("E005", f"{b.name}: recursion too deep", span)

        # one- and two-argument calls without lists of values (the arguments are evaluated outside the
        # `try`, as below: only the built-in's own errors are located at the call)
        handled = (CallError, EvalError, TypeError, RecursionError)
        if not kwfns and len(args) == 1:
            a0 = args[0]
            if needs_ctx:
                def call1c(f: list[Any]) -> Any:
                    x = a0(f)
                    try:
                        return fn(f[0], x)
                    except handled as err:
                        if isinstance(err, EvalError):
                            failed(f, err)
                            raise
                        raise failed(f, err) from None
                return call1c

            def call1(f: list[Any]) -> Any:
                x = a0(f)
                try:
                    return fn(x)
                except handled as err:
                    if isinstance(err, EvalError):
                        failed(f, err)
                        raise
                    raise failed(f, err) from None
            return call1
        if not kwfns and len(args) == 2:
            a0, a1 = args
            if needs_ctx:
                def call2c(f: list[Any]) -> Any:
                    x, y = a0(f), a1(f)
                    try:
                        return fn(f[0], x, y)
                    except handled as err:
                        if isinstance(err, EvalError):
                            failed(f, err)
                            raise
                        raise failed(f, err) from None
                return call2c

            def call2(f: list[Any]) -> Any:
                x, y = a0(f), a1(f)
                try:
                    return fn(x, y)
                except handled as err:
                    if isinstance(err, EvalError):
                        failed(f, err)
                        raise
                    raise failed(f, err) from None
            return call2

        def call(f: list[Any]) -> Any:
            vals = [a(f) for a in args] + [v(f) for v in kwfns]
            try:
                if needs_ctx:
                    return fn(f[0], *vals)
                return fn(*vals)
            except CallError as err:
                if f[0].steps > f[0].budget:  # a built-in that ran out of steps: the budget, not the argument
                    raise f[0].over_budget(span) from None
                raise EvalError("E011", f"{b.name}: {err}", span) from None
            except EvalError as err:
                if not err.span.line:  # raised deep in a built-in (e.g. dice): locate it at the call
                    err.span = span
                raise
            except TypeError as err:
                raise EvalError("E001", f"{b.name}: {err}", span) from None
            except RecursionError:
                raise EvalError("E005", f"{b.name}: recursion too deep", span) from None

        del kwnames
        return call


_PENDING = object()
_PRIMITIVES = (str, int, bool, type(None))
_LIFE_CAP = 20000  # values kept per state-free function of one argument, for the program's life
_DICE_BUILTINS = frozenset({"roll", "roll_hits"})


def _const(value: Any) -> Ev:
    """An expression whose value is known when compiling; ``.const`` lets enclosing ones fold it."""
    ev = lambda f: value  # noqa: E731
    ev.const = value  # type: ignore[attr-defined]
    return ev


def _fused_equality(eq: bool, a: Ev, b: Ev) -> Ev | None:
    """``x == y`` / ``x != y`` with a local, a local's field or a constant on either side read inline
    (no call for each side); none for the general shape. Operands are read left to right as always."""
    lf = getattr(a, "field_of", None)
    sa = getattr(a, "slot", None)
    sb = getattr(b, "slot", None)
    if hasattr(b, "const"):
        c = b.const  # type: ignore[attr-defined]
        if lf is not None:
            s, name, fail = lf

            def field_const_eq(f: list[Any]) -> bool:
                o = f[s]
                return (o.get(name) if type(o) is dict else fail(o)) == c  # type: ignore[no-any-return]

            def field_const_ne(f: list[Any]) -> bool:
                o = f[s]
                return (o.get(name) if type(o) is dict else fail(o)) != c  # type: ignore[no-any-return]
            return field_const_eq if eq else field_const_ne
        if sa is not None:
            return (lambda f: f[sa] == c) if eq else (lambda f: f[sa] != c)
        return (lambda f: a(f) == c) if eq else (lambda f: a(f) != c)
    if sb is not None:
        if lf is not None:
            s, name, fail = lf

            def field_local_eq(f: list[Any]) -> bool:
                o = f[s]
                return (o.get(name) if type(o) is dict else fail(o)) == f[sb]  # type: ignore[no-any-return]

            def field_local_ne(f: list[Any]) -> bool:
                o = f[s]
                return (o.get(name) if type(o) is dict else fail(o)) != f[sb]  # type: ignore[no-any-return]
            return field_local_eq if eq else field_local_ne
        if sa is not None:
            return (lambda f: f[sa] == f[sb]) if eq else (lambda f: f[sa] != f[sb])
        return (lambda f: a(f) == f[sb]) if eq else (lambda f: a(f) != f[sb])
    if lf is not None:
        s, name, fail = lf

        def field_any_eq(f: list[Any]) -> bool:
            o = f[s]
            return (o.get(name) if type(o) is dict else fail(o)) == b(f)  # type: ignore[no-any-return]

        def field_any_ne(f: list[Any]) -> bool:
            o = f[s]
            return (o.get(name) if type(o) is dict else fail(o)) != b(f)  # type: ignore[no-any-return]
        return field_any_eq if eq else field_any_ne
    if sa is not None:
        return (lambda f: f[sa] == b(f)) if eq else (lambda f: f[sa] != b(f))
    return None


def _keep(ctx: Context, mkey: Any, entry: Any, always: bool) -> None:
    """Memoize a value. One that reads decisions is final when it read no guessed one (see
    ``Context.guesses``); kept during a resolution, it is listed so that undoing a resolved
    decision drops it."""
    ctx.memo[mkey] = entry
    if not always and ctx.resolving:
        ctx.rkeys.append(mkey)


def _same_args(kept: tuple[Any, ...], args: tuple[Any, ...]) -> bool:
    return all(k is a or (type(k) is type(a) and type(k) in _PRIMITIVES and k == a) for k, a in zip(kept, args))

import operator as _op  # noqa: E402

_ORDER_OPS = {"<": _op.lt, "<=": _op.le, ">": _op.gt, ">=": _op.ge}
_ARITH_OPS = {"-": _op.sub, "*": _op.mul}


def _charge_size(ctx: Context, span: Span, op: str, x: Any, y: Any) -> None:
    """Charge `+`/`*` for the size of what they build, before building it (so doubling a list or
    squaring a number again and again is a located E004, not a MemoryError or a hang)."""
    seq = (str, list, tuple)
    if op == "+" and isinstance(x, seq) and isinstance(y, seq):
        cost = len(x) + len(y)
    elif op == "*" and isinstance(x, seq) and isinstance(y, int):
        cost = len(x) * max(0, y)
    elif op == "*" and isinstance(y, seq) and isinstance(x, int):
        cost = len(y) * max(0, x)
    elif op == "*" and isinstance(x, int) and isinstance(y, int):
        cost = (x.bit_length() * y.bit_length()) >> 16  # schoolbook cost; 0 for ordinary numbers
    else:
        return
    ctx.steps += cost
    if ctx.steps > ctx.budget:
        raise ctx.over_budget(span)


def _builtin_value(b: Builtin, span: Span) -> Callable[..., Any]:
    def as_value(ctx: Context, *args: Any) -> Any:
        if not b.min_args <= len(args) <= b.max_args:
            raise EvalError("E001", f"`{b.name}` takes {b.min_args}..{b.max_args} arguments, not {len(args)}", span)
        try:
            return b.fn(ctx, *args) if b.needs_ctx else b.fn(*args)
        except CallError as err:
            if ctx.steps > ctx.budget:  # a built-in that ran out of steps: the budget, not the argument
                raise ctx.over_budget(span) from None
            raise EvalError("E011", f"{b.name}: {err}", span) from None
    return as_value


def _store(slot: int, value: Ev) -> Exec:
    def store(f: list[Any]) -> None:
        f[slot] = value(f)
    return store


def _iterate(seq: Any, span: Span) -> Any:
    if isinstance(seq, (list, tuple, frozenset, set, dict)):
        return seq
    if seq is None:
        raise EvalError("E001", "cannot loop over none", span)
    if isinstance(seq, str):
        raise EvalError("E001", "cannot loop over text", span, help="use split(text) for its words")
    if hasattr(seq, "__next__"):
        return seq
    raise EvalError("E001", f"cannot loop over `{_show(seq)}`", span)


def _unpack(f: list[Any], slots: tuple[int, ...], x: Any, seq: Any, span: Span) -> None:
    if isinstance(seq, dict):
        f[slots[0]], f[slots[1]] = x, seq[x]
        return
    if isinstance(x, dict) and "key" in x and "value" in x:
        f[slots[0]], f[slots[1]] = x["key"], x["value"]
        return
    if isinstance(x, (list, tuple)) and len(x) == len(slots):
        for s, v in zip(slots, x):
            f[s] = v
        return
    raise EvalError("E001", f"cannot unpack `{_show(x)}` into {len(slots)} names", span)


def _span_of(node: Any) -> Span:
    return getattr(node, "span", Span("<unknown>"))


def _jsonish(v: Any) -> Any:
    from .values import to_json
    return to_json(v)


def _traced(ctx: Context, name: str, args: tuple[Any, ...], cites: tuple[str, ...], thunk: Callable[[], Any]) -> Any:
    node: dict[str, Any] = {"rule": name, "args": [_jsonish(a) for a in args], "cites": list(cites), "children": []}
    if len(ctx.trace_stack) > 2000:
        return thunk()
    parent = ctx.trace_stack[-1]
    ctx.trace_stack.append(node)
    try:
        value = thunk()
    finally:
        ctx.trace_stack.pop()
    node["value"] = _jsonish(value)
    parent["children"].append(node)
    return value


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
    if hasattr(node, "__dataclass_fields__"):
        for fname in node.__dataclass_fields__:
            if fname == "span":
                continue
            _collect_names(getattr(node, fname), out)


def compile_program(loaded: Loaded) -> Program:
    return Compiler(loaded).compile()


def declared_name(decl: Any) -> str:
    return decl_key(decl)
