"""What both engines share at run time: the evaluation error, the dice sources and exact dice, limits."""

from __future__ import annotations

import contextvars
import random
from dataclasses import dataclass
from typing import Any, Callable, Protocol, Sequence

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
    natural_den: int

    def fork(self, counts: Sequence[int], total: int) -> int: ...


class EvalError(Exception):
    """An evaluation failure at a ruleset location; becomes an ``E`` diagnostic at the boundary."""

    def __init__(self, code: str, message: str, span: Span = NO_SPAN, help: str | None = None):
        super().__init__(message)
        self.code, self.message, self.span, self.help = code, message, span, help

    def diagnostic(self) -> Diagnostic:
        return Diagnostic(self.code, self.message, self.span, help=self.help)


class Unwritable(EvalError):
    """The fast backend cannot write a definition as Python (the source it would compile nests past
    Python's own limits, such as its 20 nested loops, E005; or Python refuses it for another reason, a
    bug of the backend's writer, ``WRITER_BUG``): the run is made again by the reference, whose answer
    it is (``reference.run_query``). Never reaches a user as an error; a writer's bug is said as a
    warning beside the answer (``api.Result.warnings``)."""


# The code of source the backend wrote that Python refuses for another reason than its nesting: a bug of
# ruleval, which the reference's answer hides (``backend._compile_text``; docs/diagnostics.md)
WRITER_BUG = "I002"


def writer_bug(err: Unwritable) -> Diagnostic:
    """The warning that says a unit the backend gave up for a bug of its writer (``WRITER_BUG``)."""
    return Diagnostic(err.code, err.message, err.span, help="the reference interpreter ran it instead, so the answer "
                                                            "is right (only slower): please report this bug of ruleval")


class WriterBugs:
    """The writer's bugs met while it is open (``heard``), each unit's once, in the order met, with the text of
    the file each is in (to quote its line); what a command says (``cli.main``) or sends back (a sweep's
    worker). Whatever ran the unit, through whatever call: ``reference._engine_else_reference`` notes each."""

    def __init__(self) -> None:
        self.met: dict[tuple[Any, ...], tuple[Diagnostic, str | None]] = {}
        self.said: set[tuple[Any, ...]] = set()

    def note(self, d: Diagnostic, text: str | None = None) -> None:
        self.met.setdefault(_bug_key(d), (d, text))

    def say(self, shown: Sequence[Diagnostic]) -> None:
        """``shown`` (a command's own list of diagnostics) said: its writer's bugs are not said again."""
        self.said.update(_bug_key(d) for d in shown if d.code == WRITER_BUG)

    @property
    def warnings(self) -> list[Diagnostic]:
        """Every writer's bug met so far (each an I002 warning), in the order met."""
        return [d for d, _ in self.met.values()]

    def unsaid(self) -> list[tuple[Diagnostic, str | None]]:
        """What was met and not yet said, marked said now."""
        out = [m for k, m in self.met.items() if k not in self.said]
        self.said.update(self.met)
        return out


def _bug_key(d: Diagnostic) -> tuple[Any, ...]:
    return d.span.file, d.span.line, d.span.col, d.message


# the open ``listening`` blocks, innermost last: a context's own (an API caller's threads each hear their own
# runs; ``deep.call``'s thread runs in its caller's context). The playground's requests are each answered by a
# process of their own, or one at a time where there is no fork (``serve.Playground.answer``).
_LISTENING: contextvars.ContextVar[tuple[WriterBugs, ...]] = contextvars.ContextVar("_LISTENING", default=())


class listening:
    """``with listening() as bugs:``: the writer's bugs met in the block are noted in ``bugs`` (``WriterBugs``),
    whatever call met them (a run, a state's check, a load, a game; ``validator.api.listening``: ``bugs.warnings``),
    in this thread (this context) alone."""

    def __enter__(self) -> WriterBugs:
        self.bugs = WriterBugs()
        self.token = _LISTENING.set(_LISTENING.get() + (self.bugs,))
        return self.bugs

    def __exit__(self, *exc: Any) -> None:
        _LISTENING.reset(self.token)


def said(shown: Sequence[Diagnostic]) -> None:
    """A command has said ``shown`` in its own output (a check's diagnostics): every open ``listening``
    block takes the writer's bugs among them as said."""
    for bugs in _LISTENING.get():
        bugs.say(shown)


def heard(d: Diagnostic, text: str | None = None) -> None:
    """A writer's bug met (``writer_bug``), noted by every open ``listening`` block."""
    for bugs in _LISTENING.get():
        bugs.note(d, text)


class CallError(Exception):
    """Raised by a built-in for a bad argument; the compiler adds the call's location."""


ROLL_OVER_BUDGET = "rolling the dice exceeds the evaluation budget"


def _charge_roll(ctx: Any, steps: int) -> None:
    """A roll's cost charged to the run (a CallError past the budget: the caller reports E004)."""
    ctx.steps += steps
    if ctx.steps > ctx.budget:
        raise CallError(ROLL_OVER_BUDGET)


# ---------------------------------------------------------------- dice


class DiceSource:
    """Where dice come from. ``face(sides)`` gives one die; exact mode overrides ``sum_of`` and
    ``looked_at``."""

    def face(self, sides: int, span: Span) -> int:
        raise NotImplementedError

    def reset(self) -> None:
        """As before its first die (a run made again from the start rolls the same dice)."""

    def sum_of(self, ctx: Any, spec: Any, span: Span) -> Any:
        """The sum of a roll of ``spec`` (a ``DiceSpec``): each die shows the face on the side rolled.
        Rolling n dice costs n steps (and one)."""
        _charge_roll(ctx, spec.count + 1)
        if spec.faces is None:
            return sum(self.face(spec.sides, span) for _ in range(spec.count))
        return sum(spec.faces[self.face(spec.sides, span) - 1] for _ in range(spec.count))

    def looked_at(self, ctx: Any, spec: Any, span: Span) -> Any:
        """A roll whose sum is looked at at once: ``sum_of``, forced (a random sum is a number already)."""
        return self.sum_of(ctx, spec, span)


class SeededDice(DiceSource):
    def __init__(self, seed: int):
        self.seed = seed
        self.rng: random.Random | None = None  # made at the first die: most runs roll none

    def reset(self) -> None:
        self.rng = None

    def face(self, sides: int, span: Span) -> int:
        if self.rng is None:
            self.rng = random.Random(self.seed)
        return self.rng.randint(1, sides)


class ScriptedDice(DiceSource):
    def __init__(self, faces: list[int]):
        self.faces = list(faces)
        self.used = 0

    def reset(self) -> None:
        self.used = 0

    def face(self, sides: int, span: Span) -> int:
        if self.used >= len(self.faces):
            raise EvalError("E007", f"the script gave {len(self.faces)} dice and the rules asked for more", span,
                            help="add dice to the script")  # (a command names its script: ``tools.common.dice_named``)
        value = self.faces[self.used]
        self.used += 1
        if not 1 <= value <= sides:
            shown = value if value.bit_length() <= 64 else f"of {value.bit_length()} bits"  # (no 4 300-digit text)
            raise EvalError("E011", f"scripted die {shown} is not a face of a d{sides}", span)
        return value


def _sum_distribution(count: int, faces: tuple[int, ...]) -> dict[int, int]:
    """The distribution of the sum of ``count`` dice, each showing one of ``faces`` (its sides, equally
    likely): each sum with the number of the ``len(faces) ** count`` combinations of sides that give
    it (a number on several sides is that much likelier)."""
    dist: dict[int, int] = {0: 1}
    for _ in range(count):
        nxt: dict[int, int] = {}
        for total, ways in dist.items():
            for face in faces:
                nxt[total + face] = nxt.get(total + face, 0) + ways
        dist = nxt
    return dist


class Rolled:
    """What exact mode knows of a roll of some dice, worked out at their first roll: the distribution
    of the sum (``dist``: each sum and how many combinations of sides give it), its sums in order with
    those counts, the number of combinations (``total``: the dice's own denominator, 36 for 2d6) and
    the dice's label (``2d6``). Weights stay whole numbers: a branch's probability is its count over
    the counts still possible, a fraction made only when the enumeration ends."""

    __slots__ = ("dist", "values", "counts", "total", "label")

    def __init__(self, dist: dict[int, int], label: str):
        self.dist, self.label = dist, label
        self.values = tuple(sorted(dist))
        self.counts = tuple(dist[v] for v in self.values)
        self.total = sum(self.counts)


_ROLLS: dict[tuple[Any, ...], Rolled] = {}  # by (count, sides, faces): dice made by `dice(n, s)` at each call too


def rolled(spec: Any) -> Rolled:
    """What exact mode knows of a roll of ``spec`` (a ``DiceSpec``), kept with the dice (``DiceSpec.rolled``:
    a frozen value's cache, what the dice are never changes)."""
    key = (spec.count, spec.sides, spec.faces)
    known = _ROLLS.get(key)
    if known is None:
        known = Rolled(_sum_distribution(spec.count, spec.values()), str(spec))
        if len(_ROLLS) < 4096:
            _ROLLS[key] = known
    object.__setattr__(spec, "rolled", known)
    return known


_COMPARISONS: dict[str, Callable[[Any, Any], Any]] = {
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b}


class RandomValue:
    """A die result not yet looked at (exact mode). Comparing it with a number forks the run in two;
    any other use forks over its possible values. ``base`` (each value still possible, by how many
    combinations of sides give it) is shared by the values derived by adding: conditioning one
    conditions them all. ``rolled`` is what is known of the dice rolled."""

    __slots__ = ("ctx", "base", "offset", "rolled")

    def __init__(self, ctx: Any, base: dict[int, int], offset: int, rolled: Rolled):
        self.ctx, self.base, self.offset, self.rolled = ctx, base, offset, rolled

    def _split(self, test: Callable[[int], bool]) -> bool:
        base, offset = self.base, self.offset
        yes = {v: w for v, w in base.items() if test(v + offset)}
        if len(yes) == len(base):
            return True
        if not yes:
            return False
        no = {v: w for v, w in base.items() if v not in yes}
        ways_yes, ways_no = sum(yes.values()), sum(no.values())
        branch = self.ctx.fork((ways_yes, ways_no), ways_yes + ways_no)
        # Condition this die in place: later looks at it see only the values still possible.
        base.clear()
        base.update(yes if branch == 0 else no)
        return branch == 0

    def shifted(self, k: int) -> "RandomValue":
        """This die plus an integer: the same distribution, moved (conditioning one conditions both)."""
        return RandomValue(self.ctx, self.base, self.offset + k, self.rolled)

    def compare_split(self, op: str, other: Any) -> bool:
        """``self OP other`` for a number ``other`` (no die, no truth value: ``reference.compare`` compares
        any other value with the die's face): the run forks over the answer."""
        test = _COMPARISONS[op]
        return self._split(lambda v: bool(test(v, other)))

    def _cmp(self, other: Any, op: Callable[[int, Any], bool]) -> bool:
        if isinstance(other, RandomValue):
            other = other.collapse()
        return self._split(lambda v: op(v, other))

    def __eq__(self, o: Any) -> bool:  # type: ignore[override]
        return self._cmp(o, lambda v, x: v == x)

    def __ne__(self, o: Any) -> bool:  # type: ignore[override]
        return self._cmp(o, lambda v, x: v != x)

    def collapse(self) -> int:
        """Look at the die: the run forks over the values it can still take, each weighted by its count."""
        base, known = self.base, self.rolled
        if len(base) == len(known.values):  # not looked at yet (conditioning drops values): as rolled
            values, counts, total = known.values, known.counts, known.total
        else:
            values = tuple(sorted(base))
            counts = tuple(base[v] for v in values)
            total = sum(counts)
        v = values[self.ctx.fork(counts, total)]
        base.clear()
        base[v] = 1
        return v + self.offset

    def __hash__(self) -> int:
        return hash(self.collapse())

    def __bool__(self) -> bool:
        return True

    def describe(self) -> str:
        """The values the die can still take, as text: `7` when one is left, else the dice and the
        values (`2d6: 7..12`, `2d6+1: 3, 5..8` when a look left some out)."""
        values = sorted(v + self.offset for v in self.base)
        if len(values) == 1:
            return str(values[0])
        runs: list[list[int]] = []
        for v in values:
            if runs and v == runs[-1][1] + 1:
                runs[-1][1] = v
            else:
                runs.append([v, v])
        label = f"{self.rolled.label}{self.offset:+d}" if self.offset else self.rolled.label
        return f"{label}: " + ", ".join(str(a) if a == b else f"{a}..{b}" for a, b in runs)


class ExactDice(DiceSource):
    def face(self, sides: int, span: Span) -> int:  # pragma: no cover - exact mode never asks for faces
        raise AssertionError("exact dice give distributions")

    def sum_of(self, ctx: Any, spec: Any, span: Span) -> Any:
        """The sum of a roll of ``spec``, a die not looked at yet (``RandomValue``)."""
        _charge_roll(ctx, spec.exact_cost)  # (before the distribution is worked out: it may be huge)
        known = spec.rolled or rolled(spec)
        ctx.natural_den *= known.total
        return RandomValue(ctx, known.dist.copy(), 0, known)

    def looked_at(self, ctx: Any, spec: Any, span: Span) -> Any:
        """``sum_of`` then ``RandomValue.collapse``, with no die made: the run forks over the sums
        as rolled (``tests/test_exact_dice.py`` holds the two equal)."""
        ctx.steps += spec.exact_cost  # (``_charge_roll``, written out: this is the commonest roll)
        if ctx.steps > ctx.budget:
            raise CallError(ROLL_OVER_BUDGET)
        known = spec.rolled or rolled(spec)
        ctx.natural_den *= known.total
        return known.values[ctx.fork(known.counts, known.total)]


# ---------------------------------------------------------------- decisions


@dataclass
class Settlement:
    """How a cycle policy settled a decision (shown by ``explain``)."""

    key: tuple[Any, ...]
    value: Any
    cites: tuple[str, ...]
    members: tuple[tuple[Any, ...], ...]
