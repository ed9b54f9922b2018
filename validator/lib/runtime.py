"""What both engines share at run time: the evaluation error, the dice sources and exact dice, limits."""

from __future__ import annotations

import random
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Protocol

from ..core.diagnostics import Diagnostic, NO_SPAN, Span

DEFAULT_STEP_BUDGET = 5_000_000
DEFAULT_DEPTH_LIMIT = 150
MAX_EXACT_PATHS = 200_000


class RunContext(Protocol):
    """What a built-in (and a die) sees of the run it is called in, whichever engine makes it
    (``engine.reference.Run``): the steps spent and the budget, the dice, and the exact mode's forks."""

    steps: int
    budget: int
    dice: "DiceSource"
    rolls: int

    def fork(self, weights: list[Fraction]) -> int: ...


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

    def sum_of(self, ctx: Any, spec: Any, span: Span) -> Any:
        """The sum of a roll of ``spec`` (a ``DiceSpec``): each die shows the face on the side rolled."""
        ctx.rolls += 1
        if spec.faces is None:
            return sum(self.face(spec.sides, span) for _ in range(spec.count))
        return sum(spec.faces[self.face(spec.sides, span) - 1] for _ in range(spec.count))


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


_SUM_DISTRIBUTIONS: dict[tuple[int, tuple[int, ...]], dict[int, Fraction]] = {}


def _sum_distribution(count: int, faces: tuple[int, ...]) -> dict[int, Fraction]:
    """The distribution of the sum of ``count`` dice, each showing one of ``faces`` (its sides, equally
    likely; a number on several sides is that much likelier). Cached: callers copy it before changing it."""
    cached = _SUM_DISTRIBUTIONS.get((count, faces))
    if cached is not None:
        return cached
    one: dict[int, Fraction] = {}
    for face in faces:
        one[face] = one.get(face, Fraction(0)) + Fraction(1, len(faces))
    dist: dict[int, Fraction] = {0: Fraction(1)}
    for _ in range(count):
        nxt: dict[int, Fraction] = {}
        for total, w in dist.items():
            for face, p in one.items():
                nxt[total + face] = nxt.get(total + face, Fraction(0)) + w * p
        dist = nxt
    if len(_SUM_DISTRIBUTIONS) < 1024:
        _SUM_DISTRIBUTIONS[(count, faces)] = dist
    return dist


# a distribution's values in order and their weights, by the label of the dice (``2d6``): what a die
# not looked at yet is forced over
_PRISTINE: dict[str, tuple[list[int], list[Fraction]]] = {}
_ONE = Fraction(1)
_ROLLS: dict[tuple[Any, ...], tuple[dict[int, Fraction], str]] = {}  # by (count, sides, faces): sum, label


def _pristine(label: str, dist: dict[int, Fraction]) -> None:
    if label not in _PRISTINE and len(_PRISTINE) < 1024:
        values = sorted(dist)
        _PRISTINE[label] = (values, [dist[v] for v in values])


_COMPARISONS: dict[str, Callable[[Any, Any], Any]] = {
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b}


class RandomValue:
    """A die result not yet looked at (exact mode). Comparing it with a number forks the run in two;
    any other use forks over its possible values. ``base`` is shared by values derived by adding."""

    __slots__ = ("ctx", "base", "offset", "label")

    def __init__(self, ctx: Any, base: dict[int, Fraction], offset: int, label: str):
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
        pristine = _PRISTINE.get(self.label)  # a die not looked at yet: its faces and weights are known
        if pristine is not None and len(pristine[0]) == len(self.base):
            values, weights = pristine
        else:
            values = sorted(self.base)
            weights = [self.base[v] for v in values]
        i = self.ctx.fork(weights)
        v = values[i]
        self.base.clear()
        self.base[v] = _ONE
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

    def face(self, sides: int, span: Span) -> int:  # pragma: no cover - exact mode never asks for faces
        raise AssertionError("exact dice give distributions")

    def sum_of(self, ctx: Any, spec: Any, span: Span) -> Any:
        ctx.rolls += 1
        ctx.natural_den *= spec.sides ** spec.count
        key = (spec.count, spec.sides, spec.faces)
        known = _ROLLS.get(key)
        if known is None:
            known = (_sum_distribution(spec.count, spec.values()), str(spec))
            _pristine(known[1], known[0])
            if len(_ROLLS) < 4096:
                _ROLLS[key] = known
        return RandomValue(ctx, known[0].copy(), 0, known[1])


# ---------------------------------------------------------------- decisions


@dataclass
class Settlement:
    """How a cycle policy settled a decision (shown by ``explain``)."""

    key: tuple[Any, ...]
    value: Any
    cites: tuple[str, ...]
    members: tuple[tuple[Any, ...], ...]
