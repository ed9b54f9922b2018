"""The reference interpreter: what a ruleset means, written to be read.

This is a plain evaluator over the checked AST: one function per construct, the locals of a call
in the slots of a frame (``Frame``), no caches and no specialisation. It is the oracle that every
fast path is tested against (``tests/test_reference.py``, ``tests/test_differential.py``), and the
engine of traced runs (``--explain``). ``docs/language.md`` describes the same meaning in prose.

The parts of the meaning that are not obvious from the code of one construct:

- **Steps.** A run has a budget of steps (E004 when it is spent). A call of a function (a `def`
  or `rule` with parameters, a query, a lambda, a decision's body, a procedure) costs one step,
  answered from the memo or not; a loop over a collection costs one step per item, charged before
  its first item; `+` and `*` cost the size of what they build; some built-ins charge their own
  work. Nothing else costs a step.
- **State-free definitions** (``Unit.state_free``: they read no input, decision or die and call
  nothing that recurs, directly or through others) are what the program is, not what one run
  makes: reading one, or calling one (one step) with texts, numbers, truth values or none, gives
  what it gives alone, in a fresh run (``Run.fresh``). The run pays, once, for each state-free
  value (or call) it reads, directly or through the state-free values it reads: the steps that one
  takes alone, apart from the others' (``pay``). What a run pays is a function of the program and
  of what the run reads, whatever ran before in the process. A later read in the same run is a
  memo hit (a value's costs nothing, a call its one step). Called with records, lists, maps or
  sets, it is an ordinary call.
- **Memo.** Within one run, a value (a definition without parameters) is computed once, and a
  `def`/`rule` function applied to the same arguments (``freeze``: texts, numbers and truth values
  by value, records, lists, maps and sets by identity) is computed once: a die rolled in it is
  rolled once for those arguments. A value or call that read a decision while that decision
  was still a guess is not kept (it may change); one kept while a decision was being resolved is
  dropped if that decision is ever undone.
- **Depth.** Calls of the definitions that lie on cycles of the reference graph, or are named as
  values (``Unit.counted``), nest at most ``depth_limit`` deep (E005).
- **Decisions.** A decision is resolved by guessing: its body is evaluated with the decision
  guessed false; if that read no guess it is final; if the first guess read was its own, it is
  evaluated again guessed true, and two different values make a cycle, settled by the decision's
  ``cycle`` policies.
- **Dice.** Seeded and scripted dice give faces in the order the rolls are made (left to right).
  In exact mode a roll is a distribution (``RandomValue``); adding an integer to it and comparing
  it are computed over the distribution (a comparison forks the run in two); every other use of it
  forces it first: the run forks once per value it can take (``force``). No built-in and no
  container ever holds an unforced die, except ``shown``, which only describes it.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from collections import defaultdict
from contextlib import contextmanager
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Callable, Collection, Iterator, Sequence, cast

from ..lang import ast as A
from ..lib.builtins import Builtin, CallError, DiceSpec
from ..core.diagnostics import Diagnostic, DiagnosticError, Related, Span
from ..lib.runtime import (DEFAULT_DEPTH_LIMIT, DEFAULT_STEP_BUDGET, MAX_EXACT_PATHS, DiceSource, EvalError, ExactDice,
                           RandomValue, SeededDice, Settlement, Unwritable, WRITER_BUG, heard, writer_bug)
from ..lib.values import (Map, as_key, brief, entries, equal, from_key, in_list, is_map, number_cost, ordered, probe_key,
                          too_large, tree_size, walked, written)
from ..lang.bind import BuiltinRef, DataRef, Local, Member, ModuleRef, Referee, StepRef, UnitRef, slot
from ..lang.kinds import Unfit
from ..lang.program import DEFS, REJECTED_EVENT, Program, Unit, cell_key
from .state import resolve_pointer

if TYPE_CHECKING:
    from .backend import _Group

# ---------------------------------------------------------------- values the interpreter makes


def freeze(v: Any) -> Any:
    """The memo key of an argument: texts, numbers, truth values and none by their value (a truth
    value is not a number); anything else (records, lists, maps, sets, functions, unforced dice) by
    its identity: a function applied to the same record is computed once, to an equal record made
    elsewhere again. (Whoever keeps such a key keeps the value too, so that its identity is not
    reused while the run lasts: ``Run.alive``.)"""
    t = type(v)
    if t is str or t is int or v is None or t is Fraction:
        return v
    if t is bool:
        return ("#bool", v)
    return ("#id", id(v))


class Closure:
    """A lambda's value: its parameters, body and the environment it was made in."""

    def __init__(self, node: A.Lambda, env: "Frame", interp: "Interpreter"):
        self.node, self.env, self.interp = node, env, interp

    def __call__(self, run: "Run", *args: Any) -> Any:  # called by built-ins: what they see is forced
        return force(run, self.interp.apply_lambda(run, self, list(args)))


class UnitFunction:
    """A definition with parameters used as a value (passed to a built-in, say)."""

    def __init__(self, unit: Unit, interp: "Interpreter"):
        self.unit, self.interp = unit, interp

    def __call__(self, run: "Run", *args: Any) -> Any:
        return force(run, self.interp.call_unit(run, self.unit, list(args), self.unit.span))

    def table_keys(self, run: "Run", i: int, what: str) -> tuple[list[Any], int]:
        """A table's row keys (``i`` 0) or column keys (1), for `rows` and `columns`: those of its cells
        (``Unit.cells``: its grid's in the order written, then a variant's added ones), then those of its
        source (nested maps, walked in their order) that no cell has, each once; and how many entries
        were looked at (the built-in's charge)."""
        unit = self.unit
        if unit.kind != "table" or i >= len(unit.params):
            raise CallError(f"{what} needs {'a two-key table' if i else 'a table'}, not `{unit.written}`")
        found = dict.fromkeys(key[i] for key in unit.cells)  # (keys kept as a map's: ``values.as_key``)
        looked = len(unit.cells)
        if unit.body is not None:
            source = force(run, self.interp.evaluate(run, unit.body, self.interp.env(unit)))
            level = [source] if i == 0 else list(source.values()) if isinstance(source, dict) else []
            for m in level:
                if isinstance(m, dict):
                    looked += len(m)
                    found.update(dict.fromkeys(m))
        return [from_key(k) for k in found], looked


class BuiltinFunction:
    """A built-in used as a value."""

    def __init__(self, builtin: Builtin, span: Span, interp: "Interpreter"):
        self.builtin, self.span, self.interp = builtin, span, interp

    def __call__(self, run: "Run", *args: Any) -> Any:
        b = self.builtin
        if not b.min_args <= len(args) <= b.max_args:
            raise EvalError("E001", f"`{b.name}` takes {b.min_args}..{b.max_args} arguments, not {len(args)}", self.span)
        return self.interp.apply_builtin(run, b, list(args), self.span)


def force(run: "Run", v: Any) -> Any:
    """A value with no unforced die at its top: in exact mode the run forks over the die's values."""
    return v.collapse() if isinstance(v, RandomValue) else v


# ---------------------------------------------------------------- environments


class Cell:
    """A procedure variable (`var`): assignable with `:=`."""

    def __init__(self, value: Any):
        self.value = value


class Frame:
    """The locals of one call of a unit's code, each in its slot (``bind.Local``, numbered when the
    unit is bound; a `var` holds a ``Cell``), and what the unit's names mean (``bound``). A lambda
    keeps a copy of the frame it is made in, and each call of it runs in a copy of that, as does a
    comprehension walked later (a generator): what is set in the frame after (by the next turn of a
    loop, say) is not what it saw."""

    def __init__(self, bound: dict[int, Referee], slots: dict[int, Any] | None = None):
        self.bound, self.slots = bound, slots or {}

    def read(self, local: Local) -> Any:
        value = self.slots[local.slot]
        return value.value if isinstance(value, Cell) else value

    def set(self, binder: Any, *values: Any) -> None:
        """The names ``binder`` binds, from its first slot on, set to ``values``."""
        for i, value in enumerate(values):
            self.slots[slot(self.bound, binder) + i] = value

    def copy(self, params: Sequence[Any] = (), args: Sequence[Any] = ()) -> "Frame":
        """A copy of the frame, its ``params`` (those of a call) set to ``args``."""
        frame = Frame(self.bound, dict(self.slots))
        for p, a in zip(params, args):
            frame.set(p, a)
        return frame


# ---------------------------------------------------------------- control flow of procedures


class _Goto(Exception):
    def __init__(self, target: int):
        self.target = target  # the step's place (``bind.StepRef``)


class _Stop(Exception):
    pass


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class _Reject(Exception):
    def __init__(self, message: str, cites: tuple[str, ...]):
        self.message, self.cites = message, cites


# ---------------------------------------------------------------- the run


PENDING = object()  # in the memo: a value being computed
TRACE_DEPTH = 2000  # a traced run records no node nested deeper (what is deeper still runs, unrecorded)
_SPARE: list["Run"] = []  # runs of their own left as new (``Run.left``), for the next (``Run.fresh``)
STATE_CHECK = "validate_state"  # a ruleset's own check of a state, what its schema cannot say
DATA_CHECK = "validate_data"  # a ruleset's own check of the data it imports, run once when it loads
UNRESOLVED, GUESSING, RESOLVED = 0, 1, 2


class Run:
    """One evaluation: the state, the budget, the dice, the memo, the decisions, the trace. Built-ins
    see ``steps``, ``budget`` and ``dice`` of it. Most runs resolve no decision and are not traced:
    what only those need is made when the run resolves its first decision (``begin_decisions``) or
    when it is traced (exact dice make a run per path, so a run is made cheaply)."""

    # (slots: CPython 3.11 shares at most 30 attribute names between a class's instances; past them, as a
    # run that resolves a decision went, every read of ``steps`` or ``memo`` took a dict's slow path)
    __slots__ = ("state", "dice", "budget", "steps", "depth", "depth_limit", "natural_den", "inputs", "memo", "alive",
                 "alone", "shared", "reads", "paid", "paid_steps", "paid_groups", "events", "replay", "met", "dstate",
                 "dvalue", "deciding", "guesses", "resolving", "memos", "trace", "dargs", "deplist",
                 "kept_while_resolving", "settled", "dstack", "decision_edges", "cycles", "trace_stack",
                 "traced_values")

    # exact dice on the backend (``shares.SharedRun``'s): what the paths of an enumeration share, and
    # in a run of its own computing one shared entry, that entry's key; none in any other run
    pool: Any = None
    pooling: Any = None

    # the decisions' bookkeeping, made by ``begin_decisions``
    dargs: dict[Any, tuple[Any, ...]]
    deplist: list[Any]
    kept_while_resolving: list[tuple[dict[Any, Any], Any]]  # (memo, key) to drop if a resolved decision is undone
    settled: dict[Any, Settlement]
    dstack: list[Any]
    decision_edges: set[tuple[Any, Any]]
    cycles: list[dict[str, Any]]
    trace_stack: list[dict[str, Any]]  # a traced run's

    def __init__(self, state: Any, dice: DiceSource, budget: int = DEFAULT_STEP_BUDGET,
                 depth_limit: int = DEFAULT_DEPTH_LIMIT, path: list[int] | None = None, trace: bool = False):
        self.state = state
        self.dice = dice
        self.budget = budget
        self.steps = 0
        self.depth = 0
        self.depth_limit = depth_limit
        # exact dice: the product of the rolled dice's own denominators (36 for 2d6), the one an
        # author writes the odds over (`enumerate_exact`'s "odds")
        self.natural_den = 1
        self.inputs: dict[int, Any] = {}  # by the input's unit number
        self.memo: dict[Any, Any] = {}
        self.alive: list[Any] = []  # values whose identity is in a memo key (see ``freeze``)
        self.alone: Any = None  # a run of a state-free definition's own: its memo key (see ``fresh``)
        # state-free definitions' values (``Kept``; what else an engine keeps so, ``backend._keep``), one for a
        # run and its fresh ones; those this run read (a miss of its memo), those it paid for and the steps it
        # paid (``pay``)
        self.shared: dict[Any, Any] = {}
        self.reads: list[Kept] = []
        self.paid: set[Kept] = set()
        self.paid_steps = 0
        self.paid_groups: set[_Group] = set()  # the backend's: the groups of values it paid (``backend._pay``)
        self.events: list[dict[str, Any]] = []
        # exact dice: the choices to follow (``enumerate_exact``'s path), and each fork met past them
        self.replay = iter(path or ())
        self.met: list[tuple[Sequence[int], int]] = []
        # decisions (read by generated code, resolved or not)
        self.dstate: dict[Any, int] = {}
        self.dvalue: dict[Any, Any] = {}
        self.deciding = False  # whether ``begin_decisions`` has made the rest
        self.guesses = 0  # reads of a decision that was not final, so far
        self.resolving = 0  # decisions being resolved now
        # the backend's memo of each function, by its unit's number (made at the function's first call)
        self.memos: defaultdict[int, dict[Any, Any]] = defaultdict(dict)
        # the trace (explain)
        self.trace = trace
        if trace:
            self.trace_stack = [{"children": []}]
            self.traced_values: set[int] = set()  # the cited values the trace shows (each once)
            self.begin_decisions()

    def begin_decisions(self) -> None:
        """The decisions' bookkeeping, made when the run resolves its first decision (or is traced)."""
        self.deciding = True
        self.dargs, self.settled = {}, {}
        self.deplist, self.kept_while_resolving, self.dstack, self.cycles = [], [], [], []
        self.decision_edges = set()

    def fresh(self, alone: Any) -> "Run":
        """A run of its own for a state-free definition (``Unit.state_free``): it reads nothing of this
        run, so its value is what it has alone; what it takes is paid by the run that reads it
        (``pay``); it stops at the same budget. ``alone`` is the memo key it computes (which that run
        computes itself). One made costs more than many a value: a run of its own that computed a
        value (``left``) serves again."""
        try:
            sub = _SPARE.pop()
        except IndexError:
            sub = Run(None, self.dice)
        sub.dice, sub.budget, sub.depth_limit, sub.alone = self.dice, self.budget, self.depth_limit, alone
        sub.shared, sub.alive = self.shared, self.alive
        if self.trace:  # a traced run shows what it called
            sub.trace, sub.trace_stack, sub.traced_values = True, self.trace_stack, self.traced_values
        return sub

    def left(self) -> None:
        """A run of its own (``fresh``) whose value is computed, left as new for the next: it read no
        state, decision, input or die, so its memos, what it paid and its steps are all it holds (but
        a traced one's trace, which is not left)."""
        if not self.trace:
            self.steps = self.paid_steps = 0
            for made in (self.memo, self.memos, self.reads, self.paid, self.paid_groups):
                made.clear()
            _SPARE.append(self)

    def charge(self, n: int, span: Span) -> None:
        self.steps += n
        if self.steps > self.budget:
            raise over_budget(self, span)

    def fork(self, counts: Sequence[int], total: int) -> int:
        """Exact dice: the branch the path takes at this fork, where branch ``i`` has probability
        ``counts[i] / total``. Past the path, a fork is met for the first time: it is recorded
        (``met``) and its branch 0 taken. (A run is a function of the branches it takes, so the
        forks along the path are those ``enumerate_exact`` recorded on the way to it.)"""
        choice = next(self.replay, None)
        if choice is None:
            self.met.append((counts, total))
            return 0
        return choice

    def keep(self, key: Any, value: Any, reads_decisions: bool) -> None:
        """Memoize; a value that may read decisions, kept while one is being resolved, is listed so
        that undoing a resolved decision drops it."""
        self.memo[key] = value
        if reads_decisions and self.resolving:
            self.kept_while_resolving.append((self.memo, key))

    def undo_kept(self) -> None:
        for memo, key in self.kept_while_resolving:
            memo.pop(key, None)
        self.kept_while_resolving.clear()


# ---------------------------------------------------------------- the interpreter


class Interpreter:
    """Evaluates a checked program (``compiler.Program``: its namespaces and units)."""

    def __init__(self, program: Program):
        self.program = program
        self.inputs = program.inputs()
        self.state_check = program.query(STATE_CHECK)
        # each input with the walk its value is read by (``input_fitter``), made at the first run
        self.input_plan: list[tuple[Unit, Callable[[Any], Any] | None]] | None = None
        # what is known of a state before its inputs are walked (the backend's ``facts.Facts``: what the state
        # schema proves of a run's inputs, ``input_proven``); none here, where every input is checked in full
        self.proof: Any = None

    def env(self, unit: Unit, params: Sequence[Any] = (), args: Sequence[Any] = ()) -> Frame:
        """A frame of a unit's code, its parameters (or a policy's `cycle`) set to ``args``."""
        return Frame(unit.bound).copy(params, args)

    # -- expressions

    def evaluate(self, run: Run, e: A.Expr, env: Frame) -> Any:
        method = getattr(self, "eval_" + type(e).__name__)
        return method(run, e, env)

    def eval_Int(self, run: Run, e: A.Int | A.Str | A.Bool, env: Frame) -> Any:
        return e.value

    eval_Str = eval_Bool = eval_Int

    def eval_NoneLit(self, run: Run, e: A.NoneLit, env: Frame) -> Any:
        return None

    def eval_Dice(self, run: Run, e: A.Dice, env: Frame) -> Any:
        return DiceSpec(e.count, e.sides)

    def eval_Name(self, run: Run, e: A.Name, env: Frame) -> Any:
        ref = env.bound.get(id(e))
        if isinstance(ref, Local):
            return env.read(ref)
        return self.referee_value(run, ref, e.span)

    def referee_value(self, run: Run, ref: Referee | None, span: Span) -> Any:
        """The value of what a global name (or a module's member) is bound to."""
        if isinstance(ref, UnitRef):
            if ref.unit.arity is None:
                return self.read_value(run, ref.unit)
            return UnitFunction(ref.unit, self)
        if isinstance(ref, DataRef):
            return ref.value
        if isinstance(ref, Member):
            return ref.name
        return BuiltinFunction(cast(BuiltinRef, ref).builtin, span, self)  # (the names pass refuses any other, C004)

    def eval_ListLit(self, run: Run, e: A.ListLit, env: Frame) -> Any:
        return [force(run, self.evaluate(run, item, env)) for item in e.items]

    def eval_TupleLit(self, run: Run, e: A.TupleLit, env: Frame) -> Any:
        return tuple(force(run, self.evaluate(run, item, env)) for item in e.items)

    def eval_SetLit(self, run: Run, e: A.SetLit, env: Frame) -> Any:
        out: set[Any] = set()
        for item in e.items:
            add_item(run, out, force(run, self.evaluate(run, item, env)), e.span)
        return frozenset(out)

    def eval_RecordLit(self, run: Run, e: A.RecordLit, env: Frame) -> Any:
        return {k: force(run, self.evaluate(run, v, env)) for k, v in e.items}

    def eval_MapLit(self, run: Run, e: A.MapLit, env: Frame) -> Any:
        out: dict[Any, Any] = Map()
        for k, v in e.items:
            key = force(run, self.evaluate(run, k, env))
            put_entry(run, out, key, force(run, self.evaluate(run, v, env)), e.span)
        return out

    def eval_Comp(self, run: Run, e: A.Comp, env: Frame) -> Any:
        if e.kind == "gen":  # consumed lazily by the built-in it is given to (`any` may stop early)
            return (force(run, self.evaluate(run, e.elem, inner)) for inner in self.comp_envs(run, e.fors, env.copy()))
        if e.kind == "list":
            return [force(run, self.evaluate(run, e.elem, inner)) for inner in self.comp_envs(run, e.fors, env)]
        if e.kind == "set":
            items: set[Any] = set()
            for inner in self.comp_envs(run, e.fors, env):
                add_item(run, items, force(run, self.evaluate(run, e.elem, inner)), e.span)
            return frozenset(items)
        assert e.key is not None
        out: dict[Any, Any] = Map()
        for inner in self.comp_envs(run, e.fors, env):
            key = force(run, self.evaluate(run, e.key, inner))  # the key first: dice are rolled in order
            put_entry(run, out, key, force(run, self.evaluate(run, e.elem, inner)), e.span)
        return out

    def comp_envs(self, run: Run, fors: tuple[A.CompFor, ...], env: Frame) -> Iterator[Frame]:
        """The frame set for each of a comprehension's items: one per combination its `for`s walk."""
        if not fors:
            yield env
            return
        first, rest = fors[0], fors[1:]
        seq = force(run, self.evaluate(run, first.iter, env))
        for item_names in loop_items(run, seq, len(first.names), first.span):
            env.set(first, *item_names)
            if first.cond is not None and not truth(run, self.evaluate(run, first.cond, env)):
                continue
            yield from self.comp_envs(run, rest, env)

    def eval_Let(self, run: Run, e: A.Let, env: Frame) -> Any:
        env.set(e, self.evaluate(run, e.value, env))
        return self.evaluate(run, e.body, env)

    def eval_If(self, run: Run, e: A.If, env: Frame) -> Any:
        for cond, value in e.branches:
            if truth(run, self.evaluate(run, cond, env)):
                return self.evaluate(run, value, env)
        return self.evaluate(run, e.otherwise, env)

    def eval_Lambda(self, run: Run, e: A.Lambda, env: Frame) -> Any:
        return Closure(e, env.copy(), self)

    def eval_BoolOp(self, run: Run, e: A.BoolOp, env: Frame) -> Any:
        stop_at = e.op == "or"  # `or` stops at the first true item, `and` at the first false one
        for item in e.items:
            if truth(run, self.evaluate(run, item, env)) == stop_at:
                return stop_at
        return not stop_at

    def eval_Not(self, run: Run, e: A.Not, env: Frame) -> Any:
        return not truth(run, self.evaluate(run, e.operand, env))

    def eval_Compare(self, run: Run, e: A.Compare, env: Frame) -> Any:
        return compare(run, e.op, self.evaluate(run, e.left, env), self.evaluate(run, e.right, env), e.span)

    def eval_BinOp(self, run: Run, e: A.BinOp, env: Frame) -> Any:
        x = self.evaluate(run, e.left, env)
        if e.op == "??":
            return self.evaluate(run, e.right, env) if x is None else x
        y = self.evaluate(run, e.right, env)
        return arithmetic(run, e.op, x, y, e.span)

    def eval_Neg(self, run: Run, e: A.Neg, env: Frame) -> Any:
        return negate(force(run, self.evaluate(run, e.operand, env)), e.span)

    def eval_Field(self, run: Run, e: A.Field, env: Frame) -> Any:
        if isinstance(env.bound.get(id(e.obj)), ModuleRef):
            return self.referee_value(run, env.bound.get(id(e)), e.span)
        obj = force(run, self.evaluate(run, e.obj, env))
        return field_of(obj, e.name, e.span)

    def eval_Index(self, run: Run, e: A.Index, env: Frame) -> Any:
        table = env.bound.get(id(e))
        if isinstance(table, UnitRef):
            return self.table_lookup(run, table.unit, [force(run, self.evaluate(run, k, env)) for k in e.keys])
        obj = force(run, self.evaluate(run, e.obj, env))
        key = force(run, self.evaluate(run, e.keys[0], env))
        return index_of(run, obj, key, e.span)

    def eval_With(self, run: Run, e: A.With, env: Frame) -> Any:
        out = with_base(force(run, self.evaluate(run, e.obj, env)), e.span)
        for k, v in e.items:
            out[k] = force(run, self.evaluate(run, v, env))
        return out

    def eval_Call(self, run: Run, e: A.Call, env: Frame) -> Any:
        target = env.bound.get(id(e.func))
        if isinstance(target, BuiltinRef):
            args = [self.evaluate(run, a, env) for a in (*e.args, *(v for _, v in e.kwargs))]
            return self.apply_builtin(run, target.builtin, args, e.span)
        if isinstance(target, UnitRef):
            return self.call_unit(run, target.unit, [self.evaluate(run, a, env) for a in e.args], e.span)
        fn = force(run, self.evaluate(run, e.func, env))
        args = [self.evaluate(run, a, env) for a in e.args]
        if isinstance(fn, Closure):
            return self.apply_lambda(run, fn, args)
        if isinstance(fn, UnitFunction):
            return self.call_unit(run, fn.unit, args, e.span)
        if isinstance(fn, BuiltinFunction):
            return fn(run, *args)
        raise not_a_function(fn, e.span)

    def apply_builtin(self, run: Run, b: Builtin, args: list[Any], span: Span) -> Any:
        """A built-in sees forced arguments (``shown`` alone may look at a die without forcing it);
        its failures are located at the call."""
        if b.name != "shown":
            args = [force(run, a) for a in args]
        try:
            return b.fn(run, *args) if b.needs_ctx else b.fn(*args)
        except BUILTIN_FAILURES as err:
            raise builtin_failure(run, err, b.name, span) from None

    def apply_lambda(self, run: Run, fn: Closure, args: list[Any]) -> Any:
        node = fn.node
        if len(args) != len(node.params):
            raise lambda_arity(len(node.params), len(args), node.span)
        run.charge(1, node.span)
        return self.evaluate(run, node.body, fn.env.copy(node.params, args))

    # -- definitions

    def read_value(self, run: Run, unit: Unit) -> Any:
        """A definition without parameters: computed at its first read in the run. A traced run shows
        a cited one (a `rule` or `const` with clauses) once: where it is computed, else at its first
        read after the state check (which computed it, and whose trace is not shown)."""
        key = unit.index
        if key in run.memo:
            if run.memo[key] is PENDING:
                raise depends_on_itself(unit)
            if run.trace and key not in run.traced_values and value_cites(unit) is not None:
                run.traced_values.add(key)
                self.traced(run, unit, [], value_cites(unit), lambda: run.memo[key], kind="value")
            return run.memo[key]
        if unit.kind == "input":
            return run.inputs[unit.index]
        if unit.state_free and run.alone != key:
            return self.alone(run, key, lambda sub: self.read_value(sub, unit), unit.span)
        if unit.counted and run.depth >= run.depth_limit:
            raise value_too_deep(run, unit.span)
        self.enter(run, unit, unit.span)
        run.memo[key] = PENDING
        guesses = run.guesses
        cites = value_cites(unit) if run.trace else None
        if cites is not None:
            run.traced_values.add(key)
        try:
            value = self.traced(run, unit, [], cites, lambda: self.evaluate(run, cast(A.Expr, unit.body), self.env(unit)),
                                kind="value")
        finally:
            self.leave(run, unit)
            del run.memo[key]
        if run.guesses == guesses:  # it read no guess: final
            run.keep(key, value, unit.uses_decisions)
        return value

    def alone(self, run: Run, key: Any, compute: Any, span: Span) -> Any:
        """A state-free definition's value at its first read in ``run`` (a memo miss): computed in a run
        of its own (once for the run and the fresh runs it makes, ``shared``) and paid for (``pay``)."""
        if key not in run.shared:
            sub = run.fresh(key)
            run.shared[key] = Kept(compute(sub), sub)
            sub.left()
        kept = run.shared[key]
        pay(run, kept, span)
        run.memo[key] = kept.value
        return kept.value

    def enter(self, run: Run, unit: Unit, span: Span) -> None:
        if unit.counted:
            if run.depth >= run.depth_limit:
                raise too_deep(run, unit, span)
            run.depth += 1

    def leave(self, run: Run, unit: Unit) -> None:
        if unit.counted:
            run.depth -= 1

    def call_unit(self, run: Run, unit: Unit, args: list[Any], span: Span) -> Any:
        kind = unit.kind  # (never a table's: the names and arities passes refuse a table called or named as a value)
        if kind == "decision":
            return self.resolve(run, unit, args)
        if kind == "procedure":  # (traced as a rule is, with its own clauses: what ran cited them)
            if run.trace:
                return self.traced(run, unit, args, unit.cites or None, lambda: self.run_procedure(run, unit, args),
                                   kind="procedure")
            return self.run_procedure(run, unit, args)
        if unit.arity is None or unit.arity != len(args):
            raise unit_arity(unit, len(args), span)
        return self.call_function(run, unit, args)

    def call_function(self, run: Run, unit: Unit, args: list[Any]) -> Any:
        """A `def`, `rule` or query with parameters; `def` and `rule` calls are kept in the memo."""
        run.charge(1, unit.span)
        self.enter(run, unit, unit.span)
        try:
            memoized = unit.kind in DEFS
            key = (unit.index, *[freeze(a) for a in args]) if memoized else None
            if key is not None and key in run.memo:
                return run.memo[key]
            if unit.state_free and run.alone != key and all(plain(a) for a in args):
                return self.alone(run, key, lambda sub: self.call_function(sub, unit, args), unit.span)
            guesses = run.guesses
            cites = unit.cites if unit.kind == "rule" else None
            value = self.traced(run, unit, args, cites, lambda: self.body_value(run, unit, args))
            if key is not None and run.guesses == guesses:
                run.keep(key, value, unit.uses_decisions)
                run.alive.append(args)
            return value
        finally:
            self.leave(run, unit)

    def body_value(self, run: Run, unit: Unit, args: list[Any]) -> Any:
        return self.evaluate(run, cast(A.Expr, unit.body), self.env(unit, unit.params, args))

    def traced(self, run: Run, unit: Unit, args: list[Any], cites: tuple[str, ...] | None, compute: Any,
               kind: str | None = None, cell: dict[str, Any] | None = None) -> Any:
        """``compute()``; in a traced run, recorded as a node of the trace when it cites clauses: a call
        (of a rule or a decision), a cited value (``kind: value``, read without arguments) or a table
        lookup (``kind: table``, its keys as the arguments and the ``cell`` that gave the value). The
        copies the trace keeps of the arguments and the value are charged to the run, as writing them. (A
        procedure's step is a node too, ``kind: step``, with no arguments and no value: ``run_procedure``.)"""
        if not run.trace or cites is None or len(run.trace_stack) > TRACE_DEPTH:
            return compute()
        for a in args:
            charge_walk(run, a, unit.span)
        node: dict[str, Any] = {"rule": unit.name, "args": list(args), "cites": list(cites), "children": []}
        run.trace_stack[0].setdefault("units", {})[id(node)] = unit  # (where its rule is: ``_with_notes``)
        if kind is not None:
            node["kind"] = kind
        if cell is not None:
            node["cell"] = cell
        with tracing(run, node):
            value = compute()
        charge_walk(run, value, unit.span)
        node["value"] = value
        return value

    # -- tables

    def table_lookup(self, run: Run, unit: Unit, keys: list[Any]) -> Any:
        """A cell (``Unit.cells``; an absent cell gives none), else the table's source, looked up key by
        key; keys with neither are a miss: none only where the declared result is optional."""
        try:
            cell = unit.cells.get(cell_key(keys))
        except TypeError:
            cell = None
        if run.trace:
            cites, origin = table_origin(unit, cell)
            return self.traced(run, unit, keys, cites or None, lambda: self.table_value(run, unit, cell, keys),
                               kind="table", cell=origin)
        return self.table_value(run, unit, cell, keys)

    def table_value(self, run: Run, unit: Unit, cell: A.Expr | None, keys: list[Any]) -> Any:
        if cell is not None:
            return None if isinstance(cell, A.Absent) else self.evaluate(run, cell, self.env(unit))
        if unit.body is not None:
            value = self.evaluate(run, unit.body, self.env(unit))
            for k in keys:
                value = source_step(value, k)
            if value is not MISS:
                return value
        return table_miss(unit, keys)

    # -- decisions

    def resolve(self, run: Run, unit: Unit, args: list[Any]) -> Any:
        """A decision's value: final once resolved; a guess while it is being resolved."""
        key = (unit.name, *[freeze(a) for a in args])
        state = run.dstate.get(key, UNRESOLVED)
        if state == RESOLVED:
            return run.dvalue[key]
        if not run.deciding:
            run.begin_decisions()
        if run.trace and run.dstack:
            run.decision_edges.add((run.dstack[-1], key))
        if state == GUESSING:
            # every read of a guess is recorded, so that what read it is provisional too
            run.deplist.append(key)
            run.guesses += 1
            return run.dvalue[key]
        guesses = run.guesses
        run.resolving += 1
        try:
            value = self.resolve_fresh(run, unit, key, args)
        finally:
            run.resolving -= 1
        # resolved, the guesses read on the way do not make the reader provisional
        run.guesses = guesses if run.dstate.get(key) == RESOLVED else guesses + 1
        return value

    def resolve_fresh(self, run: Run, unit: Unit, key: Any, args: list[Any]) -> Any:
        run.dargs[key] = tuple(args)
        old = len(run.deplist)
        run.dstate[key] = GUESSING
        run.dvalue[key] = False
        first = decided(unit, self.decision_body(run, unit, key, args))
        if len(run.deplist) == old:  # it read no guess
            if run.dstate.get(key) != RESOLVED:
                run.dstate[key] = RESOLVED
                run.dvalue[key] = first
            return run.dvalue[key]
        if run.deplist[old] != key:  # it rests on another decision's guess: provisional
            run.deplist.append(key)
            run.dvalue[key] = first
            return first
        self.unset(run, old)
        run.dstate[key] = GUESSING
        run.dvalue[key] = True
        second = decided(unit, self.decision_body(run, unit, key, args))
        if first == second:
            self.unset(run, old)
            run.dstate[key] = RESOLVED
            run.dvalue[key] = first
            return first
        members = list(run.deplist[old:])
        if key not in members:
            members.insert(0, key)
        del run.deplist[old:]
        self.settle(run, unit, members)
        return self.resolve(run, unit, args)

    def decision_body(self, run: Run, unit: Unit, key: Any, args: list[Any]) -> Any:
        run.charge(1, unit.span)
        self.enter(run, unit, unit.span)
        run.dstack.append(key)
        try:
            return force(run, self.traced(run, unit, args, unit.cites, lambda: self.body_value(run, unit, args)))
        finally:
            run.dstack.pop()
            self.leave(run, unit)

    def unset(self, run: Run, old: int) -> None:
        """The decisions read since ``old`` (``Run.deplist``) unresolved, and forgotten as read."""
        undone = [k for k in run.deplist[old:] if run.dstate.pop(k, None) == RESOLVED]
        del run.deplist[old:]
        if undone:
            run.undo_kept()

    def settle(self, run: Run, unit: Unit, members: list[Any]) -> None:
        """A cycle met resolving ``unit``: the first policy of the `cycle` naming it whose `when` holds
        settles some of the cycle's decisions. `cycle` is the list of the cycle's decisions that the
        policy names, each `{decision: NAME, args: [...]}`; `settle TARGETS as VALUE` fixes those of
        them the targets list, and every other decision of the cycle is resolved again."""
        policy = unit.policy or unit
        cyc = policy.cycle
        names = cyc.names if cyc is not None else (unit.name,)
        mine = [m for m in members if m[0] in names]
        shown = [{"decision": m[0], "args": list(run.dargs[m])} for m in mine]
        keys = [(m[0], tuple(freeze(a) for a in run.dargs[m])) for m in mine]
        for pol in cyc.policies if cyc is not None else ():
            if pol.when is not None and not truth(run, self.policy_part(run, policy, pol.when, shown)):
                continue
            chosen = force(run, self.policy_part(run, policy, pol.targets, shown))
            value = force(run, self.policy_part(run, policy, pol.value, shown))
            if type(value) is not bool:
                raise EvalError("E001", f"a cycle policy settles decisions as a truth value, not `{brief(value)}`",
                                pol.value.span)
            cites = pol.cites or (cyc.cites if cyc is not None else ())
            wanted = {_settled_key(t, pol.span) for t in chosen}
            settled = 0
            for m, k in zip(mine, keys):
                if k in wanted:
                    run.dstate[m] = RESOLVED
                    run.dvalue[m] = value
                    run.settled[m] = Settlement(m, value, cites, tuple(members))
                    settled += 1
            for m in members:
                if run.dstate.get(m) != RESOLVED:
                    run.dstate.pop(m, None)
            if run.trace:
                for v in (shown, chosen, value):
                    charge_walk(run, v, pol.span)
                run.cycles.append({"decision": unit.name, "members": list(shown), "settled": list(chosen),
                                   "value": value, "cites": list(cites)})
            if settled == 0:
                raise EvalError("E006", f"the cycle policy for `{unit.name}` settled none of the {len(members)} "
                                        "decisions of the cycle", pol.span)
            return
        raise EvalError("E006", f"cycle among `{unit.name}` decisions and no policy of `cycle {unit.name}` applies",
                        unit.span,
                        help=f"add a `cycle {unit.name}` policy (e.g. `otherwise => settle cycle as false`)")

    def policy_part(self, run: Run, policy: Unit, e: A.Expr, cycle: list[Any]) -> Any:
        """A part of a cycle policy, with `cycle` the list of the decisions' arguments."""
        return self.evaluate(run, e, self.env(policy, [policy.cycle], [cycle]))

    # -- procedures

    def run_procedure(self, run: Run, unit: Unit, args: list[Any]) -> Any:
        """The steps in order; `goto` jumps, `stop` ends, `reject` (or a failed `require`) ends with a
        reason. The result: the status, why and where it ended, and the procedure's variables."""
        run.charge(1, unit.span)
        env = self.env(unit, unit.params, args)
        variables: dict[str, Cell] = {}
        steps = [s for s in unit.stmts if isinstance(s, A.Step)]
        for s in unit.stmts:
            if isinstance(s, A.Var):
                variables[s.name] = Cell(self.evaluate(run, s.value, env))
                env.set(s, variables[s.name])
        status, where, reject = "completed", None, None
        i = 0
        while i < len(steps):
            step = steps[i]
            try:
                if run.trace and len(run.trace_stack) <= TRACE_DEPTH:  # a node each time it runs: what ran cited them
                    with tracing(run, {"rule": step.name, "kind": "step", "args": [], "cites": list(step.cites),
                                       "children": []}):
                        self.exec_block(run, step.body, env)
                else:
                    self.exec_block(run, step.body, env)
                i += 1
            except _Goto as jump:
                run.charge(1, unit.span)
                i = jump.target
            except _Stop:
                status, where = "stopped", step
                break
            except _Reject as r:
                status, where, reject = "rejected", step, r
                break
        out = procedure_end(run, status, where, reject)
        for name, cell in variables.items():
            out[name] = force(run, cell.value)
        return out

    def exec_block(self, run: Run, stmts: tuple[A.Stmt, ...], env: Frame) -> None:
        for s in stmts:
            self.execute(run, s, env)

    def execute(self, run: Run, s: A.Stmt, env: Frame) -> None:
        if isinstance(s, A.Var):
            env.set(s, Cell(self.evaluate(run, s.value, env)))
        elif isinstance(s, A.LetStmt):
            env.set(s, self.evaluate(run, s.value, env))
        elif isinstance(s, A.Assign):  # (the checker allows `:=` only on a `var`: its slot holds a cell)
            env.slots[slot(env.bound, s)].value = self.evaluate(run, s.value, env)
        elif isinstance(s, A.IfStmt):
            for cond, body in s.branches:
                if truth(run, self.evaluate(run, cond, env)):
                    self.exec_block(run, body, env)
                    return
            if s.otherwise is not None:
                self.exec_block(run, s.otherwise, env)
        elif isinstance(s, A.For):
            seq = force(run, self.evaluate(run, s.iter, env))
            for x in iterate(seq, s.span):
                run.charge(1, s.span)
                env.set(s, x)
                if s.cond is not None and not truth(run, self.evaluate(run, s.cond, env)):
                    continue
                try:
                    self.exec_block(run, s.body, env)
                except _Continue:
                    continue
                except _Break:
                    break
        elif isinstance(s, A.Goto):
            raise _Goto(cast(StepRef, env.bound[id(s)]).at)
        elif isinstance(s, A.Stop):
            raise _Stop()
        elif isinstance(s, A.Break):
            raise _Break()
        elif isinstance(s, A.Continue):
            raise _Continue()
        elif isinstance(s, A.Emit):
            step = cast(StepRef, env.bound[id(s)]).step
            event: dict[str, Any] = {"event": s.event, "step": step.name, "cites": list(s.cites or step.cites)}
            for k, v in s.payload:
                event[k] = force(run, self.evaluate(run, v, env))
            run.events.append(event)
        elif isinstance(s, A.Require):
            if not truth(run, self.evaluate(run, s.cond, env)):
                raise _Reject(s.message, s.cites)
        elif isinstance(s, A.Reject):
            raise _Reject(s.message, s.cites)

    # -- inputs and queries

    def bind_inputs(self, run: Run) -> None:
        """Each `input` read from the state at its JSON pointer, checked against its declared type and made
        the kinds it says (``kinds.DeclaredKinds``: raises ``UnfitInput``), or its default (a value of the
        ruleset, which the checker types)."""
        plan = self.input_plan
        if plan is None:  # (what the program fixes, found at its first run: ``input_plan``)
            plan = self.input_plan = [(unit, self.input_fitter(unit)) for unit in self.inputs]
        state, inputs = run.state, run.inputs
        unfit: list[tuple[Unit, Unfit]] = []
        for unit, fit in plan:
            ok, value = resolve_pointer(state, unit.pointer)
            if not ok:
                if unit.body is None:
                    raise MissingInput(unit)
                value = force(run, self.evaluate(run, unit.body, self.env(unit)))
            elif fit is not None:
                try:
                    value = fit(value)
                except Unfit as bad:
                    unfit.append((unit, bad))
            inputs[unit.index] = value
        if unfit:
            raise UnfitInput(unfit)

    def input_fitter(self, unit: Unit) -> Callable[[Any], Any] | None:
        """The walk an input's value is read by (``kinds.DeclaredKinds.fitter``, in its namespace), or none for
        an input that takes any value as it is (untyped, `any`)."""
        if unit.ret is None:
            return None
        proven = self.proof is not None and self.proof.input_proven(unit)
        return self.program.loaded.namespaces[unit.ns].kinds.fitter(unit.ret, proven)

    def run_query(self, run: Run, unit: Unit, args: list[Any], check: Any = None) -> Any:
        """Bind the inputs; with ``check`` (a function given the state check's findings, which raises
        when there are any), first evaluate the ruleset's own state check, in the same run; then the
        query, on its arguments (given from outside: checked and read by their declared types before,
        ``arguments.checked_args``)."""
        if self.inputs:
            self.bind_inputs(run)
        if check is not None:
            checker = self.state_check
            if checker is not None and not checker.arity:
                found = force(run, self.call_unit(run, checker, [], checker.span))
                try:
                    check(found)
                except DiagnosticError as refused:  # (a traced run: each refusal with the cited rule that gave it)
                    if run.trace:
                        root = run.trace_stack[0]
                        refused.diagnostics[:] = [_with_notes(d, root["children"], root.get("units", {}))
                                                  for d in refused.diagnostics]
                    raise
                run.events.clear()
                if run.trace:
                    run.trace_stack[0]["children"].clear()
                    run.trace_stack[0].pop("units", None)
                    run.traced_values.clear()
        return force(run, self.call_unit(run, unit, args, unit.span))


class MissingInput(Exception):
    def __init__(self, unit: Unit):
        self.unit = unit

    def diagnostic(self) -> Diagnostic:
        u = self.unit
        return Diagnostic("S002", f"input `{u.written}` is missing from the state", u.span, pointer=u.pointer,
                          help=f"the state needs a value at `{u.pointer}`, or give the input a `default`")


def bind_alone(program: Program, state: Any, budget: int = DEFAULT_STEP_BUDGET, engine: Any = None,
               bugs: list[Unwritable] | None = None) -> None:
    """Bind the inputs of a run on ``state`` as every query's run binds them first, and nothing more (on
    ``engine``'s protocol, which reads what its schema proves, else the reference's: ``bind_inputs``): what
    a state is refused for when its ruleset has no state check to run. Raises ``UnfitInput``,
    ``MissingInput`` or the ``EvalError`` of a default (a writer's bug in ``bugs``)."""
    def go(interp: Any) -> None:
        if interp.inputs:
            _with_room(interp.inputs[0], lambda: interp.bind_inputs(Run(state, SeededDice(0), budget)))
    _engine_else_reference(None if engine is None else engine.interp, program, go, bugs=bugs)


class UnfitInput(Exception):
    """Inputs whose values in the state do not fit their declared types (each with where within it, and how)."""

    def __init__(self, found: list[tuple[Unit, Unfit]]):
        self.found = found

    def diagnostics(self, shown: str = "<state>") -> list[Diagnostic]:
        """An S002 for each, at the part of the state at fault (the input's pointer, then the path within its
        value), the input's declaration as a note."""
        out = []
        for u, bad in self.found:
            declared = A.type_text(u.ret) if u.ret is not None else "any"
            out.append(Diagnostic(
                "S002", f"input `{u.written}` (declared `{declared}`): {bad.message}", Span(shown),
                pointer=u.pointer + bad.pointer(),
                related=(Related(u.span, f"`{u.written}` is declared `{declared}` here"),),
                help=f"give `{u.pointer}` a value of the input's declared type `{declared}`"))
        return out


# ---------------------------------------------------------------- operations on values


def plain(v: Any) -> bool:
    """A text, number, truth value or none: a value that is nothing but itself."""
    return v is None or type(v) in (str, int, bool, Fraction)


def truth(run: Run, v: Any) -> bool:
    return bool(force(run, v))


_HASHABLE = "keys and set items are texts, numbers, truth values, none, or tuples of texts, numbers and none: `(a, b)`"


def decided(unit: Unit, value: Any) -> Any:
    """A decision's value, which is a truth value (both engines: ``Interpreter.resolve_fresh``)."""
    if type(value) is not bool:
        raise EvalError("E001", f"decision `{unit.name}` gives `{brief(value)}`, not a truth value",
                        cast(A.Expr, unit.body).span, help="a decision is true or false: compare its value (`x > 0`)")
    return value


def procedure_end(run: Run, status: str, where: A.Step | None, reject: _Reject | None) -> dict[str, Any]:
    """A procedure's result but its variables: how it ended, in which step and (rejected) why, with the
    rejection's event recorded (both engines)."""
    out: dict[str, Any] = {"status": status}
    if reject is not None and where is not None:
        cites = list(reject.cites or where.cites)
        run.events.append({"event": REJECTED_EVENT, "step": where.name, "reason": reject.message, "cites": cites})
        out["reason"], out["cites"] = reject.message, cites
    if where is not None:
        out["step"] = where.name
    return out


def add_item(run: Run, items: set[Any], x: Any, span: Span) -> None:
    """A set is built item by item; an item that cannot be in a set is an error where it is added."""
    charge_walk(run, x, span)
    try:
        items.add(as_key(x))  # (a truth value kept apart from the numbers: ``values.as_key``)
    except TypeError:
        raise EvalError("E009", f"`{brief(x)}` cannot be a set's item", span, help=_HASHABLE) from None


def put_entry(run: Run, out: dict[Any, Any], k: Any, v: Any, span: Span) -> None:
    """A map is built entry by entry; a key that cannot be one is an error where it is added."""
    charge_walk(run, k, span)
    try:
        out[as_key(k)] = v
    except TypeError:
        raise EvalError("E009", f"`{brief(k)}` cannot be a map's key", span, help=_HASHABLE) from None


def iterate(seq: Any, span: Span) -> Any:
    """What a loop may walk: a list, set (in the order of values, ``values.walked``), map (its keys) or
    a generator."""
    if isinstance(seq, (list, tuple, frozenset, set, dict)):
        return walked(seq)
    if seq is None:
        raise EvalError("E001", "cannot loop over none", span)
    if isinstance(seq, str):
        raise EvalError("E001", "cannot loop over text", span, help="use split(text) for its words")
    if hasattr(seq, "__next__"):
        return seq
    raise EvalError("E001", f"cannot loop over `{brief(seq)}`", span)  # (no text: refused above)


def loop_items(run: Run, seq: Any, names: int, span: Span) -> Iterator[tuple[Any, ...]]:
    """A comprehension's `for`: the items (a collection's length charged first), each as a tuple of
    as many values as the loop has names (two names walk a map's keys and values, the key and value
    of `{key, value}` records, or pairs)."""
    if names == 2 and (type(seq) is dict or type(seq) is Map):  # a map's keys and values (``values.entries``)
        run.charge(len(seq), span)
        yield from entries(seq)
        return
    seq = iterate(seq, span)
    if isinstance(seq, (list, tuple, frozenset, set, dict)):
        run.charge(len(seq), span)
    for x in seq:
        if names == 1:
            yield (x,)
        elif isinstance(seq, dict):
            yield (x, seq[x])
        elif isinstance(x, dict) and "key" in x and "value" in x:
            yield (x["key"], x["value"])
        elif isinstance(x, (list, tuple)) and len(x) == names:
            yield tuple(x)
        else:
            raise EvalError("E001", f"cannot unpack `{brief(x)}` into {names} names", span)


def compare(run: Run, op: str, x: Any, y: Any, span: Span) -> bool:
    """Comparisons. An unforced die compared with a value forks the run over the answer."""
    if op in ("in", "notin"):
        found = member(run, force(run, x), force(run, y), span)
        return not found if op == "notin" else found
    if isinstance(x, RandomValue) and isinstance(y, RandomValue):
        y = force(run, y)
    if isinstance(y, RandomValue):  # the die on the left: `k < d` is `d > k`
        x, y, op = y, x, _MIRROR[op]
    if isinstance(x, RandomValue):
        if type(y) is int or type(y) is Fraction:
            return x.compare_split(op, y)
        # a die is a number, and what is no number (a truth value, a text, none...) is never equal to one
        # (Python's 1 == True holds), whatever it shows: no fork; nor ordered with one: E001 at its face,
        # as in every mode
        if op == "==" or op == "!=":
            return op == "!="
        x = force(run, x)
    if type(x) in _CONTAINERS and type(y) in _CONTAINERS:
        charge_walk(run, x, span)
        charge_walk(run, y, span)
    if op == "==":  # (a truth value is never equal to a number: ``values.equal``)
        return equal(x, y)
    if op == "!=":
        return not equal(x, y)
    try:
        if type(x) is not type(y) or type(x) in _CONTAINERS or type(x) is bool:  # (Python's True < 2 holds)
            ordered(x, y)
        return bool(_ORDER[op](x, y))
    except TypeError:
        raise EvalError("E001", f"cannot compare `{brief(x)}` {op} `{brief(y)}`", span) from None


_CONTAINERS = (list, tuple, dict, Map, frozenset, set)


class Kept:
    """A state-free definition's value (or a call's) computed alone, in a run of its own ``sub``
    (``Run.fresh``): its own steps (the fresh run's, less what it paid for the state-free values it
    read) and ``reads``, those values."""

    __slots__ = ("value", "own", "reads")

    def __init__(self, value: Any, sub: Run) -> None:
        self.value, self.own = value, sub.steps - sub.paid_steps
        self.reads: Collection[Kept] = tuple(sub.reads)


def pay(run: Run, kept: Kept, span: Span) -> None:
    """A state-free value (or call) read in ``run``: the run pays the own steps of it and of each
    state-free value it read, directly or through others, that it has not paid yet (each once,
    whichever read reached it). What a run pays is thus the sum, over the state-free values it reads
    directly or through others, of the steps each takes alone, whatever ran before in the process.
    Finding them is this run's own work: a step for each it pays (so that the run of its own of the
    n-th value of a chain, each reading the one before, takes about n of its own steps, and the
    chain, which takes a time of the order of n² to keep, costs about n²/2). The most it charges for
    a value is what it charges a run that has paid nothing (``unpaid`` from an empty ``paid``): the
    backend charges that bound (``backend._Kept``)."""
    paid = run.paid
    if kept in paid:
        return
    run.reads.append(kept)
    steps, found = unpaid(paid, [kept])
    run.paid_steps += steps
    run.charge(steps + found, span)


def unpaid(paid: set[Kept], todo: list[Kept]) -> tuple[int, int]:
    """The own steps, and the number, of the values in ``todo`` and those they read, directly or
    through others, that are not in ``paid``, added to it. ``paid`` holds what each value in it
    read, so the walk goes no further than a paid value."""
    steps = found = 0
    while todo:
        k = todo.pop()
        if k not in paid:
            paid.add(k)
            steps += k.own
            found += 1
            todo += k.reads
    return steps, found


def charge_walk(run: Run, v: Any, span: Span) -> None:
    """Comparing, hashing or writing a collection walks it: it costs its size (``values.tree_size``)."""
    if type(v) in _CONTAINERS:
        run.charge(tree_size(v, max(0, run.budget - run.steps)), span)


def member(run: Run, x: Any, coll: Any, span: Span) -> bool:
    """`x in coll`: a list or tuple is searched item by item (a step an item), a text character by
    character, a set or map by the key (a tuple key costs its size); `x in none` is false."""
    if isinstance(coll, (list, tuple)):
        run.charge(len(coll), span)
        if type(x) in _CONTAINERS:
            charge_walk(run, x, span)
            for item in coll:
                charge_walk(run, item, span)
        return in_list(x, coll)
    if isinstance(coll, str):
        if not isinstance(x, str):
            raise EvalError("E001", f"`in` a text needs a text on its left, not `{brief(x)}`", span)
        run.charge(len(coll), span)
        return x in coll
    if isinstance(coll, (dict, frozenset, set)):
        charge_walk(run, x, span)
        try:
            return probe_key(x) in coll
        except TypeError:
            raise EvalError("E009", f"`{brief(x)}` cannot be a key", span, help=_HASHABLE) from None
    if coll is None:
        return False
    raise EvalError("E001", f"`in` needs a list, set, map or text on its right, not `{brief(coll)}`", span)


_MIRROR = {"<": ">", ">": "<", "<=": ">=", ">=": "<=", "==": "==", "!=": "!="}
_ORDER = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


def arithmetic(run: Run, op: str, x: Any, y: Any, span: Span) -> Any:
    """`+ - * / // %` of two numbers, and `+` of two texts or two lists (docs/language.md, "Expressions"):
    every other operand is E001 (no Python meaning leaks through: `"ab" * 2`, `{1, 2} - {1}`, `"%s" % x`).
    A die plus or minus an integer stays a die; any other arithmetic forces it."""
    if op in ("+", "-") and isinstance(x, RandomValue) and _plain_int(y):
        return x.shifted(y if op == "+" else -y)
    if op == "+" and isinstance(y, RandomValue) and _plain_int(x):
        return y.shifted(x)
    x, y = force(run, x), force(run, y)
    if type(x) is bool or type(y) is bool or (op != "+" and not (_number(x) and _number(y))):
        raise _cannot(op, x, y, span)  # (a truth value is no number, though Python's True + 1 is 2)
    charge_size(run, op, x, y, span)
    if op in ("/", "//", "%"):
        return divide(op, x, y, span)
    try:
        if op == "+":
            return x + y
        return x - y if op == "-" else x * y
    except TypeError:
        raise _cannot(op, x, y, span) from None


def _number(v: Any) -> bool:
    return type(v) is int or type(v) is Fraction


def _cannot(op: str, x: Any, y: Any, span: Span) -> EvalError:
    """E001 for an operator given what it does not take (dice are rolled with `roll` first)."""
    die = x if isinstance(x, DiceSpec) else y if isinstance(y, DiceSpec) else None
    return EvalError("E001", f"cannot add `{brief(x)}` and `{brief(y)}`" if op == "+"
                     else f"cannot compute `{brief(x)}` {op} `{brief(y)}`", span,
                     help=f"`{brief(die)}` is dice, not a roll: `roll({brief(die)})` rolls them" if die is not None else None)


def negate(x: Any, span: Span) -> Any:
    if type(x) is bool:  # (Python's -True is -1)
        raise EvalError("E001", f"cannot negate `{brief(x)}`", span)
    try:
        return -x
    except TypeError:
        raise EvalError("E001", f"cannot negate `{brief(x)}`", span) from None


def _plain_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def charge_size(run: Run, op: str, x: Any, y: Any, span: Span) -> None:
    """`+` and `*` cost the size of what they build, charged before building it (so doubling a list
    or squaring a number again and again is a located E004, not a hang)."""
    seq = (str, list, tuple)
    if op == "+" and isinstance(x, seq) and isinstance(y, seq):
        cost = len(x) + len(y)
    elif isinstance(x, (int, Fraction)) and isinstance(y, (int, Fraction)):
        cost = number_cost(op, x, y)
    else:
        return
    run.charge(cost, span)


def divide(op: str, x: Any, y: Any, span: Span) -> Any:
    """`/` is exact (integers give a fraction, or an integer when it divides); `//` and `%`."""
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
        raise EvalError("E001", f"cannot divide `{brief(x)}` by `{brief(y)}`", span) from None


def field_of(obj: Any, name: str, span: Span) -> Any:
    if isinstance(obj, dict):
        return obj.get(name)
    if obj is None:
        raise EvalError("E002", f"field `{name}` of none", span,
                        help=f"guard with `x != none`, or use `(x ?? default).{name}`")
    raise EvalError("E001", f"`{brief(obj)}` has no fields (looking for `{name}`)", span)


def index_of(run: Run, obj: Any, key: Any, span: Span) -> Any:
    if isinstance(obj, dict):
        charge_walk(run, key, span)
        try:
            return obj.get(probe_key(key))
        except TypeError:
            raise EvalError("E009", f"`{brief(key)}` cannot be a key", span, help=_HASHABLE) from None
    if isinstance(obj, (list, tuple, str)):
        if not isinstance(key, int) or isinstance(key, bool):
            raise EvalError("E001", f"a list index must be a whole number, not `{brief(key)}`", span)  # ("3" in its quotes)
        if -len(obj) <= key < len(obj):
            return obj[key]
        raise EvalError("E002", f"index {key} outside a list of {len(obj)} items", span)
    if obj is None:
        raise EvalError("E002", "indexing none", span)
    raise EvalError("E001", f"`{brief(obj)}` cannot be indexed", span)


# ---------------------------------------------------------------- evaluation errors, each written once
# (both engines raise these: the backend's generated code through its globals)


def over_budget(run: Any, span: Span) -> EvalError:
    return EvalError("E004", f"evaluation took more than {run.budget} steps", span,
                     help="a rule loops over a huge range or recurses without end")


def too_deep(run: Any, unit: Unit, span: Span) -> EvalError:
    return EvalError("E005", f"recursion deeper than {run.depth_limit} calls (in `{unit.name}`)", span,
                     help=f"each `{unit.name}` decision waits for another: a chain longer than the limit, or one "
                          "without end" if unit.kind == "decision" else RECURSION_HELP)


def value_too_deep(run: Any, span: Span) -> EvalError:
    return EvalError("E005", f"recursion deeper than {run.depth_limit} calls", span)


def depends_on_itself(unit: Unit) -> EvalError:
    return EvalError("E005", f"`{unit.name}` depends on itself", unit.span)


def recursed_too_deeply(unit: Unit) -> EvalError:
    return EvalError("E005", "evaluation recursed too deeply", unit.span, help=RECURSION_HELP)


def with_base(obj: Any, span: Span) -> dict[Any, Any]:
    """A copy of what `with` adds to, of its kind (`{} with {a: 1}` a record)."""
    if not isinstance(obj, dict):
        raise EvalError("E001", f"`with` needs a record, not `{brief(obj)}`", span)
    return Map(obj) if is_map(obj) else dict(obj)


def not_a_function(value: Any, span: Span) -> EvalError:
    return EvalError("E001", f"`{brief(value)}` is not a function", span)


def lambda_arity(n: int, got: int, span: Span) -> EvalError:
    return EvalError("E001", f"this function takes {n} arguments, not {got}", span)


def unit_arity(unit: Unit, got: int, span: Span) -> EvalError:
    return EvalError("E001", f"`{unit.name}` takes {unit.arity or 0} arguments, not {got}", span)


BUILTIN_FAILURES = (CallError, EvalError, TypeError, RecursionError)


def builtin_failure(run: Any, err: BaseException, name: str, span: Span) -> BaseException:
    """A built-in's failure as the error both engines raise, located at the call: a built-in that ran
    out of steps is the budget (E004), a bad argument E011; Python's own words never reach a user."""
    if isinstance(err, EvalError):
        if not err.span.line:  # raised deep in a built-in (a die, say): located at the call
            err.span = span
        return err
    if isinstance(err, CallError):
        if run.steps > run.budget:
            return over_budget(run, span)
        said = str(err)  # (its name once: most of the built-ins' messages begin with it)
        return EvalError("E011", said if said.startswith((f"{name} ", f"`{name}` ")) else f"{name}: {said}", span)
    if isinstance(err, TypeError):
        return EvalError("E001", f"`{name}` cannot work on arguments of these kinds", span)
    return EvalError("E005", f"{name}: recursion too deep", span)


MISS = object()


def source_step(value: Any, key: Any) -> Any:
    """One key of a table that comes from data (nested maps): ``MISS`` where there is none."""
    if value is MISS or not isinstance(value, dict):
        return MISS
    try:
        return value.get(probe_key(key), MISS)
    except TypeError:
        return MISS


def value_cites(unit: Unit) -> tuple[str, ...] | None:
    """The clauses a definition read without arguments cites, when a traced run shows its value (a
    `rule` or a cited `const`)."""
    return unit.cites if unit.kind == "rule" or (unit.kind == "const" and unit.cites) else None


def table_origin(unit: Unit, cell: A.Expr | None) -> tuple[tuple[str, ...], dict[str, Any]]:
    """For the trace, where a table lookup's value comes from, with its clauses: a cell of the grid
    (the table's clauses), a variant's `override t[...]` (its own clauses), the table's source, or
    none (a miss of a table whose result is optional)."""
    if cell is not None:
        override = next((ov for ov in reversed(unit.overrides) if ov.value is cell), None)
        if override is not None:
            return override.cites or unit.cites, {"from": "override", "at": str(override.span)}
        return unit.cites, {"from": "grid", "at": str(cell.span)}
    if unit.body is not None:
        return unit.cites, {"from": "source", "at": str(unit.body.span)}
    return unit.cites, {"from": "none", "at": str(unit.span)}


def table_miss(unit: Unit, keys: Sequence[Any]) -> None:
    """Keys a table has no cell for: none where its declared result is optional (`-> T?`), else E002."""
    if unit.ret is not None and unit.ret.optional:
        return None
    shown = ", ".join(map(brief, keys))
    raise EvalError("E002", f"table `{unit.written}` has no cell for [{shown}]", unit.span,
                    help="check the keys against the table's header and rows, or declare its result optional "
                         "(`-> T?`) if a miss should give none")


def _settled_key(target: Any, span: Span) -> Any:
    if not isinstance(target, dict) or "decision" not in target or not isinstance(target.get("args"), (list, tuple)):
        raise EvalError("E001", f"a cycle policy settles members of `cycle` ({{decision, args}} records), "
                                f"not `{brief(target)}`", span)
    return (target["decision"], tuple(freeze(a) for a in target["args"]))


# E005's help when no decision chain is to blame: endless recursion, or an input that asks for more
RECURSION_HELP = ("a rule calls itself without reaching a base case, or this input needs calls nested deeper "
                  "than the limit (a very long chain of places or units)")


# ---------------------------------------------------------------- running a query


def run_query(program: Program, state: Any, query: str, args: list[Any], dice: DiceSource,
              budget: int = DEFAULT_STEP_BUDGET, trace: bool = False, engine: Any = None,
              check: Any = None, bugs: list[Unwritable] | None = None) -> tuple[Any, Run]:
    """Evaluate a query once (on ``engine``: the reference unless another is given, such as
    ``backend.Backend``), after the state check when ``check`` is given (``Interpreter.run_query``);
    raises ``EvalError`` (or ``MissingInput``). A run the engine cannot make (``Unwritable``) is made
    again by the reference, from the start (a bug of the engine's writer noted in ``bugs``)."""
    return _engine_else_reference(engine, program, lambda interp: _run_query_on(
        interp, program, state, query, args, dice, budget, trace, check), again=dice.reset, bugs=bugs)


def _engine_else_reference(engine: Any, program: Program, go: Any, again: Any = None,
                           bugs: list[Unwritable] | None = None) -> Any:
    """``go(engine)``; if the engine cannot make the run (``Unwritable``), or stops it at the step
    budget or the depth limit (E004, E005: the engine counts an upper bound of both, see
    docs/architecture.md), ``again()`` (what undoes the attempt) then ``go`` on the reference, from
    the start, which gives the exact answer. No engine: the reference at once. A unit the engine gave
    up for a bug of its writer (``WRITER_BUG``) is noted in ``bugs``, for the caller to say, and heard
    by every open ``runtime.listening`` (a command says it once, whatever call ran the unit)."""
    if engine is not None:
        try:
            return go(engine)
        except EvalError as err:
            if not isinstance(err, Unwritable) and err.code not in ("E004", "E005"):
                raise
            if again is not None:
                again()
            if isinstance(err, Unwritable) and err.code == WRITER_BUG:
                heard(writer_bug(err), program.loaded.sources.get(err.span.file))
                if bugs is not None:
                    bugs.append(err)
    return go(Interpreter(program))


def _run_query_on(interp: Any, program: Program, state: Any, query: str, args: list[Any], dice: DiceSource,
                  budget: int, trace: bool, check: Any) -> tuple[Any, Run]:
    unit = program.query(query)
    assert unit is not None, "the caller found the query"
    run = Run(state, dice, budget, trace=trace)
    return _with_room(unit, lambda: interp.run_query(run, unit, args, check)), run


def run_without_state(program: Program, unit: Unit, budget: int = DEFAULT_STEP_BUDGET, engine: Any = None,
                      bugs: list[Unwritable] | None = None) -> Any:
    """Evaluate a query that takes no parameters and reads no input (the checker has made sure: see
    ``engine.data``) with no state at all, seeded dice 0; raises ``EvalError`` (a writer's bug in ``bugs``)."""
    def go(interp: Any) -> Any:
        run = Run(None, SeededDice(0), budget)
        return _with_room(unit, lambda: force(run, interp.call_unit(run, unit, [], unit.span)))
    return _engine_else_reference(None if engine is None else engine.interp, program, go, bugs=bugs)


def _with_room(unit: Unit, go: Any) -> Any:
    """``go()`` with room for Python's recursion; a recursion deeper still is E005 at ``unit``."""
    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, 20000))
    try:
        return go()
    except RecursionError:
        raise recursed_too_deeply(unit) from None
    finally:
        sys.setrecursionlimit(old_limit)


def enumerate_exact(program: Program, state: Any, query: str, args: list[Any], budget: int = DEFAULT_STEP_BUDGET,
                    max_paths: int | None = None, engine: Any = None, check: Any = None,
                    bugs: list[Unwritable] | None = None) -> tuple[dict[str, Any], list[tuple[Any, list[Any]]]]:
    """Every dice outcome with its exact probability: the query is run once along each path of the
    tree of forks (depth first); the budget and the number of paths bound the whole enumeration. An
    enumeration the engine cannot make (``Unwritable``) is made again by the reference. Its JSON, and
    each of its outcomes' value and events as the language's values (those of the first path that gave
    it; every die in them looked at, so written as the number it is), in the order of the outcomes:
    what the text view writes in the language's notation."""
    unit = program.query(query)
    assert unit is not None, "the caller found the query"
    return _engine_else_reference(engine, program, lambda interp: _with_room(unit, lambda: _run_exact_on(
        interp, program, state, query, args, budget, max_paths, check)), bugs=bugs)


class _Outcome:
    """One outcome of an exact enumeration while its paths are summed: the result as JSON (``result``)
    and as the language's value (``value``), the weight of each denominator its paths' probabilities
    have (``weights``: {denominator: summed numerators}, kept as integers until the end), the events
    common to all its paths (``events`` as JSON, ``value_events`` as values; ``differ`` once two paths
    emitted different ones) and the dice's own denominator (``natural``, for the odds)."""

    __slots__ = ("result", "weights", "events", "natural", "differ", "value", "value_events")

    def __init__(self, result: Any, weights: dict[int, int], events: list[Any], natural: int, value: Any,
                 value_events: list[Any]):
        self.result, self.weights, self.events, self.natural = result, weights, events, natural
        self.differ, self.value, self.value_events = False, value, value_events


def _run_exact_on(interp: Any, program: Program, state: Any, query: str, args: list[Any], budget: int,
                  max_paths: int | None, check: Any) -> tuple[dict[str, Any], list[tuple[Any, list[Any]]]]:
    max_paths = max_paths or MAX_EXACT_PATHS
    unit = program.query(query)
    assert unit is not None, "the caller found the query"
    dice = ExactDice()  # (it keeps nothing of a run: one serves every path)
    run_query = interp.run_query
    # what an engine lets the paths share (the backend's ``Pool``: entries no die reaches); the reference, nothing
    pool = interp.exact_pool() if hasattr(interp, "exact_pool") else None
    # outcome key -> the outcomes of results alike in JSON: each path's probability is a product of
    # fractions, kept as an integer numerator and denominator until the end
    outcomes: dict[Any, list[_Outcome]] = {}
    # the path being run: its choices; for each, the fork it is made at (the branches' counts and
    # their total) and the probability of the path before it; the path's probability (num / den)
    path: list[int] = []
    levels: list[tuple[Sequence[int], int, int, int]] = []
    num = den = 1
    paths = 0
    spent = 0
    while True:
        run = Run(state, dice, budget - spent, path=path) if pool is None or pool.off else \
            pool.run(state, dice, budget - spent, path)
        try:
            raw = run_query(run, unit, args, check)
            value = written(raw)  # (which looks at every die the value holds)
            events = written(run.events) if run.events else []
        except ValueError as exc:
            raise EvalError("E013" if too_large(exc) else "E011", f"the result cannot be written: {exc}",
                            unit.span) from None
        spent += run.steps
        for counts, ways in run.met:  # the forks past the path, where the run took branch 0
            path.append(0)
            levels.append((counts, ways, num, den))
            num *= counts[0]
            den *= ways
        t = type(value)
        key = (t, value) if t is int or t is str or t is bool or value is None else json.dumps(value, sort_keys=True)
        # one outcome per result, results compared as the language compares them (`==`): values alike
        # in JSON (a record and a map, a list and a tuple) share a key, not an outcome
        alike = outcomes.setdefault(key, [])
        found = next((o for o in alike if equal(o.value, raw)), None)
        if found is None:
            alike.append(_Outcome(value, {den: num}, events, run.natural_den, raw, run.events))
        else:
            found.weights[den] = found.weights.get(den, 0) + num
            if found.natural != run.natural_den:
                found.natural = math.lcm(found.natural, run.natural_den)
            if not equal(events, found.events):  # paths to one result that happened differently
                at = common_positions(found.events, events)
                found.events = [found.events[i] for i in at]
                found.value_events = [found.value_events[i] for i in at]
                found.differ = True
        paths += 1
        if paths > max_paths:
            raise EvalError("E010", f"more than {max_paths} dice outcomes to enumerate", unit.span,
                            help="use --seed or --dice instead of --exact")
        # the next path: the last fork with a branch not taken yet takes its next branch
        while path:
            choice = path[-1] + 1
            counts, ways, num, den = levels[-1]
            if choice < len(counts):
                path[-1] = choice
                num *= counts[choice]
                den *= ways
                break
            path.pop()
            levels.pop()
        else:
            break
    probs = [(o, sum((Fraction(n, d) for d, n in o.weights.items()), Fraction(0)))
             for alike in outcomes.values() for o in alike]
    total = sum((p for _, p in probs), Fraction(0))
    ranked = sorted(probs, key=lambda op: (-op[1], json.dumps(op[0].result, sort_keys=True)))
    return ({"exact": True, "paths": paths, "total": f"{total.numerator}/{total.denominator}",
             "outcomes": [{"probability": f"{p.numerator}/{p.denominator}", "odds": odds(p, o.natural),
                           "p": round(float(p), 6), "result": o.result, "events": o.events,
                           **({"events_differ": True} if o.differ else {})}
                          for o, p in ranked]},
            [(o.value, o.value_events) for o, _ in ranked])


def common_positions(kept: list[Any], other: list[Any]) -> list[int]:
    """Where in ``kept`` the events are that ``other`` has too (each matched once, in order): what every
    path merged into one outcome emitted, when its paths' events differ."""
    out, start = [], 0
    for i, e in enumerate(kept):
        for j in range(start, len(other)):
            if equal(e, other[j]):
                out.append(i)
                start = j + 1
                break
    return out


MAX_ODDS_DENOMINATOR = 6 ** 4  # past four dice, the reduced fraction reads better


def odds(p: Fraction, natural: int) -> str:
    """``p`` written over the dice's own denominator when it divides it (7/12 as 21/36 after 2d6),
    else reduced: the fraction a rules author writes."""
    if natural <= MAX_ODDS_DENOMINATOR and (p * natural).denominator == 1:
        return f"{p.numerator * natural // p.denominator}/{natural}"
    return f"{p.numerator}/{p.denominator}"


MAX_REFUSAL_NOTES = 8  # the notes a refusal of the state check is given in a traced run (``_with_notes``)


def _with_notes(d: Diagnostic, trace: list[dict[str, Any]], units: dict[int, Unit]) -> Diagnostic:
    """``d``, a refusal of the state by the ruleset's `validate_state` in a traced run (`ruleval explain`),
    with notes of the cited rule that gave its message (the deepest call of the check's ``trace`` whose
    value is the message, or a record holding it) and of the cited calls that rule made: what refused the
    state, as the trace of a query shows what answered it. A message no cited rule gave is left as it is."""
    path = _giving(d.message, trace) if d.code == "S002" else None
    if not path:
        return d
    node = path[-1]
    notes = [_note(node, units, "gave this")]
    notes += [_note(c, units, "read") for c in node["children"] if id(c) in units][:MAX_REFUSAL_NOTES - 1]
    return dataclasses.replace(d, related=(*d.related, *notes))


def _giving(message: str, nodes: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The calls from the top of a trace down to the deepest that gave ``message``, as its value or as a
    field of a record it gave (the first such, in the order of the trace); None where none did."""
    for node in nodes:
        below = _giving(message, node["children"])
        if below is not None:
            return [node, *below]
        value = node.get("value")
        if (type(value) is str and value == message) or \
                (isinstance(value, dict) and any(type(v) is str and v == message for v in value.values())):
            return [node]
    return None


def _note(node: dict[str, Any], units: dict[int, Unit], verb: str) -> Related:
    """A call of the trace as a note at its rule: `rule(args)` (its clauses) and what it gave."""
    unit = units[id(node)]
    call = node["rule"] if node.get("kind") == "value" else \
        f"{node['rule']}{'[' if node.get('kind') == 'table' else '('}{', '.join(brief(a, 30) for a in node['args'])}" \
        f"{']' if node.get('kind') == 'table' else ')'}"
    return Related(unit.span, f"{verb} `{call}` ({', '.join(node['cites'])}) = {brief(node.get('value'), 60)}"
                   if verb == "read" else f"`{call}` ({', '.join(node['cites'])}) {verb}")


@contextmanager
def tracing(run: Run, node: dict[str, Any]) -> Iterator[None]:
    """The body run as ``node`` of a traced run's trace, a child of the open node; the calls made in it
    are its children. The node is there even when the body ends by a jump (a step's `goto`, `stop` or
    `reject`); a run that ends in an error shows no trace."""
    run.trace_stack[-1]["children"].append(node)
    run.trace_stack.append(node)
    try:
        yield
    finally:
        run.trace_stack.pop()


def explanation(run: Run) -> dict[str, Any]:
    """The trace of a run, as ``ruleval explain`` shows it: its calls' arguments and values, the
    cycles' members and values, the settled decisions' values, as the language's values (``to_json``
    writes it as JSON)."""
    root = run.trace_stack[0]
    # A decision is named by its name and the order in which the run first met it, ``[name, n]``: its memo
    # key holds the identity of a record, list or map argument (``freeze``), which is no value and
    # differs from run to run (a key shown whole made the output of one run differ from the next).
    order = {k: i for i, k in enumerate(run.dargs)}
    for k in sorted({k for e in run.decision_edges for k in e if k not in order}, key=_met_later):
        order[k] = len(order)  # (none is left out of `dargs` by a run that ends; kept for safety)
    named = {k: [k[0], i] for k, i in order.items()}
    edges = sorted((order[a], order[b]) for a, b in run.decision_edges)
    keys = list(order)
    settled = [{"decision": named[k], "value": s.value, "cites": list(s.cites)} for k, s in run.settled.items()]
    decisions = [{"key": named[k], "decision": k[0], "args": list(a), "value": run.dvalue.get(k)}
                 for k, a in run.dargs.items()]
    return {"trace": root["children"], "decision_edges": [[named[keys[a]], named[keys[b]]] for a, b in edges],
            "cycles": run.cycles, "settled": settled, "decisions": decisions}


def _met_later(key: Any) -> str:
    """An order for the decisions the run named and did not record (none, in a run that ends): by name
    and the values of their arguments, never by an identity."""
    return json.dumps([key[0], [a if type(a) is not tuple or a[0] != "#id" else None for a in key[1:]]], default=str)
