"""Compiling decisions (with their cycle policies), procedures and statements into closures."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any, Callable

from . import ast as A
from .diagnostics import Diagnostic, Related, Span
from .runtime import (GUESSING, RESOLVED, BreakSignal, Context, ContinueSignal, EvalError, GotoSignal,
                      RejectSignal, Settlement, StopSignal)
from .closures import (Ev, Exec, _argkey, FnScope, Local, Env, _store, _iterate, _span_of, _jsonish, _collect_gotos)


from .compile_defs import DefinitionCompiler

if TYPE_CHECKING:
    from .compiler import Unit


class ControlCompiler(DefinitionCompiler):
    """Decisions with their cycle policies, procedures and their statements."""

    def decision(self, unit: Unit, d: A.DecisionDecl) -> Callable[..., Any]:
        scope = FnScope()
        env = self._params(d.params, scope)
        body = self.expr(d.body, env, scope)
        # the body's function, in a cell that the generated tier (``codegen``) may refill; the second
        # cell keeps the closure, for runs on closures only (``Context.slow``)
        closure = self._function(unit, body, scope, len(d.params), d.span, d.cites)
        unit.body_fn = [closure, closure]
        body_fn = unit.body_fn
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
            # (texts, the commonest arguments, are their own keys: no call for them; no list for two)
            key: tuple[Any, ...]
            if len(args) == 2:
                a, b = args
                key = (dec_id, a if type(a) is str else _argkey(a), b if type(b) is str else _argkey(b))
            else:
                key = (dec_id, *[a if type(a) is str else _argkey(a) for a in args])
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
            body = body_fn[1] if ctx.slow else body_fn[0]
            if ctx.trace:
                ctx.dstack.append(key)
                try:
                    first = body(ctx, *args)
                finally:
                    ctx.dstack.pop()
            else:
                first = body(ctx, *args)
            if len(deplist) == old:
                if ctx.dstate.get(key) != RESOLVED:
                    ctx.dstate[key] = RESOLVED
                    ctx.dvalue[key] = first
                return ctx.dvalue[key]
            return guessed(ctx, key, args, first, old)

        def guessed(ctx: Context, key: Any, args: tuple[Any, ...], first: Any, old: int) -> Any:
            """The body's first value read guesses (``ctx.deplist`` grew past ``old``): provisional, or
            evaluated again under the other guess, or a cycle to settle by the policies."""
            deplist = ctx.deplist
            body = body_fn[1] if ctx.slow else body_fn[0]
            if deplist[old] != key:
                deplist.append(key)
                ctx.dvalue[key] = first
                return first
            unset(ctx, deplist[old:])
            del deplist[old:]
            ctx.dstate[key] = GUESSING
            ctx.dvalue[key] = True
            second = body(ctx, *args)
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

        def resume(ctx: Context, key: Any, args: tuple[Any, ...], first: Any, old: int, guesses: int) -> Any:
            """Where generated code's resolution of the decision (``codegen.Generator.resolver``) hands
            over when the body's first value read guesses: the rest of ``resolve_fresh``, then of
            ``resolve`` (which generated code, with no dice and no trace, does the same as)."""
            value = guessed(ctx, key, args, first, old)
            ctx.guesses = guesses if ctx.dstate.get(key) == RESOLVED else guesses + 1
            return value

        unit.resume = resume
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
