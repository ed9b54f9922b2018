"""What compiled closures share: frame slots and scopes, and the run-time helpers they call.

The compiler is built in layers, each using only those below it: ``compile_expr`` (expressions),
``compile_defs`` (values, functions and their memo, tables), ``compile_control`` (decisions and their
cycle policies, procedures), ``compiler`` (the driver). Nothing here generates Python source."""

from __future__ import annotations

import sys

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable

from . import ast as A
from .builtins import BUILTINS, Builtin, CallError
from .diagnostics import Span
from .runtime import PENDING, Context, EvalError

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


_PENDING = PENDING
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


def value_key(unit: Any) -> str:
    """The per-run memo key of a zero-argument value (see ``compile_defs._value_fn``): its namespace
    and name in one interned text, whose hash is computed once (a tuple's is computed at every
    lookup, and values are read hundreds of times a run). Names have no NUL: the key is unique."""
    return sys.intern(f"{unit.ns}\0{unit.name}")


def _keep(ctx: Context, mkey: Any, entry: Any, always: bool) -> None:
    """Memoize a value. One that reads decisions is final when it read no guessed one (see
    ``Context.guesses``); kept during a resolution, it is listed so that undoing a resolved
    decision drops it."""
    ctx.memo[mkey] = entry
    if not always and ctx.resolving:
        ctx.rkeys.append(mkey)


def _remember(ctx: Context, mkey: Any, entry: Any, always: bool, guesses: int, rolls: int) -> None:
    """After computing a memoized call: keep it when it may be kept (it reads no decision, or no
    guessed one), and mark it tainted when it rolled dice (a later reader then counts a roll)."""
    if always or ctx.guesses == guesses:
        _keep(ctx, mkey, entry, always)
        if ctx.rolls != rolls:
            ctx.tainted.add(mkey)


def _recall(ctx: Context, mkey: Any, args: tuple[Any, ...], value: Any, steps: int, span: Span) -> Any:
    """A result kept for the program's life: the first read in a run charges the steps computing
    it took (so a small budget stops where it would have), then it is in the run's memo."""
    ctx.steps += steps
    if ctx.steps > ctx.budget:
        raise ctx.over_budget(span)
    ctx.memo[mkey] = (args, value)
    return value


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


def _loop_items(ctx: Context, seq: Any, span: Span) -> Any:
    """What a `for` walks (see ``_iterate``); a collection's length is charged to the step budget
    first, so that a loop over a huge one stops at once."""
    seq = _iterate(seq, span)
    if isinstance(seq, (list, tuple, frozenset, set, dict)):
        ctx.steps += len(seq)
        if ctx.steps > ctx.budget:
            raise ctx.over_budget(span)
    return seq


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


def global_meaning(units: dict[Any, Any], ns: Any, enum_members: Any, name: str) -> tuple[str, Any] | None:
    """What a global name means in a namespace, first match wins: ("unit", unit), ("type", decl) for an
    enum or record used as a value, ("data", value), ("enum", name) for a member, ("builtin", b),
    ("module", key); none when it is unknown."""
    unit = units.get((ns.key, name))
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


def field_fail(o: Any, name: str, span: Span) -> Any:
    """``o.name`` for anything but a plain dict: another mapping's value, or the located error."""
    if hasattr(o, "get"):  # a mapping that is not a plain dict
        return o.get(name)
    if o is None:
        raise EvalError("E002", f"field `{name}` of none", span,
                        help=f"guard with `x != none`, or use `(x ?? default).{name}`")
    raise EvalError("E001", f"`{_show(o)}` has no fields (looking for `{name}`)", span)


def divide(op: str, x: Any, y: Any, span: Span) -> Any:
    """``x / y`` (exact: integers give a fraction, or an integer when it divides), ``//`` and ``%``."""
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


def index_slow(o: Any, k: Any, span: Span) -> Any:
    """``o[k]`` for anything but a map lookup by a hashable key: list items, and every error."""
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
