"""The fast backend: each definition of a checked program written as one Python function.

It gives what the reference interpreter (``validator.reference``) gives, construct by construct,
calling the reference's own function where the meaning is more than a line; its steps are an upper
bound of the reference's (docs/architecture.md, why that is sound). A unit's function is written at
its first call (``_Stub``). What the generated code may contain is fixed here, not by the ruleset:

- every name in it is made here (``_u3``, ``_v7``, ``_t12``...): no identifier of the ruleset is
  written into the source;
- every literal and object the code uses is passed in the functions' globals under such a name;
  the only literals in the source are ``None``, ``True``, ``False``, integers (``int.__repr__``)
  and texts that are short ASCII identifiers (``_IDENT``: they hold no quote, backslash or line
  break, so cannot end their literal);
- it is built only from a program that checked without errors, and is the only code in
  ``validator`` compiled from text (``_compile_text``; ``tests/test_safety.py`` holds it to that).
"""

from __future__ import annotations

import re
import types
import warnings
from contextlib import contextmanager
from typing import Any, Callable, Iterator, NamedTuple, TypeVar, cast

from ..lang import ast as A
from ..lang.bind import BuiltinRef, DataRef, Local, Member, ModuleRef, Referee, StepRef, UnitRef, slot
from ..lang.program import DEFS, Program, Unit, cell_key
from . import codecache, shares, written
from .facts import PLAIN, Facts
from .memos import Memos
from . import reference as R
from ..lib.builtins import Builtin, DiceSpec, roll_looked_at
from ..lib import builtins as B
from ..core.diagnostics import Span
from ..lib.runtime import WRITER_BUG, RandomValue, Unwritable
from ..lib.values import FALSE_KEY, TRUE_KEY, Map, as_key, entries

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,39}", re.ASCII)


# ---------------------------------------------------------------- run-time helpers of generated code


def _items_of(ctx: R.Run, seq: Any, n: int, span: Span, per: int) -> Any:
    """What a comprehension's `for` of ``n`` names walks (``reference.loop_items``), ``per`` steps an
    item (its own and the most its code charges): a collection's charged first."""
    if n == 1:
        seq = R.iterate(seq, span)
        if isinstance(seq, (list, tuple, frozenset, set, dict)):
            ctx.charge(len(seq) * per, span)
            return seq
    return _charged(ctx, seq if n == 1 else R.loop_items(ctx, seq, n, span), per - 1, span)


def _charged(ctx: R.Run, items: Any, n: int, span: Span) -> Any:
    for x in items:
        ctx.steps += n
        if ctx.steps > ctx.budget:
            raise R.over_budget(ctx, span)
        yield x


class _Forcing:
    """A generated function given to a built-in in a program with dice: what it returns is forced
    (as ``reference.Closure`` does); generated code calls ``raw``."""

    __slots__ = ("raw",)

    def __init__(self, raw: Callable[..., Any]):
        self.raw = raw

    def __call__(self, ctx: R.Run, *args: Any) -> Any:
        return R.force(ctx, self.raw(ctx, *args))


def _call_dynamic(ctx: R.Run, fn: Any, args: list[Any], span: Span) -> Any:
    """A call of a value: a lambda, a definition, a built-in."""
    t = type(fn)
    if t is types.FunctionType or t is R.BuiltinFunction:
        return fn(ctx, *args)
    if t is _Forcing:
        return fn.raw(ctx, *args)
    if t is R.UnitFunction:
        return fn.interp.call_unit(ctx, fn.unit, args, span)
    raise R.not_a_function(fn, span)


class _Group:
    """The values without arguments (``_Kept``) a kept value read itself, paid as one (``_pay``):
    ``charge``, what ``reference.pay`` charges a run that has paid nothing for them and all they read
    (``below``). The many calls of one function read the same values: walked once, paid once a run."""

    __slots__ = ("charge", "below")
    charge: int
    below: frozenset[R.Kept]

    def __init__(self, members: frozenset[R.Kept]) -> None:
        below: set[R.Kept] = set()
        steps, found = R.unpaid(below, list(members))
        self.charge, self.below = steps + found, frozenset(below)


class _Kept(R.Kept):
    """``reference.Kept`` with what the backend charges at its first read in a run (``_pay``; why that
    bounds ``reference.pay``: docs/architecture.md, "Per program"), found once, when the value is
    computed (``body``) in its run of its own ``sub``: ``group``, the values it read itself (``_Group``,
    or none), and ``charge``, the rest of the walk of ``reference.unpaid`` from it (the value and all it
    read, each once: their own steps and one each); ``size``, how many values that walk finds."""

    __slots__ = ("charge", "group", "whole", "size")
    charge: int
    group: _Group | None
    whole: bool
    size: int

    def __init__(self, ctx: R.Run, key: Any, body: Callable[..., Any], args: tuple[Any, ...], whole: bool,
                 groups: dict[Any, _Group]) -> None:
        sub = ctx.fresh(key)
        self.value, self.whole = body(sub, *args), whole  # (``whole``: read with no arguments, a value)
        members: list[_Kept] = []
        others: list[_Kept] = []  # (the group's members are in its ``below``)
        spent = sum(g.charge for g in sub.paid_groups)  # what it paid for the values it read and their groups
        for k in sub.paid:
            if type(k) is _Kept:  # (a backend's run pays no other)
                spent += k.charge
                (members if k.whole else others).append(k)
        self.reads = (*members, *others)
        self.group = group = (groups.get(key := frozenset(members)) or sub.shared.get((id(groups), key))
                              or _keep(sub.shared, groups, key, _Group(key)) if members else None)
        found, rest, more = len(group.below) if group is not None else 0, 0, 0
        if group is None and len(others) == 1:  # what the walk from it finds: it and all it read,
            k = others[0]  # its ``charge`` and its group's (``size`` values)
            more, rest = k.size, k.charge + (k.group.charge if k.group is not None else 0) - k.size
        elif others:
            rest, more = R.unpaid(set(group.below) if group is not None else set(), [*others])
        self.size = 1 + found + more
        self.own = sub.steps - spent + found + more
        self.charge = self.own + 1 + rest + more
        sub.left()


def _pay(run: R.Run, kept: _Kept, span: Span) -> None:
    """A kept value's first read in ``run`` (not in its ``paid``): its ``charge``, and its group's if
    the run has not paid that (``paid_groups``): no less than ``reference.pay`` charges there."""
    run.paid.add(kept)
    run.steps += kept.charge
    if (group := kept.group) is not None and group not in run.paid_groups:
        run.paid_groups.add(group)
        run.steps += group.charge
    if run.steps > run.budget:
        raise R.over_budget(run, span)


def _keep(shared: dict[Any, Any], table: dict[Any, _T], key: Any, made: _T) -> _T:
    """``made``, kept by ``key``: in ``table`` for the program's life while that holds under
    ``_ALONE_CAP`` entries, else for the run's life in ``shared`` (the run's and its fresh ones',
    ``reference.Run.shared``) by ``(id(table), key)``, where its readers look after ``table``."""
    if len(table) < _ALONE_CAP:
        table[key] = made
    else:
        shared[(id(table), key)] = made
    return made


def _alone(ctx: R.Run, table: dict[Any, _Kept], key: Any, body: Callable[..., Any], args: tuple[Any, ...],
           memo: dict[Any, Any] | None, span: Span, groups: dict[Any, _Group]) -> Any:
    """A state-free definition's value at its first read in the run ``ctx`` (``reference.Interpreter.alone``):
    kept (found in ``table`` or the run's ``shared``, else ``_keep``: ``_Kept``, computed in a run of its
    own; its group in ``groups`` the same way), paid for (``_pay``) unless the run has paid it and, a
    value's, kept in the run's ``memo``."""
    hit = (table.get(key) or ctx.shared.get((id(table), key))
           or _keep(ctx.shared, table, key, _Kept(ctx, key, body, args, memo is not None, groups)))
    if hit not in ctx.paid:
        _pay(ctx, hit, span)
    if memo is not None:
        memo[key] = hit.value
    return hit.value


_ALONE_CAP = 100_000
_T = TypeVar("_T")

_HELPERS: dict[str, Any] = {
    "_MISS": R.MISS, "_PENDING": R.PENDING, "_alone": _alone, "_pay": _pay, "_over": R.over_budget,
    "_pooled": shares.pooled, "_not_shared": shares.not_shared,
    "_too_deep": R.too_deep, "_value_too_deep": R.value_too_deep, "_depends": R.depends_on_itself,
    "_builtin_failed": R.builtin_failure, "_HANDLED": R.BUILTIN_FAILURES, "_with_base": R.with_base,
    "_items_of": _items_of, "_lambda_arity": R.lambda_arity, "_Forcing": _Forcing,
    "_call_dynamic": _call_dynamic, "_freeze": R.freeze, "_field_of": R.field_of,
    "_index_of": R.index_of, "_compare": R.compare, "_arith": R.arithmetic, "_add_item": R.add_item,
    "_put_entry": R.put_entry, "_iterate": R.iterate, "_Goto": R._Goto, "_Stop": R._Stop, "_Reject": R._Reject,
    "_source_step": R.source_step, "_procedure_end": R.procedure_end, "_table_miss": R.table_miss, "_negate": R.negate,
    "_cell_key": cell_key, "_type": type, "_dict": dict, "_Map": Map, "_list": list, "_str": str, "_int": int,
    "_len": len, "_set": set, "_frozenset": frozenset, "_tuple": tuple, "_id": id, "_bool": bool,
    "_entries": entries, "_TK": TRUE_KEY, "_FK": FALSE_KEY, "_RV": RandomValue,
    "_PLAIN": frozenset(PLAIN),  # (below: the built-ins' own steps, for the loops ``Backend.looped`` writes)
    "_walked_items": B.walked_items, "_sized_items": B.sized_items, "_key_charged": B.key_charged,
    "_as_key": as_key, "_uncounted": B.uncounted, "_summed": B.summed, "_by_keys": B.by_keys, "_extreme": B.extreme,
    "TypeError": TypeError, "KeyError": KeyError,  # (read by the generated `except`)
}


def _absent_cell(ctx: R.Run) -> None:
    """A table's absent cell (`-`): none."""
    return None


# ---------------------------------------------------------------- writing one function

_JUMPS = {A.Stop: "raise _Stop()", A.Break: "break", A.Continue: "continue"}  # (statements of one line)


class _Local(NamedTuple):
    """A local of the unit (``bind.Local``) in generated code: its Python local, and whether it is a procedure's
    `var` (read late by a lambda, as the reference reads a ``Cell``)."""

    py: str
    var: bool = False


Env = dict[int, _Local]  # by slot


class _Writer:
    def __init__(self, backend: "Backend", bound: dict[int, Referee], kinds: dict[int, type] | None = None):
        self.backend = backend
        self.bound = bound  # what the unit's global names mean (``bind.binding``)
        self.lines: list[str] = []
        self.indent = 1
        self.n = 0
        # the open stretches of code run once per entry (a body, a loop's item), innermost last: the
        # steps each charges at most but those it charges as it goes (``Backend.open_charge``)
        self.stretches: list[list[Any]] = []
        # the sound kinds of the nodes of the unit written (``facts``), and of the locals holding their values
        self.kinds: dict[int, type] = {} if kinds is None else kinds
        self.known: dict[str, type] = {}
        self.const: Callable[[Any], str] = backend.const  # (a constant's name in the code: ``Backend.const``)

    def __call__(self, *lines: str) -> None:
        """Lines written at the current indentation (a text of several lines, each; an empty one, none)."""
        self.lines.extend("    " * self.indent + x for line in lines for x in line.split("\n") if x)

    def nested(self, head: str, tail: str, env: Env) -> "_Writer":
        """A writer for a function written inside this one (a lambda, a generator), one level deeper, the
        locals it reads passed in when it is made (a procedure's `var` read when it runs, as the reference
        reads a ``Cell``)."""
        self(head + "".join(f", {p}={p}" for p in dict.fromkeys(loc.py for loc in env.values() if not loc.var)) + tail)
        inner = _Writer(self.backend, self.bound, self.kinds)
        inner.n, inner.indent, inner.known = self.n, self.indent + 1, dict(self.known)
        return inner

    def close_nested(self, inner: "_Writer") -> None:
        self.lines.extend(line for line in inner.lines if line)
        self.n = inner.n

    def cost(self, n: int) -> None:
        """``n`` steps the code written here charges at most, charged where its stretch begins."""
        self.stretches[-1][0] += n

    def open_charge(self, span: Span) -> None:
        """A stretch begins here: the steps its code charges at most (``cost``) are charged on entry,
        by the line ``close_charge`` writes here."""
        self.stretches.append([0, len(self.lines), self.indent, span])
        self.lines.append("")

    def close_charge(self, own: int = 0) -> None:
        """The stretch ends: its charge (``own`` more for its entry) written at its start."""
        n, at, indent, span = self.stretches.pop()
        n += own
        pad = "    " * indent
        self.lines[at] = (f"{pad}ctx.steps += {n}\n{pad}if ctx.steps > ctx.budget:\n"
                          f"{pad}    raise _over(ctx, {self.const(span)})") if n else ""

    def source(self, header: str) -> str:
        return header + "\n" + "\n".join(line for line in self.lines if line)

    def fresh(self, prefix: str = "_t") -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    @contextmanager
    def block(self) -> Iterator[None]:
        self.indent += 1
        yield
        self.indent -= 1


# ---------------------------------------------------------------- the backend


class Backend:
    """The generated functions of one program, written as they are first called."""

    def __init__(self, program: Program, typed: bool = False):
        self.program = program
        self.interp = _Protocol(program, self)
        # (``_SF``: state-free definitions' values for the program's life, by keys that hold no identity:
        # ``reference.Kept``, see ``_alone``)
        self.g: dict[str, Any] = {"__builtins__": {}, **_HELPERS, "_PROTO": self.interp, "_SF": {}, "_GROUPS": {}}
        self.consts: dict[Any, str] = {}
        self.n = 0
        # the writing under way (``write``): its constants' names' head and the names it gave, so that a
        # function's text depends on its unit, not on what the process wrote before (``codecache``)
        self.naming: tuple[str, dict[Any, str]] | None = None
        self.unit_names: dict[int, str] = {}  # by the unit's number
        self.shown: list[str] | None = None  # the sources written, while ``source_of`` collects them
        self.log: list[tuple[Any, ...]] | None = None  # what a writing names and compiles (``written``)
        self.summaries: dict[int, Any] = {}  # what a writing reads of each unit (``written.key``), by its number
        self.kept: codecache.Kept | None = None  # the writings kept across processes (``codecache.writing``)
        self.bodies: dict[tuple[str, str], Callable[..., Any]] = {}
        # a program that cannot roll dice never holds a die: no value is forced
        self.dice = program.rolls
        self.shared_units: dict[int, bool] = {}  # by unit number: ``shares.shared``
        self.unshared: set[Any] | None = None  # the units that recur or read a decision, or read one that does
        self.facts = self.interp.proof = Facts(program, typed)  # (``typed``: runs on a state its schema accepts, ``api``)
        self.memos = Memos(program, self.facts)  # which `def`s are written without their memo

    # -- names and constants

    def const(self, value: Any) -> str:
        if value is None or value is True or value is False or type(value) is int:
            return repr(value)
        if type(value) is str and _IDENT.fullmatch(value):
            return f"'{value}'"
        key = ("#obj", id(value)) if not isinstance(value, (str, int, Span)) else (type(value).__name__, value)
        head, consts = self.naming or ("", self.consts)
        name = consts.get(key)
        if name is None:
            name = f"{head}{len(consts) + 1}"
            if not head or self.g.get(name, value) is not value:  # (a unit written again: no name is rebound)
                self.n += 1
                name = f"_k{self.n}"
            consts[key] = name
            self.g[name] = value
        if self.log is not None:
            self.log.append(("const", value, name))
        return name

    def unit_name(self, unit: Unit) -> str:
        """The global name of a unit's function: a stub until its first call writes it."""
        name = self.unit_names.get(unit.index)
        if name is None:
            name = self.unit_names[unit.index] = f"_u{unit.index}"  # (the same in every process)
            self.g[name] = _Stub(self, unit, name)
        if self.log is not None:
            self.log.append(("unit", unit, name))
        return name

    def function(self, unit: Unit) -> Callable[..., Any]:
        return self.g[self.unit_name(unit)]  # type: ignore[no-any-return]

    def write_all(self) -> int:
        """Write now every function not written yet (each is otherwise written at its first call), for a
        long run of many phases that would reach most of them at some point: the writing is paid before,
        not in the middle of, what is measured. Returns how many were written (a definition the backend
        refuses is then refused at once, as at a first call)."""
        codecache.solve(self.facts, self.unwritten)  # (first: code written before the kinds is written again, ``run_query``)
        stubs = [fn for fn in (self.function(u) for u in self.program.units.values() if u.kind != "cycle policy")
                 if isinstance(fn, _Stub)]
        for fn in stubs:
            fn.materialize()
        codecache.keep_program(self)
        return len(stubs)

    # -- exact dice: what the paths share (``shares``)

    def exact_pool(self) -> shares.Pool | None:
        """A ``Pool`` for the paths of one exact enumeration (``reference._run_exact_on``)."""
        return shares.Pool() if self.dice else None

    # -- running

    def run_query(self, run: R.Run, unit: Unit, args: list[Any], check: Any = None) -> Any:
        codecache.solve(self.facts, self.unwritten)  # (a run: the kinds are worth a walk of the program, once)
        try:
            return self.interp.run_query(run, unit, args, check)
        finally:
            codecache.keep_program(self)  # (the writings kept for the program's next process)

    def unwritten(self) -> None:
        """Each function written before the kinds were known written again at its next call."""
        units = {u.index: u for u in self.program.units.values()}
        for i, name in self.unit_names.items():
            self.g[name] = self.g[name] if type(self.g[name]) is _Stub else _Stub(self, units[i], name)
        self.summaries.clear()

    # -- writing a unit

    def write(self, unit: Unit, name: str) -> Callable[..., Any]:
        """``unit``'s function, written, or played again from its writing for another program that read
        all the same (``written``). Its constants are named for the unit (``const``)."""
        outer, self.naming = self.naming, (f"_k{unit.index}_", {})
        try:
            return written.write(self, unit, name, self.write_unit)
        except Unwritable as err:  # source Python refuses: the reference runs the query instead
            if not err.span.line:
                err.span = unit.span
            raise
        except RecursionError:
            raise Unwritable("E005", "a definition is nested too deeply to write", unit.span) from None
        finally:
            self.naming = outer

    def write_unit(self, unit: Unit, name: str) -> Callable[..., Any]:
        if unit.state_free and unit.kind in (*DEFS, "const"):
            body = self.write_plain(unit, name + "_body", entry=True)
            return self.compiled(name, self.alone_source(_Writer(self, unit.bound, self.facts.of(unit)), unit, name, body))
        return self.write_plain(unit, name)

    def write_plain(self, unit: Unit, name: str, entry: bool = False) -> Callable[..., Any]:
        w = _Writer(self, unit.bound, self.facts.of(unit))
        kind = unit.kind
        if kind == "const" or (kind in DEFS and unit.arity is None):
            source = self.value_source(w, unit, name)
        elif kind == "input":
            source = f"def {name}(ctx):\n    return ctx.inputs[{unit.index}]"
        elif kind in (*DEFS, "query"):
            source = self.function_source(w, unit, name, entry)
        else:  # a decision, table or procedure (the checker allows no call of anything else)
            source = getattr(self, f"{kind}_source")(w, unit, name)
        return self.compiled(name, source)

    def compiled(self, name: str, source: str) -> Callable[..., Any]:
        if self.shown is not None:
            self.shown.append(source)
        fn = define(source, f"<ruleval {name}>", self.g, None if self.shown is not None else self.kept)
        if self.log is not None:
            self.log.append(("code", name, source, fn))
        return fn

    def source_of(self, unit: Unit) -> list[str]:
        """The Python source the backend writes for a unit (its function, its body, a table's cells):
        what ``ruleval explain --ir`` shows. Written again, apart from the functions a run uses."""
        self.shown = []
        codecache.solve(self.facts, self.unwritten)  # (what a run writes)
        try:
            self.write(unit, f"_{unit.name.replace(' ', '_')}")
        except Unwritable as err:
            self.shown.append(f"# not written: {err.message} (the reference runs it)")
        shown, self.shown = self.shown, None
        return shown

    def alone_source(self, w: _Writer, unit: Unit, name: str, body: Callable[..., Any]) -> str:
        """A state-free definition: its value alone (``reference.Interpreter.alone``), kept for the
        program's life when its arguments are texts, numbers, truth values or none, and paid for at
        its first read in a run: a function's, when the kept value is not in the run's ``paid`` (no
        memo of the run's: a read of a paid value is a look-up, as before the charge); a value's, at a
        miss of the run's memo (read by its readers first, ``referee_value``)."""
        b, span = w.const(body), w.const(unit.span)
        if unit.arity is None:  # (read once a run: its readers read the run's memo first)
            w(f"return _alone(ctx, _SF, {unit.index}, {b}, (), ctx.memo, {span}, _GROUPS)")
            return w.source(f"def {name}(ctx):")
        _, pnames = self.params(w, unit.params)
        self.enter_counted(w, unit, unit.span, enter=False)  # (its call counts toward the depth limit, as any other's)
        table = w.const({})  # this function's values alone, for the program's life (``_alone``)
        w(f"if not ({_both(*(self.is_(p, 'plain', w) for p in pnames))}):")
        w(f"    return {b}(ctx{''.join(', ' + p for p in pnames)})")
        frozen = "".join(f"{_pick(p, self.is_(p, 'str', w), f'_freeze({p})')}, " for p in pnames)
        w(f"key = ({frozen})")
        w(f"hit = {table}.get(key)")  # a kept value: paid (``_pay``) if the run has not paid it, else a look-up
        w("if hit is not None:")
        w("    if hit not in ctx.paid:")
        w(f"        _pay(ctx, hit, {span})")
        w("    return hit.value")
        w(f"return _alone(ctx, {table}, key, {b}, ({''.join(p + ', ' for p in pnames)}), None, {span}, _GROUPS)")
        return w.source(f"def {name}(ctx{''.join(', ' + p for p in pnames)}):")

    def params(self, w: _Writer, params: tuple[A.Param, ...]) -> tuple[Env, list[str]]:
        names = [w.fresh("_p") for _ in params]  # (a `def`'s parameter given values of one kind, ``facts.solve``)
        w.known.update((py, k) for p, py in zip(params, names) if (k := self.facts.param(p)) is not None)
        return {slot(w.bound, p): _Local(py) for p, py in zip(params, names)}, names

    def value_source(self, w: _Writer, unit: Unit, name: str) -> str:
        k = w.const(unit.index)
        w("memo = ctx.memo")
        w(f"hit = memo.get({k}, _MISS)")
        w("if hit is not _MISS:")
        w("    if hit is _PENDING:")
        w(f"        raise _depends({w.const(unit)})")
        w("    return hit")
        shares.pool_lines(self, w, unit, k, [])
        if unit.counted:
            w("if ctx.depth >= ctx.depth_limit:")
            w(f"    raise _value_too_deep(ctx, {w.const(unit.span)})")
            w("ctx.depth += 1")
        w(f"memo[{k}] = _PENDING")
        if unit.uses_decisions:
            w("guesses = ctx.guesses")
        w("try:")
        with w.block():
            result = self.charged(w, cast(A.Expr, unit.body), {}, unit.span)
            w(f"result = {result}")
        w("finally:")
        with w.block():
            if unit.counted:
                w("ctx.depth -= 1")
            w(f"del memo[{k}]")
        self.keep(w, unit, k, "result")
        w("return result")
        return w.source(f"def {name}(ctx):")

    def keep(self, w: _Writer, unit: Unit, key: str, value: str, *more: str) -> None:
        """The value kept in ``memo`` by ``key`` (and the lines ``more``), but not when read under a guess
        (and undone if a guess it read while resolving is: ``Run.kept_while_resolving``)."""
        lines = [f"memo[{key}] = {value}", *more]
        if unit.uses_decisions:
            lines = ["if ctx.guesses == guesses:", *("    " + x for x in lines), "    if ctx.resolving:",
                     f"        ctx.kept_while_resolving.append((memo, {key}))"]
        for line in lines:
            w(line)

    def enter_counted(self, w: _Writer, unit: Unit, span: Any, enter: bool = True) -> None:
        """A counted unit's call: the depth limit checked, the depth raised until ``leave_counted`` (``enter``)."""
        if unit.counted:
            w("if ctx.depth >= ctx.depth_limit:", f"    raise _too_deep(ctx, {w.const(unit)}, {w.const(span)})")
            if enter:
                w("ctx.depth += 1", "try:")
                w.indent += 1

    def leave_counted(self, w: _Writer, unit: Unit) -> None:
        if unit.counted:
            w.indent -= 1
            w("finally:")
            w("    ctx.depth -= 1")

    def function_source(self, w: _Writer, unit: Unit, name: str, entry: bool = False) -> str:
        """A function: its call's step is charged by its caller (or by itself, ``entry``, as the body of
        a state-free function run alone); the most its body charges, when it computes it."""
        env, pnames = self.params(w, unit.params)
        self.enter_counted(w, unit, unit.span)
        memoized = unit.kind in DEFS and not self.memos.memo_free(unit)
        if memoized:  # the function's own memo, by its arguments' keys (``reference.freeze``)
            # (by its identity an argument of a sound kind never plain: every argument's key there is one)
            frozen = [_pick(p, self.is_(p, "str", w), f"_id({p})" if self.kind(p, w) not in (None, *PLAIN)
                            else f"_freeze({p})") for p in pnames]
            w(f"key = {frozen[0]}" if len(frozen) == 1 else f"key = ({''.join(f + ', ' for f in frozen)})")
            w(f"memo = ctx.memos[{unit.index}]")
            w("hit = memo.get(key, _MISS)")
            w("if hit is not _MISS:")
            w("    return hit")
            shares.pool_lines(self, w, unit, "key", pnames)
            if unit.uses_decisions:
                w("guesses = ctx.guesses")
        result = self.charged(w, cast(A.Expr, unit.body), env, unit.span, 1 if entry else 0)
        if memoized:
            alive = (f"if not {self.is_(pnames[0], 'str', w)}: ctx.alive.append({pnames[0]})" if len(pnames) == 1
                     else f"ctx.alive.append(({''.join(p + ', ' for p in pnames)}))")  # (`if not True`: no code)
            self.keep(w, unit, "key", result, alive)
        w(f"return {result}")
        self.leave_counted(w, unit)
        return w.source(f"def {name}(ctx{''.join(', ' + p for p in pnames)}):")

    def decision_source(self, w: _Writer, unit: Unit, name: str) -> str:
        """The decision's reading: the reference's resolution (``Interpreter.resolve``), whose body is a
        function of its own (``bodies``)."""
        _, pnames = self.params(w, unit.params)
        args = "".join(", " + p for p in pnames)
        w(f"return _PROTO.resolve(ctx, {w.const(unit)}, [{', '.join(pnames)}])")
        b = _Writer(self, w.bound, w.kinds)
        env, _ = self.params(b, unit.params)  # (the same names: each writer's first)
        b.open_charge(unit.span)
        self.enter_counted(b, unit, unit.span)
        result = self.looked(b, cast(A.Expr, unit.body), env)
        b.close_charge(1)
        b(f"return {result}")
        self.leave_counted(b, unit)
        self.bodies[(unit.ns, unit.name)] = self.compiled(name + "_body", b.source(f"def {name}_body(ctx{args}):"))
        return w.source(f"def {name}(ctx{args}):")

    def table_source(self, w: _Writer, unit: Unit, name: str) -> str:
        """Cells by their keys (a variant's overrides in them), each a function of its own."""
        cells: dict[tuple[Any, ...], Callable[..., Any]] = {}
        for i, (key, cell) in enumerate(unit.cells.items()):
            if isinstance(cell, A.Absent):
                cells[key] = _absent_cell
                continue
            cw = _Writer(self, w.bound, w.kinds)
            cw(f"return {self.charged(cw, cell, {}, cell.span)}")
            cname = f"{name}_c{i}"
            cells[key] = self.compiled(cname, cw.source(f"def {cname}(ctx):"))
        _, pnames = self.params(w, unit.params)
        keys = "(" + "".join(p + ", " for p in pnames) + ")"
        truth = " or ".join(f"_type({p}) is _bool" for p in pnames) or "False"
        w("try:")  # (a truth value is looked up as ``program.cell_key`` keeps it: never as 1 or 0)
        w(f"    cell = {w.const(cells)}.get(_cell_key({keys}) if {truth} else {keys})")
        w("except TypeError:")
        w("    cell = None")
        w("if cell is not None:")
        w("    return cell(ctx)")
        if unit.body is not None:
            w(f"v = {self.charged(w, unit.body, {}, unit.span)}")
            for p in pnames:
                w(f"v = _source_step(v, {p})")
            w("if v is not _MISS:")
            w("    return v")
        w(f"return _table_miss({w.const(unit)}, {keys})")
        return w.source(f"def {name}(ctx{''.join(', ' + p for p in pnames)}):")

    def procedure_source(self, w: _Writer, unit: Unit, name: str) -> str:
        """The steps in a loop over their index (``Interpreter.run_procedure``)."""
        env, pnames = self.params(w, unit.params)
        shares.pool_lines(self, w, unit, "", [])  # (a procedure: never run computing a shared entry)
        steps = [s for s in unit.stmts if isinstance(s, A.Step)]
        variables: list[tuple[str, str]] = []
        w.open_charge(unit.span)
        for s in unit.stmts:
            if isinstance(s, A.Var):
                env = self.stmt(w, s, env)
                variables.append((s.name, env[slot(w.bound, s)].py))
        w.close_charge(1)
        w("status, where, reject = 'completed', None, None")
        w("i = 0")
        w(f"while i < {len(steps)}:")
        with w.block():
            w("try:")
            with w.block():
                for i, s in enumerate(steps):
                    w(f"{'if' if i == 0 else 'elif'} i == {i}:")
                    with w.block():
                        w.open_charge(unit.span)
                        self.block(w, s.body, env)
                        w.close_charge()
                        w("pass")
                w("i += 1")
            w("except _Goto as jump:")
            with w.block():
                w("ctx.steps += 1")
                w(f"if ctx.steps > ctx.budget: raise _over(ctx, {w.const(unit.span)})")
                w("i = jump.target")
            w("except _Stop:", f"    status, where = 'stopped', {w.const(steps)}[i]", "    break")
            w("except _Reject as r:", f"    status, where, reject = 'rejected', {w.const(steps)}[i], r", "    break")
        w("out = _procedure_end(ctx, status, where, reject)")
        for vname, py in variables:
            w(f"out[{w.const(vname)}] = {self.forced(w, py)}")
        w("return out")
        return w.source(f"def {name}(ctx{''.join(', ' + p for p in pnames)}):")

    # -- statements

    def block(self, w: _Writer, stmts: tuple[A.Stmt, ...], env: Env) -> None:
        for s in stmts:
            env = self.stmt(w, s, env)

    def stmt(self, w: _Writer, s: A.Stmt, env: Env) -> Env:
        if isinstance(s, (A.Var, A.LetStmt)):
            py = self.tmp(w, self.expr(w, s.value, env), "_v")  # (not forced: a `let` may hold a die)
            var = isinstance(s, A.Var)
            return {**env, slot(w.bound, s): _Local(py, var=var)}
        if isinstance(s, A.Assign):
            value = self.expr(w, s.value, env)
            w(f"{env[slot(w.bound, s)].py} = {value}")
            return env
        if isinstance(s, A.IfStmt):
            for cond, body in s.branches:
                c = self.looked(w, cond, env)
                w(f"if {c}:")
                with w.block():
                    self.block(w, body, env)
                    w("pass")
                w("else:")
                w.indent += 1
            if s.otherwise is not None:
                self.block(w, s.otherwise, env)
            w("pass")
            w.indent -= len(s.branches)
            return env
        if isinstance(s, A.For):
            seq = self.looked(w, s.iter, env)
            py = w.fresh("_v")
            w(f"for {py} in _iterate({seq}, {w.const(s.span)}):")
            with w.block():
                w.open_charge(s.span)
                inner = {**env, slot(w.bound, s): _Local(py)}
                if s.cond is not None:
                    c = self.looked(w, s.cond, inner)
                    w(f"if not {c}:")
                    w("    continue")
                self.block(w, s.body, inner)
                w.close_charge(1)
                w("pass")
            return env
        if isinstance(s, A.Goto):
            w(f"raise _Goto({cast(StepRef, w.bound[id(s)]).at})")
        elif type(s) in _JUMPS:
            w(_JUMPS[type(s)])
        elif isinstance(s, A.Emit):
            ev = w.fresh()
            step = cast(StepRef, w.bound[id(s)]).step
            w(f"{ev} = {{'event': {w.const(s.event)}, 'step': {w.const(step.name)}, "
              f"'cites': {w.const(list(s.cites or step.cites))}.copy()}}")
            for k, v in s.payload:
                value = self.looked(w, v, env)
                w(f"{ev}[{w.const(k)}] = {value}")
            w(f"ctx.events.append({ev})")
        elif isinstance(s, A.Require):
            c = self.looked(w, s.cond, env)
            w(f"if not {c}:")
            w(f"    raise _Reject({w.const(s.message)}, {w.const(s.cites)})")
        elif isinstance(s, A.Reject):
            w(f"raise _Reject({w.const(s.message)}, {w.const(s.cites)})")
        return env

    # -- expressions: each writes the lines that compute it and returns what holds its value (a local
    # or a constant), so that operands are computed in the order the reference evaluates them

    def expr(self, w: _Writer, e: A.Expr, env: Env) -> str:
        method: Callable[[_Writer, Any, Env], str] = getattr(self, "x_" + type(e).__name__)
        value = method(w, e, env)
        kind = w.kinds.get(id(e))
        if kind is not None and self.kind(value) is None:
            w.known[value] = kind  # (a local that holds no other value: a `var`'s has no kind)
        return value

    def charged(self, w: _Writer, e: A.Expr, env: Env, span: Span, own: int = 0) -> str:
        """``e``'s value, the most its code charges (and ``own`` more) charged on entry (``_Writer.open_charge``)."""
        w.open_charge(span)
        value = self.expr(w, e, env)
        w.close_charge(own)
        return value

    def forced(self, w: _Writer, value: str) -> str:
        """``reference.force``: only a program with dice has anything to force; a constant never is a die."""
        if not self.dice or not value.startswith("_") or value.startswith("_k") or value in w.known:
            return value
        t = w.fresh()
        w(f"{t} = {value}.collapse() if _type({value}) is _RV else {value}")
        return t

    def looked(self, w: _Writer, e: A.Expr, env: Env) -> str:
        """An expression's value, forced (``reference.force``; a condition is the forced value's truth):
        what is of a sound kind (``facts``) or a constant is not forced (``forced``), and a roll looked at at
        once makes none (``DiceSource.looked_at``)."""
        if self.dice and isinstance(e, A.Call) and not e.kwargs:
            target = w.bound.get(id(e.func))
            if isinstance(target, BuiltinRef) and target.builtin.name == "roll":
                args = [self.expr(w, a, env) for a in e.args]
                return self.builtin_call(w, target.builtin, args, e.span, fn=w.const(roll_looked_at))
        return self.forced(w, self.expr(w, e, env))

    def tmp(self, w: _Writer, text: str, prefix: str = "_t") -> str:
        t = w.fresh(prefix)
        w(f"{t} = {text}")
        return t

    def x_Int(self, w: _Writer, e: A.Int | A.Str | A.Bool, env: Env) -> str:
        return w.const(e.value)

    x_Str = x_Bool = x_Int

    def x_NoneLit(self, w: _Writer, e: A.NoneLit, env: Env) -> str:
        return "None"

    def x_Dice(self, w: _Writer, e: A.Dice, env: Env) -> str:
        return w.const(DiceSpec(e.count, e.sides))

    def x_Name(self, w: _Writer, e: A.Name, env: Env) -> str:
        ref = w.bound.get(id(e))
        if isinstance(ref, Local):
            return env[ref.slot].py
        return self.referee_value(w, ref, e.span)

    def referee_value(self, w: _Writer, ref: Referee | None, span: Span) -> str:
        """The value of what a global name (or a module's member) is bound to."""
        if isinstance(ref, UnitRef):
            found = ref.unit
            if found.kind == "input":
                return self.tmp(w, f"ctx.inputs[{found.index}]")
            if found.arity is not None:
                return self.tmp(w, w.const(R.UnitFunction(found, self.interp)))
            t = self.tmp(w, f"ctx.memo.get({found.index}, _PENDING)")
            w(f"if {t} is _PENDING:")
            w(f"    {t} = {self.unit_name(found)}(ctx)")
            return t
        if isinstance(ref, DataRef):
            return w.const(ref.value)
        if isinstance(ref, Member):
            return w.const(ref.name)
        return w.const(R.BuiltinFunction(cast(BuiltinRef, ref).builtin, span, self.interp))  # (as the reference's)

    def x_ListLit(self, w: _Writer, e: A.ListLit, env: Env) -> str:
        items = [self.looked(w, i, env) for i in e.items]
        return self.tmp(w, "[" + ", ".join(items) + "]")

    def x_TupleLit(self, w: _Writer, e: A.TupleLit, env: Env) -> str:
        items = [self.looked(w, i, env) for i in e.items]
        # (Python makes one tuple of literals for every call, where a memo keys a tuple by identity: made anew)
        folded = all(i in ("None", "True", "False") or not i.isidentifier() for i in items)
        return self.tmp(w, ("_tuple([" if folded else "(") + "".join(i + ", " for i in items) + ("])" if folded else ")"))

    def x_SetLit(self, w: _Writer, e: A.SetLit, env: Env) -> str:
        t = self.tmp(w, "_set()")
        span = w.const(e.span)
        for i in e.items:
            self.add_line(w, t, self.looked(w, i, env), span)
        return self.tmp(w, f"_frozenset({t})")

    def x_RecordLit(self, w: _Writer, e: A.RecordLit, env: Env) -> str:
        items = [(k, self.looked(w, v, env)) for k, v in e.items]
        return self.tmp(w, "{" + ", ".join(f"{w.const(k)}: {v}" for k, v in items) + "}")

    def x_MapLit(self, w: _Writer, e: A.MapLit, env: Env) -> str:
        t = self.tmp(w, "_Map()")
        span = w.const(e.span)
        for k, v in e.items:  # (the key first: dice are rolled in order)
            self.add_line(w, t, self.looked(w, k, env), span, self.looked(w, v, env))
        return t

    def add_line(self, w: _Writer, out: str, x: str, span: str, v: str | None = None) -> None:
        """A set's item ``x`` added (``reference.add_item``), or a map's entry ``x``: ``v`` put
        (``reference.put_entry``): a text or integer at once (it costs no walk and can always be one)."""
        fast, slow = (f"{out}.add({x})", f"_add_item(ctx, {out}, {x}, {span})") if v is None else (
            f"{out}[{x}] = {v}", f"_put_entry(ctx, {out}, {x}, {v}, {span})")
        w(f"if {_either(self.is_(x, 'str', w), self.is_(x, 'int', w))}:", f"    {fast}", "else:", f"    {slow}")

    def kind(self, v: str, w: _Writer | None = None) -> type | None:
        """The type of what ``v`` holds when it is a constant (a literal, or a constant's name), or a local
        holding a value of a sound kind (``facts``) in ``w``'s code."""
        if w is not None and v in w.known:
            return w.known[v]
        if v in ("None", "True", "False"):
            return type(None) if v == "None" else bool
        if v[:1] == "'" or v.lstrip("-").isdigit():
            return str if v[:1] == "'" else int
        return type(self.g[v]) if v.startswith("_k") else None

    def is_(self, v: str, kind: str, w: _Writer | None = None) -> str:
        """``_type(v) is _KIND`` (``plain``: ``_type(v) in _PLAIN``), answered when the kind of what ``v``
        holds is known (``kind``)."""
        known = self.kind(v, w)
        if known is None:
            return f"_type({v}) in _PLAIN" if kind == "plain" else f"_type({v}) is _{kind}"
        return str(known in PLAIN if kind == "plain" else known.__name__ == kind)

    def x_Comp(self, w: _Writer, e: A.Comp, env: Env) -> str:
        if e.kind == "gen":
            return self.generator(w, e, env)
        out = w.fresh()
        w(f"{out} = {'[]' if e.kind == 'list' else '_set()' if e.kind == 'set' else '_Map()'}")
        span = w.const(e.span)

        def item(x: str, v: str | None = None) -> None:  # (a map's key, then its value)
            if e.kind == "list":
                w(f"{out}.append({x})")
            else:
                self.add_line(w, out, x, span, v)

        self.loops(w, e.fors, env, (cast(A.Expr, e.key), e.elem) if e.kind == "map" else (e.elem,), item)
        if e.kind == "set":
            return self.tmp(w, f"_frozenset({out})")
        return out

    def loops(self, w: _Writer, fors: tuple[A.CompFor, ...], env: Env, exprs: tuple[A.Expr, ...],
              item: Callable[..., None]) -> None:
        """A comprehension's `for`s, nested, with ``item`` written in the innermost, given the values of
        ``exprs`` there (in their order: dice are rolled in order)."""
        if not fors:
            item(*[self.looked(w, x, env) for x in exprs])
            return
        first = fors[0]
        seq = self.looked(w, first.iter, env)
        names = [w.fresh("_v") for _ in first.names]
        items, span = w.fresh(), w.const(first.span)
        head, indent = len(w.lines), w.indent
        w.lines.append("")  # the loop's head, written once the most an item's code charges is known
        w.indent += 1
        w.stretches.append([0, None])
        inner = {**env, **{slot(w.bound, first) + i: _Local(py) for i, py in enumerate(names)}}
        if first.cond is not None:
            c = self.looked(w, first.cond, inner)
            w(f"if {c}:")
            w.indent += 1
        self.loops(w, fors[1:], inner, exprs, item)
        w.indent = indent
        per = 1 + w.stretches.pop()[0]  # an item's step and the most its code charges
        # at once: a list, or a map (its keys, or keys and values) but one holding truth values as keys, which
        # ``_items_of`` gives back (a set is walked in order; into a name of its own: the body may read ``seq``)
        is_, pairs = self.is_, _either(self.is_(seq, "dict", w), self.is_(seq, "Map", w))
        when, fast = {1: (_either(is_(seq, "list", w), is_(seq, "dict", w),
                                  _both(is_(seq, "Map", w), f"_TK not in {seq} and _FK not in {seq}")), seq),
                      2: (pairs, f"_entries({seq})")}.get(len(names), ("False", "None"))
        lines = [f"if {when}:", f"    ctx.steps += _len({seq}){f' * {per}' if per > 1 else ''}",
                 "    if ctx.steps > ctx.budget:", f"        raise _over(ctx, {span})", f"    {items} = {fast}", "else:",
                 f"    {items} = _items_of(ctx, {seq}, {len(names)}, {span}, {per})", f"for {', '.join(names)} in {items}:"]
        w.lines[head] = "\n".join("    " * indent + line for line in lines)

    def generator(self, w: _Writer, e: A.Comp, env: Env) -> str:
        """A comprehension given to a call: a generator function, made where it is written
        (``_Writer.nested``: as the reference's generator keeps its environment)."""
        gname = w.fresh("_g")
        inner_w = w.nested(f"def {gname}(ctx=ctx", "):", env)
        inner_w.open_charge(e.span)
        self.loops(inner_w, e.fors, env, (e.elem,), lambda x: inner_w(f"yield {x}"))
        inner_w.close_charge()
        inner_w("pass")
        w.close_nested(inner_w)
        return self.tmp(w, f"{gname}()")

    def x_Let(self, w: _Writer, e: A.Let, env: Env) -> str:
        py = self.tmp(w, self.expr(w, e.value, env), "_v")
        return self.expr(w, e.body, {**env, slot(w.bound, e): _Local(py)})

    def x_If(self, w: _Writer, e: A.If, env: Env) -> str:
        """The branches in a one-pass block left by `break` (an `else if` chain, however long, is one
        level of indentation: Python refuses deeply indented code)."""
        out = w.fresh()
        w("while True:")
        with w.block():
            node: A.Expr = e
            while isinstance(node, A.If):
                for cond, value in node.branches:
                    c = self.looked(w, cond, env)
                    w(f"if {c}:")
                    with w.block():
                        w(f"{out} = {self.expr(w, value, env)}")
                        w("break")
                node = node.otherwise
            w(f"{out} = {self.expr(w, node, env)}")
            w("break")
        return out

    def x_Lambda(self, w: _Writer, e: A.Lambda, env: Env) -> str:
        """A nested function (``_Writer.nested``)."""
        lname = w.fresh("_l")
        inner_w = w.nested(f"def {lname}(ctx, *args", "):", env)
        inner_w(f"if _len(args) != {len(e.params)}:")
        inner_w(f"    raise _lambda_arity({len(e.params)}, _len(args), {w.const(e.span)})")
        params, pnames = self.params(inner_w, e.params)
        if pnames:
            inner_w(f"{''.join(p + ', ' for p in pnames)}= args")
        result = self.charged(inner_w, e.body, {**env, **params}, e.span, 1)
        inner_w(f"return {result}")
        w.close_nested(inner_w)
        return self.tmp(w, f"_Forcing({lname})") if self.dice else lname

    def x_BoolOp(self, w: _Writer, e: A.BoolOp, env: Env) -> str:
        stop_at = e.op == "or"  # `or` stops at the first true item, `and` at the first false one
        out = w.fresh()
        w(f"{out} = {not stop_at}")
        w("while True:")
        with w.block():
            for item in e.items:
                c = self.looked(w, item, env)
                w(f"if {'' if stop_at else 'not '}{c}:")
                w(f"    {out} = {stop_at}")
                w("    break")
            w("break")
        return out

    def x_Not(self, w: _Writer, e: A.Not, env: Env) -> str:
        return self.tmp(w, f"not {self.looked(w, e.operand, env)}")

    def x_Compare(self, w: _Writer, e: A.Compare, env: Env) -> str:
        x = self.expr(w, e.left, env)
        y = self.expr(w, e.right, env)
        span = w.const(e.span)
        slow = f"_compare(ctx, {w.const(e.op)}, {x}, {y}, {span})"
        if e.op in ("==", "!="):  # (with dice, both plain: a die is compared by the reference's way)
            # (Python's True == 1: equal plain values are of one kind only if both or neither are truth values)
            kx, ky = self.kind(x, w), self.kind(y, w)
            if kx is not None and ky is not None or kx in (str, type(None)) or ky in (str, type(None)):
                bools = str((kx is bool) is (ky is bool)) if kx and ky else "True"  # (only a text equals a text)
            elif kx is not None or ky is not None:
                bools = f"_type({y if kx else x}) is {'' if (kx or ky) is bool else 'not '}_bool"
            else:
                bools = f"(_type({x}) is _bool) is (_type({y}) is _bool)"
            same = _both(f"{x} == {y}", bools)
            test = same if e.op == "==" else f"not ({same})"
            plain = (_both if self.dice else _either)(self.is_(x, "plain", w), self.is_(y, "plain", w))
            return self.tmp(w, _pick(test, plain, slow))
        if e.op in ("in", "notin"):
            fast = f"{x} {'not in' if e.op == 'notin' else 'in'} {y}"  # `when`: a text, number, (a, b) (``flat_key``) in set/map
            when = _both(_either(self.is_(y, "frozenset", w), self.is_(y, "dict", w), self.is_(y, "Map", w)),
                         self.flat_key(w, e.left, x) or _either(self.is_(x, "str", w), self.is_(x, "int", w)))
            listed = _both(self.is_(y, "list", w), self.is_(x, "str", w))  # (a text equals only a text: ``in_list``)
            if listed != "False":  # a text in a list: its length charged (``reference.member``), then Python's `in`
                out = w.fresh()  # (a condition known true or false: Python's compiler keeps only the branch taken)
                w(f"if {when}:", f"    {out} = {fast}", f"elif {listed}:", f"    ctx.steps += _len({y})",
                  f"    if ctx.steps > ctx.budget: raise _over(ctx, {span})", f"    {out} = {fast}", "else:",
                  f"    {out} = {slow}")
                return out
        else:
            fast, when = f"{x} {e.op} {y}", _both(self.is_(x, "int", w), self.is_(y, "int", w))
        return self.tmp(w, _pick(fast, when, slow))

    def x_BinOp(self, w: _Writer, e: A.BinOp, env: Env) -> str:
        x = self.expr(w, e.left, env)
        if e.op == "??":
            out = w.fresh()
            w(f"{out} = {x}")
            w(f"if {out} is None:")
            with w.block():
                y = self.expr(w, e.right, env)
                w(f"{out} = {y}")
            return out
        y = self.expr(w, e.right, env)
        span = w.const(e.span)
        if e.op not in ("+", "-"):  # (two integers or two texts: neither is a die)
            return self.tmp(w, f"_arith(ctx, {w.const(e.op)}, {x}, {y}, {span})")
        t = w.fresh()  # (a condition known true or false: Python's compiler keeps only the branch taken)
        w(f"if {_both(self.is_(x, 'int', w), self.is_(y, 'int', w))}:", f"    {t} = {x} {e.op} {y}")
        if e.op == "+":  # two texts: their lengths charged
            w(f"elif {_both(self.is_(x, 'str', w), self.is_(y, 'str', w))}:", f"    ctx.steps += _len({x}) + _len({y})",
              f"    if ctx.steps > ctx.budget: raise _over(ctx, {span})", f"    {t} = {x} + {y}")
        w("else:", f"    {t} = _arith(ctx, {w.const(e.op)}, {x}, {y}, {span})")
        return t

    def x_Neg(self, w: _Writer, e: A.Neg, env: Env) -> str:
        x = self.looked(w, e.operand, env)
        return self.tmp(w, _pick(f"-{x}", self.is_(x, "int", w), f"_negate({x}, {w.const(e.span)})"))

    def x_Field(self, w: _Writer, e: A.Field, env: Env) -> str:
        of = w.bound.get(id(e.obj))
        if isinstance(of, ModuleRef):
            return self.referee_value(w, w.bound.get(id(e)), e.span)
        o = self.looked(w, e.obj, env)
        name = w.const(e.name)
        # (a record or map looked up by the text, none where it lacks it: only a map or record raises a
        # `KeyError` there; anything else refuses a text as its index, and goes to the error of ``field_of``)
        t = w.fresh()
        w("try:")
        w(f"    {t} = {o}[{name}]")
        w("except KeyError:")
        w(f"    {t} = None")
        w("except TypeError:")
        w(f"    {t} = _field_of({o}, {name}, {w.const(e.span)})")
        return t

    def x_Index(self, w: _Writer, e: A.Index, env: Env) -> str:
        table = w.bound.get(id(e))
        if isinstance(table, UnitRef):
            keys = [self.looked(w, k, env) for k in e.keys]
            return self.tmp(w, f"{self.unit_name(table.unit)}(ctx{''.join(', ' + k for k in keys)})")
        o = self.looked(w, e.obj, env)
        k = self.looked(w, e.keys[0], env)
        span = w.const(e.span)
        if self.kind(k, w) is int:  # (a literal, or of a sound kind)
            return self.tmp(w, _pick(f"{o}[{k}]", _both(self.is_(o, "list", w), f"-_len({o}) <= {k} < _len({o})"),
                                     f"_index_of(ctx, {o}, {k}, {span})"))
        when = _both(_either(self.is_(o, "dict", w), self.is_(o, "Map", w)),
                     self.flat_key(w, e.keys[0], k) or self.is_(k, "str", w))
        return self.tmp(w, _pick(f"{o}.get({k})", when, f"_index_of(ctx, {o}, {k}, {span})"))

    def flat_key(self, w: _Writer, e: A.Expr, v: str) -> str | None:
        """`(a, b)` (``e``, in ``v``) looked up: when it holds texts and numbers it costs its size
        (``values.tree_size``), charged here, then one look."""
        if not (isinstance(e, A.TupleLit) and 0 < len(e.items) <= 8):
            return None
        w.cost(len(e.items) + 1)
        return " and ".join(f"(_type({v}[{i}]) is _str or _type({v}[{i}]) is _int)" for i in range(len(e.items)))

    def x_With(self, w: _Writer, e: A.With, env: Env) -> str:
        o = self.looked(w, e.obj, env)
        t = self.tmp(w, f"_with_base({o}, {w.const(e.span)})")
        for k, v in e.items:
            w(f"{t}[{w.const(k)}] = {self.looked(w, v, env)}")
        return t

    def x_Call(self, w: _Writer, e: A.Call, env: Env) -> str:
        target = w.bound.get(id(e.func))
        span = w.const(e.span)
        if isinstance(target, BuiltinRef):
            if target.builtin.name in _LOOPED and (out := self.looped(w, target.builtin, e, env)) is not None:
                return out
            given = (*e.args, *(v for _, v in e.kwargs))
            args = [self.expr(w, a, env) for a in given]
            return self.builtin_call(w, target.builtin, args, e.span)
        if isinstance(target, UnitRef):
            args = [self.expr(w, a, env) for a in e.args]
            unit = target.unit
            if unit.kind in (*DEFS, "query"):
                w.cost(1)  # (the call's step: ``function_source``)
                if self.inlines(unit):
                    return self.inlined(w, unit, args)
            return self.tmp(w, f"{self.unit_name(unit)}(ctx{''.join(', ' + a for a in args)})")
        fn = self.looked(w, e.func, env)
        args = [self.expr(w, a, env) for a in e.args]
        return self.tmp(w, f"_call_dynamic(ctx, {fn}, [{', '.join(args)}], {span})")

    def looped(self, w: _Writer, b: Builtin, e: A.Call, env: Env) -> str | None:
        """A built-in given a lambda (``_LAMBDA_LOOPS``) or a comprehension (``_COMP_LOOPS``) written at its
        call, as a loop of this code: the built-in's walk of its items (its own helpers: the same charges
        and refusals), and for each item the lambda's body (or the comprehension's item) written here,
        charged as its call (a step and the most its body charges, on entry) or as the comprehension's
        item; the whole located at the call as the built-in's failures are (docs/architecture.md, why that
        is the reference's meaning). None: written as a call."""
        if e.kwargs:
            return None
        out, span, what = w.fresh(), w.const(e.span), w.const(b.name)
        if b.name in _COMP_LOOPS:
            comp = e.args[0] if len(e.args) == 1 else None
            start, each = _COMP_LOOPS[b.name]
            if not (isinstance(comp, A.Comp) and comp.kind == "gen" and ("break" not in each or len(comp.fors) == 1)):
                return None
            w(f"{out} = {start}", "try:")
            with w.block():
                self.loops(w, comp.fors, env, (comp.elem,), lambda x: w(each.format(x=x, out=out)))
            if b.name != "sum":
                w.known[out] = int if b.name == "count" else bool
        else:
            at, arity, before, walk, each, after = _LAMBDA_LOOPS[b.name]
            lam = e.args[at] if len(e.args) > at else None
            if not (isinstance(lam, A.Lambda) and len(lam.params) == arity):
                return None
            # (the arguments evaluated, then forced, as ``builtin_call`` does; making a lambda costs nothing)
            given = [self.expr(w, a, env) if a is not lam else "None" for a in e.args]
            given = [self.forced(w, a) for a in given] + ["None"] * (b.max_args - len(given))  # (a default: none)
            params, pnames = self.params(w, lam.params)
            names = {"out": out, "acc": pnames[0], "x": pnames[-1], "items": w.fresh(), "keys": w.fresh(),
                     "what": w.const("sorted" if b.name == "sort_by" else b.name),
                     **{f"a{i}": g for i, g in enumerate(given)}}
            w("try:")
            with w.block():
                w(before.format(**names), f"for {pnames[-1]} in {walk.format(**names)}:")
                with w.block():
                    k = self.charged(w, lam.body, {**env, **params}, lam.span, 1)
                    w(each.format(k=self.forced(w, k), **names))
                w(after.format(**names))
        w("except _HANDLED as err:")
        w(f"    raise _builtin_failed(ctx, err, {what}, {span}) from None")
        return out

    def inlines(self, unit: Unit) -> bool:
        """Whether a call of the definition ``unit`` is written where it is called (``inlined``)."""
        return self.memos.memo_free(unit) and not (unit.state_free or unit.counted)

    def inlined(self, w: _Writer, unit: Unit, args: list[str]) -> str:
        """A function without a memo written at its one call (``memo_free``), its arguments in locals."""
        env: Env = {}
        bound, kinds, w.bound = w.bound, w.kinds, unit.bound
        for p, a in zip(unit.params, args):
            env[slot(w.bound, p)] = _Local(self.tmp(w, a))  # (the callee's slots: its own binding)
        w.kinds = self.facts.of(unit)
        try:
            return self.expr(w, cast(A.Expr, unit.body), env)
        finally:
            w.bound, w.kinds = bound, kinds

    def builtin_call(self, w: _Writer, b: Builtin, args: list[str], span: Span, fn: str | None = None) -> str:
        """A call of a built-in (or of ``fn`` in its place) with its arguments forced, its failures located
        at the call (``reference.Interpreter.apply_builtin``)."""
        if b.name != "shown":
            args = [self.forced(w, a) for a in args]
        t = w.fresh()
        call = fn or w.const(b.fn)
        w("try:")
        w(f"    {t} = {call}({'ctx, ' if b.needs_ctx else ''}{', '.join(args)})")
        w("except _HANDLED as err:")
        w(f"    raise _builtin_failed(ctx, err, {w.const(b.name)}, {w.const(span)}) from None")
        return t


# The built-ins ``Backend.looped`` writes as loops. Given a comprehension: what each starts from, and what
# each item does; given a lambda: where it is among the arguments (``a0``...), its parameters (``acc``
# the first, ``x`` the item), the lines before the loop, what it walks (the built-in's own helper), the lines
# that take each item's value ``k``, and after the loop: what the built-in's definition does, step for step
_COMP_LOOPS = {"any": ("False", "if {x}:\n    {out} = True\n    break"),
               "all": ("True", "if not {x}:\n    {out} = False\n    break"),
               "count": ("0", "if {x} is True:\n    {out} += 1\nelif {x} is not False:\n    raise _uncounted({x})"),
               "sum": ("0", "{out} = _summed(ctx, {out}, {x})")}
_KEYED = "_key_charged(ctx, {k}, {what})\n"
_SORTED = (1, 1, "{items} = _list(_sized_items(ctx, {a0}, {what}))\n{keys} = []", "{items}",
           _KEYED + "{keys}.append({k})", "{out} = _by_keys({items}, {keys})")
_LAMBDA_LOOPS = {
    "fold": (2, 2, "{acc} = {a1}", "_walked_items({a0}, {what})", "{acc} = {k}", "{out} = {acc}"),
    "scan": (2, 2, "{out} = []\n{acc} = {a1}", "_walked_items({a0}, {what})", "{acc} = {k}\n{out}.append({acc})", ""),
    "group_by": (1, 1, "{out} = _Map()", "_sized_items(ctx, {a0}, {what})",
                 _KEYED + "{out}.setdefault(_as_key({k}), []).append({x})", ""),
    "index_by": (1, 1, "{out} = _Map()", "_sized_items(ctx, {a0}, {what})", _KEYED + "{out}[_as_key({k})] = {x}", ""),
    "sorted": _SORTED, "sort_by": _SORTED,
    **{name: (1, 1, "{items} = _list(_walked_items({a0}, {what}))\n{keys} = []", "{items}", "{keys}.append({k})",
              f"{{out}} = _extreme({{items}}, {{keys}}, {name == 'max_by'}, {{what}}) if {{items}} else {{a2}}")
       for name in ("max_by", "min_by")}}
_LOOPED = frozenset(_COMP_LOOPS) | frozenset(_LAMBDA_LOOPS)


def _both(*conds: str) -> str:
    """The conditions joined by `and`, those known true left out (false if one is known false)."""
    if "False" in conds:
        return "False"
    return " and ".join(f"({c})" if " or " in c else c for c in conds if c != "True") or "True"


def _either(*conds: str) -> str:
    """The conditions joined by `or`, those known false left out (true if one is known true)."""
    if "True" in conds:
        return "True"
    return " or ".join(c for c in conds if c != "False") or "False"


def _pick(fast: str, when: str, slow: str) -> str:
    """``fast if when else slow``, a condition known true or false answered."""
    return fast if when == "True" else slow if when == "False" else f"{fast} if {when} else {slow}"


class _Protocol(R.Interpreter):
    """The reference's protocols (a decision's resolution, a cycle's settlement, binding inputs),
    with the generated bodies: one definition of each, whichever engine runs. What it evaluates
    itself (a cycle policy, an input's default) reads and calls definitions through the generated
    functions, so that a run shares one memo."""

    def __init__(self, program: Program, backend: Backend):
        super().__init__(program)
        self.backend = backend
        self.guards: bool | None = None  # ``Memos.guards``, asked at the first decision given no plain value (``resolve``)

    def read_value(self, run: R.Run, unit: Unit) -> Any:
        return self.backend.function(unit)(run)

    def call_unit(self, run: R.Run, unit: Unit, args: list[Any], span: Span) -> Any:
        if unit.kind == "decision":
            return self.resolve(run, unit, args)
        if unit.kind not in ("table", "procedure"):
            if unit.arity != len(args):
                raise R.unit_arity(unit, len(args), span)
            run.charge(1, span)  # (a function's call charged by its caller: ``Backend.function_source``)
        return self.backend.function(unit)(run, *args)

    def resolve(self, run: R.Run, unit: Unit, args: list[Any]) -> Any:
        if run.pooling is not None:  # (a decision read in a run computing a shared entry)
            raise shares.NotShared()
        # a decision given a list, record, map, set, tuple, function or die: its key is an identity, which
        # may be one that a memo the backend left out would have kept (``Memos.guards``): the reference runs it
        for a in args if self.guards is not False else ():
            if type(a) is not str and not R.plain(a):
                if self.guards is None:
                    self.guards = self.backend.memos.guards()
                if self.guards:
                    raise Unwritable("E001", "a decision given a collection, function or die", unit.span)
        return super().resolve(run, unit, args)

    def bind_inputs(self, run: R.Run) -> None:
        return super().bind_inputs(run) if run.pool is None else shares.bind_inputs(self, run, super().bind_inputs)

    def decision_body(self, run: R.Run, unit: Unit, key: Any, args: list[Any]) -> Any:
        body = self.backend.bodies.get((unit.ns, unit.name))
        if body is None:  # a decision first met by a cycle policy, which the reference evaluates
            if isinstance(fn := self.backend.function(unit), (_Stub, _Refused)):
                fn.materialize()  # writes the decision, and its body with it
            body = self.backend.bodies[(unit.ns, unit.name)]
        return body(run, *args)


class _Stub:
    """A unit's function until its first call, which writes the real one in its place."""

    def __init__(self, backend: Backend, unit: Unit, name: str):
        self.backend, self.unit, self.name = backend, unit, name

    def __call__(self, ctx: Any, *args: Any) -> Any:
        return self.materialize()(ctx, *args)

    def materialize(self) -> Callable[..., Any]:
        current: Callable[..., Any] = self.backend.g[self.name]
        if current is not self:
            return current
        try:
            fn = self.backend.write(self.unit, self.name)
        except Unwritable as err:  # (refused at once from now on, not written again at each call)
            fn = _Refused(err)
        self.backend.g[self.name] = fn
        return fn


class _Refused:
    """A unit the backend could not write: any call of it sends the run to the reference."""

    def __init__(self, err: Unwritable):
        self.err = err

    def materialize(self, *args: Any) -> Callable[..., Any]:
        raise Unwritable(self.err.code, self.err.message, self.err.span)

    __call__ = materialize


# Python's refusals of code nested past its limits (with its recursion and memory errors): E005, no bug
NESTING = ("too many statically nested blocks", "too many levels of indentation", "too many nested parentheses")


def _compile_text(source: str, filename: str) -> types.CodeType:
    """The one call of ``compile`` in ``validator``: source written by ``Backend`` alone. Python refuses
    it for its nesting (``NESTING``, E005) or for a bug of the writer (``WRITER_BUG``): the reference runs it."""
    try:
        with warnings.catch_warnings():  # (`1 is True` where a constant stands: meant, and never shown)
            warnings.simplefilter("ignore", SyntaxWarning)
            return compile(source, filename, "exec")
    except (SyntaxError, RecursionError, MemoryError) as exc:
        if isinstance(exc, SyntaxError) and not any(m in str(exc.msg) for m in NESTING):
            raise Unwritable(WRITER_BUG, f"the backend wrote code Python refuses, a bug of ruleval: {exc.msg} "
                                         f"(line {exc.lineno} of the code written)") from None
        raise Unwritable("E005", f"a definition is nested too deeply to write ({type(exc).__name__})") from None


def define(source: str, filename: str, g: dict[str, Any], kept: codecache.Kept | None = None) -> Callable[..., Any]:
    """The one function ``source`` defines, with ``g`` as its globals: the source is compiled
    (``codecache.compiled``, its code noted in ``kept``), not run (its function is made from the code object)."""
    code = codecache.compiled(source, filename, _compile_text, kept)
    return types.FunctionType(next(c for c in code.co_consts if isinstance(c, types.CodeType)), g)


__all__ = ["Backend"]
