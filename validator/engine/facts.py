"""Sound kinds: the Python type a node's value always has, in both engines, whatever the state, the
arguments and the other definitions hold (docs/architecture.md, "Sound kinds").

The type pass (``lang.types``) is light: it trusts annotations and inputs, which nothing proves at run
time, so its types may not drop a run-time test. A kind here is claimed only where the language fixes
it: a literal; a comparison, `not`, `and`, `or` (truth values); a collection built by a literal or a
comprehension; `+ - * // %` of two integers (`+` of two texts); `-` of an integer; `??` whose left is
never none; an `if` whose every branch has one kind; a `let`'s body; a local bound by `let` to such a
value; an enum's member (its text); imported data that is a number, text or truth value; a built-in
whose result's type its definition fixes (``builtins``: declared `-> int`, `-> bool` or `-> str`);
and a call of a `def` (or a definition read as a value) whose body has a kind. Nothing else: not a
parameter, a field, an item, an input, a `var`, a decision, a table. ``tests/test_facts.py`` checks
each kind claimed against the values the reference computes, on random programs.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable

from ..lang import ast as A
from ..lang.bind import BuiltinRef, DataRef, Local, Member, Scope, UnitRef, Walker
from ..lang.program import DEFS, Program, Unit
from ..lib.builtins import BUILTINS
from ..lib.values import Map

Kind = type
_SCALAR = {int: int, bool: bool, str: str}
# built-ins whose result is of one type whatever their arguments (their definitions' declared result)
_DECLARED: dict[Any, Kind] = {"int": int, "bool": bool, "str": str}
RESULTS: dict[str, Kind] = {name: _DECLARED[b.fn.__annotations__.get("return")] for name, b in BUILTINS.items()
                            if b.fn.__annotations__.get("return") in _DECLARED}
# the nodes whose kind is their node's: literals, truth values, collections built
_FIXED: dict[type, Kind] = {A.Int: int, A.Str: str, A.Bool: bool, A.NoneLit: type(None), A.Compare: bool, A.Not: bool,
                            A.BoolOp: bool, A.ListLit: list, A.TupleLit: tuple, A.SetLit: frozenset, A.MapLit: Map,
                            A.RecordLit: dict}
_COMPS = {"list": list, "set": frozenset, "map": Map}
_NUMBER_OPS = ("+", "-", "*", "//", "%")
PLAIN = (int, bool, str, type(None), Fraction)  # (never a die, never a collection)


class Facts:
    """The sound kinds of a program's nodes, per unit, made at the first need."""

    def __init__(self, program: Program):
        self.program = program
        self.units: dict[int, dict[int, Kind]] = {}  # by unit number: the kinds of its nodes, by the node's identity
        self.results: dict[int, Kind | None] = {}  # by unit number: the kind of a definition's value
        self.busy: set[int] = set()

    def of(self, unit: Unit) -> dict[int, Kind]:
        """The kind of each node of ``unit`` that has one (a walk of the whole unit)."""
        found = self.units.get(unit.index)
        if found is None:
            walk = _Kinds(self, unit.bound)
            walk.walk_unit(unit)
            found = self.units[unit.index] = walk.kinds
        return found

    def result(self, unit: Unit) -> Kind | None:
        """The kind of every value of a `def` (or `const`) ``unit``: its body's, found by looking only as deep
        as the rules need (a writing's key reads it for every definition named); none for a definition
        on a cycle of calls being looked at (its kind would depend on itself)."""
        if unit.index in self.results:
            return self.results[unit.index]
        if unit.kind not in (*DEFS, "const") or unit.body is None or unit.index in self.busy:
            return None
        self.busy.add(unit.index)
        try:
            found = self.results[unit.index] = _Shallow(self, unit.bound, {}).part(unit.body)
        finally:
            self.busy.discard(unit.index)
        return found


class _Rules:
    """The kind of a node (not a `let`), given its parts' (``part``) and its locals' (``local``)."""

    def __init__(self, facts: Facts, bound: dict[int, Any]):
        self.facts, self.bound = facts, bound

    def part(self, e: Any) -> Kind | None:
        raise NotImplementedError

    def local(self, e: A.Name) -> Kind | None:
        raise NotImplementedError

    def kind(self, e: Any) -> Kind | None:
        fixed = _FIXED.get(type(e))
        if fixed is not None:
            return fixed
        how: Callable[[_Rules, Any], Kind | None] | None = _RULES.get(type(e))
        return None if how is None else how(self, e)

    def k_Comp(self, e: A.Comp) -> Kind | None:
        return _COMPS.get(e.kind)

    def k_Neg(self, e: A.Neg) -> Kind | None:
        return int if self.part(e.operand) is int else None

    def k_BinOp(self, e: A.BinOp) -> Kind | None:
        a = self.part(e.left)
        if e.op == "??" and a is not None and a is not type(None):
            return a
        b = self.part(e.right)
        if e.op == "??":
            return b if a is type(None) or a == b else None
        return a if a is int and b is int and e.op in _NUMBER_OPS or a is str and b is str and e.op == "+" else None

    def k_If(self, e: A.If) -> Kind | None:
        first = self.part(e.otherwise)
        return first if first is not None and all(self.part(v) is first for _, v in e.branches) else None

    def k_Name(self, e: A.Name) -> Kind | None:
        ref = self.bound.get(id(e))
        return self.local(e) if isinstance(ref, Local) else self.named(ref, None)

    def k_Call(self, e: A.Call) -> Kind | None:
        if not isinstance(e.func, A.Name):
            return None
        ref = self.bound.get(id(e.func))
        return None if isinstance(ref, Local) else self.named(ref, len(e.args) + len(e.kwargs))

    def named(self, ref: Any, args: int | None) -> Kind | None:
        """What a global name gives (``args`` None), or its call."""
        if isinstance(ref, Member):
            return str if args is None else None
        if isinstance(ref, DataRef):
            return _SCALAR.get(type(ref.value)) if args is None else None
        if isinstance(ref, BuiltinRef):
            return RESULTS.get(ref.builtin.name) if args is not None else None
        if isinstance(ref, UnitRef):
            u = ref.unit
            if (args is None) == (u.arity is None) and (args is None or args == u.arity) and \
                    (u.kind in DEFS or u.kind == "const" and args is None):
                return self.facts.result(u)
        return None


_RULES: dict[type, Callable[[_Rules, Any], Kind | None]] = {
    A.Comp: _Rules.k_Comp, A.Neg: _Rules.k_Neg, A.BinOp: _Rules.k_BinOp, A.If: _Rules.k_If, A.Name: _Rules.k_Name,
    A.Call: _Rules.k_Call}


class _Shallow(_Rules):
    """A node's kind, its parts looked at only where the rules need them; ``lets``, the kinds of the
    `let`s in force by name (the only locals a kind is claimed for)."""

    def __init__(self, facts: Facts, bound: dict[int, Any], lets: dict[str, Kind | None]):
        super().__init__(facts, bound)
        self.lets = lets

    def part(self, e: Any) -> Kind | None:
        if isinstance(e, A.Let):
            return _Shallow(self.facts, self.bound, {**self.lets, e.name: self.part(e.value)}).part(e.body)
        return self.kind(e)

    def local(self, e: A.Name) -> Kind | None:
        return self.lets.get(e.id)


class _Kinds(Walker, _Rules):
    """Every node's kind, by a walk of the unit (its parts before it)."""

    def __init__(self, facts: Facts, bound: dict[int, Any]):
        _Rules.__init__(self, facts, bound)
        self.kinds: dict[int, Kind] = {}
        self.locals: dict[int, Kind] = {}  # by binder: a `let`'s
        self.env: Scope = {}

    def bind(self, env: Scope, binder: Any, names: tuple[str, ...]) -> Scope:
        if isinstance(binder, (A.Let, A.LetStmt)) and id(binder.value) in self.kinds:
            self.locals[id(binder)] = self.kinds[id(binder.value)]
        return super().bind(env, binder, names)

    def part(self, e: Any) -> Kind | None:
        return self.kinds.get(id(e))

    def local(self, e: A.Name) -> Kind | None:
        binder = self.env.get(e.id)
        return None if binder is None else self.locals.get(id(binder))

    def expr(self, e: Any, env: Scope) -> None:
        super().expr(e, env)
        self.env = env
        k = self.kinds.get(id(e.body)) if isinstance(e, A.Let) else self.kind(e)
        if k is not None:
            self.kinds[id(e)] = k
