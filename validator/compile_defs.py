"""Wrapping definitions into callables: values, functions (with their per-run memo), tables."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any, Callable

from . import ast as A
from .diagnostics import Span
from .runtime import (Context, EvalError)
from .closures import (Ev, FnScope, Local, Env, _PENDING, _PRIMITIVES, _LIFE_CAP,
                       _keep, _recall, _remember, _same_args, _span_of, _traced, value_key)


from .compile_expr import ExpressionCompiler

if TYPE_CHECKING:
    from .compiler import Unit

_FUNCTION_KEYS = itertools.count()  # memo keys of functions: `(int, argument...)`, cheap to hash


class DefinitionCompiler(ExpressionCompiler):
    """Parameters, values (cached per run or per ruleset), functions and their memo, tables."""

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
        key = value_key(unit)
        nslots = scope.nslots
        span = unit.decl.span
        always = not unit.uses_decisions
        # state-free: kept for the program's life as [value, steps it took]; a hit charges those steps,
        # so a run with a small budget still stops where it would have. Traced runs compute it afresh.
        kept: list[Any] = []
        state_free = unit.state_free
        counted = int(unit.counted)  # only calls of some units on reference cycles count (``Unit.counted``)

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
            if counted and ctx.depth >= ctx.depth_limit:
                raise EvalError("E005", f"recursion deeper than {ctx.depth_limit} calls", span)
            frame = [ctx] + [None] * (nslots - 1)
            ctx.depth += counted
            memo[key] = _PENDING
            rolls = ctx.rolls
            steps = ctx.steps
            guesses = ctx.guesses
            try:
                result = body(frame)
            finally:
                ctx.depth -= counted
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
        ukey = next(_FUNCTION_KEYS)  # an int: memo keys `(ukey, argument...)` hash cheaply
        # [calls computed, calls answered from a memo]: the generated tier (``codegen``) leaves out the
        # memo of a function whose calls never found their value there
        stats = unit.memo_stats = [0, 0]
        counted = int(unit.counted)  # only calls of some units on reference cycles count (``Unit.counted``)
        too_deep = ("a rule calls itself without reaching a base case" if not isinstance(unit.decl, A.DecisionDecl)
                    else f"each `{name}` decision waits for another: a chain longer than the limit, or one without end")

        def invoke(ctx: Context, *args: Any) -> Any:
            ctx.steps += 1
            if ctx.steps > ctx.budget:
                raise ctx.over_budget(span)
            if counted and ctx.depth >= ctx.depth_limit:
                raise EvalError("E005", f"recursion deeper than {ctx.depth_limit} calls (in `{name}`)", span,
                                help=too_deep)
            mkey = None
            if memoize and not ctx.trace:
                mkey = (ukey, *[a if type(a) in _PRIMITIVES else id(a) for a in args])
                hit = ctx.memo.get(mkey)
                if hit is not None and _same_args(hit[0], args):
                    stats[1] += 1
                    if mkey in ctx.tainted:
                        ctx.rolls += 1
                    return hit[1]
                stats[0] += 1
            frame = [ctx, *args, *pad]
            ctx.depth += counted
            rolls = ctx.rolls
            guesses = ctx.guesses
            try:
                if cites is not None and ctx.trace:
                    return _traced(ctx, name, args, cites, lambda: body(frame))
                result = body(frame)
            finally:
                ctx.depth -= counted
            if mkey is not None:  # the arguments are kept so an id is never reused
                _remember(ctx, mkey, (args, result), always, guesses, rolls)
            return result

        def compute(ctx: Context, frame: list[Any], mkey: Any, args: tuple[Any, ...],
                    life: dict[Any, Any] | None, lkey: Any) -> Any:
            """A call of one or two arguments that its memo did not answer: the body, then the memo,
            and the life store under ``lkey`` (when given) as (argument..., value, steps it took)."""
            ctx.depth += counted
            rolls = ctx.rolls
            guesses = ctx.guesses
            steps = ctx.steps
            try:
                result = body(frame)
            finally:
                ctx.depth -= counted
            if mkey is not None:
                if life is not None and lkey is not None and len(life) < _LIFE_CAP:
                    life[lkey] = (*args, result, ctx.steps - steps)
                _remember(ctx, mkey, (args, result), always, guesses, rolls)
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
                if counted and ctx.depth >= ctx.depth_limit:
                    return invoke(ctx, a)  # raises the located E005
                mkey = None
                if memoize:
                    ta = type(a)
                    if ta is str:  # the commonest argument: a text key is only ever stored for an equal text
                        prim = True
                        mkey = (ukey, a)
                        hit = ctx.memo.get(mkey)
                        if hit is not None:
                            stats[1] += 1
                            if ctx.tainted and mkey in ctx.tainted:
                                ctx.rolls += 1
                            return hit[1]
                    else:
                        prim = ta in _PRIMITIVES
                        mkey = (ukey, a if prim else id(a))
                        hit = ctx.memo.get(mkey)
                        if hit is not None:
                            k = hit[0][0]
                            if k is a or (prim and type(k) is ta and k == a):
                                stats[1] += 1
                                if ctx.tainted and mkey in ctx.tainted:
                                    ctx.rolls += 1
                                return hit[1]
                    if life is not None and prim:
                        kept1 = life.get(a)
                        if kept1 is not None and type(kept1[0]) is ta:
                            stats[1] += 1
                            return _recall(ctx, mkey, (a,), kept1[1], kept1[2], span)
                    stats[0] += 1
                return compute(ctx, [ctx, a, *tail] if tail else [ctx, a], mkey, (a,), life,
                               a if mkey is not None and prim else None)

            return invoke1
        if nparams == 2:
            tail = pad
            # state-free, two primitive arguments: kept for the program's life as for one (see `invoke1`)
            life2: dict[Any, tuple[Any, Any, Any, int]] | None = {} if memoize and unit.state_free else None

            def invoke2(ctx: Context, a: Any, b: Any) -> Any:
                if ctx.trace:
                    return invoke(ctx, a, b)
                ctx.steps += 1
                if ctx.steps > ctx.budget:
                    raise ctx.over_budget(span)
                if counted and ctx.depth >= ctx.depth_limit:
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
                            stats[1] += 1
                            if ctx.tainted and mkey in ctx.tainted:
                                ctx.rolls += 1
                            return hit[1]
                    if life2 is not None and pa and pb:
                        kept2 = life2.get((a, b))
                        if kept2 is not None and type(kept2[0]) is ta and type(kept2[1]) is tb:
                            stats[1] += 1
                            return _recall(ctx, mkey, (a, b), kept2[2], kept2[3], span)
                    stats[0] += 1
                return compute(ctx, [ctx, a, b, *tail] if tail else [ctx, a, b], mkey, (a, b), life2,
                               (a, b) if mkey is not None and pa and pb else None)

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
