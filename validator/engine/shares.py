"""Exact dice on the generated backend: what the paths of one enumeration share.

``reference._run_exact_on`` runs each path of dice from the start. On the backend, the paths share
the inputs, bound once, and the memo entries of the definitions no die, decision or procedure
reaches (``shared``), each computed once in a run of its own (``pooled``) and charged to each path
what computing it from nothing took, which is never less than what the reference charges (the
argument, and why the depth limit holds too: docs/architecture.md). The reference shares nothing;
tests/test_exact_shared.py holds the two to the same answers.
"""

from __future__ import annotations

from typing import Any, Callable

from ..core.diagnostics import Span
from ..lang.program import DEFS, Unit, _readers_of
from . import reference as R


class NotShared(BaseException):
    """A computation the paths of an exact run would share (``pooled``) met a die, a decision or a
    procedure: it is left to the run that needs it, which computes it itself. (Not an ``Exception``:
    no handler of a built-in's failure takes it for one.)"""


class Pool:
    """What the paths of one exact enumeration share (``reference._run_exact_on`` gives it to each path's
    run): the entries of the definitions no die, decision or procedure reaches (``shared``),
    each computed once, in a run of its own (``pooled``), by its memo key (``entries``); the inputs,
    bound once (``bind_inputs``); ``off`` when binding the inputs touched the run (a die, the
    memo) and the paths share nothing.

    An entry is a function of its key: of the arguments' values (texts, numbers...) or identities (a
    record...), since no die, decision or procedure reaches its definition. One given a path's own
    record, or a function value made on the path (which may look at the path's die: the fork is the
    path's), is keyed by that object, which the entry holds, so no other path ever reads it; one given
    a function value that rolls a die, reads a decision or runs a procedure there is left to the path
    (``NotShared``)."""

    __slots__ = ("entries", "inputs", "input_steps", "off")

    def __init__(self) -> None:
        self.entries: dict[Any, _Shared] = {}
        self.inputs: dict[int, Any] | None = None
        self.input_steps = 0
        self.off = False

    def run(self, state: Any, dice: R.DiceSource, budget: int, path: list[int]) -> "SharedRun":
        """A path's run, which reads the entries shared here."""
        return SharedRun(state, dice, budget, path, self)


class SharedRun(R.Run):
    """A run of an exact enumeration that shares what its paths may (``Pool``): a path's, or one computing
    a shared entry (``pooling``: its key). (Any other run reads ``Run.pool`` and ``Run.pooling`` as none.)"""

    __slots__ = ("pool", "pooling")

    def __init__(self, state: Any, dice: R.DiceSource, budget: int, path: list[int] | None, pool: Pool | None,
                 pooling: Any = None) -> None:
        super().__init__(state, dice, budget, path=path)
        self.pool, self.pooling = pool, pooling


class _Shared:
    """One shared entry: its value, the steps computing it took from nothing (an empty memo, nothing
    paid: no fewer than the reference takes with whatever memo a path has, docs/architecture.md), the
    deepest call depth it was computed from (``depth``; a read from deeper computes it again there, to
    meet the depth limit where the reference would) and its arguments (held: their identity is in its key)."""

    __slots__ = ("value", "cost", "depth", "args")

    def __init__(self, value: Any, cost: int, depth: int, args: tuple[Any, ...]) -> None:
        self.value, self.cost, self.depth, self.args = value, cost, depth, args


class _NoDice(R.DiceSource):
    """The dice of a run computing a shared entry: none (a die a function value rolls there leaves the
    entry to the path)."""

    def sum_of(self, ctx: Any, spec: Any, span: Span) -> Any:
        raise NotShared()

    looked_at = sum_of


NO_DICE = _NoDice()


def not_shared() -> None:
    """A definition that is not shared (``shared``) met in a run computing a shared entry."""
    raise NotShared()


def pooled(ctx: R.Run, proto: Any, unit: Unit, key: Any, args: tuple[Any, ...], span: Span) -> Any:
    """A miss of a shared definition's memo in a run of an exact enumeration (``ctx.pool``): the entry
    the paths share, computed at its first need in a run of its own (``_share``), charged what that
    took and kept in the run's memo; ``_MISS`` when the run computes it itself (the run of its own of
    that very entry, or an entry that met a die, a decision or a procedure there)."""
    pool, pk = ctx.pool, (unit.index, key)
    if ctx.pooling == pk:
        return R.MISS
    depth = ctx.depth - 1 if unit.counted and unit.arity is not None else ctx.depth  # (before its own call)
    entry = pool.entries.get(pk)
    if entry is None or depth > entry.depth:
        backend = proto.backend  # (the unit's function, named when it was written: it is the caller)
        made = _share(ctx, backend.g[backend.unit_names[unit.index]], pk, args, depth)
        if made is None:
            return R.MISS
        if entry is None:
            entry = pool.entries[pk] = made
        else:  # (computed again from deeper only to meet the depth limit there: the value is the first's)
            entry.depth = depth
    ctx.steps += entry.cost
    if ctx.steps > ctx.budget:
        raise R.over_budget(ctx, span)
    if unit.arity is None:
        ctx.memo[key] = entry.value
    else:
        ctx.memos[unit.index][key] = entry.value
    return entry.value


def _share(ctx: R.Run, fn: Callable[..., Any], pk: Any, args: tuple[Any, ...], depth: int) -> _Shared | None:
    """A shared entry computed in a run of its own from ``depth``: the same state and inputs, an empty
    memo, no dice, what is left of the budget; None if it met a die, a decision or a procedure (which
    leaves the entries it reads to the run computing it, if that is itself such a run of its own)."""
    sub = SharedRun(ctx.state, NO_DICE, ctx.budget - ctx.steps, None, ctx.pool, pk)
    sub.inputs, sub.shared, sub.depth, sub.depth_limit = ctx.inputs, ctx.shared, depth, ctx.depth_limit
    try:
        value = fn(sub, *args)
    except NotShared:
        if ctx.pooling is not None:
            raise
        return None
    return _Shared(value, sub.steps, depth, args)


def shared(backend: Any, unit: Unit) -> bool:
    """Whether the paths of an exact enumeration share the memo entries of ``unit`` (``pooled``): a
    memoized `def`, `rule` or `const` of a program with dice that neither it nor anything it reads
    or calls rolls a die, runs a procedure, reads a decision or recurs (so what it computes from
    its arguments is the same on every path, and its readers' are too)."""
    if not backend.dice:
        return False
    found = backend.shared_units.get(unit.index)
    if found is None:
        if backend.unshared is None:
            program = backend.program
            seeds = {k for k, u in program.units.items() if u.recursive or u.uses_decisions}
            backend.unshared = _readers_of(seeds, program.refs)
        found = backend.shared_units[unit.index] = (
            unit.kind in (*DEFS, "const") and (unit.ns, unit.name) not in backend.unshared
            and backend.memos.pure(unit) and not (unit.arity is not None and backend.memos.memo_free(unit)))
    return found


def pool_lines(backend: Any, w: Any, unit: Unit, key: str, args: list[str]) -> None:
    """Written at a miss of ``unit``'s memo: the entry the paths of an exact enumeration share
    (``pooled``) if the unit is shared, else, in a run computing a shared entry, that entry left to
    its path."""
    if not backend.dice:
        return
    if shared(backend, unit):
        w("if ctx.pool is not None:")
        w(f"    hit = _pooled(ctx, _PROTO, {w.const(unit)}, {key}, ({''.join(a + ', ' for a in args)}), "
          f"{w.const(unit.span)})")
        w("    if hit is not _MISS:")
        w("        return hit")
    else:
        w("if ctx.pooling is not None:")
        w("    _not_shared()")


def bind_inputs(proto: Any, run: R.Run, bind: Callable[[R.Run], None]) -> None:
    """The inputs of a path's run (``bind``: the engine's own binding), bound once for all the paths
    of an exact enumeration (``Pool``) when binding them touched nothing else of the run (no die, no
    memo entry, no event): each path then reads the first's, charged the steps binding them took
    (needed, not only cheaper: a shared entry may hold a map the binding made, which a path's own
    binding would make anew); else the paths share nothing."""
    pool = run.pool
    if pool.inputs is not None:
        run.inputs = pool.inputs
        run.steps += pool.input_steps
        if run.steps > run.budget:
            raise R.over_budget(run, proto.inputs[0].span)
        return
    run.pool, before = None, run.steps
    bind(run)
    if run.memo or any(run.memos.values()) or run.met or run.natural_den != 1 or run.events or run.deciding \
            or run.paid:
        pool.off = True
    else:
        pool.inputs, pool.input_steps, run.pool = run.inputs, run.steps - before, pool
