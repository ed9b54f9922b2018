"""Which `def`s the backend writes without their memo (``Memos.memo_free``): those whose memo could not
be seen, so that leaving it out changes only the cost (docs/architecture.md, on the backend's upper-bound
step count). The choice is a function of the program (and of its kinds, ``facts``), made at the first
question of each unit once the kinds are known.
"""

from __future__ import annotations

from typing import Any

from ..lang import ast as A
from ..lang.bind import BuiltinRef, UnitRef
from ..lang.program import DEFS, Program, Unit, _readers_of
from .facts import PLAIN, Facts

LIGHT = 60  # the most nodes a function written without its memo for being light may compute (``Memos.light``)


class Memos:
    """The memo choices of one program (its backend's), each found once."""

    def __init__(self, program: Program, facts: Facts):
        self.program, self.facts = program, facts
        self.watched: bool | None = None  # ``watched_program``
        self.guarded: bool | None = None  # ``guards``
        self.free: dict[int, bool] = {}  # by unit number: whether its function is written without a memo
        self.impure: set[Any] | None = None  # the units that may roll a die or run a procedure
        self.callers: dict[Any, list[Any]] = {}  # the units that name each (``once``), made with ``impure``
        self.single: dict[int, bool] = {}  # by unit number: ``once``
        self.sizes: dict[int, int | None] = {}  # by unit number: ``light``

    def memo_free(self, unit: Unit) -> bool:
        """Whether a `def`'s function is written without its memo, which could not be seen: its value is
        the same however often it is computed (it rolls no die, runs no procedure), and either the memo
        would not answer (``once``) or answering costs about what computing does (``light``), and the
        identity of what it makes cannot be seen (``unseen``). A run without it charges the steps the
        memo would have saved: still above the reference's count."""
        found = self.free.get(unit.index)
        if found is None:
            found = unit.kind in DEFS and (self.once(unit) or self.light(unit) is not None)
            if found and not self.unseen(unit):
                if not self.facts.solved:
                    return False  # (not kept: asked again once the kinds are known)
                found = False
            self.free[unit.index] = found
        return found

    def unseen(self, unit: Unit) -> bool:
        """Whether computing ``unit`` again, rather than answering from its memo, cannot be seen through
        the identity of its value: a list, record, map, set, tuple, function or die computed again is
        another value, which a memo keyed by identity (``reference.freeze``) keeps apart from the first,
        so a function that rolls a die or runs a procedure given it rolls or runs again. So: the program
        has no such function (``watched``), or the value is always a text, number, truth value or none
        (its kind, ``facts``). (A decision given it would be resolved again, another member of a cycle:
        where that could be, ``guards``.)"""
        return not self.watched_program() or self.facts.result(unit) in PLAIN

    def watched_program(self) -> bool:
        """Whether the program has a memo keyed by identity whose answer shows: a `def` with parameters
        that rolls a die or runs a procedure (itself or through the units it reads)."""
        if self.watched is None:
            self.watched = any(u.arity and u.kind in DEFS and not self.pure(u) for u in self.program.units.values())
        return self.watched

    def guards(self) -> bool:
        """Whether a decision given anything but a text, number, truth value or none sends the run to
        the reference (``backend._Protocol.resolve``): the program has decisions with parameters and
        leaves out the memo of a `def` whose value may be a list, record, map, set, tuple, function or
        die, which a decision keys by identity (``unseen``). Asked once the kinds are known."""
        if self.guarded is None:
            self.guarded = any(u.arity and u.kind == "decision" for u in self.program.units.values()) and any(
                self.memo_free(u) and self.facts.result(u) not in PLAIN
                for u in self.program.units.values() if u.kind in DEFS)
        return self.guarded

    def once(self, unit: Unit) -> bool:
        """A `def` named once, in a value computed once a run or in such a function (so it cannot recur:
        that value would depend on itself), that rolls no die and runs no procedure."""
        found = self.single.get(unit.index)
        if found is None:
            found = self.single[unit.index] = False  # (while looking)
            callers = self.callers.get((unit.ns, unit.name), ()) if unit.kind in DEFS and self.pure(unit) else ()
            if len(callers) == 1:
                caller = self.program.units[callers[0]]
                named = [r for r in caller.bound.values() if isinstance(r, UnitRef) and r.unit is unit]
                found = self.single[unit.index] = len(named) == 1 and (
                    caller.kind in (*DEFS, "const") and caller.arity is None or self.once(caller))
        return found

    def pure(self, unit: Unit) -> bool:
        """Whether ``unit`` is the program's unit of its name and neither rolls a die nor runs a procedure,
        itself or through the units it reads (``impure`` and ``callers`` made at the first question)."""
        program, units = self.program, self.program.units
        if self.impure is None:
            seeds = {k for k, u in units.items() if u.rolls or u.kind == "procedure"}
            self.impure = _readers_of(seeds, program.refs)
            for k, deps in program.refs.items():
                for d in deps:
                    self.callers.setdefault(d, []).append(k)
        key = (unit.ns, unit.name)
        return key not in self.impure and units.get(key) is unit

    def light(self, unit: Unit) -> int | None:
        """A function whose every computation is bounded by its text: it rolls no die and runs no
        procedure (not even through others), reads no decision (its memo undoes guesses), lies on no
        cycle and is never called through a value (counted: its memo bounds recursion); its code has
        no loop (no comprehension, lambda, function value or call of a value) and what it calls answers
        a repeated call at once (a kept memo, a value read once a run) or is light itself, the whole
        at most ``LIGHT`` nodes. Its size in nodes, or None. Computed again where the memo would have
        answered, it costs a bounded multiple of the memo's look-up (and what its built-ins do again):
        whatever calls it how often, no run grows by more than that factor."""
        if unit.index in self.sizes:
            return self.sizes[unit.index]
        self.sizes[unit.index] = None  # (while looking: a cycle is no light function's)
        size = None
        if unit.kind in (*DEFS, "table", "query") and unit.arity is not None and not (
                unit.recursive or unit.counted or unit.uses_decisions or unit.rolls):
            if self.pure(unit):
                size = self.bounded(unit, (*unit.cells.values(), unit.body) if unit.kind == "table" else (unit.body,))
        self.sizes[unit.index] = size
        return size

    def bounded(self, unit: Unit, roots: tuple[Any, ...]) -> int | None:
        """The nodes of ``roots`` (code of ``unit``) with those of the light functions they call, or None
        (``light``)."""
        called: set[int] = set()  # (a call comes before the name it calls: ``A.nodes``)
        size = 0
        for n in A.nodes(roots):
            size += 1
            if size > LIGHT or isinstance(n, (A.Comp, A.Lambda)):
                return None
            ref = unit.bound.get(id(n))
            if isinstance(n, A.Call):
                if not isinstance(unit.bound.get(id(n.func)), (UnitRef, BuiltinRef)):
                    return None  # (a value called)
                called.add(id(n.func))
            if not isinstance(ref, UnitRef) or ref.unit.kind == "input":
                continue
            callee = ref.unit
            if id(n) not in called and not isinstance(n, A.Index):
                if callee.arity is not None:
                    return None  # (a function as a value: a built-in may call it in a loop)
                continue  # (a value: read from the run's memo after its first read)
            if callee.kind in DEFS and not self.memo_free(callee):
                continue  # (its memo answers)
            more = self.light(callee)
            if more is None:
                return None
            size += more
        return size if size <= LIGHT else None
