"""Compiling expressions into closures ``ev(frame)``."""

from __future__ import annotations

import difflib
import re
from typing import TYPE_CHECKING, Any, Callable

from . import ast as A
from .builtins import BUILTINS, Builtin, CallError, DiceSpec, compile_pattern
from .diagnostics import Diagnostic, Related, Span
from .loader import Loaded, Namespace
from .runtime import (Context, EvalError)
from .closures import (Ev, _show, FnScope, Local, Env, _PENDING, _const, _fused_equality, _ORDER_OPS, _ARITH_OPS,
                       _charge_size, _builtin_value, _loop_items, _unpack, value_key, index_slow, divide,
                       field_fail, global_meaning)


if TYPE_CHECKING:
    from .compiler import Program, Unit


class ExpressionCompiler:
    """The base of the compiler's layers (expressions <- definitions <- control <- ``Compiler``):
    the state they share, error reporting, and every expression node."""

    loaded: Loaded
    program: Program
    diags: list[Diagnostic]
    ns: Namespace
    current: Unit | None
    enum_members: dict[str, dict[str, str]]
    proc_steps: list[str] | None
    in_loop: int
    step_cites: dict[str, tuple[str, ...]]
    defaulted: set[int]  # ids of the left operands of `??`: a data field missing there is none

    def error(self, code: str, message: str, span: Span, help: str | None = None,
              related: tuple[Related, ...] = ()) -> None:
        self.diags.append(Diagnostic(code, message, span, help=help, related=related))

    # -- driver

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
        found = global_meaning(self.program.units, ns, self.enum_members.get(ns.key, {}), name)
        if found is not None and found[0] == "unit":
            found[1].used = True
        return found

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
                key = value_key(unit)

                def read(f: list[Any]) -> Any:
                    # memoized in this run and untouched by dice: read from the memo; anything else
                    # (not computed yet, being computed, dice) through the value's own function
                    ctx = f[0]
                    hit = ctx.memo.get(key, _PENDING)
                    if hit is _PENDING or ctx.tainted:
                        return unit.fn(ctx)  # type: ignore[misc]
                    return hit
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
        # a copy of the record with its constant fields, the others then set in order (a field keeps
        # its place when set again, so the fields come out in the written order)
        template = {k: getattr(v, "const", None) for k, v in items}
        dyn = [(k, v) for k, v in items if not hasattr(v, "const")]
        if len(dyn) == 1:
            (k0, v0), = dyn

            def record1(f: list[Any]) -> dict[str, Any]:
                d = template.copy()
                d[k0] = v0(f)
                return d
            return record1
        if len(dyn) == 2:
            (k0, v0), (k1, v1) = dyn

            def record2(f: list[Any]) -> dict[str, Any]:
                d = template.copy()
                d[k0] = v0(f)
                d[k1] = v1(f)
                return d
            return record2
        if len(dyn) == 3:
            (k0, v0), (k1, v1), (k2, v2) = dyn

            def record3(f: list[Any]) -> dict[str, Any]:
                d = template.copy()
                d[k0] = v0(f)
                d[k1] = v1(f)
                d[k2] = v2(f)
                return d
            return record3

        def record(f: list[Any]) -> dict[str, Any]:
            d = template.copy()
            for k, v in dyn:
                d[k] = v(f)
            return d
        return record

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
            seq = _loop_items(f[0], it(f), lspan)
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

        def items(f: list[Any]) -> Any:
            return _loop_items(f[0], it0(f), lspan0)

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
            if getattr(elem, "slot", None) == slot0 and cond0 is not None:
                def filter_list(f: list[Any]) -> list[Any]:
                    out = []
                    for x in items(f):
                        f[slot0] = x
                        if cond0(f):
                            out.append(x)  # `[x for x in seq if cond]`: the item itself, no call
                    return out
                return filter_list

            def fast_list(f: list[Any]) -> list[Any]:
                out = []
                for x in items(f):
                    f[slot0] = x
                    if cond0 is None or cond0(f):
                        out.append(elem(f))
                return out
            return fast_list
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
            key_is_item = getattr(key, "slot", None) == slot0

            def make_map(f: list[Any]) -> dict[Any, Any]:
                out = {}
                try:
                    if len(slots) == 1 and key_is_item:
                        for x in items(f):
                            f[slot0] = x
                            if cond0 is None or cond0(f):
                                out[x] = elem(f)  # `{x => ... for x in seq}`: the key is the item
                    elif len(slots) == 1:
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
                bkey = value_key(bunit)
                def member_local_value(f: list[Any]) -> bool:
                    ctx = f[0]
                    coll = ctx.memo.get(bkey, _PENDING)  # the value read as `read` above does
                    if coll is _PENDING or ctx.tainted:
                        coll = bunit.fn(ctx)  # type: ignore[misc]
                    x = f[sa]
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
        if e.op == "??":
            self.defaulted.add(id(e.left))
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
            def quotient(f: list[Any]) -> Any:
                x = a(f)
                return divide(op, x, b(f), span)
            return quotient
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
                        if id(e) in self.defaulted:  # `map.f ?? d`: the data may leave the field out
                            return lambda f: None
                        close = difflib.get_close_matches(e.name, [str(k) for k in data], 1)
                        self.error("C012", f"data `{e.obj.id}` has no field `{e.name}`", e.span,
                                   help=f"did you mean `{close[0]}`?" if close else None)
                        return lambda f: None
                    value = data[e.name]
                    return lambda f: value
        obj = self.expr(e.obj, env, scope)
        name, span = e.name, e.span

        def fail(o: Any) -> Any:
            return field_fail(o, name, span)

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
        # all fall back to `closures.index_slow` for anything but a map lookup.

        kslot = getattr(key, "slot", None)
        oslot = getattr(obj, "slot", None)
        ounit: Unit | None = getattr(obj, "unit", None)
        okey = value_key(ounit) if ounit is not None else None
        # the commonest shapes read their operands inline: `m[k]` for a value `m` and a local `k`,
        # `x.y[0]`, `x["k"]`, `x[k]` for locals
        if hasattr(key, "const") and type(key.const) in (str, int):  # type: ignore[attr-defined]
            c = key.const  # type: ignore[attr-defined]
            if type(c) is int and oslot is not None:
                def index_local_num(f: list[Any]) -> Any:
                    o = f[oslot]
                    if type(o) is list and -len(o) <= c < len(o):
                        return o[c]
                    return index_slow(o, c, span)
                return index_local_num
            if type(c) is int:
                def index_num(f: list[Any]) -> Any:
                    o = obj(f)
                    if type(o) is list and -len(o) <= c < len(o):
                        return o[c]
                    return index_slow(o, c, span)
                return index_num
            if oslot is not None:
                def index_local_text(f: list[Any]) -> Any:
                    o = f[oslot]
                    if type(o) is dict:
                        return o.get(c)
                    return index_slow(o, c, span)
                return index_local_text

            def index_text(f: list[Any]) -> Any:
                o = obj(f)
                if type(o) is dict:
                    return o.get(c)
                return index_slow(o, c, span)
            return index_text
        if ounit is not None and kslot is not None:
            def index_value_local(f: list[Any]) -> Any:
                ctx = f[0]
                o = ctx.memo.get(okey, _PENDING)  # the value read as `x_Name` reads it
                if o is _PENDING or ctx.tainted:
                    o = ounit.fn(ctx)  # type: ignore[misc]
                k = f[kslot]
                if type(o) is dict:
                    try:
                        return o.get(k)
                    except TypeError:
                        pass
                return index_slow(o, k, span)
            return index_value_local
        if ounit is not None:
            def index_value(f: list[Any]) -> Any:
                ctx = f[0]
                o = ctx.memo.get(okey, _PENDING)  # the value read as `x_Name` reads it
                if o is _PENDING or ctx.tainted:
                    o = ounit.fn(ctx)  # type: ignore[misc]
                k = key(f)
                if type(o) is dict:
                    try:
                        return o.get(k)
                    except TypeError:
                        pass
                return index_slow(o, k, span)
            return index_value
        if oslot is not None and kslot is not None:
            def index_locals(f: list[Any]) -> Any:
                o, k = f[oslot], f[kslot]
                if type(o) is dict:
                    try:
                        return o.get(k)
                    except TypeError:
                        pass
                return index_slow(o, k, span)
            return index_locals
        if kslot is not None:
            def index_local(f: list[Any]) -> Any:
                o, k = obj(f), f[kslot]
                if type(o) is dict:
                    try:
                        return o.get(k)
                    except TypeError:
                        pass
                return index_slow(o, k, span)
            return index_local

        def index(f: list[Any]) -> Any:
            o, k = obj(f), key(f)
            if type(o) is dict:
                try:
                    return o.get(k)
                except TypeError:
                    pass
            return index_slow(o, k, span)

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
