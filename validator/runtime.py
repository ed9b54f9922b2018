"""Run-time context of one evaluation: step budget, recursion depth, dice, events, trace, decisions."""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable

from .diagnostics import Diagnostic, NO_SPAN, Span

DEFAULT_STEP_BUDGET = 5_000_000
DEFAULT_DEPTH_LIMIT = 150
MAX_EXACT_PATHS = 200_000


class EvalError(Exception):
    """An evaluation failure at a ruleset location; becomes an ``E`` diagnostic at the boundary."""

    def __init__(self, code: str, message: str, span: Span = NO_SPAN, help: str | None = None):
        super().__init__(message)
        self.code, self.message, self.span, self.help = code, message, span, help

    def diagnostic(self) -> Diagnostic:
        return Diagnostic(self.code, self.message, self.span, help=self.help)


# ---------------------------------------------------------------- dice


class DiceSource:
    """Where dice come from. ``face(sides)`` gives one die; exact mode overrides ``sum_of``."""

    mode = "random"

    def face(self, sides: int, span: Span) -> int:
        raise NotImplementedError

    def sum_of(self, ctx: "Context", count: int, sides: int, span: Span) -> Any:
        ctx.rolls += 1  # (what is computed from it rests on dice: see ``Context.tainted``)
        return sum(self.face(sides, span) for _ in range(count))

    def at_least(self, ctx: "Context", count: int, sides: int, target: int, span: Span) -> Any:
        ctx.rolls += 1
        return sum(1 for _ in range(count) if self.face(sides, span) >= target)


class SeededDice(DiceSource):
    mode = "seeded"

    def __init__(self, seed: int):
        self.seed = seed
        self.rng: random.Random | None = None  # made at the first die: most runs roll none

    def face(self, sides: int, span: Span) -> int:
        if self.rng is None:
            self.rng = random.Random(self.seed)
        return self.rng.randint(1, sides)


class ScriptedDice(DiceSource):
    mode = "scripted"

    def __init__(self, faces: list[int]):
        self.faces = list(faces)
        self.used = 0

    def face(self, sides: int, span: Span) -> int:
        if self.used >= len(self.faces):
            raise EvalError("E007", f"the script gave {len(self.faces)} dice and the rules asked for more", span,
                            help="add dice to the case's `dice:` list")
        value = self.faces[self.used]
        self.used += 1
        if not 1 <= value <= sides:
            raise EvalError("E011", f"scripted die {value} is not a face of a d{sides}", span)
        return value


_SUM_DISTRIBUTIONS: dict[tuple[int, int], dict[int, Fraction]] = {}


def _sum_distribution(count: int, sides: int) -> dict[int, Fraction]:
    """The distribution of the sum of ``count`` dice (cached: callers copy it before changing it)."""
    cached = _SUM_DISTRIBUTIONS.get((count, sides))
    if cached is not None:
        return cached
    dist: dict[int, Fraction] = {0: Fraction(1)}
    p = Fraction(1, sides)
    for _ in range(count):
        nxt: dict[int, Fraction] = {}
        for total, w in dist.items():
            for face in range(1, sides + 1):
                nxt[total + face] = nxt.get(total + face, Fraction(0)) + w * p
        dist = nxt
    if len(_SUM_DISTRIBUTIONS) < 1024:
        _SUM_DISTRIBUTIONS[(count, sides)] = dist
    return dist


def _binomial(count: int, p: Fraction) -> dict[int, Fraction]:
    from math import comb

    return {k: comb(count, k) * p**k * (1 - p) ** (count - k) for k in range(count + 1)}


_COMPARISONS: dict[str, Callable[[Any, Any], Any]] = {
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b}


class RandomValue:
    """A die result not yet looked at (exact mode). Comparing it with a number forks the run in two;
    any other use forks over its possible values. ``base`` is shared by values derived by adding."""

    __slots__ = ("ctx", "base", "offset", "label")

    def __init__(self, ctx: "Context", base: dict[int, Fraction], offset: int, label: str):
        self.ctx, self.base, self.offset, self.label = ctx, base, offset, label

    def _shift(self, k: Any) -> Any:
        if isinstance(k, RandomValue):
            return self.collapse() + k
        if isinstance(k, bool) or not isinstance(k, int):
            return self.collapse() + k
        return RandomValue(self.ctx, self.base, self.offset + k, self.label)

    def __add__(self, k: Any) -> Any:
        return self._shift(k)

    __radd__ = __add__

    def __sub__(self, k: Any) -> Any:
        if isinstance(k, int) and not isinstance(k, bool):
            return self._shift(-k)
        return self.collapse() - k

    def __rsub__(self, k: Any) -> Any:
        return k - self.collapse()

    def _split(self, test: Callable[[int], bool]) -> bool:
        dist = self.base
        yes = {v: w for v, w in dist.items() if test(v + self.offset)}
        no = {v: w for v, w in dist.items() if v not in yes}
        p_yes = sum(yes.values(), Fraction(0))
        if not no:
            return True
        if not yes:
            return False
        branch = self.ctx.fork([p_yes, 1 - p_yes])
        chosen = yes if branch == 0 else no
        total = sum(chosen.values(), Fraction(0))
        # Condition this die in place: later looks at it see only the values still possible.
        dist.clear()
        dist.update({v: w / total for v, w in chosen.items()})
        return branch == 0

    def shifted(self, k: int) -> "RandomValue":
        """This die plus an integer: the same distribution, moved (conditioning one conditions both)."""
        return RandomValue(self.ctx, self.base, self.offset + k, self.label)

    def compare_split(self, op: str, other: Any) -> bool:
        """``self OP other`` for a value ``other`` (no die): the run forks over the answer."""
        test = _COMPARISONS[op]

        def holds(v: int) -> bool:
            try:
                return bool(test(v, other))
            except TypeError:
                raise EvalError("E001", f"cannot compare a die {op} `{other!r}`"[:120]) from None
        return self._split(holds)

    def _cmp(self, other: Any, op: Callable[[int, Any], bool]) -> bool:
        if isinstance(other, RandomValue):
            other = other.collapse()
        return self._split(lambda v: op(v, other))

    def __ge__(self, o: Any) -> bool:
        return self._cmp(o, lambda v, x: v >= x)

    def __gt__(self, o: Any) -> bool:
        return self._cmp(o, lambda v, x: v > x)

    def __le__(self, o: Any) -> bool:
        return self._cmp(o, lambda v, x: v <= x)

    def __lt__(self, o: Any) -> bool:
        return self._cmp(o, lambda v, x: v < x)

    def __eq__(self, o: Any) -> bool:  # type: ignore[override]
        return self._cmp(o, lambda v, x: v == x)

    def __ne__(self, o: Any) -> bool:  # type: ignore[override]
        return self._cmp(o, lambda v, x: v != x)

    def collapse(self) -> int:
        values = sorted(self.base)
        weights = [self.base[v] for v in values]
        i = self.ctx.fork(weights)
        v = values[i]
        self.base.clear()
        self.base[v] = Fraction(1)
        return v + self.offset

    def __int__(self) -> int:
        return self.collapse()

    __index__ = __int__

    # Any other arithmetic looks at the value: fork over what it can be, then compute.
    def __mul__(self, k: Any) -> Any:
        return self.collapse() * k

    def __rmul__(self, k: Any) -> Any:
        return k * self.collapse()

    def __floordiv__(self, k: Any) -> Any:
        return self.collapse() // k

    def __rfloordiv__(self, k: Any) -> Any:
        return k // self.collapse()

    def __mod__(self, k: Any) -> Any:
        return self.collapse() % k

    def __rmod__(self, k: Any) -> Any:
        return k % self.collapse()

    def __truediv__(self, k: Any) -> Any:
        return Fraction(self.collapse()) / k

    def __rtruediv__(self, k: Any) -> Any:
        return k / Fraction(self.collapse())

    def __neg__(self) -> Any:
        return -self.collapse()

    def __hash__(self) -> int:
        return hash(self.collapse())

    def __bool__(self) -> bool:
        return True

    def describe(self) -> str:
        values = sorted(v + self.offset for v in self.base)
        if len(values) == 1:
            return str(values[0])
        label = f"{self.label}{self.offset:+d}" if self.offset else self.label
        return f"{label}: {values[0]}..{values[-1]}"


class ExactDice(DiceSource):
    mode = "exact"

    def __init__(self) -> None:
        # Values memoized before the first roll of the first path cannot depend on dice: every
        # later path starts from them instead of computing them again.
        self.shared: dict[Any, Any] | None = None

    def _share(self, ctx: "Context") -> None:
        ctx.rolls += 1
        if self.shared is None:
            self.shared = {k: v for k, v in ctx.memo.items() if type(v) is not object}  # not the pending marker

    def share_after(self, ctx: "Context") -> None:
        """After a path: every memoized value that rolled no die (even indirectly) holds on every path."""
        shared = self.shared if self.shared is not None else {}
        shared.update((k, v) for k, v in ctx.memo.items() if k not in ctx.tainted and type(v) is not object)
        self.shared = shared

    def face(self, sides: int, span: Span) -> int:  # pragma: no cover - exact mode never asks for faces
        raise AssertionError("exact dice give distributions")

    def sum_of(self, ctx: "Context", count: int, sides: int, span: Span) -> Any:
        self._share(ctx)
        return RandomValue(ctx, dict(_sum_distribution(count, sides)), 0, f"{count}d{sides}")

    def at_least(self, ctx: "Context", count: int, sides: int, target: int, span: Span) -> Any:
        self._share(ctx)
        hits = max(0, sides - target + 1) if target > 1 else sides
        p = Fraction(min(hits, sides), sides)
        return RandomValue(ctx, dict(_binomial(count, p)), 0, f"{count}d{sides}>={target}")


# ---------------------------------------------------------------- decisions

UNRESOLVED, GUESSING, RESOLVED = 0, 1, 2


@dataclass
class Settlement:
    key: tuple[Any, ...]
    value: Any
    cites: tuple[str, ...]
    members: tuple[tuple[Any, ...], ...]


# ---------------------------------------------------------------- signals used by procedures


class GotoSignal(Exception):
    def __init__(self, target: str):
        self.target = target


class StopSignal(Exception):
    pass


class BreakSignal(Exception):
    pass


class ContinueSignal(Exception):
    pass


class RejectSignal(Exception):
    def __init__(self, message: str, cites: tuple[str, ...], step: str | None):
        self.message, self.cites, self.step = message, cites, step


# ---------------------------------------------------------------- context


# the marker of a value not known yet: in the memo, a value being computed; in ``Context.vals``, one
# not read yet
PENDING = object()



def codegen_mode() -> str:
    """The second tier's switch, `RULEVAL_CODEGEN`: "off" (also `0`, `no`), "always" (also `1`,
    `yes`) or "auto" (anything else: generate once runs have taken a while). Read where it is
    needed, so that a process may turn it on or off as it goes."""
    mode = os.environ.get("RULEVAL_CODEGEN", "auto").strip().lower()
    return "off" if mode in ("off", "0", "no") else "always" if mode in ("always", "1", "yes") else "auto"

class Context:
    """Everything one evaluation needs; a fresh one per run (and per path in exact mode)."""

    # values that are the same all run long, as generated code reads them (``codegen``: each such
    # value of a generated program has its slot in ``vals``): as many slots as the largest such
    # program has, so that any context fits the program it runs
    value_slots = 0

    __slots__ = ("state", "inputs", "memo", "vals", "steps", "budget", "depth", "depth_limit", "dice", "path", "path_pos",
                 "forks", "events", "dstate", "dvalue", "deplist", "settled", "trace", "slow", "trace_stack", "decision_edges",
                 "cycles", "decisions", "current_step", "dstack", "rolls", "tainted", "resolving", "guesses",
                 "rkeys", "bound_rolls")

    def __init__(self, state: Any, dice: DiceSource, budget: int = DEFAULT_STEP_BUDGET,
                 depth_limit: int = DEFAULT_DEPTH_LIMIT, path: list[int] | None = None, trace: bool = False,
                 slow: bool = False):
        self.state = state
        self.inputs: dict[Any, Any] = {}
        self.memo: dict[Any, Any] = {}
        self.vals: list[Any] = [PENDING] * Context.value_slots
        self.steps = 0
        self.budget = budget
        self.depth = 0
        self.depth_limit = depth_limit
        self.dice = dice
        self.path = path or []
        self.path_pos = 0
        self.forks: list[tuple[int, list[Fraction]]] = []
        self.events: list[dict[str, Any]] = []
        self.dstate: dict[Any, int] = {}
        self.dvalue: dict[Any, Any] = {}
        self.deplist: list[Any] = []
        self.settled: dict[Any, Settlement] = {}
        self.trace = trace
        # run on closures only (a traced run, and the run again of one whose generated code ran out of
        # steps): such a run never enters generated code (``codegen._entry``, a decision's closure cell)
        self.slow = trace or slow
        self.trace_stack: list[dict[str, Any]] = [{"children": []}] if trace else []
        self.decision_edges: set[tuple[Any, Any]] = set()
        self.cycles: list[dict[str, Any]] = []
        self.decisions: dict[Any, Any] = {}
        self.current_step: str | None = None
        self.rolls = 0  # dice rolled so far (and reads of values that depend on dice)
        self.bound_rolls = 0  # of those, rolled by the defaults of inputs (see ``api.Ruleset._bind_inputs``)
        self.tainted: set[Any] = set()  # memoized values that depend on dice
        # decisions being resolved right now; while it is 0 every decision read is final, so values
        # that read decisions may be memoized
        self.resolving = 0
        # reads of a decision value that is not final (a guess, or a result resting on one), counted so
        # far: a value whose computation read none is final even during a resolution, so it is memoized
        self.guesses = 0
        # memo keys stored during a resolution; dropped if a resolved decision is ever undone
        self.rkeys: list[Any] = []
        self.dstack: list[Any] = []

    def undo_resolved(self) -> None:
        """A resolved decision was reset (an outer guess changed): values memoized from it may be wrong."""
        for k in self.rkeys:
            self.memo.pop(k, None)
        self.rkeys.clear()

    def fork(self, weights: list[Fraction]) -> int:
        """Exact mode: follow the recorded path, or take branch 0 of a new fork."""
        if self.path_pos < len(self.path):
            choice = self.path[self.path_pos]
        else:
            choice = 0
        self.path_pos += 1
        self.forks.append((choice, weights))
        return choice

    def over_budget(self, span: Span) -> EvalError:
        return EvalError("E004", f"evaluation took more than {self.budget} steps", span,
                         help="a rule loops over a huge range or recurses without end")
