"""The second tier of the compiler: Python functions generated from the checked AST.

A program first runs on closures (``compile_expr`` and the layers above it). Once its runs have
taken ``HOT_SECONDS`` in the process (``note_run``), each value, function, query and decision body
is written as one Python function at its first call (``tier_up``): the ``compile_defs`` wrapper
(steps, depth, memo, life cache, dice taint) specialised for the unit, with its body inline.
Tables, procedures and inputs keep their closures, which call units through ``unit.fn``; generated
code calls generated code directly. A decision's resolution is a closure too, except that generated
code, in a program with no dice, resolves a decision with no guess in the way itself
(``Generator.resolver``). A run on closures only
(``Context.slow``: traced, or run again after generated code ran out of steps) never enters generated
code: a generated unit's ``fn`` (``_entry``) sends it to the closure. A call at the depth limit hands
over to the unit's closure too.
A unit the generator cannot take keeps its closure (``program.generated["kept"]``).

What the generated code may contain is fixed by this module, not by the ruleset:

- every name in it is made here (``_u3``, ``_l7``, ``_t12``...): no identifier of the ruleset is
  written into the source;
- every literal of the ruleset and every object the code uses (texts, field names, spans,
  built-ins, data, this module's own messages) is passed in the function's globals under such a
  made name; the only literals in the source are ``None``, ``True``, ``False``, integers (written
  by ``int.__repr__``: a sign and digits) and texts that are short ASCII identifiers (``_IDENT``:
  letters, digits, ``_``), written between single quotes: a field name, a kind of record. Such
  a text holds no quote, backslash, space or line break, so it cannot end its literal; any other
  text is passed in the globals. (Literals make records with constant keys and field reads
  cheaper than names looked up in the globals: ~4% of a bundled ruleset's run, measured.);
- it is only ever built from a program that checked without errors, and the function is made from
  the compiled code object (nothing is executed to define it).

This is the only module of ``validator`` allowed to call Python's ``compile`` (``_compiled``; the
fast check of a state schema, ``state._CheckWriter``, is written under the same rules and compiled
here too); ``tests/test_safety.py`` holds it to that. The generated functions behave as the closures
do: same values, same errors at the same places, same dice. Steps may be charged more than on
closures, never fewer: the fixed steps of a stretch of code are charged where it starts, a branch
that does not run included (``_Stretch``), a result kept for the program's life charges its steps at
every call (``life_hit``), and a function generated without its memo charges its body's steps on a
call the memo would have answered. The budget is checked in loops, in recursive calls and where a
run leaves generated code; a run that ran out is run again on closures, which report it where it
happened, so a budget gives the same outcome on both tiers. ``tests/test_codegen.py`` runs the
bundled suites on both tiers.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import re
import types
import typing
import warnings
from typing import TYPE_CHECKING, Any, Callable, Iterator

from . import ast as A
from .builtins import BUILTINS, Builtin, CallError, DiceSpec, _sort_key
from .closures import (_DICE_BUILTINS, _argkey, _LIFE_CAP, _PENDING, _builtin_value, _charge_size, _loop_items, _show,
                       divide, field_fail, global_meaning, index_slow, value_key)
from .compile_defs import _FUNCTION_KEYS
from .diagnostics import Span
from .runtime import GUESSING, RESOLVED, Context, EvalError, codegen_mode

if TYPE_CHECKING:
    from .compiler import Program, Unit


class Unsupported(Exception):
    """A construct this tier does not generate; the unit keeps its closure."""


# ---------------------------------------------------------------- run-time helpers of generated code


def _err(code: str, message: str, span: Span) -> EvalError:
    return EvalError(code, message, span)


def _add(ctx: Context, x: Any, y: Any, span: Span) -> Any:
    _charge_size(ctx, span, "+", x, y)
    try:
        return x + y
    except TypeError:
        raise EvalError("E001", f"cannot add `{_show(x)}` and `{_show(y)}`", span) from None


def _arith(ctx: Context, op: str, x: Any, y: Any, span: Span) -> Any:
    _charge_size(ctx, span, op, x, y)
    try:
        return x - y if op == "-" else x * y
    except TypeError:
        raise EvalError("E001", f"cannot compute `{_show(x)}` {op} `{_show(y)}`", span) from None


def _neg(x: Any, span: Span) -> Any:
    try:
        return -x
    except TypeError:
        raise EvalError("E001", f"cannot negate `{_show(x)}`", span) from None


def _order_fail(x: Any, op: str, y: Any, span: Span) -> EvalError:
    return EvalError("E001", f"cannot compare `{_show(x)}` {op} `{_show(y)}`", span)


def _member_fail(coll: Any, neg: bool, span: Span) -> bool:
    if coll is None:
        return neg
    raise EvalError("E001", f"`in` needs a list, set, map or text on its right, not `{_show(coll)}`", span)


def _with_base(o: Any, span: Span) -> dict[Any, Any]:
    if not isinstance(o, dict):
        raise EvalError("E001", f"`with` needs a record, not `{_show(o)}`", span)
    return dict(o)


def _pairs(seq: Any, n: int, span: Span) -> Iterator[tuple[Any, ...]]:
    """The items of a loop with ``n`` names, unpacked as ``closures._unpack`` does."""
    for x in seq:
        if isinstance(seq, dict):
            yield (x, seq[x])
        elif isinstance(x, dict) and "key" in x and "value" in x:
            yield (x["key"], x["value"])
        elif isinstance(x, (list, tuple)) and len(x) == n:
            yield tuple(x)
        else:
            raise EvalError("E001", f"cannot unpack `{_show(x)}` into {n} names", span)


def _loop_items_each(ctx: Context, seq: Any, span: Span, each: int) -> Any:
    """``closures._loop_items``, and ``each`` more steps per item (its body's: see ``_Stretch``)."""
    seq = _loop_items(ctx, seq, span)
    if isinstance(seq, (list, tuple, frozenset, set, dict)):
        ctx.steps += len(seq) * each
        return seq
    return _charged_items(ctx, seq, each)


def _charged_items(ctx: Context, seq: Iterator[Any], each: int) -> Iterator[Any]:
    for x in seq:
        ctx.steps += each
        yield x


def _builtin_failed(ctx: Context, err: BaseException, name: str, span: Span) -> BaseException:
    """What a built-in's failure becomes at its call (as ``ExpressionCompiler._call_builtin`` does)."""
    if isinstance(err, EvalError):
        if not err.span.line:  # raised deep in a built-in (e.g. dice): locate it at the call
            err.span = span
        return err
    if isinstance(err, CallError):
        if ctx.steps > ctx.budget:  # a built-in that ran out of steps: the budget, not the argument
            return ctx.over_budget(span)
        return EvalError("E011", f"{name}: {err}", span)
    if isinstance(err, TypeError):
        return EvalError("E001", f"{name}: {err}", span)
    return EvalError("E005", f"{name}: recursion too deep", span)


def _dynamic_failed(ctx: Context, err: CallError, span: Span) -> EvalError:
    if ctx.steps > ctx.budget:
        return ctx.over_budget(span)
    return EvalError("E011", str(err), span)


def _too_deep(ctx: Context, span: Span) -> EvalError:
    return EvalError("E005", f"recursion deeper than {ctx.depth_limit} calls", span)


def _not_callable(fn: Any, span: Span) -> EvalError:
    return EvalError("E001", f"`{_show(fn)}` is not a function", span)


def _lambda_arity(n: int, got: int, span: Span) -> EvalError:
    return EvalError("E001", f"this function takes {n} arguments, not {got}", span)


def _sorted_by_keys(xs: list[Any], keys: list[Any]) -> list[Any]:
    """The items in the order of their keys (stable), as ``sorted(xs, key=...)`` gives them. Keys all
    texts or all integers compare as they are; any other mix in the language's order (``_sort_key``)."""
    t0 = type(keys[0]) if keys else str
    if not ((t0 is str or t0 is int) and len(set(map(type, keys))) == 1):
        keys = [_sort_key(k) for k in keys]
    return [xs[i] for i in sorted(range(len(xs)), key=keys.__getitem__)]


_HANDLED = (CallError, EvalError, TypeError, RecursionError)
# texts written as literals in generated source: ASCII identifiers of at most 40 characters
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,39}", re.ASCII)

_HELPERS: dict[str, Any] = {
    "_PENDING": _PENDING, "_err": _err, "_field_fail": field_fail, "_index_slow": index_slow, "_add": _add,
    "_arith": _arith, "_divide": divide, "_neg": _neg, "_order_fail": _order_fail, "_member_fail": _member_fail,
    "_with_base": _with_base, "_pairs": _pairs, "_loop_items": _loop_items, "_loop_items_each": _loop_items_each,
    "_builtin_failed": _builtin_failed,
    "_dynamic_failed": _dynamic_failed, "_not_callable": _not_callable, "_too_deep": _too_deep,
    "_lambda_arity": _lambda_arity, "_HANDLED": _HANDLED,
    "_CallError": CallError, "_builtin_value": _builtin_value, "_frozenset": frozenset, "_type": type,
    "_dict": dict, "_list": list, "_int": int, "_len": len, "_callable": callable,
    "_TypeError": TypeError, "_KeyError": KeyError, "_IndexError": IndexError, "_argkey": _argkey,
    "_sorted_by_keys": _sorted_by_keys, "_str": str, "_bool": bool, "_id": id,
}


# ---------------------------------------------------------------- the writer


class _Writer:
    def __init__(self, indent: int = 1):
        self.lines: list[str] = []
        self.indent = indent

    def __call__(self, text: str) -> None:
        self.lines.append("    " * self.indent + text)

    def mark(self, make: Callable[[int], str]) -> "_Mark":
        """A line written later, when what it says is known: ``make(n)`` (see ``_Stretch``)."""
        self.lines.append("")
        return (self, len(self.lines) - 1, "    " * self.indent, make)

    def source(self) -> str:
        return "\n".join(line for line in self.lines if line)

    def block(self) -> "_Indented":
        return _Indented(self)


class _Indented:
    def __init__(self, w: _Writer):
        self.w = w

    def __enter__(self) -> None:
        self.w.indent += 1

    def __exit__(self, *exc: Any) -> None:
        self.w.indent -= 1


Env = dict[str, str]


# a line to write later: (its writer, its index there, its indentation, what it says given a number)
_Mark = tuple[_Writer, int, str, Callable[[int], str]]


def _loop_items_line(seq: str, span: str, k: int) -> str:
    """What a loop over something that may not be a collection walks, charged ``k`` more steps an item."""
    if not k:
        return f"{seq} = _loop_items(ctx, {seq}, {span})"
    return f"{seq} = _loop_items_each(ctx, {seq}, {span}, {k})"


class _Stretch:
    """Code that runs as a whole once entered: a function's body, a loop's body (per item), a lambda's.
    The steps its calls charge (an inlined function's, a lambda's; fixed numbers) are summed here and
    charged once, where it is entered (``marks``: lines written when the sum is known). A branch or
    a left-early loop that does not run still counts: a generated run may charge more steps than its
    closures, never fewer, and one that runs out is run again on closures (``Generator.charge``)."""
    __slots__ = ("steps", "marks")

    def __init__(self) -> None:
        self.steps = 0
        self.marks: list[_Mark] = []

    def close(self) -> None:
        for w, i, indent, make in self.marks:
            text = make(self.steps)
            w.lines[i] = indent + text if text else ""


class _Branch:
    """Code that may not run: what it reads is forgotten as it ends, and so are the names of the
    locals that held it (``Generator.vname``), which the code after it may take again."""

    def __init__(self, gen: "Generator"):
        self.gen = gen
        self.saved: dict[Any, str] | None = None
        self.vn = 0
        self.loops = 0

    def __enter__(self) -> None:
        self.saved = dict(self.gen.avail)
        self.vn = self.gen.vn
        self.loops = len(self.gen.loop_reads)

    def __exit__(self, *exc: Any) -> None:
        if self.saved is not None:
            self.gen.avail = self.saved
            if not self.gen.vkept:
                self.gen.vn = self.vn
            self.gen.close_loops(self.loops)


class _LoopReads:
    """The values a loop's body reads that are the same all run long: each in a local of its own
    (``_h``), set to the pending marker before the loop (the line ``mark``) and read at the first
    read of the first item that reads it; the items after take it from there."""
    __slots__ = ("mark", "names")

    def __init__(self, mark: _Mark):
        self.mark = mark
        self.names: dict[str, str] = {}

    def close(self) -> None:
        w, i, indent, _ = self.mark
        if self.names:
            w.lines[i] = indent + " = ".join(self.names.values()) + " = _PENDING"


_LITERAL_NAMES = {None: "None", True: "True", False: "False"}


class Generator:
    """Python source for the bodies of one program's units, and the functions compiled from it."""

    def __init__(self, program: Program):
        self.program = program
        self.loaded = program.loaded
        self.g: dict[str, Any] = {"__builtins__": {}, **_HELPERS}
        self.consts: dict[str, Any] = {}  # generated name (or literal text) -> the constant value
        self.by_id: dict[int, str] = {}
        self.n = 0
        self.enum_members: dict[str, set[str]] = {}
        for ns in self.loaded.namespaces.values():
            self.enum_members[ns.key] = {m for d in ns.defs.values() if isinstance(d, A.EnumDecl) for m in d.members}
        self.unit_names: dict[tuple[str, str], str] = {}
        # whether any unit may roll dice: if none can, no value is ever tainted, and the generated code
        # leaves out the bookkeeping of rolls
        self.dice = any(n in _DICE_BUILTINS for deps in program.refs.values() for _, n in deps)
        self.ns: Any = None
        self.inline_ok: dict[tuple[str, str], bool] = {}
        self.uses: collections.Counter[str] | None = None  # (see ``name_uses``)
        self.life_stores: dict[tuple[str, str], str] = {}  # a state-free function's store (``lives_of``)
        self.defaulted: set[int] = set()  # ids of the left operands of `??`
        self.tn = 0  # temporaries of the function being written (see ``tmp``)
        self.vn = 0  # locals holding values read once on a path (see ``vname``)
        self.vkept = False
        # the loops being written, innermost last, each with the values its body reads (see
        # ``_LoopReads``); None for a nested function's body, whose reads are its own
        self.loop_reads: list[_LoopReads | None] = []
        # values already read at this point of the function being written (see ``global_value``)
        self.avail: dict[Any, str] = {}
        self.unmemoized: list[str] = []
        self.inlined: list[str] = []  # functions written into a caller (each once)
        self.inlining: list[tuple[str, str]] = []
        self.repeated = 0  # how many of those are named in more than one place (see ``inlinable``)
        # the Python type a value's body always gives (a map or record, list or set), by the `_v` local
        # holding it (see ``shape``)
        self.shaped: dict[str, type] = {}
        # the stretches of code being written, innermost last (see ``_Stretch`` and ``charge``)
        self.stretches: list[_Stretch] = []
        self.resolvers: dict[str, str] = {}  # decision name -> its generated resolution (``resolver``)
        # each value's slot in ``Context.vals`` (see ``global_value``), given to all at once: the values
        # that are the same all run long (they read no decision, and the program rolls no die)
        self.vslots: dict[str, int] = {}
        for unit in program.units.values():
            if (unit.arity is None and isinstance(unit.decl, (A.DefDecl, A.ConstDecl)) and not unit.uses_decisions
                    and not self.dice):
                self.vslots[value_key(unit)] = len(self.vslots)

    # -- names and constants

    def fresh(self, prefix: str) -> str:
        self.n += 1
        return f"_{prefix}{self.n}"

    def const(self, value: Any) -> str:
        if type(value) is bool or value is None:
            text = _LITERAL_NAMES[value]
        elif type(value) is int:
            text = "(" + repr(value) + ")"  # int.__repr__: an optional minus and digits
        elif type(value) is str and _IDENT.fullmatch(value):  # (see the module's docstring)
            text = "'" + value + "'"
        else:
            found = self.by_id.get(id(value))
            if found is not None and self.g[found] is value:
                return found
            text = self.fresh("k")
            self.g[text] = value
            self.by_id[id(value)] = text
        self.consts[text] = value
        return text

    def is_const(self, atom: str) -> bool:
        return atom in self.consts

    def shape(self, atom: str) -> type | None:
        """The Python type the atom is known to hold: a constant's, or a value's whose body always
        gives one type (``_shape_of``); ``None`` when not known."""
        if self.is_const(atom):
            return type(self.consts[atom])
        return self.shaped.get(atom)

    def expr_shape(self, e: Any, ns: Any) -> type | None:
        """The Python type an expression always gives when it gives a value (``_shape_of``), a call
        of a built-in's read from ``_result_shapes`` (names resolved in ``ns``)."""
        def builtin_result(call: A.Call) -> type | None:
            found = self.lookup(call.func.id, ns) if isinstance(call.func, A.Name) else None
            return _result_shapes().get(found[1].name) if found is not None and found[0] == "builtin" else None
        return _shape_of(e, builtin_result)

    def var(self, atom: str, w: _Writer) -> str:
        """The atom, or a local holding it when it is a literal: Python warns at ``None[k]`` or ``(3)(x)``."""
        if atom in _LITERAL_NAMES.values() or atom.startswith("("):
            t = self.tmp()
            w(f"{t} = {atom}")
            return t
        return atom

    def unit_ref(self, unit: Unit) -> str:
        key = (unit.ns, unit.name)
        name = self.unit_names.get(key)
        if name is None:
            name = self.fresh("u")
            self.unit_names[key] = name
        return name

    # -- name resolution (as ``ExpressionCompiler.lookup_global``; the program checked, so names resolve)

    def lookup(self, name: str, ns: Any = None) -> tuple[str, Any] | None:
        ns = ns or self.ns
        return global_meaning(self.program.units, ns, self.enum_members.get(ns.key, ()), name)

    # -- units

    def unit_source(self, unit: Unit, slow: str) -> tuple[str, str]:
        """The source of a unit's whole function ``fn(ctx, *args)``: the wrapper of ``compile_defs``
        (steps, depth, memo, life cache; see ``_function`` and ``_value_fn``) written out for this
        unit, with its body inline. At the depth limit it hands over to ``slow``, the unit's closure,
        which reports as it always did (a traced run never comes here: see ``_entry``)."""
        d = unit.decl
        self.ns = self.loaded.namespaces[unit.ns]
        self.stretches = []  # (a unit given up half-written leaves none behind)
        if isinstance(d, A.ConstDecl):
            return self.value_source(unit, d.value, slow)
        if isinstance(d, A.DefDecl) and d.params is None:
            return self.value_source(unit, d.body, slow)
        if isinstance(d, A.DefDecl):
            return self.function_source(unit, d.params or (), d.body, slow, True)
        if isinstance(d, A.QueryDecl):
            return self.function_source(unit, d.params, d.body, slow, False)
        if isinstance(d, A.DecisionDecl):  # the body (``unit.body_fn``; its resolution: ``resolver``)
            return self.function_source(unit, d.params, d.body, slow, False)
        raise Unsupported(type(d).__name__)

    def function_source(self, unit: Unit, params: tuple[A.Param, ...], body: Any, slow: str,
                        memoize: bool, resolve: bool = False) -> tuple[str, str]:
        """The function of a `def`, `rule`, query or decision body; with ``resolve``, a decision's
        resolution with its body written in it (``resolver``)."""
        if memoize and _memo_never_answered(unit):
            # on closures, every call computed its value (each gets a new record, say): the memo only
            # costs here. The values are the same either way; a call charges its body's steps. (A
            # function that may call itself keeps its memo: a state the trial did not see could
            # repeat its calls many times over; unless only decisions call it, whose values are kept
            # once resolved, so that each of its calls comes from the evaluation of one.)
            memoize = False
            self.unmemoized.append(unit.name)
        fname = self.fresh("u")
        w = _Writer(1)
        self.begin_function()
        env: Env = {}
        args = [self.fresh("l") for _ in params]
        for p, a in zip(params, args):
            env[p.name] = a
        n = len(args)
        span = self.const(unit.decl.span)
        always = not unit.uses_decisions
        life = memoize and _keeps_for_life(unit)
        call = "".join(", " + a for a in args)
        if resolve:
            self.resolution_start(unit, args, w)
        # (only calls of some units on reference cycles count toward the depth limit: ``Unit.counted``)
        if unit.counted:  # at the depth limit, the closure reports the located E005
            w("if ctx.depth >= ctx.depth_limit:")
            with w.block():
                w(f"{'dfirst =' if resolve else 'return'} {slow}(ctx{call})")
            if resolve:
                w("else:")
                w.indent += 1
        # the steps its body charges (``_Stretch``), also on a call its memo answers, and the call's
        # own step unless its caller charges it (``_caller_charges``); a value kept for the program's
        # life is looked up first and kept with these steps, which its hit charges: the other ways
        # into the body charge them after it
        entry = 0 if _caller_charges(unit) else 1
        self.open_stretch(w, entry, entered=not life)
        stretch = self.stretches[-1]
        if memoize:
            ukey = self.const(next(_FUNCTION_KEYS))
            if life:
                lives = self.lives_of(unit)
            # the memo key: (unit, argument...), an argument that is no text, number, truth value or
            # none by its id (the arguments are kept with the value, so an id is never reused)
            # (of primitive arguments, a state-free function's value is kept for the program's life,
            # where every later call finds it: the run's memo holds it only once that store is full)
            full = f"_len({lives}) >= {self.const(_LIFE_CAP)}" if life else ""
            parts = ", ".join(f"{a} if _pa{i} else _id({a})" for i, a in enumerate(args))
            lkey = args[0] if n == 1 else f"({', '.join(args)})"
            if n:  # the commonest arguments, texts and none: each key of them is only ever stored for
                # equal arguments (a text or none equals no other kind of value, so the types are not
                # compared as for numbers and truth values, `1` and `true` being equal keys)
                w("if " + " and ".join(f"(_type({a}) is _str or {a} is None)" if n > 1 else f"_type({a}) is _str or {a} is None"
                                       for a in args) + ":")
                with w.block():
                    if life:
                        self.life_hit(w, lives, lkey, n, "")
                        self.stretch_mark(w, entry)
                        w(f"if {full}:")
                        w.indent += 1
                    w(f"mkey = ({ukey}, {', '.join(args)})")
                    w("hit = ctx.memo.get(mkey, _PENDING)")
                    w("if hit is not _PENDING:")
                    with w.block():
                        self.tainted_read(w, "mkey")
                        w("return hit")
                    if life:
                        w.indent -= 1
                        for i in range(n):
                            w(f"_pa{i} = True")
                    w("held = None")
                if n == 1:  # a record, the commonest argument of another kind: by its id
                    w(f"elif _type({args[0]}) is _dict:")
                    with w.block():
                        if life:
                            self.stretch_mark(w, entry)
                        w(f"mkey = ({ukey}, _id({args[0]}))")
                        w("hit = ctx.memo.get(mkey)")
                        w(f"if hit is not None and hit[0][0] is {args[0]}:")
                        with w.block():
                            self.tainted_read(w, "mkey")
                            w("return hit[1]")
                        w(f"held = ({args[0]},)")
                        if life:
                            w("_pa0 = False")
                w("else:")
                w.indent += 1
                if life:
                    self.stretch_mark(w, entry)
            for i, a in enumerate(args):
                w(f"_ta{i} = _type({a})")
                w(f"_pa{i} = _ta{i} is _str or _ta{i} is _int or _ta{i} is _bool or {a} is None")
            if life:
                prims = " and ".join(f"_pa{i}" for i in range(n))
                w(f"if {prims}:")
                with w.block():
                    self.life_hit(w, lives, lkey, n,
                                  " and " + " and ".join(f"_type(kept[{i}]) is _ta{i}" for i in range(n)))
                w(f"if not ({prims}) or {full}:")
                w.indent += 1
            w(f"mkey = ({ukey}, {parts})")
            if n:
                w("hit = ctx.memo.get(mkey)")
                w("if hit is not None:")
                with w.block():
                    w("kept = hit[0]")
                    same = " and ".join(f"(kept[{i}] is {a} or (_pa{i} and _type(kept[{i}]) is _ta{i} and kept[{i}] == {a}))"
                                        for i, a in enumerate(args))
                    w(f"if {same}:")
                    with w.block():
                        self.tainted_read(w, "mkey")
                        w("return hit[1]")
                w(f"held = ({''.join(a + ', ' for a in args)})")
            else:  # (no arguments: kept as texts are, the value alone)
                w("hit = ctx.memo.get(mkey, _PENDING)")
                w("if hit is not _PENDING:")
                with w.block():
                    self.tainted_read(w, "mkey")
                    w("return hit")
                w("held = None")
            if life:
                w.indent -= 1
            if n:
                w.indent -= 1
        if memoize:
            self.watch(w, always)
            if life:
                w("steps = ctx.steps")
        if unit.counted:
            w("ctx.depth += 1")
            w("try:")
            with w.block():
                r = self.body(body, env, w)
            w("finally:")
            with w.block():
                w("ctx.depth -= 1")
        else:
            r = self.expr(body, env, w)
        self.close_to(0)
        self.close_loops(0)
        if unit.recursive:  # (elsewhere the next loop, recursive call or the run's end checks it)
            self.check_budget(w, span)
        if memoize:
            if life:
                w(f"if {prims} and _len({lives}) < {self.const(_LIFE_CAP)}:")
                with w.block():
                    # (the steps to charge when it is found: the body's and those of its entry)
                    more = f" + {entry + stretch.steps}" if entry + stretch.steps else ""
                    w(f"{lives}[{lkey}] = ({', '.join(args)}, {r}, ctx.steps - steps{more})")
                # (else `mkey` is set: the store was full at the call already, as nothing the body
                # calls can reach this function (``Unit.state_free``), or an argument is no primitive)
                w("else:")
                w.indent += 1
            # (the value alone under a key of texts and none, which is only ever stored for equal
            # arguments; else with the arguments, compared at a hit and kept alive, so that an id
            # in a key is not reused)
            self.keep(w, always, "mkey", f"{r} if held is None else (held, {r})")
            if life:
                w.indent -= 1
        if resolve:
            w(f"dfirst = {r}")
            if unit.counted:
                w.indent -= 1
            self.resolution_end(unit, args, w)
            return fname, f"def {fname}(ctx, dkey{call}):\n" + w.source() + "\n"
        w(f"return {r}")
        return fname, f"def {fname}(ctx{call}):\n" + w.source() + "\n"

    def resolution_start(self, unit: Unit, args: list[str], w: _Writer) -> None:
        """A decision's resolution from its key (``dkey``) and arguments, as its closure
        (``compile_control``'s ``resolve``) does in a run with no dice and no trace, up to its body's
        first evaluation (written next, its value put in ``dfirst``)."""
        w("if dkey in ctx.dstate:")
        with w.block():
            w(f"return {self.const(unit.fn)}(ctx{''.join(', ' + a for a in args)})")
        w("dguesses = ctx.guesses")
        w("ddeps = ctx.deplist")
        w("dold = _len(ddeps)")
        w(f"ctx.decisions[dkey] = ({''.join(a + ', ' for a in args)})")
        w(f"ctx.dstate[dkey] = {self.const(GUESSING)}")
        w("ctx.dvalue[dkey] = False")
        w("ctx.resolving += 1")
        w("try:")
        w.indent += 1

    def resolution_end(self, unit: Unit, args: list[str], w: _Writer) -> None:
        """The rest of ``resolution_start``'s resolution, after its body's first evaluation."""
        w("if _len(ddeps) != dold:")
        with w.block():
            w(f"return {self.const(unit.resume)}(ctx, dkey, ({''.join(a + ', ' for a in args)}), dfirst, dold, dguesses)")
        w.indent -= 1
        w("finally:")
        with w.block():
            w("ctx.resolving -= 1")
        w("ctx.guesses = dguesses")
        w(f"if ctx.dstate.get(dkey) != {RESOLVED}:")
        with w.block():
            w(f"ctx.dstate[dkey] = {RESOLVED}")
            w("ctx.dvalue[dkey] = dfirst")
            w("return dfirst")
        w("return ctx.dvalue[dkey]")

    def life_hit(self, w: _Writer, lives: str, lkey: str, n: int, same: str) -> None:
        """A result kept for the program's life (``lives``, before the run's memo: a state-free function
        gives it in every run) is returned, charging the steps computing it took and those of the
        function's entry (kept with it), as ``closures._recall`` charges them at the first call of a
        run; charged at every call here (see ``_Stretch``: generated code may charge more steps than
        closures, never fewer). ``same``: the test that the kept arguments are of the types of these
        (``1`` and ``True`` are equal keys). Unchecked (``charge``): the hit does no work, so the next
        check (in a loop, as a recursive call returns, as the run leaves generated code) finds an
        overrun it makes in time."""
        w(f"kept = {lives}.get({lkey})")
        w(f"if kept is not None{same}:")
        with w.block():
            self.charge(w, f"kept[{n + 1}]", "", check=False)
            w(f"return kept[{n}]")

    def lives_of(self, unit: Unit) -> str:
        """The store of a state-free function's results kept for the program's life (``function_source``),
        made when its function or a caller (``life_call``) is first written."""
        key = (unit.ns, unit.name)
        if key not in self.life_stores:
            self.life_stores[key] = self.const({})
        return self.life_stores[key]

    def life_call(self, unit: Unit, args: list[str], t: str, w: _Writer) -> bool:
        """A call of a function that keeps its results for the program's life, its arguments texts:
        the store is asked here, and the function called only when it holds no result (a call less,
        the same steps: those the function's own lookup charges, which the store keeps with the
        result). Not for a function at the depth limit's watch (``Unit.counted``), whose call checks
        the depth first. False when the function keeps no such store (nothing written)."""
        if unit.counted or not _keeps_for_life(unit):
            return False
        n = len(args)
        texts = " and ".join(f"_type({a}) is _str" for a in args)
        w(f"kept = {self.lives_of(unit)}.get({args[0] if n == 1 else '(' + ', '.join(args) + ')'}) if {texts} else None")
        w("if kept is not None:")
        with w.block():
            self.charge(w, f"kept[{n + 1}]", "", check=False)
            w(f"{t} = kept[{n}]")
        w("else:")
        with w.block():
            w(f"{t} = {self.unit_ref(unit)}(ctx{''.join(', ' + a for a in args)})")
        return True

    def value_source(self, unit: Unit, body: Any, slow: str) -> tuple[str, str]:
        fname = self.fresh("u")
        w = _Writer(1)
        self.begin_function()
        key = self.const(value_key(unit))
        span = self.const(unit.decl.span)
        kept = self.const([])  # state-free: [value, steps it took], kept for the program's life
        always = not unit.uses_decisions
        w("memo = ctx.memo")
        w(f"if {kept}:")
        with w.block():  # charged once per run, as computing it would be; later reads in the run are free
            w(f"if {key} in memo:")
            with w.block():
                w(f"return memo[{key}]")
            self.charge(w, f"{kept}[1]", span)
            w(f"memo[{key}] = {kept}[0]")
            w(f"return {kept}[0]")
        w(f"hit = memo.get({key}, _PENDING)")
        w("if hit is not _PENDING:")
        with w.block():
            self.tainted_read(w, key)
            w("return hit")
        # a value on a cycle of the reference graph is marked pending while computed: a read meanwhile
        # is the value depending on itself (E005); any other cannot be read while computed
        if unit.recursive:
            w(f"if {key} in memo:")
            with w.block():
                w(f"raise _err({self.const('E005')}, {self.const(f'`{unit.name}` depends on itself')}, {span})")
            if unit.counted:
                w("if ctx.depth >= ctx.depth_limit:")
                with w.block():
                    w(f"raise _too_deep(ctx, {span})")
                w("ctx.depth += 1")
            w(f"memo[{key}] = _PENDING")
        self.watch(w, always)
        w("steps = ctx.steps")
        if unit.recursive:
            w("try:")
            w.indent += 1
        self.open_stretch(w, 0)
        r = self.body(body, {}, w)
        self.close_to(0)
        self.close_loops(0)
        self.check_budget(w, span)
        if unit.recursive:
            w.indent -= 1
            w("finally:")
            with w.block():
                if unit.counted:
                    w("ctx.depth -= 1")
                w(f"if memo.get({key}) is _PENDING:")
                with w.block():
                    w(f"del memo[{key}]")
        # state-free and untouched by dice: kept for the program's life too
        self.keep(w, always, key, r, kept if unit.state_free else None)
        w(f"return {r}")
        return fname, f"def {fname}(ctx):\n" + w.source() + "\n"

    # -- expressions: each emits the statements computing its value and returns an atom (a local,
    # a constant's name or a literal) holding it

    def expr(self, e: Any, env: Env, w: _Writer) -> str:
        method = getattr(self, "x_" + type(e).__name__, None)
        if method is None:
            raise Unsupported(type(e).__name__)
        return method(e, env, w)  # type: ignore[no-any-return]

    def body(self, e: Any, env: Env, w: _Writer) -> str:
        """An expression as a block of its own (``pass`` when it needs no statement)."""
        before = len(w.lines)
        atom = self.expr(e, env, w)
        if len(w.lines) == before:
            w("pass")
        return atom

    def begin_function(self) -> None:
        """A unit's function is being written: none of its temporaries, locals, loops or reads yet."""
        self.tn = 0
        self.vn = 0
        self.vkept = False
        self.loop_reads = []
        self.avail = {}

    @contextlib.contextmanager
    def nested_body(self) -> Iterator[None]:
        """The body of a function written inside the one being written (a lambda, a lazy generator):
        code that may not run (``_Branch``), which may run after the code around it has moved on.
        So the locals of the function around it are not taken again from here on (``vname``), and
        what a loop around it keeps for its items is read again in it (``_LoopReads``: the loop may
        have run again with no item since, leaving its local pending); its own loops are its own."""
        self.vkept = True
        loops = len(self.loop_reads)
        self.loop_reads.append(None)
        with self.branch():
            self.avail = {k: v for k, v in self.avail.items() if not v.startswith("_h")}
            yield
        self.close_loops(loops)

    def close_loops(self, depth: int) -> None:
        """Close the loops opened since there were ``depth``: their locals are now set before them."""
        while len(self.loop_reads) > depth:
            reads = self.loop_reads.pop()
            if reads is not None:
                reads.close()

    def branch(self) -> "_Branch":
        """Code that may not run (a branch, a loop's body, a nested function): values it reads are not
        known to have been read after it."""
        return _Branch(self)

    def keep(self, w: _Writer, always: bool, mkey: str, entry: str, life: str | None = None) -> None:
        """Memoize ``entry`` under ``mkey`` as ``closures._remember`` does: when it may be kept (it reads no
        decision, or no guessed one), listed for undoing when kept during a resolution, tainted when it
        rolled dice; ``life``: a value's ``[value, steps]`` list, set when it rolled none."""
        if not always:
            w("if ctx.guesses == guesses:")
            w.indent += 1
        w(f"ctx.memo[{mkey}] = {entry}")
        if not always:
            w("if ctx.resolving:")
            with w.block():
                w(f"ctx.rkeys.append({mkey})")
        if self.dice:
            w("if ctx.rolls != rolls:")
            with w.block():
                w(f"ctx.tainted.add({mkey})")
        if life is not None:
            w(f"{'elif' if self.dice else 'if'} not {life}:")
            with w.block():
                w(f"{life}[:] = [{entry}, ctx.steps - steps]")
        if not always:
            w.indent -= 1

    def watch(self, w: _Writer, always: bool) -> None:
        """Before computing a memoized value: what ``keep`` compares with after it."""
        if self.dice:
            w("rolls = ctx.rolls")
        if not always:
            w("guesses = ctx.guesses")

    def tainted_read(self, w: _Writer, mkey: str) -> None:
        """A memo hit on a value that rested on dice makes its reader rest on them too."""
        if self.dice:
            w(f"if ctx.tainted and {mkey} in ctx.tainted:")
            with w.block():
                w("ctx.rolls += 1")

    def charge(self, w: _Writer, amount: str, span: str, check: bool = True) -> None:
        """Charge ``amount`` steps; past the budget (with ``check``), the located E004. A fixed number
        (a call's step, an inlined call's) is added to the stretch of code being written instead, and
        charged where the stretch starts (``_Stretch``), unchecked. The budget is checked in loops (a
        loop's items are charged before it), where a recursive function returns and where the run
        leaves generated code (``_entry``): between two checks a run can only go through the calls of
        functions that neither loop nor recur, so none goes far past it. The generated code so finds an
        overrun later than the closures would, at another place: ``api`` runs such a run again on
        closures, which report it where it happened."""
        if self.stretches and amount.isdigit():
            self.stretches[-1].steps += int(amount)
            return
        w(f"ctx.steps += {amount}")
        if check:
            self.check_budget(w, span)

    def open_stretch(self, w: _Writer, base: int, entered: bool = True) -> None:
        """A stretch starting here, whose entry charges ``base`` steps and those of its calls; not here
        unless ``entered``, but at each ``stretch_mark`` then (the ways into it)."""
        self.stretches.append(_Stretch())
        if entered:
            self.stretch_mark(w, base)

    def stretch_mark(self, w: _Writer, base: int) -> None:
        """A way into the current stretch: a line charging ``base`` steps and its calls'."""
        self.stretches[-1].marks.append(w.mark(lambda k: f"ctx.steps += {base + k}" if base + k else ""))

    def close_to(self, depth: int) -> None:
        """Close the stretches opened since there were ``depth``: their charges are now written."""
        while len(self.stretches) > depth:
            self.stretches.pop().close()

    def check_budget(self, w: _Writer, span: str) -> None:
        w("if ctx.steps > ctx.budget:")
        with w.block():
            w(f"raise ctx.over_budget({span})")

    def tmp(self) -> str:
        """A temporary of the function being written. Temporaries are numbered per function and reused
        across the branches of a conditional (only one branch runs, and no nested function reads a
        temporary): a generated function with fewer locals is cheaper to call and to leave."""
        self.tn += 1
        return f"_t{self.tn}"

    def vname(self) -> str:
        """A local holding a value read once on a path and kept for what reads it again (``avail``).
        Numbered per function; the names taken in code that may not run are free again after it
        (``_Branch``: nothing reads them there), so a generated function has fewer locals to clear
        at each return. Not once a nested function is written: it may read a name after its code ran."""
        self.vn += 1
        name = f"_v{self.vn}"
        self.shaped.pop(name, None)
        return name

    def x_Int(self, e: A.Int, env: Env, w: _Writer) -> str:
        return self.const(e.value)

    def x_Str(self, e: A.Str, env: Env, w: _Writer) -> str:
        return self.const(e.value)

    def x_Bool(self, e: A.Bool, env: Env, w: _Writer) -> str:
        return self.const(e.value)

    def x_NoneLit(self, e: A.NoneLit, env: Env, w: _Writer) -> str:
        return self.const(None)

    def x_Dice(self, e: A.Dice, env: Env, w: _Writer) -> str:
        return self.const(DiceSpec(e.count, e.sides))

    def x_Name(self, e: A.Name, env: Env, w: _Writer) -> str:
        if e.id in env:
            return env[e.id]
        found = self.lookup(e.id)
        if found is None:
            raise Unsupported("unknown name")
        return self.global_value(found, e.span, w)

    def global_value(self, found: tuple[str, Any], span: Span, w: _Writer) -> str:
        kind, obj = found
        if kind == "unit":
            unit: Unit = obj
            if isinstance(unit.decl, A.TableDecl):
                raise Unsupported("table as a value")
            u = self.unit_ref(unit)
            if unit.arity is None:
                # memoized in this run and untouched by dice: read from the memo; anything else (not
                # computed yet, being computed, dice) through the value's own function. A value that
                # reads no decision is the same all run long: read once where a read already ran
                # (on every path to here, in this function), it is not read again.
                key = value_key(unit)
                if key in self.avail:
                    return self.avail[key]
                steady = not unit.uses_decisions and not self.dice
                reads = self.loop_reads[-1] if self.loop_reads and not self.dice else None
                if reads is not None and not steady:
                    return self.loop_value(unit, key, u, reads, w)
                if reads is not None:  # in a loop's body: read at most once for all its items
                    t = reads.names.get(key) or reads.names.setdefault(key, self.fresh("h"))
                    w(f"if {t} is _PENDING:")
                    w.indent += 1
                else:
                    t = self.vname()  # never a reused temporary: it may be read again further on
                slot = self.vslots.get(key)
                if slot is not None:  # the same all run long: in its slot once read (by a list index)
                    w(f"{t} = ctx.vals[{slot}]")
                    w(f"if {t} is _PENDING:")
                    w.indent += 1
                w(f"{t} = ctx.memo.get({self.const(key)}, _PENDING)")
                w(f"if {t} is _PENDING{' or ctx.tainted' if self.dice else ''}:")
                with w.block():
                    w(f"{t} = {u}(ctx)")
                if slot is not None:
                    w(f"ctx.vals[{slot}] = {t}")
                    w.indent -= 1
                if reads is not None:
                    w.indent -= 1
                if not unit.uses_decisions:
                    self.avail[key] = t
                self.value_shape(unit, t)
                return t
            t = self.tmp()
            # a function as a value is called by what it is given to: its ``fn``, which charges the
            # call's step (``_caller_charges``)
            w(f"{t} = {self.const(unit.fn) if _caller_charges(unit) else u}")
            return t
        if kind in ("data", "enum"):  # the data's value, the member's name
            return self.const(obj)
        if kind == "builtin":
            t = self.tmp()
            w(f"{t} = _builtin_value({self.const(obj)}, {self.const(span)})")
            return t
        raise Unsupported(kind)

    def loop_value(self, unit: Unit, key: Any, u: str, reads: _LoopReads, w: _Writer) -> str:
        """A value that reads decisions, read in a loop's body: kept for the loop's later items once
        read while no decision is being resolved. It is final then: memoized values are undone only
        when a decision resolved under a guess is reset, and no guess is open; should it be undone
        later all the same, its value computed again is the same."""
        h = reads.names.get(key) or reads.names.setdefault(key, self.fresh("h"))
        t = self.vname()
        w(f"{t} = {h}")
        w(f"if {t} is _PENDING:")
        with w.block():
            w(f"{t} = ctx.memo.get({self.const(key)}, _PENDING)")
            w(f"if {t} is _PENDING:")
            with w.block():
                w(f"{t} = {u}(ctx)")
            w("if not ctx.resolving:")
            with w.block():
                w(f"{h} = {t}")
        self.value_shape(unit, t)
        return t

    def value_shape(self, unit: Unit, t: str) -> None:
        """The local ``t`` holds the value ``unit``: the Python type its body always gives, if known."""
        d = unit.decl
        shape = self.expr_shape(d.value if isinstance(d, A.ConstDecl) else d.body if isinstance(d, A.DefDecl)
                                else None, self.loaded.namespaces[unit.ns])
        if shape is not None:
            self.shaped[t] = shape

    def x_ListLit(self, e: A.ListLit, env: Env, w: _Writer) -> str:
        items = [self.expr(i, env, w) for i in e.items]
        if all(self.is_const(i) for i in items):
            return self.const([self.consts[i] for i in items])
        t = self.tmp()
        w(f"{t} = [{', '.join(items)}]")
        return t

    def x_SetLit(self, e: A.SetLit, env: Env, w: _Writer) -> str:
        items = [self.expr(i, env, w) for i in e.items]
        t = self.tmp()
        self.frozen(t, f"({''.join(i + ', ' for i in items)})", e.span, w)
        return t

    def frozen(self, t: str, items: str, span: Span, w: _Writer) -> None:
        """``t = frozenset(items)``; an item that cannot be in a set is the located E009."""
        self.attempt(w, f"{t} = _frozenset({items})", "_TypeError",
                     f"raise _err({self.const('E009')}, {self.const('set items must be numbers, text or lists')}, "
                     f"{self.const(span)}) from None")

    def x_RecordLit(self, e: A.RecordLit, env: Env, w: _Writer) -> str:
        return self.record_of([(k, self.expr(v, env, w)) for k, v in e.items], w)

    def record_of(self, items: list[tuple[str, str]], w: _Writer) -> str:
        """A record of fields already computed (its field names, their atoms), in that order."""
        if all(self.is_const(v) for _, v in items):
            return self.const({k: self.consts[v] for k, v in items})
        t = self.tmp()
        w(f"{t} = {{{', '.join(self.const(k) + ': ' + v for k, v in items)}}}")
        return t

    def x_MapLit(self, e: A.MapLit, env: Env, w: _Writer) -> str:
        t = self.tmp()
        w(f"{t} = {{}}")
        for k, v in e.items:
            ka = self.expr(k, env, w)
            va = self.expr(v, env, w)
            self.map_store(t, ka, va, e.span, w, "map keys must be numbers, text or lists")
        return t

    @staticmethod
    def attempt(w: _Writer, statement: str, error: str, handler: str, *more: str) -> None:
        """``try: statement`` / ``except error: handler``, then further (error, handler) pairs in ``more``."""
        w("try:")
        with w.block():
            w(statement)
        pairs = (error, handler, *more)
        for i in range(0, len(pairs), 2):
            w(f"except {pairs[i]}:")
            with w.block():
                w(pairs[i + 1])

    def map_store(self, t: str, k: str, v: str, span: Span, w: _Writer, message: str) -> None:
        self.attempt(w, f"{t}[{k}] = {v}", "_TypeError",
                     f"raise _err({self.const('E009')}, {self.const(message)}, {self.const(span)}) from None")

    # -- comprehensions

    def loops(self, e: A.Comp, env: Env, w: _Writer) -> Env:
        """Opens the comprehension's loops (each `for`, then its condition); returns the inner
        environment (the caller restores the indentation)."""
        inner = dict(env)
        for cf in e.fors:
            it = self.expr(cf.iter, inner, w)
            seq = self.tmp()
            lspan = self.const(cf.span)
            # a collection's length is charged before the loop (see ``closures._loop_items``), times the
            # steps of an item (its own, and those of its body: ``_Stretch``)
            w(f"{seq} = {it}")
            stretch = _Stretch()
            if self.shape(it) in (list, dict, frozenset):
                self.charge_items(w, stretch, seq, lspan)
            else:
                w(f"if _type({seq}) is _list or _type({seq}) is _dict or _type({seq}) is _frozenset:")
                with w.block():
                    self.charge_items(w, stretch, seq, lspan)
                w("else:")
                with w.block():
                    stretch.marks.append(w.mark(functools.partial(_loop_items_line, seq, lspan)))
            self.stretches.append(stretch)
            names = [self.fresh("l") for _ in cf.names]
            inner = {**inner, **dict(zip(cf.names, names))}
            self.loop_reads.append(_LoopReads(w.mark(str)))  # (closed with the body's ``_Branch``)
            if len(names) == 1:
                w(f"for {names[0]} in {seq}:")
            elif len(names) == 2 and self.shape(it) is dict:
                w(f"for {names[0]}, {names[1]} in {seq}.items():")
            elif len(names) == 2:
                w(f"for {names[0]}, {names[1]} in ({seq}.items() if _type({seq}) is _dict "
                  f"else _pairs({seq}, 2, {self.const(cf.span)})):")
            else:
                w(f"for {', '.join(names)} in _pairs({seq}, {len(names)}, {self.const(cf.span)}):")
            w.indent += 1
            if cf.cond is not None:
                c = self.cond(cf.cond, inner, w)
                w(f"if not ({c}):")
                with w.block():
                    w("continue")
        return inner

    def charge_items(self, w: _Writer, stretch: _Stretch, seq: str, span: str) -> None:
        """Charge a loop over the collection ``seq`` for all its items at once, then check the budget."""
        stretch.marks.append(w.mark(lambda k: f"ctx.steps += _len({seq})" + (f" * {1 + k}" if k else "")))
        self.check_budget(w, span)

    def x_Comp(self, e: A.Comp, env: Env, w: _Writer) -> str:
        if e.kind == "gen":
            return self.generator(e, env, w)
        t = self.tmp()
        if e.kind == "list":
            w(f"{t} = []")
        elif e.kind == "set":
            w(f"{t} = []")
        elif e.kind == "map":
            w(f"{t} = {{}}")
        else:
            raise Unsupported(e.kind)
        base = w.indent
        depth = len(self.stretches)
        with self.branch():
            inner = self.loops(e, env, w)
            if e.kind == "map":
                assert e.key is not None
                k = self.expr(e.key, inner, w)  # the key first, as everywhere (dice are rolled in order)
                v = self.expr(e.elem, inner, w)
                self.map_store(t, k, v, e.span, w, "map keys must be numbers, text or lists")
            else:
                v = self.expr(e.elem, inner, w)
                w(f"{t}.append({v})")
        self.close_to(depth)
        w.indent = base
        if e.kind == "set":
            self.frozen(t, t, e.span, w)
        return t

    def generator(self, e: A.Comp, env: Env, w: _Writer) -> str:
        """``f(e for ...)``: a lazy generator, as a nested generator function."""
        gname = self.fresh("g")
        w(f"def {gname}(ctx):")
        w.indent += 1
        base = w.indent
        depth = len(self.stretches)
        with self.nested_body():
            inner = self.loops(e, env, w)
            v = self.expr(e.elem, inner, w)
            w(f"yield {v}")
        self.close_to(depth)
        w.indent = base - 1
        t = self.tmp()
        w(f"{t} = {gname}(ctx)")
        return t

    # -- bindings and control

    def x_Let(self, e: A.Let, env: Env, w: _Writer) -> str:
        """``let x = v; body``: the body reads x from a local of its own, or from v's atom itself when
        that holds one value wherever it can be read (``_stable``, or a constant): no copy."""
        if isinstance(e.value, A.If):  # (each branch sets the let's local)
            local = self.conditional(e.value, env, w, self.fresh("l"))
            shape = self.expr_shape(e.value, self.ns)
            if shape is not None:
                self.shaped[local] = shape
            return self.expr(e.body, {**env, e.name: local}, w)
        since = (len(w.lines), self.tn)
        v = self.expr(e.value, env, w)
        shape = self.shape(v) or self.expr_shape(e.value, self.ns)
        if _stable(v) or self.is_const(v):
            local = v
        else:
            local = self.fresh("l")
            self.move(w, local, v, since)
        if shape is not None and not self.is_const(local):
            self.shaped[local] = shape
        return self.expr(e.body, {**env, e.name: local}, w)

    def move(self, w: _Writer, t: str, atom: str, since: tuple[int, int]) -> None:
        """``t = atom``, where ``atom`` is the value the lines written since ``since`` (a line count
        and the temporaries' count then) computed. A temporary made in those lines (numbered past
        that count) is used there for that value alone (temporaries are numbered up along the code,
        again from a branch's start only in each branch): it is named ``t`` in them instead, unless a
        line there is still to be written (a loop's charge may name it) or a text there could hold
        its name."""
        at, tn = since
        if atom.startswith("_t") and atom[2:].isdigit() and int(atom[2:]) > tn:
            lines = w.lines[at:]
            name = re.compile(rf"\b{atom}\b")
            if lines and all(lines) and not any(f"'{atom}'" in ln for ln in lines) and any(map(name.search, lines)):
                w.lines[at:] = [name.sub(t, ln) for ln in lines]
                return
        w(f"{t} = {atom}")

    def x_If(self, e: A.If, env: Env, w: _Writer) -> str:
        return self.conditional(e, env, w)

    def conditional(self, e: A.If, env: Env, w: _Writer, into: str | None = None) -> str:
        """The first test always runs: what it reads stays known after the conditional. A later test
        runs only after the ones before it: what they read is known to it and to its branch. The value
        is set in ``into`` (a let's local) or a temporary."""
        t = into or self.tmp()
        base = w.indent
        start = high = self.tn
        after_first = self.branch()
        for i, (c, v) in enumerate(e.branches):
            if i == 1:
                after_first.__enter__()
            self.tn = start
            # a condition that needs no statement of its own is an `elif`: long chains stay flat
            cond = _Writer(w.indent + (1 if i else 0))
            ca = self.cond(c, env, cond)
            if i and not cond.lines:
                w(f"elif {ca}:")
            else:
                if i:
                    w("else:")
                    w.indent += 1
                w.lines.extend(cond.lines)
                w(f"if {ca}:")
            with w.block(), self.branch():
                since = (len(w.lines), self.tn)
                va = self.expr(v, env, w)
                self.move(w, t, va, since)
            high = max(high, self.tn)
        if len(e.branches) == 1:
            after_first.__enter__()
        w("else:")
        with w.block(), self.branch():
            self.tn = start
            since = (len(w.lines), self.tn)
            oa = self.expr(e.otherwise, env, w)
            self.move(w, t, oa, since)
        after_first.__exit__()
        self.tn = max(high, self.tn)
        w.indent = base
        return t

    def x_Lambda(self, e: A.Lambda, env: Env, w: _Writer) -> str:
        name = self.fresh("f")
        n = len(e.params)
        span = self.const(e.span)
        w(f"def {name}(ctx, *args):")
        with w.block():
            w(f"if _len(args) != {n}:")
            with w.block():
                w(f"raise _lambda_arity({n}, _len(args), {span})")
            depth = len(self.stretches)
            self.open_stretch(w, 1)
            self.check_budget(w, span)
            inner = dict(env)
            locals_ = [self.fresh("l") for _ in e.params]
            for p, local in zip(e.params, locals_):
                inner[p.name] = local
            if locals_:
                w(f"{', '.join(locals_)}, = args")
            with self.nested_body():
                r = self.expr(e.body, inner, w)
            self.close_to(depth)
            w(f"return {r}")
        return name

    def x_BoolOp(self, e: A.BoolOp, env: Env, w: _Writer) -> str:
        # plain truth tests, each operand's at most once, and a true or false result
        t = self.tmp()
        is_and = e.op == "and"
        w(f"{t} = {'False' if is_and else 'True'}")
        base = w.indent
        later = self.branch()  # the first operand always runs; each later one only after those before it
        self.bool_items(e, t, is_and, env, w, later)
        later.__exit__()
        w.indent = base
        return t

    def bool_items(self, e: A.BoolOp, t: str, is_and: bool, env: Env, w: _Writer, later: "_Branch") -> None:
        for i, item in enumerate(e.items):
            if i == 1:
                later.__enter__()
            a = self.cond(item, env, w)
            last = i == len(e.items) - 1
            w(f"if {a}:" if is_and else f"if not ({a}):")
            w.indent += 1
            if last:
                w(f"{t} = {'True' if is_and else 'False'}")

    def cond(self, e: Any, env: Env, w: _Writer) -> str:
        """An expression whose only use, at once, is its truth: an equality or a negation is given as
        Python text to test in place (its operands are atoms, read in the same order) rather than a
        local, so that a chain of such tests is a flat `elif` chain."""
        if isinstance(e, A.Compare) and e.op in ("==", "!="):
            a = self.expr(e.left, env, w)
            b = self.expr(e.right, env, w)
            return self.equality(a, e.op, b)
        if isinstance(e, A.Not):
            return f"not ({self.cond(e.operand, env, w)})"
        return self.expr(e, env, w)

    def equality(self, a: str, op: str, b: str) -> str:
        """``a == b`` (or ``!=``) as Python text. Against the literal none it is an identity test: no
        value but none equals none, save a die's value in a program that rolls dice (which decides
        its own equality), so only a program without dice is written so."""
        if not self.dice and (a == "None" or b == "None"):
            return f"{a} {'is' if op == '==' else 'is not'} {b}"
        return f"{a} {op} {b}"

    def x_Not(self, e: A.Not, env: Env, w: _Writer) -> str:
        a = self.expr(e.operand, env, w)
        t = self.tmp()
        w(f"{t} = not {a}")
        return t

    def x_Compare(self, e: A.Compare, env: Env, w: _Writer) -> str:
        a = self.expr(e.left, env, w)
        b = self.expr(e.right, env, w)
        t = self.tmp()
        op = e.op
        if op in ("==", "!="):
            w(f"{t} = {self.equality(a, op, b)}")
        elif op in ("in", "notin"):
            neg = op == "notin"
            self.attempt(w, f"{t} = {a} {'not in' if neg else 'in'} {b}", "_TypeError",
                         f"{t} = _member_fail({b}, {neg}, {self.const(e.span)})")
        elif op in ("<", "<=", ">", ">="):
            self.attempt(w, f"{t} = {a} {op} {b}", "_TypeError",
                         f"raise _order_fail({a}, {self.const(op)}, {b}, {self.const(e.span)}) from None")
        else:
            raise Unsupported(op)
        return t

    def x_BinOp(self, e: A.BinOp, env: Env, w: _Writer) -> str:
        t = self.tmp()
        span = e.span
        if e.op == "??":
            self.defaulted.add(id(e.left))
            a = self.expr(e.left, env, w)
            w(f"{t} = {a}")
            w(f"if {t} is None:")
            with w.block(), self.branch():
                b = self.expr(e.right, env, w)
                w(f"{t} = {b}")
            return t
        a = self.expr(e.left, env, w)
        b = self.expr(e.right, env, w)
        if e.op == "+":
            ka, kb = type(self.consts.get(a)), type(self.consts.get(b))
            sp = self.const(span)
            if ka is int or kb is int:  # an integer literal: then only an integer is added in place
                other = b if ka is int else a
                w(f"{t} = {a} + {b} if _type({other}) is _int else _add(ctx, {a}, {b}, {sp})")
                return t
            if ka is not str and kb is not str:
                w(f"if _type({a}) is _int and _type({b}) is _int:")
                with w.block():
                    w(f"{t} = {a} + {b}")
                w(f"elif _type({a}) is _str and _type({b}) is _str:")
            else:  # a text constant on one side: only the other is tested
                tests = [f"_type({x}) is _str" for x, k in ((a, ka), (b, kb)) if k is not str]
                w(f"if {' and '.join(tests) or 'True'}:")
            with w.block():  # texts: charged for the text built (see ``closures._charge_size``)
                sizes = [f"({len(self.consts[x])})" if k is str else f"_len({x})" for x, k in ((a, ka), (b, kb))]
                self.charge(w, " + ".join(sizes), sp)
                w(f"{t} = {a} + {b}")
            w("else:")
            with w.block():
                w(f"{t} = _add(ctx, {a}, {b}, {sp})")
        elif e.op == "-":
            w(f"{t} = {a} - {b} if _type({a}) is _int and _type({b}) is _int "
              f"else _arith(ctx, {self.const('-')}, {a}, {b}, {self.const(span)})")
        elif e.op == "*":
            w(f"{t} = _arith(ctx, {self.const('*')}, {a}, {b}, {self.const(span)})")
        elif e.op in ("/", "//", "%"):
            w(f"{t} = _divide({self.const(e.op)}, {a}, {b}, {self.const(span)})")
        else:
            raise Unsupported(e.op)
        return t

    def x_Neg(self, e: A.Neg, env: Env, w: _Writer) -> str:
        a = self.expr(e.operand, env, w)
        t = self.tmp()
        w(f"{t} = -{a} if _type({a}) is _int else _neg({a}, {self.const(e.span)})")
        return t

    def x_Field(self, e: A.Field, env: Env, w: _Writer) -> str:
        if isinstance(e.obj, A.Name) and e.obj.id not in env:
            found = self.lookup(e.obj.id)
            if found is not None and found[0] == "module":
                sub = self.loaded.namespaces[found[1]]
                target = self.lookup(e.name, sub)
                if target is None or target[0] not in ("unit", "data", "enum"):
                    raise Unsupported("module member")
                return self.global_value(target, e.span, w)
            if found is not None and found[0] == "data" and isinstance(found[1], dict):
                if e.name not in found[1]:
                    if id(e) in self.defaulted:  # `map.f ?? d`: the data may leave the field out
                        return self.const(None)
                    raise Unsupported("data field")
                return self.const(found[1][e.name])
        o = self.expr(e.obj, env, w)
        if self.is_const(o) and type(self.consts[o]) is dict:
            return self.const(self.consts[o].get(e.name))
        o = self.var(o, w)
        # a field of a local or of a value read before: values never change, so it is read once on a path
        known = ("field", o, e.name) if _stable(o) else None
        if known is not None and known in self.avail:
            return self.avail[known]
        t = self.vname() if known is not None else self.tmp()
        if known is not None:
            self.avail[known] = t
        name = self.const(e.name)
        if id(e) in self.defaulted:  # `x.f ?? d`: the field is often missing, so no exception for it
            w(f"{t} = {o}.get({name}) if _type({o}) is _dict else _field_fail({o}, {name}, {self.const(e.span)})")
            return t
        self.attempt(w, f"{t} = {o}[{name}]", "_KeyError", f"{t} = None",
                     "_TypeError", f"{t} = _field_fail({o}, {name}, {self.const(e.span)})")
        return t

    def x_Index(self, e: A.Index, env: Env, w: _Writer) -> str:
        if isinstance(e.obj, A.Name) and e.obj.id not in env:
            found = self.lookup(e.obj.id)
            if found is not None and found[0] == "unit" and isinstance(found[1].decl, A.TableDecl):
                keys = [self.expr(k, env, w) for k in e.keys]
                t = self.tmp()
                w(f"{t} = {self.unit_ref(found[1])}(ctx, {', '.join(keys)})")
                return t
        if len(e.keys) != 1:
            raise Unsupported("several keys")
        o = self.var(self.expr(e.obj, env, w), w)
        k = self.expr(e.keys[0], env, w)
        # as a field: an entry of a local or a value, at a local or a constant, is read once on a path
        known = ("index", o, k) if _stable(o) and (_stable(k) or self.is_const(k)) else None
        if known is not None and known in self.avail:
            return self.avail[known]
        t = self.vname() if known is not None else self.tmp()
        if known is not None:
            self.avail[known] = t
        span = self.const(e.span)
        kc = self.consts.get(k, _PENDING) if self.is_const(k) else _PENDING
        shape = self.shape(o)
        if shape is dict:  # a map or record for sure: its entry (an unhashable key fails as it would)
            if type(kc) is str:
                w(f"{t} = {o}.get({k})")
            else:
                self.dict_entry(t, o, k, span, w)
        elif type(kc) is int and shape is list:
            self.list_item(t, o, k, span, w)
        elif type(kc) is int:
            w(f"if _type({o}) is _list:")
            with w.block():
                self.list_item(t, o, k, span, w)
            w("else:")
            with w.block():
                w(f"{t} = _index_slow({o}, {k}, {span})")
        elif type(kc) is str:
            w(f"{t} = {o}.get({k}) if _type({o}) is _dict else _index_slow({o}, {k}, {span})")
        else:
            w(f"if _type({o}) is _dict:")
            with w.block():
                self.dict_entry(t, o, k, span, w)
            w(f"elif _type({o}) is _list and _type({k}) is _int:")
            with w.block():
                self.list_item(t, o, k, span, w)
            w("else:")
            with w.block():
                w(f"{t} = _index_slow({o}, {k}, {span})")
        return t

    def dict_entry(self, t: str, o: str, k: str, span: str, w: _Writer) -> None:
        """``o[k]`` of a dict (none when absent); a key that cannot be one, the slow path reports."""
        self.attempt(w, f"{t} = {o}.get({k})", "_TypeError", f"{t} = _index_slow({o}, {k}, {span})")

    def guarded(self, w: _Writer, statement: str, name: str, span: str) -> None:
        """A built-in's work: its failure is the located error the built-in's call would give."""
        self.attempt(w, statement, "_HANDLED as err", f"raise _builtin_failed(ctx, err, {name}, {span}) from None")

    def list_item(self, t: str, o: str, k: str, span: str, w: _Writer) -> None:
        """``o[k]`` of a list and an integer (negative from the end, as in Python); outside the list,
        the slow path reports it."""
        self.attempt(w, f"{t} = {o}[{k}]", "_IndexError", f"{t} = _index_slow({o}, {k}, {span})")

    def x_With(self, e: A.With, env: Env, w: _Writer) -> str:
        """``o with {k: v...}``: ``o`` checked to be a record before the values are computed (as the
        closures do), then a copy of it with the new entries set (an entry it has keeps its place, as
        in a dict display of its entries and the new ones, which builds a second dict for the new)."""
        o = self.expr(e.obj, env, w)
        base = self.vname()
        if self.shape(o) is dict:
            w(f"{base} = {o}")
        else:
            w(f"{base} = {o} if _type({o}) is _dict else _with_base({o}, {self.const(e.span)})")
        items = [(self.const(k), self.expr(v, env, w)) for k, v in e.items]
        t = self.vname()  # (a dict for sure: not a temporary, whose name other values reuse)
        w(f"{t} = {base}.copy()")
        for k, va in items:
            w(f"{t}[{k}] = {va}")
        self.shaped[t] = dict
        return t

    # -- calls

    def x_Call(self, e: A.Call, env: Env, w: _Writer) -> str:
        target: tuple[str, Any] | None = None
        if isinstance(e.func, A.Name) and e.func.id not in env:
            target = self.lookup(e.func.id)
        elif isinstance(e.func, A.Field) and isinstance(e.func.obj, A.Name) and e.func.obj.id not in env:
            found = self.lookup(e.func.obj.id)
            if found is not None and found[0] == "module":
                target = self.lookup(e.func.name, self.loaded.namespaces[found[1]])
        if target is not None:
            kind, obj = target
            if kind == "builtin":
                return self.call_builtin(obj, e, env, w)
            if kind == "unit":
                unit: Unit = obj
                if isinstance(unit.decl, A.TableDecl) or unit.arity != len(e.args) or e.kwargs:
                    raise Unsupported("bad call")
                args = [self.expr(a, env, w) for a in e.args]
                if self.inlinable(unit):
                    return self.inline(unit, args, w)
                if isinstance(unit.decl, A.DecisionDecl):
                    return self.decision_read(unit, args, w)
                if _caller_charges(unit):  # the call's step, with this function's own
                    self.charge(w, "1", self.const(e.span), check=False)
                t = self.tmp()
                if not self.life_call(unit, args, t, w):
                    w(f"{t} = {self.unit_ref(unit)}(ctx{''.join(', ' + a for a in args)})")
                return t
            raise Unsupported("call of " + kind)
        fn = self.var(self.expr(e.func, env, w), w)
        span = self.const(e.span)
        w(f"if not _callable({fn}):")
        with w.block():
            w(f"raise _not_callable({fn}, {span})")
        args = [self.expr(a, env, w) for a in e.args]
        t = self.tmp()
        self.attempt(w, f"{t} = {fn}(ctx{''.join(', ' + a for a in args)})", "_CallError as err",
                     f"raise _dynamic_failed(ctx, err, {span}) from None")
        return t

    def decision_read(self, unit: Unit, args: list[str], w: _Writer) -> str:
        """A decision already resolved in this run (and resting on no dice) is read from the run's
        table, as the decision's own function reads it (``compile_control.resolve``); anything else
        goes through that function."""
        t = self.tmp()
        dk = self.tmp()
        parts = [a if type(self.consts.get(a)) is str else f"({a} if _type({a}) is _str else _argkey({a}))"
                 for a in args]
        w(f"{dk} = ({self.const(unit.name)}, {', '.join(parts)},)")
        w(f"if {'not ctx.tainted and ' if self.dice else ''}ctx.dstate.get({dk}) == {RESOLVED}:")
        with w.block():
            w(f"{t} = ctx.dvalue[{dk}]")
        w("else:")
        with w.block():
            if self.dice:  # (dice taint the values they decide: the closure keeps that bookkeeping)
                w(f"{t} = {self.unit_ref(unit)}(ctx{''.join(', ' + a for a in args)})")
            else:
                w(f"{t} = {self.resolver(unit)}(ctx, {dk}{''.join(', ' + a for a in args)})")
        return t

    def resolver(self, unit: Unit) -> str:
        """The name of a function that resolves the decision ``unit`` from its key and arguments, as
        its closure (``compile_control``'s ``resolve``) does in a run with no dice and no trace: the
        body evaluated once under the guess false, final when it read no guessed value (the common
        case, done here); otherwise ``unit.resume`` goes on as the closure would (a second guess, a
        cycle to settle). A decision already being guessed is read through the closure."""
        found = self.resolvers.get(unit.name)
        if found is not None:
            return found
        if unit.resume is None or unit.body_fn is None or unit.fn is None:
            raise Unsupported("a decision without its resolution")
        fname = self.fresh("r")
        # (at its first call, the resolution with the body written in it replaces this one, which
        # calls the body's function: see ``_resolution_stub``)
        called = _define(_compiled(self.resolver_source(unit, fname), f"<ruleval {unit.name} resolution>"), self.g)
        self.g[fname] = _resolution_stub(self, unit, fname, called)
        self.resolvers[unit.name] = fname
        return fname

    def resolution_source(self, unit: Unit) -> tuple[str, str]:
        """The source of a decision's resolution with its body written in it (a call less for each
        decision resolved), as ``resolver_source``'s function, which calls the body, does."""
        d = unit.decl
        if not isinstance(d, A.DecisionDecl) or unit.body_fn is None:
            raise Unsupported("a decision without its body")
        self.ns = self.loaded.namespaces[unit.ns]
        self.stretches = []
        return self.function_source(unit, d.params, d.body, self.const(unit.body_fn[1]), False, resolve=True)

    def resolver_source(self, unit: Unit, fname: str) -> str:
        """The source of ``resolver``'s function ``fname(ctx, dkey, *args)`` for the decision ``unit``,
        which calls the body's function (``resolution_source`` writes the body in it instead)."""
        args = [self.fresh("a") for _ in range(unit.arity or 0)]
        call = "".join(", " + a for a in args)
        w = _Writer(1)
        self.resolution_start(unit, args, w)
        w(f"dfirst = {self.const(unit.body_fn)}[0](ctx{call})")
        self.resolution_end(unit, args, w)
        return f"def {fname}(ctx, dkey{call}):\n" + w.source() + "\n"

    # -- inlining small functions

    def inlinable(self, unit: Unit) -> bool:
        """A small function whose body loops over nothing, builds no function and charges no steps of
        its own but a text's `+` (no `*`, comprehension, lambda, or built-in that takes the context): its
        body is written at the call, which charges the call's step and checks the depth as the call would.
        Its value is not memoized then; it is cheaper to compute than to look up. It calls only functions
        written inline too, and decisions, unless its memo never answered on closures (it would be
        generated without one): then it may call any function, as each of its calls would. Functions
        written at their calls nest 3 deep at most, not counting those named in one place only (whose
        code is not repeated), up to 12 in all."""
        key = (unit.ns, unit.name)
        if not self.inline_ok_of(unit) or key in self.inlining or len(self.inlining) >= _INLINE_CHAIN:
            return False
        return self.repeated < _INLINE_DEPTH or self.name_uses()[unit.name] == 1

    def inline_ok_of(self, unit: Unit) -> bool:
        key = (unit.ns, unit.name)
        found = self.inline_ok.get(key)
        if found is None:
            self.inline_ok[key] = False  # while looking (a function that calls itself is not inlined)
            d = unit.decl
            # (one whose memo never answered on closures, and that cannot call itself, may call any
            # function: it is generated without a memo, so its calls are made at every call of it)
            never = _memo_never_answered(unit)
            ns = self.loaded.namespaces[unit.ns]
            found = isinstance(d, A.DefDecl) and d.params is not None and (
                (_size(d.body) <= _INLINE_SIZE
                 and _inline_shape(d.body, ns, self, _bound_names(d.body, {p.name for p in d.params}),
                                   never and not unit.recursive))
                # (or any such function named in one place only: written there, its code is not
                # repeated; with no lambda or generator, nothing of it outlives the call)
                or (never and not unit.counted and self.name_uses()[unit.name] == 1
                    and _size(d.body) <= _INLINE_ONCE_SIZE and self.no_closures(d.body, ns)))
            self.inline_ok[key] = found
        return found

    def no_closures(self, e: Any, ns: Any) -> bool:
        """No lambda and no generator inside but those a built-in such as `any` consumes (``consume``:
        written as a loop): no function is made that could outlive the code around it."""
        if isinstance(e, A.Lambda):
            return False
        if isinstance(e, A.Comp) and e.kind == "gen":
            return False
        if (isinstance(e, A.Call) and isinstance(e.func, A.Name) and e.func.id in _CONSUMERS and len(e.args) == 1
                and not e.kwargs and isinstance(e.args[0], A.Comp) and e.args[0].kind == "gen"
                and len(e.args[0].fors) == 1):
            found = self.lookup(e.func.id, ns)
            if found is not None and found[0] == "builtin":
                return all(self.no_closures(c, ns) for c in _children(e.args[0]))
        return all(self.no_closures(c, ns) for c in _children(e))

    def name_uses(self) -> collections.Counter[str]:
        """How many times each name is written in the program's declarations (a call, a reference, in
        any namespace): a function named once is called from one place only."""
        if self.uses is None:
            self.uses = collections.Counter()
            for ns in self.loaded.namespaces.values():
                for d in ns.defs.values():
                    _count_names(d, self.uses)
        return self.uses

    def inline(self, unit: Unit, args: list[str], w: _Writer) -> str:
        d = unit.decl
        span = self.const(d.span)
        self.charge(w, "1", span, check=False)
        if unit.counted:
            w("if ctx.depth >= ctx.depth_limit:")
            with w.block():  # the call itself reports the depth (E005), as it would have
                w(f"{self.unit_ref(unit)}(ctx{''.join(', ' + a for a in args)})")
        key = (unit.ns, unit.name)
        if unit.name not in self.inlined:
            self.inlined.append(unit.name)
        outer = self.ns
        self.ns = self.loaded.namespaces[unit.ns]
        self.inlining.append(key)
        repeated = self.name_uses()[unit.name] != 1
        self.repeated += repeated
        try:
            return self.expr(d.body, {p.name: a for p, a in zip(d.params, args)}, w)
        finally:
            self.repeated -= repeated
            self.inlining.pop()
            self.ns = outer

    def call_builtin(self, b: Builtin, e: A.Call, env: Env, w: _Writer) -> str:
        n = len(e.args) + len(e.kwargs)
        if not b.min_args <= n <= b.max_args:
            raise Unsupported("arity")
        if (b.name in _CONSUMERS and len(e.args) == 1 and not e.kwargs and isinstance(e.args[0], A.Comp)
                and e.args[0].kind == "gen" and len(e.args[0].fors) == 1):
            return self.consume(b.name, e.args[0], env, w)
        if (b.name in ("sorted", "sort_by", "group_by") and len(e.args) == 2 and not e.kwargs
                and isinstance(e.args[1], A.Lambda) and len(e.args[1].params) == 1 and self.no_closures(e.args[1].body, self.ns)):
            return self.keyed(b, e, env, w)
        if b.name == "merge" and len(e.args) == 2 and not e.kwargs and isinstance(e.args[0], A.RecordLit):
            return self.merge_record(b, e, env, w)
        return self.builtin_call(b, e, [self.expr(a, env, w) for a in e.args] + [self.expr(v, env, w) for _, v in e.kwargs], w)

    def merge_record(self, b: Builtin, e: A.Call, env: Env, w: _Writer) -> str:
        """``merge({f: x, ...}, m)``: when m is a map, one record of the literal's fields then m's (m's
        win), as ``{**record, **m}`` is, without building the literal's record first. The arguments are
        computed in their order; otherwise the record is built and the built-in called (and reports)."""
        lit: A.RecordLit = e.args[0]  # type: ignore[assignment]
        items = [(k, self.expr(v, env, w)) for k, v in lit.items]
        other = self.expr(e.args[1], env, w)
        t = self.vname()  # (a shaped result is not a reused temporary)
        self.shaped[t] = dict
        fields = "".join(f"{self.const(k)}: {v}, " for k, v in items)
        if self.shape(other) is dict:
            w(f"{t} = {{{fields}**{other}}}")
            return t
        w(f"if _type({other}) is _dict:")
        with w.block():
            w(f"{t} = {{{fields}**{other}}}")
        w("else:")
        with w.block():
            first = self.record_of(items, w)
            self.guarded(w, f"{t} = {self.const(b.fn)}({first}, {other})", self.const(b.name), self.const(e.span))
        return t

    def keyed(self, b: Builtin, e: A.Call, env: Env, w: _Writer) -> str:
        """``sorted``/``sort_by``/``group_by`` of a list with a one-parameter lambda written in place: the
        lambda's body inline in one loop, each item charged the step its call would be."""
        xs = self.expr(e.args[0], env, w)
        lam: A.Lambda = e.args[1]  # type: ignore[assignment]
        t = self.tmp()
        keys = self.tmp()
        x = self.fresh("l")
        span = self.const(e.span)
        name = self.const(b.name)
        return self.keyed_loop(b, e, env, w, xs, lam, t, keys, x, span, name)

    def keyed_loop(self, b: Builtin, e: A.Call, env: Env, w: _Writer, xs: str, lam: A.Lambda, t: str, keys: str,
                   x: str, span: str, name: str) -> str:
        w(f"if _type({xs}) is _list:")
        with w.block(), self.branch():
            w(f"{keys} = {{}}" if b.name == "group_by" else f"{keys} = []")
            depth = len(self.stretches)
            stretch = _Stretch()  # each item: the step of the lambda's call, and its body's
            self.charge_items(w, stretch, xs, self.const(lam.span))
            self.stretches.append(stretch)
            w(f"for {x} in {xs}:")
            with w.block():
                v = self.expr(lam.body, {**env, lam.params[0].name: x}, w)
                if b.name == "group_by":
                    self.guarded(w, f"{keys}.setdefault({v}, []).append({x})", name, span)
                else:
                    w(f"{keys}.append({v})")
            self.close_to(depth)
            if b.name == "group_by":
                w(f"{t} = {keys}")
            else:
                self.guarded(w, f"{t} = _sorted_by_keys({xs}, {keys})", name, span)
        w("else:")
        with w.block():
            fn = self.x_Lambda(lam, env, w)
            r = self.builtin_call(b, e, [xs, fn], w)
            w(f"{t} = {r}")
        return t

    def builtin_call(self, b: Builtin, e: A.Call, args: list[str], w: _Writer) -> str:
        shape = _result_shapes().get(b.name)
        t = self.tmp() if shape is None else self.vname()  # (a shaped result is not a reused temporary)
        if shape is not None:
            self.shaped[t] = shape
        fn = self.const(b.fn)
        call_args = (["ctx"] if b.needs_ctx else []) + args
        fast = _FAST_BUILTINS.get((b.name, len(args))) if not e.kwargs else None
        if fast is not None:
            tests, value = fast
            # the guard: the tests of the arguments not known to pass theirs (``_FAST_SHAPES``)
            guard = " and ".join(test.format(*args) for test, want, a in zip(tests, _FAST_SHAPES[(b.name, len(args))], args)
                                 if test is not None and not self.meets(want, a))
            if not guard:
                w(f"{t} = {value.format(*args)}")  # the guard holds: the arguments' types are known
                return t
            w(f"if {guard}:")  # the built-in's own work, inline, for the argument types it expects
            with w.block():
                w(f"{t} = {value.format(*args)}")
            w("else:")
            w.indent += 1
        self.guarded(w, f"{t} = {fn}({', '.join(call_args)})", self.const(b.name), self.const(e.span))
        if fast is not None:
            w.indent -= 1
        return t

    def meets(self, want: Any, a: str) -> bool:
        """Whether the argument ``a`` is known to pass its test in a fast built-in's guard (``_FAST_SHAPES``)."""
        if want == "key":  # a constant text or integer
            return self.is_const(a) and type(self.consts[a]) in (str, int)
        if want == "sep":  # a constant text that is not empty
            return self.is_const(a) and type(self.consts[a]) is str and bool(self.consts[a])
        return want is None or self.shape(a) in want

    def consume(self, name: str, comp: A.Comp, env: Env, w: _Writer) -> str:
        """``any``/``all``/``count``/``first`` of ``(e for x in xs if c)``: one loop, leaving as soon as
        the answer is known, as the built-in reading the generator would (each item's truth tested once)."""
        t = self.tmp()
        w(f"{t} = {_CONSUMERS[name]}")
        base = w.indent
        depth = len(self.stretches)
        with self.branch():
            v = self.consume_loop(comp, env, w, name != "first")
        self.consume_test(name, t, v, w)
        self.close_to(depth)
        w.indent = base
        return t

    def consume_loop(self, comp: A.Comp, env: Env, w: _Writer, truth: bool) -> str:
        inner = self.loops(comp, env, w)
        return self.cond(comp.elem, inner, w) if truth else self.expr(comp.elem, inner, w)

    def consume_test(self, name: str, t: str, v: str, w: _Writer) -> None:
        if name == "any":
            w(f"if {v}:")
            with w.block():
                w(f"{t} = True")
                w("break")
        elif name == "all":
            w(f"if not ({v}):")
            with w.block():
                w(f"{t} = False")
                w("break")
        elif name == "count":
            w(f"if {v}:")
            with w.block():
                w(f"{t} += 1")
        else:
            w(f"{t} = {v}")
            w("break")


# ---------------------------------------------------------------- built-ins written inline

# (tests, value) per (built-in, argument count): the tests, one per argument (None: none), make the
# guard; when it holds, the value is what the built-in returns (``builtins.py``); otherwise the built-in
# is called as usual (and reports what is wrong)
_FAST_BUILTINS: dict[tuple[str, int], tuple[tuple[str | None, ...], str]] = {
    ("len", 1): (("(_type({0}) is _list or _type({0}) is _dict or _type({0}) is _str or _type({0}) is _frozenset)",),
                 "_len({0})"),
    ("has", 2): (("_type({0}) is _dict", "(_type({1}) is _str or _type({1}) is _int)"), "{1} in {0}"),
    ("split", 2): (("_type({0}) is _str", "_type({1}) is _str and {1}"), "{0}.split({1})"),
    ("lower", 1): (("_type({0}) is _str",), "{0}.lower()"),
    ("upper", 1): (("_type({0}) is _str",), "{0}.upper()"),
    ("trim", 1): (("_type({0}) is _str",), "{0}.strip()"),
    ("keys", 1): (("_type({0}) is _dict",), "_list({0})"),
    ("merge", 2): (("_type({0}) is _dict", "_type({1}) is _dict"), "{{**{0}, **{1}}}"),
    ("put", 3): (("_type({0}) is _dict", "(_type({1}) is _str or _type({1}) is _int)", None), "{{**{0}, {1}: {2}}}"),
    ("replace", 3): (("_type({0}) is _str", "_type({1}) is _str", "_type({2}) is _str"), "{0}.replace({1}, {2})"),
}
# what makes each test above hold: per argument, the Python types it may have ("key": a constant
# text or integer; "sep": a constant text that is not empty; None: anything); an argument known to
# be such (``Generator.meets``: a constant, or a value of a known shape) is not tested
_FAST_SHAPES: dict[tuple[str, int], tuple[Any, ...]] = {
    ("len", 1): ({list, dict, str, frozenset},),
    ("has", 2): ({dict}, "key"),
    ("split", 2): ({str}, "sep"),
    ("lower", 1): ({str},),
    ("upper", 1): ({str},),
    ("trim", 1): ({str},),
    ("keys", 1): ({dict},),
    ("merge", 2): ({dict}, {dict}),
    ("put", 3): ({dict}, "key", None),
    ("replace", 3): ({str}, {str}, {str}),
}


@functools.cache
def _result_shapes() -> dict[str, type]:
    """The Python type of what each built-in returns, whenever it returns: read from its function's
    return annotation (``builtins.py``, which mypy holds the function to) when that is a list, map,
    set or text. Read once, when a program is first generated (not at start-up)."""
    shapes = {}
    for name, b in BUILTINS.items():
        returned = typing.get_type_hints(b.fn).get("return")
        origin = typing.get_origin(returned) or returned
        if origin in (list, dict, frozenset, str):
            shapes[name] = origin
    return shapes


# the built-ins that read a generator to its first deciding item, with their value for no items
_CONSUMERS = {"any": "False", "all": "True", "count": "0", "first": "None"}


# ---------------------------------------------------------------- what may be inlined

_INLINE_SIZE = 40  # AST nodes
_INLINE_ONCE_SIZE = 600  # AST nodes, of a function called from one place only
_MEMO_TRIAL = 50  # calls on closures that never found their value in the memo: the memo is left out
_INLINE_DEPTH = 3  # functions written at their calls within each other, not counting those named once
_INLINE_CHAIN = 12  # in all
_LEAF_NODES = (A.Int, A.Str, A.Bool, A.NoneLit, A.Name, A.Field, A.Index, A.Compare, A.BoolOp, A.Not, A.If, A.Let,
               A.Neg, A.RecordLit, A.ListLit, A.With, A.Call, A.BinOp)


def _shape_of(e: Any, call_shape: Any = None) -> type | None:
    """The Python type an expression always gives, read from its form: a map comprehension, map or
    record literal a dict, a list one a list, a set one a frozenset (through `let` and `if`); a call,
    what ``call_shape`` says of it."""
    if isinstance(e, A.Comp):
        return {"list": list, "map": dict, "set": frozenset}.get(e.kind)
    if isinstance(e, (A.MapLit, A.RecordLit)):
        return dict
    if isinstance(e, A.ListLit):
        return list
    if isinstance(e, A.SetLit):
        return frozenset
    if isinstance(e, A.Call) and call_shape is not None:
        return call_shape(e)  # type: ignore[no-any-return]
    if isinstance(e, A.Let):
        return _shape_of(e.body, call_shape)
    if isinstance(e, A.If):
        shapes = {_shape_of(v, call_shape) for _, v in e.branches} | {_shape_of(e.otherwise, call_shape)}
        return shapes.pop() if len(shapes) == 1 else None
    return None


def _stable(atom: str) -> bool:
    """A generated local that holds one value wherever it can be read: a parameter, a `let` or loop
    variable (``_l``), or a value or read kept for its path (``_v``). Temporaries (``_t``) are reused."""
    return atom[:2] in ("_l", "_v") and atom[2:].isdigit()


def _children(e: Any) -> list[Any]:
    out: list[Any] = []
    for fname in e.__dataclass_fields__:
        if fname == "span":
            continue
        v = getattr(e, fname)
        if isinstance(v, tuple):
            for x in v:
                if isinstance(x, tuple):
                    out.extend(y for y in x if hasattr(y, "__dataclass_fields__"))
                elif hasattr(x, "__dataclass_fields__"):
                    out.append(x)
        elif hasattr(v, "__dataclass_fields__"):
            out.append(v)
    return out


def _count_names(e: Any, uses: collections.Counter[str]) -> None:
    if isinstance(e, A.Name):
        uses[e.id] += 1
    elif isinstance(e, A.Field):  # (`module.f`)
        uses[e.name] += 1
    for c in _children(e):
        _count_names(c, uses)


def _size(e: Any) -> int:
    return 1 + sum(_size(c) for c in _children(e))


def _memo_never_answered(unit: Unit) -> bool:
    """On closures, 50 or more calls of the function all computed their value, and it cannot call
    itself or only decisions call it (see ``Generator.function_source``): it is generated without its
    memo."""
    stats = unit.memo_stats
    return (stats is not None and stats[0] >= _MEMO_TRIAL and stats[1] == 0
            and (not unit.recursive or unit.decisions_only))


def _keeps_for_life(unit: Unit) -> bool:
    """A state-free function of one or two parameters, generated with its memo: it keeps what it
    computes for primitive arguments for the program's life (``Generator.function_source``)."""
    d = unit.decl
    return (isinstance(d, A.DefDecl) and d.params is not None and len(d.params) in (1, 2) and unit.state_free
            and not _memo_never_answered(unit))


def _inline_shape(e: Any, ns: Any, gen: Generator, bound: set[str], calls: bool = False) -> bool:
    """Only nodes that charge no steps of their own but a text's `+` (see ``Generator.inlinable``)."""
    if not isinstance(e, _LEAF_NODES):
        return False
    if isinstance(e, A.BinOp) and e.op not in ("??", "-", "+"):
        return False
    if isinstance(e, A.Index) and isinstance(e.obj, A.Name):
        found = gen.lookup(e.obj.id, ns)
        if found is not None and found[0] == "unit" and isinstance(found[1].decl, A.TableDecl):
            return False
    if isinstance(e, A.Call):
        if not isinstance(e.func, A.Name):
            return False
        found = gen.lookup(e.func.id, ns)
        if found is None or found[0] not in ("builtin", "unit"):
            return False
        if found[0] == "builtin" and (found[1].needs_ctx or e.kwargs):
            return False
        if e.func.id in bound:  # a parameter or `let` that holds a function: a call of unknown cost
            return False
        # another function only if it is inlined too, or a decision (read from the run's table once
        # resolved): a memoized call made on every evaluation costs more than the memo hit it replaces
        if found[0] == "unit" and not (calls or isinstance(found[1].decl, A.DecisionDecl) or gen.inline_ok_of(found[1])):
            return False
    return all(_inline_shape(c, ns, gen, bound, calls) for c in _children(e))


def _bound_names(e: Any, out: set[str]) -> set[str]:
    if isinstance(e, A.Let):
        out.add(e.name)
    for c in _children(e):
        _bound_names(c, out)
    return out


# ---------------------------------------------------------------- generating a program's units

_KINDS = (A.ConstDecl, A.DefDecl, A.QueryDecl)


def tier_up(program: Program) -> dict[str, Any]:
    """From now on, each value, function, query and decision body of the program runs generated code:
    every such unit's ``fn`` (a decision's ``body_fn``) becomes a stub that, at its first call,
    generates and compiles the unit (units a run never calls cost nothing). A unit the generator
    cannot take keeps its closure, listed under ``kept`` with the reason; functions generated
    without their memo are listed under ``unmemoized``, functions written into their callers under
    ``inlined`` (one may also be generated on its own). That record is ``program.generated`` (and
    returned)."""
    gen = Generator(program)
    Context.value_slots = max(Context.value_slots, len(gen.vslots))
    record: dict[str, Any] = {"generated": [], "kept": {}, "unmemoized": gen.unmemoized, "inlined": gen.inlined}
    for unit in program.units.values():
        if unit.body_fn is not None:  # a decision's body
            unit.body_fn[0] = _body_stub(gen, unit, unit.body_fn, record)
            continue
        if unit.fn is None or not isinstance(unit.decl, _KINDS):
            continue
        gname = gen.unit_ref(unit)
        closure = unit.fn
        gen.g[gname] = _stub(gen, unit, gname, closure, record)
        unit.fn = _entry(gen.g, gname, closure, unit.decl.span, int(_caller_charges(unit)))
    for key, gname in gen.unit_names.items():  # units that are not generated: their closures
        if gname not in gen.g:
            gen.g[gname] = program.units[key].fn
    program.generated = record
    return record


def _caller_charges(unit: Unit) -> bool:
    """A function (a `def` or `rule` with parameters): its generated body leaves its call's step to
    its caller, which charges it with its own steps (``Generator.x_Call``) or through the unit's
    ``fn`` (``_entry``: closures, the API, a built-in given the function as a value). Queries and
    decision bodies, which resolutions call through their cells, charge it themselves."""
    return isinstance(unit.decl, A.DefDecl) and unit.arity is not None


def _entry(g: dict[str, Any], gname: str, closure: Any, span: Span, step: int) -> Any:
    """A generated unit's ``fn``, which closures and the API call (and a function passed as a value):
    a run on closures only (``Context.slow``) keeps to the closure; any other runs the generated
    function (``g[gname]``), charging ``step``: the call's step, which a generated function leaves
    to its caller (generated code charges it with the caller's own steps). Generated code calls
    generated code directly, so this test is made where a run enters it, not at every call (a run on
    closures only never enters it). Generated code checks the step budget in loops and recursive
    calls only (``Generator.charge``): the budget is checked here once more, as the run leaves
    generated code."""
    def entry(ctx: Context, *args: Any) -> Any:
        if ctx.slow:
            return closure(ctx, *args)
        ctx.steps += step
        value = g[gname](ctx, *args)
        if ctx.steps > ctx.budget:
            raise ctx.over_budget(span)
        return value
    return entry


def _stub(gen: Generator, unit: Unit, gname: str, closure: Any, record: dict[str, Any]) -> Any:
    def first_call(ctx: Context, *args: Any) -> Any:
        fn = _compile_unit(gen, unit, closure, record)
        gen.g[gname] = fn
        return fn(ctx, *args)
    return first_call


def _body_stub(gen: Generator, unit: Unit, cell: list[Any], record: dict[str, Any]) -> Any:
    """A decision's body, which its resolution (closure or ``resolver``) calls from ``cell[0]``,
    generated at its first call (a run on closures only calls ``cell[1]``, the closure)."""
    closure = cell[1]

    def first_call(ctx: Context, *args: Any) -> Any:
        cell[0] = _compile_unit(gen, unit, closure, record)
        return cell[0](ctx, *args)
    return first_call


def _resolution_stub(gen: Generator, unit: Unit, fname: str, called: Any) -> Any:
    """A decision's resolution (``Generator.resolver``), written with its body in it at its first
    call; ``called``, the resolution that calls the body's function, if that cannot be written."""
    def first_call(ctx: Context, dkey: Any, *args: Any) -> Any:
        try:
            _, source = gen.resolution_source(unit)
            code = _compiled(source, f"<ruleval {unit.name} resolution>")
        except Exception:  # (as in ``_compile_unit``: the body's own function is generated, or kept)
            fn = called
        else:
            _bind_referenced(gen)
            fn = _define(code, gen.g)
        gen.g[fname] = fn
        return fn(ctx, dkey, *args)
    return first_call


def _bind_referenced(gen: Generator) -> None:
    """Units a newly written function refers to for the first time: their functions (stubs or closures)."""
    for key, gname in list(gen.unit_names.items()):
        if gname not in gen.g:
            gen.g[gname] = gen.program.units[key].fn


def _compile_unit(gen: Generator, unit: Unit, closure: Any, record: dict[str, Any]) -> Any:
    slow = gen.const(closure)
    try:
        fname, source = gen.unit_source(unit, slow)
        code = _compiled(source, f"<ruleval {unit.name}>")
    except Exception as exc:  # Unsupported, Python's limits; and a fault of this module, which must
        # cost the unit its speed, not the run: the closure gives the same answer
        record["kept"][unit.name] = f"{type(exc).__name__}: {exc}"
        return closure
    _bind_referenced(gen)
    record["generated"].append(unit.name)
    return _define(code, gen.g)


def _compiled(source: str, name: str) -> Any:
    """The code object of source this module (or ``state._CheckWriter``) wrote, under the rules of the
    module docstring: the one call of Python's ``compile``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. a SyntaxWarning: never shown to a ruleset's user
        code = compile(source, name, "exec")
    return code


def _define(code: Any, g: dict[str, Any]) -> Any:
    """The one function that ``code`` defines, with ``g`` as its globals. The code was compiled from
    source this module wrote (see the module docstring); it is not run, only its function made."""
    fn_code = next(c for c in code.co_consts if hasattr(c, "co_code"))
    return types.FunctionType(fn_code, g, fn_code.co_name)


# ---------------------------------------------------------------- when to generate

# Generating and compiling a ruleset's code takes some tens of milliseconds, more than a run of a
# test case or of one state from the command line: a program is generated once its runs have taken
# this long in the process on closures (a JIT's hotness counter, in time). Short-lived uses (a test
# suite of small cases, `ruleval run`) never pay for it; a long session (an adjudicator, a sweep of
# errata, Monte Carlo runs) soon runs generated code. `RULEVAL_CODEGEN=off` never generates,
# `always` does at the first run; both tiers give the same results (tests/test_codegen.py).
HOT_SECONDS = 0.5


def pin_closures(program: Program) -> None:
    """Keep the program on closures for good (tests compare the two tiers with it)."""
    if program.generated is None:
        program.generated = {"generated": [], "kept": {}, "pinned": True}


def note_run(program: Program) -> None:
    """Called before each run of a program: generate its code when it has become hot."""
    if program.generated is not None:
        return
    mode = codegen_mode()
    if mode == "off":
        return
    if mode == "always" or program.run_seconds >= HOT_SECONDS:
        tier_up(program)
