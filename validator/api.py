"""The public API, one function per stage; the CLI is a thin shell over it.

>>> rs = load_ruleset("rulesets/his/his.rules")          # doctest: +SKIP
>>> rs.run(state, dice=[6, 3])                            # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import json
import marshal
import os
import sys
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterator, Literal, TypeVar

from .lang import ast as A
from .core import deep
from .lang.checker import run_passes
from .engine import data
from .engine.arguments import checked_args, has_typed_params
from .engine import reference as R
from .engine.backend import Backend
from .lang.program import Program, Unit, build_program, check_program, graph_json
from .core.confine import Reads, Seen, looked_at, still
from .core.diagnostics import Diagnostic, DiagnosticError, Span, sort_diagnostics
from .core.jsontext import MAX_INT_DIGITS, exact_numbers, value_problem
from .lang.loader import Loaded, display_path, load, path_view, real_path
from .lib.runtime import (DEFAULT_STEP_BUDGET, WRITER_BUG, DiceSource, EvalError, ScriptedDice, SeededDice, Unwritable,
                          heard, writer_bug)
from .lib.runtime import listening as listening  # (the caller's way to hear a writer's bug: docs/tools.md)
from .engine.state import certainly_valid, schema_errors
from .lang.syntax import parse_module
from .lib.values import FUNCTION_IN_RESULT, MAX_OUTPUT_BYTES, MAX_OUTPUT_NODES, brief, to_json, too_large, written


_T = TypeVar("_T")
_VALID_STATES: dict[tuple[str, bytes], Any] = {}
_FOUND_VALID: Any = object()  # (``Ruleset.evaluate``'s ``validate`` from ``_unchecked_run``)


VALIDATE_QUERY = R.STATE_CHECK


class TimeUp(Exception):
    """A run asked for past the wall-clock deadline its thread was given (``deadline``)."""


_DEADLINE = threading.local()


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Within it, ``Ruleset.run`` in this thread refuses to start a run once ``seconds`` have passed
    (``TimeUp``): what serves requests (the playground) bounds a request of many runs by the clock,
    each run being bounded by its step budget."""
    before = getattr(_DEADLINE, "at", None)
    _DEADLINE.at = time.monotonic() + seconds
    try:
        yield
    finally:
        _DEADLINE.at = before


def _in_time() -> None:
    at = getattr(_DEADLINE, "at", None)
    if at is not None and time.monotonic() > at:
        raise TimeUp("the deadline passed")


class RunError(DiagnosticError):
    """Evaluation could not produce a result; ``kind`` is "state" (exit 3) or "eval" (exit 1)."""

    def __init__(self, diagnostics: list[Diagnostic], kind: str):
        super().__init__(diagnostics)
        self.kind = kind


def parse(text: str, path: str = "<string>") -> A.Module:
    """Parse one ruleset source to its AST (raises ``DiagnosticError``; ``TypeError`` for a text that is no
    ``str``: bytes are decoded by the caller, who knows their encoding)."""
    if not isinstance(text, str) or not isinstance(path, str):
        raise TypeError(f"parse takes the ruleset's text and its path as str, not {_shown_value(text)}"
                        if not isinstance(text, str) else f"parse's path is a str, not {_shown_value(path)}")
    return deep.call(parse_module, text, path)


@dataclass
class Ruleset:
    """A loaded, checked and compiled ruleset."""

    path: str
    program: Program
    diagnostics: list[Diagnostic]
    # every file its load read, by resolved path, as it was when read (``confine.recording``): what
    # ``_fresh`` compares the files with
    files: dict[str, Seen]
    # the SHA-256 of the bytes of each file its load read, by resolved path (``confine.recording``)
    read: dict[str, str] = field(default_factory=dict, repr=False, compare=False)
    # where a reference it makes found no file (``Loaded.missing``): ``_fresh`` while none is there
    absent: tuple[str, ...] = field(default=(), repr=False, compare=False)
    _backend: Backend | None = None
    _untyped: Backend | None = None  # (``backend``: for runs on a state not found valid)
    overlay: dict[str, str] | None = None  # texts it was given rather than read, by resolved path (a player over a variant)
    # the last state this ruleset's `advance` made: [the state, its marshal bytes when a run found it valid,
    # the steps that run took] (``_unchecked_run``)
    _made: list[Any] | None = field(default=None, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return not any(d.is_error for d in self.diagnostics)

    @property
    def sources(self) -> dict[str, str]:
        return self.program.loaded.sources

    @property
    def schema(self) -> dict[str, Any] | None:
        return self.program.entry.schema

    @property
    def clauses(self) -> dict[str, str] | None:
        return self.program.entry.clauses

    def queries(self) -> list[str]:
        return self.program.queries()

    def state_schema_errors(self, state: Any, shown: str = "<state>") -> list[Diagnostic]:
        """The state's S002 diagnostics against the ruleset's JSON Schema alone (its decimals read exactly,
        as a run reads them: ``jsontext.exact_numbers``). The rules' own ``query validate_state`` is not
        run: ``state_errors`` gives both."""
        _check_name(shown, "shown")
        return _json_problem(state, shown) or self._checked(exact_numbers(state), shown)[0]

    def _checked(self, state: Any, shown: str) -> tuple[list[Diagnostic], bool]:
        """The state's schema check: its diagnostics, and whether the state is then known to hold JSON's own types alone
        (the fast check, which tests each value's type, took it; or it marshals: ``marshal`` refuses a
        subclass, which jsonschema takes for its base type), where the schema's kinds hold (``backend``)."""
        schema = self.program.entry.schema
        resources = self.program.entry.schema_resources
        if schema is None or self.ok and certainly_valid(state, schema):  # (a usable schema: C015)
            return [], True
        try:  # a state already found valid (e.g. the same state run with many seeds) is not checked again;
            # keyed by its marshal bytes, which keep every type apart (JSON text would write a tuple as a
            # list and the key 1 as "1", so a state differing only so would skip its check)
            key = (self.path, marshal.dumps(state))
        except (TypeError, ValueError):
            key = None
        if key is not None and _VALID_STATES.get(key) is schema:
            return [], True
        errors = schema_errors(state, schema, shown, resources)
        if key is not None and not errors:
            if len(_VALID_STATES) >= 256:
                _VALID_STATES.clear()
            _VALID_STATES[key] = schema
        return errors, key is not None

    def run(self, state: Any, query: str = "main", args: list[Any] | None = None, *, seed: int | None = None,
            dice: list[int] | None = None, exact: bool = False, explain: bool = False,
            budget: int = DEFAULT_STEP_BUDGET, validate: bool = True, state_name: str = "<state>",
            engine: str = "backend") -> Any:
        """Run a query on a state; returns the JSON-ready result. Raises ``RunError`` with diagnostics.

        The state is checked first (``validate``): what no JSON text holds (NaN, a lone surrogate, an
        integer past ``jsontext.MAX_INT_DIGITS`` digits, a set...) is S001 at its pointer before any rule
        runs; then against the ruleset's JSON Schema, then by its own ``query validate_state`` (in the
        same run). Each argument given for a parameter that declares a type is checked against it
        (``engine.arguments``: S008 at its pointer, before any rule runs; a list for a ``set[T]`` is
        given as that set); so is each input's value in the state, on every run, ``validate=False`` too
        (``lang.kinds``: S002 at its pointer in the state). The run is made by the fast backend
        (``validator.backend``), or by the reference interpreter (``validator.reference``) with
        ``engine="reference"`` and for a traced run (``explain``); the two give the same results.

        A float in the state or the arguments is the decimal it writes, read exactly as a JSON text's
        decimals are (``jsontext.exact_numbers``): ``0.1`` is 1/10, never the binary float near it.

        ``evaluate`` makes the same run and gives its answer as the language's values."""
        result = self.evaluate(state, query, args, seed=seed, dice=dice, exact=exact, explain=explain,
                               budget=budget, validate=validate, state_name=state_name, engine=engine)
        return self._answer(result, query)

    def _answer(self, result: Result, query: str) -> Any:
        """``run``'s JSON answer of a run ``evaluate`` made; a state ``advance`` made is kept (``_made``)."""
        out = result.json()
        if query == ADVANCE_QUERY and isinstance(out, dict) and isinstance(out.get("next"), dict) and \
                not self.program.rolls:
            self._made = [out["next"], None, 0]
        return out

    def evaluate(self, state: Any, query: str = "main", args: list[Any] | None = None, *, seed: int | None = None,
                 dice: list[int] | None = None, exact: bool = False, explain: bool = False,
                 budget: int = DEFAULT_STEP_BUDGET, validate: bool = True, state_name: str = "<state>",
                 engine: str = "backend") -> Result:
        """``run``'s run, its answer as the language's values (a ``Result``: a record stays a record, a
        map a map, a set a set, 1/2 a fraction), which the text view writes in the language's notation;
        ``Result.json()`` is ``run``'s answer. Raises ``RunError`` with diagnostics."""
        if seed is not None or dice is not None or exact or args is not None or type(budget) is not int or \
                type(state_name) is not str:
            dice, args = _run_options(seed, dice, exact, budget, args)
            _check_name(state_name, "state_name")
            if exact and explain:  # (an exact run is many runs, and traces none of them)
                raise ValueError("explain traces one run: give seed or dice, not exact")
        made = self._made
        typed = validate is _FOUND_VALID  # (``_unchecked_run``'s: a state an earlier run found valid)
        validate = bool(validate) and not typed
        schema = self.program.entry.schema
        # a state its schema's fast check accepts, when that check lets no float through, holds none:
        # it is its own exact reading, valid, and holds nothing JSON cannot (one walk of it, not three)
        # (of a usable schema: a ruleset with errors runs nothing, C015)
        certain = validate and self.ok and schema is not None and (made is None or state is not made[0]) and \
            certainly_valid(state, schema, exact=True)
        unread = None
        if not certain:
            unread = _json_problem(state, state_name) if validate else None
            state = exact_numbers(state)
        args = exact_numbers(list(args)) if args else []
        _in_time()
        if not self.ok:
            raise RunError([d for d in self.diagnostics if d.is_error], "ruleset")
        if engine not in ENGINES:
            raise ValueError(f"engine is one of {', '.join(ENGINES)}, not {_shown_value(engine)}")
        check = None
        snapshot = None
        if validate and not exact and not explain and made is not None and state is made[0]:
            snapshot = _snapshot(state)
            if snapshot is not None and snapshot == made[1]:
                unchecked = self._unchecked_run(state, query, args, seed, dice, budget - made[2], engine)
                if unchecked is not None:
                    return unchecked
        if validate:
            errors, typed = ([], True) if certain else (unread, False) if unread else self._checked(state, state_name)
            if errors:
                raise RunError(errors, "state")

            def check(found: Any) -> None:
                if type(found) is list and not found:  # (the common answer: nothing wrong)
                    return
                found_errors = self._state_diagnostics(found, state_name)
                if found_errors:
                    raise RunError(found_errors, "state")

        unit = self.program.query(query)
        if unit is None:
            where, known = self.program.missing_query(query, self.path)
            raise RunError([Diagnostic("E008", f"ruleset has no query `{query}`", where, help=known)], "usage")
        if unit.arity != len(args):
            plural = "" if unit.arity == 1 else "s"
            raise RunError([Diagnostic("E008", f"query `{query}` takes {unit.arity} argument{plural}, not {len(args)}",
                                       unit.span)], "usage")
        if args and has_typed_params(unit):  # (the arguments hold to their declared types: said before anything runs)
            args, wrong = checked_args(self.program, unit, args)
            if wrong:
                raise RunError(wrong, "state")
        runner = None if explain or engine == "reference" else self.backend(typed)
        bugs: list[Unwritable] = []  # (units the backend's writer failed: the reference's answer, said as warnings)
        try:
            if exact:
                enumerated, values = R.enumerate_exact(self.program, state, query, args, budget, engine=runner,
                                                       check=check, bugs=bugs)
                return Result(None, [], unit, _state=state, exact=enumerated, outcomes=values,
                              warnings=_writer_bugs(bugs))
            source = self._dice(seed, dice)
            value, run = R.run_query(self.program, state, query, args, source, budget, trace=explain,
                                     engine=runner, check=check, bugs=bugs)
            if isinstance(source, ScriptedDice) and source.used < len(source.faces):
                raise EvalError("E014", f"the script gave {len(source.faces)} dice and the rules rolled {source.used}",
                                unit.span, help="remove the dice the rules do not roll from the script")
            if snapshot is not None and made is not None and made is self._made:  # found valid: need not be checked again
                made[1:] = [snapshot, run.steps]
        except R.UnfitInput as unfit:
            raise RunError(unfit.diagnostics(state_name), "state") from None
        except R.MissingInput as missing:
            raise RunError([missing.diagnostic()], "state") from None
        except EvalError as err:
            raise RunError([err.diagnostic()], "eval") from None
        except RecursionError:  # outside evaluation (which reports E005 itself): a state too deep to walk
            raise self._too_deep(state, query, state_name) from None
        except ValueError as exc:
            raise RunError([_beyond_python(exc, unit.span)], "eval") from None
        result = Result(value, run.events, unit, _state=state, _state_name=state_name, _ruleset=self,
                        warnings=_writer_bugs(bugs))
        if explain:
            try:
                result.trace = R.explanation(run)
                result.explain = _to_json(result.trace, unit)  # (bounded as a result is)
            except RecursionError:
                raise self._too_deep(state, query, state_name) from None
        return result

    def _unchecked_run(self, state: Any, query: str, args: list[Any] | None, seed: int | None, dice: list[int] | None,
                       budget: int, engine: str) -> Result | None:
        """A validated run on a state this ruleset's `advance` made, that an earlier validated run (of
        ``steps`` steps, state check included) found valid, and that is unchanged since (the same
        object, the same marshal bytes: the same values of the same types), made without the state
        check: its result, or None when the caller must make the run with the check.

        It gives what the run with the check gives. The check reads the state alone, rolls no dice
        (``_made`` is kept only for rules that roll none) and passed on these very values, and its
        events are dropped; what it adds to a run is steps, and the values it leaves in the run's memo,
        which the query would otherwise compute (and pay for) itself. So a run with the check takes at
        most the earlier run's steps (a bound of the check's) more than the run without it: given
        ``budget`` less those steps, a run without it that ends well would have ended well with it,
        with the same value. Any failure (the step budget, the depth limit, an error) is said by the
        run with the check, made again from the start."""
        try:
            return self.evaluate(state, query, args, seed=seed, dice=dice, budget=budget, validate=_FOUND_VALID,
                                 engine=engine)
        except RunError:
            return None

    def _too_deep(self, state: Any, query: str, state_name: str) -> RunError:
        problem = value_problem(state)
        if problem is not None and problem[1].startswith("nested"):
            return RunError([Diagnostic("S001", f"state {problem[1]}", Span(state_name), pointer=problem[0],
                                        help="a state is a few levels of records and lists; flatten this part")],
                            "state")
        unit = self.program.query(query)
        return RunError([Diagnostic("E005", "evaluation recursed too deeply",
                                    unit.span if unit is not None else Span(self.path),
                                    help="a value nests too deeply to be checked or written")], "eval")

    def state_errors(self, state: Any, shown: str = "<state>", budget: int = DEFAULT_STEP_BUDGET) -> list[Diagnostic]:
        """Everything wrong with a state, errors alone (a state is refused when the list is not empty): what
        its JSON Schema says (``state_schema_errors``), else each input missing from it or whose value does not
        fit its declared type (its inputs bound as a run binds them: ``reference.bind_alone``, the run's
        engine reading what the schema proves) and what the ruleset's own ``query validate_state``
        finds (a place missing from the map, two pieces on one spot), each an S002 with its JSON pointer.
        A unit of that query the backend gave up for a bug of its writer (I002, the reference's answer
        being right) is heard by an open ``listening`` block, as a command hears it."""
        _check_name(shown, "shown")
        _check_budget(budget)
        _in_time()
        errors = _json_problem(state, shown)
        if errors:
            return errors
        state = exact_numbers(state)
        errors, typed = self._checked(state, shown)
        if errors:
            return errors
        try:
            if self.program.query(VALIDATE_QUERY) is None:  # (else its run binds them, in the same way)
                R.bind_alone(self.program, state, budget, engine=self.backend(typed))
                return []
            found, _ = R.run_query(self.program, state, VALIDATE_QUERY, [], SeededDice(0), budget,
                                   engine=self.backend(typed))
        except R.UnfitInput as unfit:
            return unfit.diagnostics(shown)
        except R.MissingInput as missing:
            return [missing.diagnostic()]
        except EvalError as err:
            return [err.diagnostic()]
        except ValueError as exc:
            unit = self.program.query(VALIDATE_QUERY)
            return [_beyond_python(exc, unit.span if unit is not None else Span(self.path))]
        return self._state_diagnostics(found, shown)

    def backend(self, typed: bool = False) -> Backend:
        """The program's generated functions (made at the first run, each written at its first call). Those
        for runs on a state of JSON's own types that the schema accepts (``typed``: also the data check's,
        which reads no input) take the kinds of the inputs from it (``facts.Facts.input_kind``); another
        state's runs have their own, which do not, and are valid on any state: the default, so that a
        caller that does not say its state was found valid never runs code that assumes the schema's kinds."""
        if typed or self.program.entry.schema is None:
            if self._backend is None:
                self._backend = Backend(self.program, typed=True)
            return self._backend
        if self._untyped is None:
            self._untyped = Backend(self.program)
        return self._untyped

    def _state_diagnostics(self, found: Any, shown: str) -> list[Diagnostic]:
        """What `validate_state` returned, as S002 diagnostics."""
        unit = self.program.query(VALIDATE_QUERY)
        assert unit is not None
        if not isinstance(found, (list, tuple)):
            return [Diagnostic("E001", f"`{VALIDATE_QUERY}` must give a list of {{pointer, message}}, not "
                                       f"`{str(to_json(found))[:40]}`", unit.span)]
        diags = []
        for item in found:
            item = item if isinstance(item, dict) else {"message": str(to_json(item))}
            diags.append(Diagnostic("S002", str(item.get("message", "invalid state")), Span(shown),
                                    pointer=str(item.get("pointer", "")),
                                    schema_rule=f"ruleset query `{VALIDATE_QUERY}`"
                                                + (f" ({', '.join(map(str, item['cites']))})" if item.get("cites") else "")))
        return diags

    def _dice(self, seed: int | None, dice: list[int] | None) -> DiceSource:
        if dice is not None:
            return ScriptedDice(dice)
        return SeededDice(0 if seed is None else seed)


def _beyond_python(exc: ValueError, span: Span) -> Diagnostic:
    """E011 at the query for what Python refuses to do with a value no check read (a state run with
    ``validate=False``) or a number the rules made: read a lone surrogate with a pattern (RE2 reads UTF-8,
    which has none), write an integer of more than 4 300 digits as text (a built-in's message naming it).
    A checked state holds neither (its intake refuses them: ``_json_problem``, ``certainly_valid``);
    any other ``ValueError`` is a bug of ruleval, raised as it is."""
    if isinstance(exc, UnicodeEncodeError):
        return Diagnostic("E011", "a text holding a lone surrogate cannot be matched", span,
                          help="no JSON text holds one: run with the state check (`validate`) to have it said where")
    if str(exc).startswith("Exceeds the limit"):
        return Diagnostic("E011", "a number of more than 4 300 digits cannot be written as text", span,
                          help="check the rule that computes the number, or the state (a state run with the check, "
                               f"`validate`, holds none past {MAX_INT_DIGITS} digits)")
    raise exc


def _json_problem(state: Any, shown: str) -> list[Diagnostic]:
    """S001 at the first part of a state that a JSON text could not hold (``jsontext.value_problem``: NaN,
    a key that is no text, a set, bytes, a ``Decimal``, an object of any other type, nesting past 100
    levels, a cycle), as a state read from text is refused: a value a run would otherwise take as
    something else (its text) or give back as no JSON."""
    problem = value_problem(state, subclasses=True)
    if problem is None:
        return []
    return [Diagnostic("S001", f"state {problem[1]}" if problem[1].startswith("nested") else problem[1],
                       Span(shown), pointer=problem[0],
                       help="a state holds JSON's values alone: objects with text keys, lists, texts, numbers, "
                            "true, false and null")]


def _check_seed(seed: Any, name: str = "seed") -> None:
    """A seed of ``evaluate`` or ``play`` (``play``'s ``random_orders`` too) is an integer or none (``"7"``,
    ``1.5`` or ``True`` would seed other dice)."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise TypeError(f"{name} is an integer or None, not {_shown_value(seed)}")


def _check_budget(budget: Any) -> None:
    if isinstance(budget, bool) or not isinstance(budget, int):
        raise TypeError(f"budget is a number of steps, not {_shown_value(budget)}")


def _check_name(name: Any, what: str) -> None:
    """A state's name (its place in the diagnostics, as a file's path is) is text."""
    if not isinstance(name, str):
        raise TypeError(f"{what} is the state's name in messages (text), not {_shown_value(name)}")


def _run_options(seed: Any, dice: Any, exact: Any, budget: Any, args: Any) -> tuple[list[int] | None, list[Any] | None]:
    """``evaluate``'s dice and arguments as lists, once its options are found to be of their kinds: a
    caller's mistake is said at once (``TypeError``, ``ValueError``), as ``play`` says its own, rather than
    run as something else (a seed of ``"7"`` or ``1.5`` is not 7, a die of ``True`` or ``1.5`` no face, the
    text ``"ab"`` not two arguments) or met as an error of the rules (E001 at a ``roll``)."""
    _check_seed(seed)
    if dice is not None:
        if not isinstance(dice, (list, tuple)):
            raise TypeError(f"dice is a list of integers (the faces, in the order rolled) or None, not {_shown_value(dice)}")
        bad = [x for x in dice if isinstance(x, bool) or not isinstance(x, int)]
        if bad:
            raise TypeError(f"dice is a list of integers, and {_shown_value(bad[0])} is none")
        below = next((i for i, x in enumerate(dice) if x < 1), None)
        if below is not None:  # (no die's face, whatever it rolls; one above its sides is known at the roll, E011)
            raise ValueError(f"dice[{below}] is {brief(dice[below])}, no face of a die: faces count from 1")
        dice = list(dice)
    if sum((seed is not None, dice is not None, bool(exact))) > 1:  # (the CLI's --seed, --dice and --exact likewise)
        raise ValueError("give one of seed, dice and exact: each says where the dice come from")
    _check_budget(budget)
    if args is not None:
        if not isinstance(args, (list, tuple)):
            raise TypeError(f"args is a list of the query's arguments or None, not {_shown_value(args)}")
        args = list(args)
        problem = value_problem(args, subclasses=True)
        if problem is not None:
            raise ValueError(f"args{problem[0]}: {problem[1]}, which no JSON value is")
    return dice, args


def _shown_value(value: Any) -> str:
    """A caller's value in a message: its type, and the value cut short (``values.brief``)."""
    return "None" if value is None else f"{type(value).__name__} `{brief(value)}`"


def _writer_bugs(bugs: list[Unwritable]) -> list[Diagnostic]:
    """The units a run's backend gave up for a bug of its writer (``runtime.WRITER_BUG``), as warnings."""
    return [writer_bug(b) for b in bugs]


@dataclass
class Result:
    """What a run gave (``Ruleset.evaluate``), as the language's values: the query's ``value`` and the
    ``events`` it emitted (records), or for an exact run (``--exact``) its enumeration (``exact``, JSON)
    with each outcome's value and events (``outcomes``, in the same order); a traced run's trace
    (``trace``, ``reference.explanation``: its arguments and values the language's) and its JSON
    (``explain``). The text view writes the values in the language's notation; ``json()`` is the
    JSON answer of ``Ruleset.run`` (a record and a map alike there, a set a list, 1/2 a text).
    ``warnings``: what the run found wrong in ruleval itself while the answer is right (I002: a unit
    the backend wrote as code Python refuses, run by the reference instead).

    A run reads the caller's state where it is, never copied and never changed: ``value`` may hold
    parts of it (a query giving an input back), so a state changed after the run changes ``value`` and
    what ``json()`` writes of it. ``json()`` gives new values (an exact run's is its ``exact``): take it
    before changing the state."""

    value: Any
    events: list[Any]
    unit: Unit
    exact: dict[str, Any] | None = None
    outcomes: list[tuple[Any, list[Any]]] | None = None
    explain: Any = None
    trace: dict[str, Any] | None = None
    warnings: list[Diagnostic] = field(default_factory=list)
    _state: Any = field(default=None, repr=False)
    _state_name: str = field(default="<state>", repr=False)
    _ruleset: Any = field(default=None, repr=False)

    def json(self) -> Any:
        """The answer as JSON values (``RunError`` E011/E013 for one that cannot be written): the value,
        with the events (``events``) and the trace (``explain``) added when it is a record or a map
        that has no such entry."""
        if self.exact is not None:
            return self.exact
        try:
            out = _to_json(self.value, self.unit)
        except RecursionError:
            raise self._ruleset._too_deep(self._state, self.unit.name, self._state_name) from None
        if self.events and isinstance(out, dict) and "events" not in out:
            out["events"] = _to_json(self.events, self.unit)
        if self.explain is not None and isinstance(out, dict):
            out["explain"] = self.explain
        return out


def _to_json(value: Any, unit: Unit) -> Any:
    try:
        return written(value)
    except ValueError as exc:  # too large, or an integer past Python's digit limit for text
        if str(exc) == FUNCTION_IN_RESULT:
            raise RunError([Diagnostic("E011", f"the result cannot be written: {exc}", unit.span,
                                       help="call the function (`f()`, `f(x)`) to give its value")], "eval") from None
        if too_large(exc):
            what = (f"holds more than {MAX_OUTPUT_BYTES} bytes of text" if "bytes" in str(exc)
                    else f"has more than {MAX_OUTPUT_NODES} parts")
            raise RunError([Diagnostic("E013", f"the result {what}: too large to write",
                                       unit.span, help="return a summary of it (its `len`, say)")], "eval") from None
        raise RunError([Diagnostic("E011", f"the result cannot be written: {exc}", unit.span,
                                   help="a state run with `validate=False` holds it: run with the check to have it "
                                        "said where it is" if "no JSON number" in str(exc) else
                                        "a number grew too large; check the rule that computes it")],
                       "eval") from None


def _snapshot(state: Any) -> bytes | None:
    """A state's values, types included (``True`` is not ``1``, nor ``1.0``), as bytes; None for a
    state ``marshal`` cannot write (a value of another type)."""
    try:
        return marshal.dumps(state)
    except (ValueError, TypeError):
        return None


_cache: dict[str, Ruleset] = {}


def _fresh(rs: Ruleset) -> bool:
    """Whether every file ``rs`` was loaded from holds what its load read (``confine.still``: a ``stat``
    of each, and a racy file's bytes read again). A racy file found unchanged is kept with the time of
    that read, which makes it safe once its tick has passed (``confine.TICK_NS``). A file that has
    appeared where the load found none (an import it reported not found) makes it stale too."""
    if any(os.path.exists(f) for f in rs.absent):
        return False
    safer = {}
    for f, seen in rs.files.items():
        now = still(f, seen)
        if now is None:
            return False
        if now is not seen:
            safer[f] = now
    rs.files.update(safer)
    return True


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Loading builds a large graph of long-lived objects (AST, closures) and little cyclic
    garbage: the cycle collector's passes over it are pure cost (half of compiling, measured).
    It pauses while rulesets load and is restored after (nested uses restore it once)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def load_ruleset(path: str | Path, *, use_cache: bool = True, check_cache: bool = True) -> Ruleset:
    """Load, check and compile a ruleset file; cached while none of its files changes. Its data checks
    (``engine.data``) come from the check cache (``core.checkcache``) unless ``check_cache`` is false."""
    from .core.confine import not_a_file

    if not isinstance(path, (str, os.PathLike)) or isinstance(os.fspath(path), bytes):
        raise TypeError(f"load_ruleset takes a path as str or Path, not {_shown_value(path)}")
    p = Path(path)
    try:
        key = f"{path_view().key}\0{p.resolve()}"  # (its diagnostics hold paths shown as they are here: ``PathView``)
        if use_cache and key in _cache and _fresh(_cache[key]):
            return _heard(_cache[key])
        why = not_a_file(p)
    except (OSError, ValueError) as exc:  # a path the system refuses: a name too long, a NUL character
        why = f"cannot be read: {exc.strerror.lower() if isinstance(exc, OSError) and exc.strerror else exc}"
    if why is not None:
        diag = Diagnostic("C005", f"ruleset `{str(path)[-200:]}` {why}", Span(str(path)))
        return Ruleset(str(path), Program(Loaded(p.parent, _empty_ns(p), {}, {}, [])), [diag], {})
    rs = deep.call(_load_ruleset, p, check_cache)  # the AST walks recurse: room for long chains such as `1 + 1 + ...`
    if rs.files:  # (none: a load that failed knows nothing to find it stale by, ``_unreadable``)
        _cache[key] = rs
    return _heard(rs)


def _heard(rs: Ruleset) -> Ruleset:
    """A ruleset loaded: a bug of the backend's writer its data check met (I002, kept with its diagnostics)
    heard by the command that loads it (``runtime.listening``), as a run's are."""
    for d in rs.diagnostics:
        if d.code == WRITER_BUG:
            heard(d, rs.sources.get(d.span.file))
    return rs


def check_text(path: str | Path, text: str, unsaved: dict[str, str] | None = None) -> Ruleset:
    """``load_ruleset`` of a ruleset whose text is given rather than read (an editor's buffer): the
    same checks and diagnostics as ``check``, nothing cached. ``unsaved`` maps the resolved paths of
    other rulesets to texts to read instead of theirs (the editor's other buffers). ``TypeError`` for a
    text that is no ``str``, as ``parse`` says it."""
    for given in [text, *(unsaved or {}).values()]:
        if not isinstance(given, str):
            raise TypeError(f"check_text takes the ruleset's text (and unsaved texts) as str, not {_shown_value(given)}")
    p = Path(path)
    overlay = {**(unsaved or {}), os.path.realpath(p): text}
    return deep.call(_load_ruleset, p, False, overlay)


def _load_ruleset(p: Path, check_cache: bool = True, overlay: dict[str, str] | None = None) -> Ruleset:
    from .core import checkcache, confine

    # (what its files must hold for it to be served again, ``_fresh``; and with the check cache on, the
    # digests a result kept there is made from, ``checkcache.store``)
    with confine.recording(check_cache and checkcache.cache_dir() is not None) as reads:
        rs = _load_reading(p, check_cache, overlay, reads)
    rs.read = reads.digests() if reads.hashed else {}
    return rs


def _load_reading(p: Path, check_cache: bool, overlay: dict[str, str] | None, reads: Reads) -> Ruleset:
    from .core import checkcache

    kept = None
    passed = -1  # where the passes' findings begin in ``diags``, once they ran
    with collector_paused():
        try:
            loaded = load(p, overlay)
        except (ValueError, OverflowError, RecursionError, OSError) as exc:
            return _unreadable(p, exc)
        try:
            parsed = not any(d.is_error for d in loaded.diagnostics if d.code.startswith("P"))
            # the program's checking passes, the checker's and the data checks give diagnostics alone,
            # depending on nothing but the files read: while none of those changed, the check cache has
            # them (``_CHECKS``), with the reference graph they found (``program.graph_json``), and the
            # program is only made, its units bound at their first need (``build_program``)
            kept = checkcache.lookup(p, kind=_CHECKS, read=reads.digests()) if check_cache and parsed else None
            program = build_program(loaded, checks=False, graph=kept.extra if kept is not None else None)
            made = len(program.diagnostics)
            diags = list(loaded.diagnostics) + list(program.diagnostics)
            if kept is not None:
                diags += kept.diagnostics
            else:  # (a program that did not parse: its checks, not the checker's, and nothing to keep)
                passed = len(diags) if parsed else -1
                check_program(program)
                diags += program.diagnostics[made:]
                if parsed:
                    diags += run_passes(program)
        except RecursionError:
            program = Program(loaded)
            diags = list(loaded.diagnostics) + [_too_deep(loaded)]
            passed, kept = -1, None
    # each file as the load read it, taken as its bytes were read (a file saved since is not taken for
    # what the load read); one the load only looked at (refused, or given as text), as it is now
    files = {f: reads.seen.get(f) or looked_at(f) for f in files_read(loaded)}
    rs = Ruleset(display_path(p), program, diags, files, absent=tuple(loaded.missing))
    if kept is None:
        found = _data_findings(rs, not any(d.is_error for d in diags))
        if (check_cache and passed >= 0 and not any(d.code in checkcache.NOT_CACHED for d in diags)
                and checkcache.cache_dir() is not None):
            checkcache.store(p, list(files), diags[passed:] + found, reads.digests(), kind=_CHECKS,
                             extra=graph_json(program))
        diags = diags + found
    rs.diagnostics = sort_diagnostics(diags)
    _quote_sources(loaded, rs.diagnostics, files)
    return rs


def files_read(loaded: Loaded) -> dict[str, int]:
    """Every file a load read (resolved path: modification time): modules, data, schemas, catalogues.
    A shown path is the file the load resolved it from where it has one (``Loaded.read``: the resolved
    paths, whose shown paths are these), rather than resolved again, a component at a time."""
    files: dict[str, int] = {}
    resolved_from = {display_path(real): real for real in loaded.read}  # shown path -> the resolved path read

    def add(shown: str) -> None:
        real = resolved_from.get(shown)
        try:
            resolved = Path(real) if real is not None else real_path(shown)
            files[str(resolved)] = resolved.stat().st_mtime_ns
        except OSError:
            pass

    for ns in loaded.namespaces.values():
        for shown in ns.chain:
            add(shown)
        data_schemas = [b.schema for b in ns.data.values() if b.schema is not None]
        for dep in [b.path for b in ns.data.values()] + [ns.schema_path, ns.clauses_path] + ns.schema_files + \
                [sc.path for sc in data_schemas] + [f for sc in data_schemas for f in sc.files]:
            if dep is not None:
                add(dep)
    for real in loaded.read:  # files read for a definition that failed to bind (a schema refused, say)
        if real not in files:
            try:
                files[real] = Path(real).stat().st_mtime_ns
            except OSError:
                pass
    return files


def _quote_sources(loaded: Any, diags: list[Diagnostic], files: dict[str, Seen]) -> None:
    """The text of each file the ruleset read that a diagnostic points into but the load kept no text
    of (a data file whose YAML does not parse, data findings from the check cache), so that the
    diagnostic quotes its line as any other does."""
    from .core.confine import Refused, read_bytes

    spans = [d.span for d in diags] + [r.span for d in diags for r in d.related]
    for shown in {sp.file for sp in spans if sp.line} - set(loaded.sources):
        real = real_path(shown)  # (relative to the shown paths' folder: a sweep's worker runs elsewhere)
        if str(real) in files:
            try:
                loaded.sources[shown] = read_bytes(real, data.MAX_DATA_BYTES).decode("utf-8").lstrip("\ufeff")
            except (Refused, UnicodeDecodeError, OSError):
                pass


# the check cache's kind for what a load finds after building the program (``_load_ruleset``)
_CHECKS = "load"


def _data_findings(rs: Ruleset, run_query: bool) -> list[Diagnostic]:
    """The data checks of a loaded ruleset (``engine.data``; its state schema's usability among them),
    kept in the check cache with the checker's passes' findings (``_load_ruleset``; the lines they
    quote: ``_quote_sources``)."""
    loaded = rs.program.loaded
    schemas = any(ns.schema is not None or any(b.schema is not None or b.unfit is not None for b in ns.data.values())
                  for ns in loaded.namespaces.values())
    if not schemas and (not run_query or rs.program.query(data.DATA_CHECK) is None):
        return []
    # on the backend: its code for a definition is compiled once per process (``codecache._CODE``),
    # so the variants of a ruleset, each checking its own map with the base's definitions, pay
    # only for writing it (a fifth of the reference's time on the bigger maps). A backend of its
    # own, not the ruleset's: a tree that ran them on the ruleset's counted 1.021x the instructions
    # of a full-game phase (2026-12-04; its other change touched replay alone), for no saving on a
    # cold check or a fresh process (names are the unit's, ``Backend.unit_name``, either way)
    return data.data_findings(rs.program, lambda: Backend(rs.program), run_query)


def _unreadable(p: Path, exc: BaseException) -> Ruleset:
    """A file the ruleset reads (a data file, a catalogue) holds what Python's readers refuse by raising
    (an integer past 4 300 digits, nesting too deep for the YAML constructor), or a path the system
    refuses (a name too long): C008 at the ruleset, where the loader, which would know the file, does
    not report it itself."""
    if isinstance(exc, RecursionError):
        what = "nested too deeply"
    elif isinstance(exc, OSError):
        what = f"{exc.strerror or type(exc).__name__} (`{str(exc.filename or '')[-60:]}`)"
    else:
        what = str(exc).split(";")[0][:160]
    what = what[:1].lower() + what[1:]  # ("Exceeds the limit (4300 digits) for integer string conversion")
    diag = Diagnostic("C008", f"a file this ruleset reads cannot be read: {what}", Span(display_path(p), 1, 1, 1, 2),
                      help="shorten the path" if isinstance(exc, OSError) else
                      "data files hold a few levels of maps and lists, and integers of a sane size")
    return Ruleset(display_path(p), Program(Loaded(p.parent, _empty_ns(p), {}, {}, [])), [diag], {})


def _too_deep(loaded: Loaded) -> Diagnostic:
    """P006 at the deepest expression, for a ruleset whose AST is too deep for the compiler even with
    the room ``deep.call`` gives (some 9 000 levels)."""
    depth, span = A.deepest([list(ns.defs.values()) for ns in loaded.namespaces.values()])
    if not span.line:
        span = Span(display_path(Path(loaded.entry.key)), 1, 1, 1, 2)
    return Diagnostic("P006", f"expression nested {depth} levels deep, too deep to compile", span,
                      help="name parts of it with `let` or `def`, or use `sum`/`fold` over a list")


def _empty_ns(p: Path) -> Any:
    from .lang.loader import Namespace
    return Namespace(str(p), str(p))


def ruleset_files(paths: list[str] | list[str | Path]) -> tuple[list[Path], list[str], list[Diagnostic]]:
    """The ``.rules`` files named or found under the given folders, the paths that do not exist, and
    a diagnostic for each file found in a folder that is refused: one that resolves outside the
    folder's ruleset root (C007: a symlink to `/proc/self/environ`, to another user's file) or is no
    regular file (C024: a FIFO, a device). Files named here are the user's choice and are not confined."""
    from .core.confine import walk
    from .lang.loader import refusal

    files: list[Path] = []
    missing: list[str] = []
    refused: list[Diagnostic] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found, bad = walk(p, (".rules",))
            files.extend(found)
            for path, exc in bad:
                diag = refusal(exc, Span(display_path(path)), "ruleset")
                refused.append(Diagnostic(diag.code, diag.message, diag.span,
                                          help="a ruleset found in a folder must be a regular file under the folder's "
                                               "ruleset root; name it on the command line to check it anyway"))
        elif p.is_file():
            files.append(p)
        else:
            missing.append(str(raw))
    return files, missing, refused


@dataclass
class CheckedRuleset:
    """A ruleset's check result: its diagnostics and the files it read, and the texts of the files its
    diagnostics point into as the check read them (``texts``: one checked in a sweep's worker);
    without them (a result from the check cache), read on demand (only the files the verified entry
    covers, bounded: a diagnostic's file name is not a licence to read)."""

    path: str
    diagnostics: list[Diagnostic]
    files: tuple[str, ...] = ()
    texts: dict[str, str] | None = None
    read: dict[str, str] = field(default_factory=dict)  # (``Ruleset.read``: what the check read, for the check cache)

    @property
    def sources(self) -> dict[str, str]:
        from .core.confine import Refused, read_bytes
        from .lang.syntax import MAX_SOURCE_BYTES

        if self.texts is not None:
            return dict(self.texts)
        out = {}
        covered = set(self.files)
        for f in {d.span.file for d in self.diagnostics}:
            if os.path.realpath(f) not in covered:
                continue
            try:
                out[f] = read_bytes(Path(f), MAX_SOURCE_BYTES).decode("utf-8")
            except (Refused, UnicodeDecodeError):
                pass
        return out


def checked(rs: Ruleset) -> CheckedRuleset:
    """What ``check`` keeps of a loaded ruleset: its diagnostics, the files it read, and the texts of
    those its diagnostics point into (what they quote)."""
    named = {d.span.file for d in rs.diagnostics} | {r.span.file for d in rs.diagnostics for r in d.related}
    return CheckedRuleset(rs.path, list(rs.diagnostics), tuple(rs.files),
                          {f: t for f, t in rs.sources.items() if f in named}, rs.read)


def check_paths(paths: list[str | Path], use_cache: bool = True,
                check: Callable[[list[Path], bool], dict[Path, Any]] | None = None) -> tuple[list[Any], list[Diagnostic]]:
    """Check every ruleset file under the given files or folders; all diagnostics, sorted. With
    ``use_cache``, a ruleset none of whose files changed since it was last checked is not parsed
    again (see ``checkcache``). The rulesets are found first, then each is checked on its own:
    ``check(files, use_cache)`` gives the result of each of those not in the cache (by default, this
    process checks them one after another; ``tools.checksweep`` runs them on a sweep: processes or a
    cluster); the results are merged in the files' order, and the cache kept here."""
    from .core import checkcache, confine

    files, missing, refused = ruleset_files(paths)
    diags = [Diagnostic("C005", f"`{raw}` {confine.not_a_file(raw) or 'not found'}", Span(raw)) for raw in missing] + refused
    found: dict[Path, Any] = {}
    todo = []
    for f in files:
        cached = checkcache.lookup(f) if use_cache else None
        if cached is not None:
            found[f] = CheckedRuleset(display_path(f), cached.diagnostics, tuple(cached.files))
        else:
            todo.append(f)
    with collector_paused():  # across all of them: re-enabled in between, it would scan each one's objects
        fresh = (check or _check_here)(todo, use_cache)
    for f in todo:
        found[f] = fresh[f]
        if use_cache and fresh[f].files:  # (none: what it read is not known here, and it is not cached)
            checkcache.store(f, list(fresh[f].files), fresh[f].diagnostics, fresh[f].read)
    results = [found[f] for f in files]
    for r in results:
        diags.extend(r.diagnostics)
    return results, sort_diagnostics(diags)


def _check_here(files: list[Path], use_cache: bool) -> dict[Path, Any]:
    return {f: load_ruleset(f, check_cache=use_cache) for f in files}


# ---------------------------------------------------------------- whole games: phase after phase

ADVANCE_QUERY = "advance"  # a ruleset's `query advance`: {phase, result, next, next_phase, end}
PHASE_NAME_QUERY = "phase_name"  # a ruleset's `query phase_name`: the current phase's name (optional)
# a ruleset's `query phase_order(name)` (optional): a value ordering phase names as they are played (none for
# a text that names no phase), by which `play` refuses an `until` that is no phase and sees it passed
PHASE_ORDER_QUERY = "phase_order"
NORMAL_QUERY = "normal_state"  # a ruleset's `query normal_state`: a state as the rules write one (optional)
RANDOM_ORDERS_QUERY = "random_orders"  # a ruleset's `query random_orders(seed)`: legal orders for every unit (optional)
START_QUERY = "start_state"  # a ruleset's `query start_state`: the game's start position (optional)
MAX_PHASES = 10_000


def game_seed(seed: int, game: int, phase: int) -> int:
    """The seed of a phase's random orders: of game ``game`` of ``diff --games`` (``play --random-orders``
    plays game 0), so the same seed gives the same orders in both."""
    return seed * 1_000_003 + game * 1_009 + phase


@dataclass
class Entry:
    """What is played in one phase, as a game file gives it: the orders (a list) and, optionally, the
    name of the phase they are for; ``where`` names the entry in its file (``game.jsonl:3``), and ``at``,
    when known, is where it is written (its file, line and column): what ``play`` says of the entry is
    placed there (``entry_span``), else at its name alone."""

    orders: list[Any]
    phase: str | None = None
    where: str = "<orders>"
    at: Span | None = None


def entry_span(entry: Entry) -> Span:
    """Where what is said of an entry of orders is placed: where it is written, else its name."""
    return entry.at if isinstance(entry.at, Span) else Span(entry.where)


@dataclass
class Step:
    """One phase played: its name, its state (with the orders played), its result, the next phase's
    state and name, and ``end``: None, or what the ruleset says ended the game."""

    phase: str
    state: Any
    result: Any
    next: Any
    next_phase: str
    end: Any
    where: str
    values: Any = field(default=None, repr=False, compare=False)  # `advance`'s record, as the language's values


ENGINES = ("backend", "reference")


def _entries(entries: Any, most: int) -> list[Entry]:
    """A game's orders as ``Entry`` values: an ``Entry``, a list of orders, or ``{orders, phase}``; at
    most ``most`` of them read (an endless iterable of entries is read no further than play can go)."""
    if entries is None:
        return []
    out = []
    for e in itertools.islice(entries, min(most, sys.maxsize)):  # (a larger count: as many as there are)
        if isinstance(e, Entry):
            out.append(e)
        elif isinstance(e, list):
            out.append(Entry(e))
        elif isinstance(e, dict) and isinstance(e.get("orders", []), list):
            out.append(Entry(e.get("orders", []), e.get("phase")))
        else:
            raise TypeError(f"an entry of orders is an Entry, a list of orders or {{orders, phase}}, not {e!r:.60}")
    return out


@dataclass(frozen=True)
class UntilRefused:
    """Why ``play`` refused its ``until`` (the caller's mistake) before playing: ``reason`` "unknown", it
    names no phase of the ruleset, or "passed", the game is past that phase; ``at`` the phase the game
    is at (None when the ruleset names no phases)."""
    reason: Literal["unknown", "passed"]
    at: str | None


class PlayError(DiagnosticError):
    """A game could not go on; ``kind`` as ``RunError``'s ("state", "eval", "usage", "ruleset")."""

    def __init__(self, diagnostics: list[Diagnostic], kind: str, played: list[Step],
                 until: UntilRefused | None = None):
        super().__init__(diagnostics)
        self.kind = kind
        self.played = played
        self.agreed = 0  # (`replay`: the phases of the record that agreed before it)
        self.until = until  # (set when it is `until` that play refused)


def _not_an_object(where: str, played: list[Any]) -> PlayError:
    """S001 for a state of a game or record that is no JSON object, placed at its value (``pointer=""``)."""
    return PlayError([Diagnostic("S001", "a state must be a JSON object", Span(where), pointer="")], "state", played)


def _advance_shape(rs: Ruleset, out: Any) -> str | None:
    if not isinstance(out, dict):
        return f"gave `{str(out)[:40]}`"
    missing = [k for k in ("phase", "result", "next", "next_phase", "end") if k not in out]
    if missing:
        return "has no field " + ", ".join(f"`{k}`" for k in missing)
    if not isinstance(out["phase"], str) or not isinstance(out["next_phase"], str):
        return "gave a `phase` or `next_phase` that is not text"
    if not isinstance(out["next"], dict):
        return f"gave a `next` state that is no record: `{str(out['next'])[:40]}`"
    if out["end"] is not None and not isinstance(out["end"], dict):
        return f"gave an `end` that is neither none nor a record: `{str(out['end'])[:40]}`"
    return None


def phase_name(rs: Ruleset, state: Any, shown: str = "<state>") -> str | None:
    """The state's phase name by the ruleset's ``query phase_name``; None when it has none."""
    if rs.program.query(PHASE_NAME_QUERY) is None:
        return None
    name = rs.run(state, PHASE_NAME_QUERY, state_name=shown)
    return name if isinstance(name, str) else str(name)


def play(rs: Ruleset, state: Any, entries: list[Entry], *, until: str | None = None, max_phases: int = MAX_PHASES,
         seed: int | None = None, shown: str = "<start>", engine: str = "backend",
         random_orders: int | None = None) -> Iterator[Step]:
    """Play a game forward from ``state``: each phase's orders come from the next entry (an entry
    naming its phase must be for the current one), the ruleset's ``query advance`` plays the phase
    and gives the next state. Stops when the entries run out (with ``until``: when the phase of that
    name is reached, playing phases without orders once entries run out, or, with a ``query
    phase_order``, passed without being played: the last step's ``next_phase`` then is not ``until``),
    when ``advance`` says the game ended, or after ``max_phases``. With ``random_orders`` (a seed), a
    phase past the entries is played with the ruleset's ``query random_orders`` (its seed
    ``game_seed(random_orders, 0, i)`` for the i-th phase from 0, as ``diff --games`` plays its game 0),
    and play goes on past the entries until ``until``, the game's end or ``max_phases``. Raises
    ``PlayError`` (with the steps played) on bad input."""
    played: list[Step] = []
    _check_name(shown, "shown")
    if isinstance(max_phases, bool) or not isinstance(max_phases, int) or max_phases < 1:
        raise ValueError(f"max_phases is a number of phases from 1, not {_shown_value(max_phases)}")
    entries = _entries(entries, max_phases + 1)  # (one past what may be played: more than may be is said below)
    _check_seed(seed)
    if engine not in ENGINES:
        raise ValueError(f"engine is one of {', '.join(ENGINES)}, not {_shown_value(engine)}")
    _check_seed(random_orders, "random_orders")
    if until is not None and not isinstance(until, str):  # (else met as an error of the rules reading it)
        raise TypeError(f"until is a phase name (text) or None, not {_shown_value(until)}")
    unit = rs.program.query(ADVANCE_QUERY)
    if unit is None:
        raise PlayError([Diagnostic("E008", f"ruleset has no query `{ADVANCE_QUERY}`",
                                    rs.program.missing_query(ADVANCE_QUERY, rs.path)[0],
                                    help="`play` needs `query advance` giving {phase, result, next, next_phase, end} "
                                         "(see docs/tools.md)")], "usage", played)
    if random_orders is not None and rs.program.query(RANDOM_ORDERS_QUERY) is None:
        raise PlayError([Diagnostic("E008", f"ruleset has no query `{RANDOM_ORDERS_QUERY}`",
                                    rs.program.missing_query(RANDOM_ORDERS_QUERY, rs.path)[0],
                                    help="random orders come from `query random_orders(seed)`: a list of orders "
                                         "for the state it is run on")], "usage", played)
    try:
        name = phase_name(rs, state, shown)
    except RunError as exc:
        raise PlayError(exc.diagnostics, exc.kind, played) from None
    order_of = _phase_order(rs, state, shown, played)
    target = None
    if until is not None and order_of is not None:
        target = order_of(until)
        if target is None:
            raise PlayError([Diagnostic("S006", f"`{until}` names no phase of this ruleset", Span(shown),
                                        help=f"give a phase name as the rules write it (the game is at `{name}`)")],
                            "usage", played, UntilRefused("unknown", name))
        if name is not None and _after(order_of(name), target):
            raise PlayError([Diagnostic("S006", f"the game is at `{name}`, past `{until}` already", Span(shown),
                                        help="give a phase the game has still to reach")],
                            "usage", played, UntilRefused("passed", name))
    given = state.get("orders") if isinstance(state, dict) else None
    if given:  # the start state's own orders are its phase's, unless the entries give that phase's too
        if entries:
            raise PlayError([Diagnostic("S006", "the start state holds orders, and the first entry gives orders for its "
                                                "phase too", Span(shown), pointer="/orders",
                                        help="keep one: empty the start state's `orders`, or leave its phase out of "
                                             "the orders")], "state", played)
        entries = [Entry(given, None, shown)]
    if until is None and len(entries) > max_phases:
        raise PlayError([Diagnostic("S006", f"{len(entries)} entries of orders, more phases than {max_phases} may be played",
                                    entry_span(entries[max_phases]),
                                    help="raise the number of phases allowed (--max-phases)")], "usage", played)
    where = shown
    for i in range(max_phases + 1):
        # (with `phase_order`, `until` is reached by any spelling of the same phase: `s1902m`, `S1902M `)
        if (until is not None and name == until) or (i >= len(entries) and until is None and random_orders is None) or \
                (target is not None and order_of is not None and name is not None and
                 (order_of(name) == target or _after(order_of(name), target))):
            _check_made(rs, played)
            return
        if i == max_phases:
            phases = f"{max_phases} phase{'s' if max_phases != 1 else ''}"
            if until is None:  # (random orders, played until the game ends)
                raise PlayError([Diagnostic("S006", f"{phases} played and the game has not ended", Span(shown),
                                            help="give --until PHASE to stop at a phase, or raise the number of phases "
                                                 "allowed (--max-phases)")], "state", played)
            raise PlayError([Diagnostic("S006", f"{phases} played without reaching `{until}`", Span(shown),
                                        help="check the phase name given to --until (as the ruleset writes it), or "
                                             "raise the number of phases allowed (--max-phases)")],
                            "state", played)
        if i < len(entries):
            entry = entries[i]
        elif random_orders is not None:
            entry = _random_entry(rs, state, game_seed(random_orders, 0, i), shown if i == 0 else _made_name(played[-1]),
                                  played)
        else:
            entry = Entry([], None, f"(no orders: phase {i + 1})")
        if entry.phase is not None and name is not None and entry.phase != name:
            raise PlayError([Diagnostic("S006", f"these orders are for `{entry.phase}`, but the game is at `{name}`",
                                        entry_span(entry),
                                        help="each entry is played in turn; a phase with nothing to do is skipped "
                                             "by the rules, so it has no entry")], "state", played)
        if not isinstance(state, dict):
            raise _not_an_object(where, played)
        state = {**state, "orders": entry.orders}
        try:
            evaluated = rs.evaluate(state, ADVANCE_QUERY, seed=seed, state_name=entry.where, engine=engine)
            out = rs._answer(evaluated, ADVANCE_QUERY)
        except RunError as exc:
            # a fault in the orders is the entry's; any other in the state is where the state came from:
            # the start file, or the rules' own next state after the phase before
            origin = shown if i == 0 else _made_name(played[-1])
            raise PlayError([d if d.span.file != entry.where or d.span.line else
                             replace(d, span=entry_span(entry)) if (d.pointer or "").startswith("/orders") else
                             replace(d, span=Span(origin)) for d in exc.diagnostics], exc.kind, played) from None
        problem = _advance_shape(rs, out)
        if problem is not None:
            raise PlayError([Diagnostic("E001", f"`{ADVANCE_QUERY}` {problem}", unit.span,
                                        help="it gives {phase, result, next, next_phase, end}")], "eval", played)
        step = Step(out["phase"], state, out["result"], out["next"], out["next_phase"], out["end"], entry.where,
                    evaluated.value)
        played.append(step)
        yield step
        if step.end is not None:
            _check_made(rs, played)
            return
        state, name, where = step.next, step.next_phase, f"{entry.where} (the state after it)"


def _random_entry(rs: Ruleset, state: Any, seed: int, where: str, played: list[Step]) -> Entry:
    """A phase's orders from the ruleset's ``query random_orders(seed)`` on the state reached (with
    ``seed`` as its dice too): a failure of that query stops play, said of that state."""
    # (The state is checked here, with no orders, and again by `advance` with the orders this gives: two
    # values, not one twice. This check is the first a state the rules made meets (``_check_made`` comes
    # after the game), so that `random_orders` never reads a state the rules refuse and a fault of it is
    # said as the state's, not as a failure of `random_orders`; `advance`'s checks the orders given.)
    try:
        orders = rs.run({**state, "orders": []} if isinstance(state, dict) else state, RANDOM_ORDERS_QUERY, [seed],
                        seed=seed, state_name=where)
    except RunError as exc:
        raise PlayError(exc.diagnostics, exc.kind, played) from None
    if not isinstance(orders, list):
        unit = rs.program.query(RANDOM_ORDERS_QUERY)
        assert unit is not None
        raise PlayError([Diagnostic("E001", f"`{RANDOM_ORDERS_QUERY}` gave {type(orders).__name__}, not a list of orders",
                                    unit.span)], "eval", played)
    return Entry(orders, None, f"random_orders({seed})")


def _phase_order(rs: Ruleset, state: Any, shown: str, played: list[Step]) -> Callable[[str], Any] | None:
    """The ruleset's ``query phase_order`` as a function of a phase name, run on the start state
    (the order of names does not depend on the game); None when the ruleset has no such query."""
    if rs.program.query(PHASE_ORDER_QUERY) is None:
        return None

    def order_of(name: str) -> Any:
        try:
            return rs.run(state, PHASE_ORDER_QUERY, [name], validate=False, state_name=shown)
        except RunError as exc:
            raise PlayError(exc.diagnostics, exc.kind, played) from None
    return order_of


def passed_until(rs: Ruleset, state: Any, until: str, reached: str) -> bool:
    """Whether ``play`` stopped at ``reached`` having passed ``until`` (a phase the rules skipped), not at
    it: by the ruleset's ``query phase_order`` when it has one (any spelling of the phase is that
    phase), else by the names' text."""
    order_of = _phase_order(rs, state, "<state>", [])
    if order_of is None:
        return reached != until
    return order_of(reached) != order_of(until)


def _after(a: Any, b: Any) -> bool:
    """``a`` comes after ``b`` in the order ``phase_order`` gives; False when the two cannot be compared."""
    try:
        return a is not None and bool(a > b)
    except TypeError:
        return False


def _made_name(step: Step) -> str:
    return f"(the state of {step.next_phase}, made by the rules after {step.phase})"


def _check_made(rs: Ruleset, played: list[Step]) -> None:
    """The last state the rules made, where a game stops, must be one they accept, as every state
    before it was when its phase was played: the ruleset's mistake, or a field the start state
    lacked and the rules only need later, is said at once rather than written out as a result."""
    if played:
        errors = rs.state_errors({**played[-1].next, "orders": []} if isinstance(played[-1].next, dict) else played[-1].next,
                                 _made_name(played[-1]))
        if errors:
            raise PlayError(errors, "state", played)


@dataclass
class Mismatch:
    """The first phase whose next state differs from a game record's: the phase played, where its
    record entry is, and each difference as (JSON pointer, recorded, computed)."""

    phase: str
    where: str
    next_where: str
    differences: list[tuple[str, Any, Any]]


@dataclass
class ReplayNote:
    """What `replay` did beyond comparing, said with the record entry it concerns (``where``, the phase
    ``phase``): ``fields`` it took from the phase computed before (JSON pointers) when ``kind`` is
    "derived", or the items it read once that the record wrote twice ("merged"), a phase the record
    holds and the rules pass over ("skipped"), orders no state follows ("unplayed")."""

    kind: str
    where: str
    phase: str | None
    fields: list[str] = field(default_factory=list)

    def text(self) -> str:
        at = f"{self.phase} ({self.where})" if self.phase else self.where
        if self.kind == "derived":
            return f"{at}: derived from the phase computed before it: {', '.join(self.fields)}"
        if self.kind == "merged":
            return f"{at}: {', '.join(self.fields)} written again (as the rules read it, an item before it): read once"
        if self.kind == "skipped":
            return f"{at}: the rules pass over this phase (the state after it agrees with the one computed before it)"
        return f"{at}: its orders are not played: the record holds no state after it"


def _completed(raw: dict[str, Any], recorded: dict[str, Any], computed: Any) -> tuple[dict[str, Any], list[str]]:
    """A recorded state (``raw`` as the record gives it, ``recorded`` as the rules write it) with what
    it leaves out taken from the state computed for it (a record holds what a game showed, seldom what
    the rules work out): a top-level field it lacks, and in a list of records each item's fields it
    lacks, from the computed item it matches on the fields it gives (as ``record_differences`` matches
    them). Returns the raw state so completed, with the pointers of the fields taken."""
    if not isinstance(computed, dict):
        return raw, []
    out = dict(raw)
    taken: list[str] = []
    for key, value in computed.items():
        if key == "orders":
            continue
        name = str(key).replace("~", "~0").replace("/", "~1")
        if key not in recorded:
            out[key] = value
            taken.append(f"/{name}")
        elif isinstance(recorded[key], list) and isinstance(value, list) and isinstance(raw.get(key), list) \
                and len(raw[key]) == len(recorded[key]):
            left = list(range(len(value)))
            items = list(raw[key])
            for n, item in enumerate(recorded[key]):
                found = next((i for i in left if isinstance(item, dict) and isinstance(value[i], dict)
                              and _canon(_as_recorded(item, value[i])) == _canon(item)), None)
                if found is None or not isinstance(items[n], dict):
                    continue
                left.remove(found)
                extra = [f for f in value[found] if f not in item and f not in items[n]]
                items[n] = {**items[n], **{f: value[found][f] for f in extra}}
                taken.extend(f"/{name}/{n}/{f}" for f in extra)
            out[key] = items
    return out, taken


def _named(rs: Ruleset, diags: list[Diagnostic], state: Any, where: str) -> list[Diagnostic]:
    """A record's state refused: each diagnostic names the phase (as the rules name it) it is about."""
    name = _phase_of(rs, state, where)
    if name is None:
        return diags
    return [replace(d, message=f"phase `{name}`: {d.message}") for d in diags]


def replay(rs: Ruleset, records: list[Any], seed: int | None = None,
           notes: list[ReplayNote] | None = None) -> tuple[int, Mismatch | None]:
    """Check a game record (states in play order, each with its orders; ``(where, state)`` pairs, or
    states alone): each state played must give the next record's state, field by field
    (``record_differences``), and every state of the record must be one the ruleset accepts; a record
    that goes on after the rules end the game differs there. What a record's state leaves out is
    taken from the state computed for it (``_completed``) before it is checked and played; a
    recorded state whose next one agrees with the state computed before it is a phase the rules pass
    over. Each such step, and orders of a last state, is appended to ``notes`` when given. Returns
    (phases that agree, the first mismatch or None). Raises ``PlayError`` on bad input, a record of
    fewer than two states among it; a refused state's diagnostics name its phase. A record's state that
    holds what no JSON text can (a set, bytes, NaN, a cycle) is refused (S001) before any is played.
    ``ValueError`` for two states given one name."""
    if not isinstance(records, (list, tuple)):
        raise TypeError(f"replay takes a record as a list of states (or of (where, state) pairs), not "
                        f"{_shown_value(records)}")
    if notes is not None and not isinstance(notes, list):
        raise TypeError(f"notes is a list that replay appends its notes to, or None, not {_shown_value(notes)}")
    pairs = [r if isinstance(r, tuple) and len(r) == 2 and isinstance(r[0], str) else (f"<record {i}>", r)
             for i, r in enumerate(records)]
    first_named: dict[str, int] = {}
    for i, (where, _) in enumerate(pairs):  # (the report names a state by its name: one state to each)
        if first_named.setdefault(where, i) != i:
            raise ValueError(f"records {first_named[where]} and {i} are both named `{where}`: each state of a record "
                             "has a name of its own, by which replay's report names it")
    if len(pairs) < 2:
        raise PlayError([Diagnostic("S006", "a record needs at least two states (a phase and the one after it)",
                                    Span(pairs[0][0] if pairs else "<record>"))], "state", [])
    for where, state in pairs:  # (compared as JSON text before they are checked: ``_canon``)
        unread = _json_problem(state, where)
        if unread:
            raise PlayError(unread, "state", [])
    said: list[ReplayNote] = notes if notes is not None else []
    counted = [0]
    # each state with itself as the rules write it (``_written``), read once: it is read again as a next state
    triples: list[tuple[str, Any, Any]] = []
    for where, state in pairs:
        written = _written(rs, state, where)
        once, again = _read_once(rs, state, where, written)
        if again:
            said.append(ReplayNote("merged", where, _phase_of(rs, state, where), again))
            state, written = once, _UNREAD
        triples.append((where, state, written))
    try:
        return _replay_pairs(rs, triples, seed, said, counted)
    except PlayError as exc:
        exc.agreed = counted[0]
        raise


def _replay_pairs(rs: Ruleset, triples: list[tuple[str, Any, Any]], seed: int | None,
                  said: list[ReplayNote], counted: list[int]) -> tuple[int, Mismatch | None]:
    """``replay``'s comparison, phase after phase, of a record's states: each (where, state, the state as the
    rules write it or ``_UNREAD``)."""
    agreed = 0
    k = 0
    where, state, _ = triples[0]
    while k + 1 < len(triples):
        if not isinstance(state, dict):
            raise _not_an_object(where, [])
        try:
            steps = list(play(rs, {**state, "orders": []}, [Entry(state.get("orders", []), None, where)], seed=seed,
                              shown=where))
        except PlayError as exc:
            raise PlayError(_named(rs, exc.diagnostics, state, where) if exc.kind == "state" else exc.diagnostics,
                            exc.kind, exc.played) from None
        step = steps[0]
        nxt = k + 1
        recorded, next_where, diffs = _recorded_next(rs, triples[nxt], step, steps)
        if diffs and nxt + 1 < len(triples) and isinstance(triples[nxt + 1][1], dict):
            # a phase the rules skip that the record holds (a retreat with nothing left to retreat):
            # the state after it is the one computed
            later, later_where, later_diffs = _recorded_next(rs, triples[nxt + 1], step, steps)
            if not later_diffs:
                said.append(ReplayNote("skipped", next_where, _phase_of(rs, triples[nxt][1], next_where)))
                nxt, recorded, next_where, diffs = nxt + 1, later, later_where, later_diffs
        raw = triples[nxt][1]
        # what a state gives must be well formed as given (its schema); what it leaves out and the rules
        # need, the state computed for it gives. A state given whole (nothing taken: the values given) has
        # that schema check as the first half of its full check
        completed, taken = _completed(raw, recorded, step.next) if not diffs else (raw, [])
        if taken:
            malformed = rs.state_schema_errors({**raw, "orders": raw.get("orders", [])}, next_where)
            if malformed:
                raise PlayError(_named(rs, malformed, {**raw, "orders": []}, next_where), "state", steps)
        errors = rs.state_errors({**completed, "orders": raw.get("orders", [])}, next_where)
        if errors:
            raise PlayError(_named(rs, errors, {**completed, "orders": []}, next_where), "state", steps)
        if diffs:
            return agreed, Mismatch(step.phase, where, next_where, diffs)
        if taken:
            said.append(ReplayNote("derived", next_where, step.next_phase, taken))
        agreed += 1
        counted[0] = agreed
        if step.end is not None:
            after = len(triples) - nxt - 1
            if after:
                reason = step.end.get("reason") if isinstance(step.end, dict) else None
                return agreed, Mismatch(step.next_phase, next_where, triples[nxt + 1][0], [
                    ("/phase", f"(the record goes on: {after} more state{'s' if after != 1 else ''})",
                     f"(the game is over: {reason or _canon(step.end)})")])
            return agreed, None
        k, where, state = nxt, next_where, {**completed, "orders": raw.get("orders", [])}
    if state.get("orders"):
        said.append(ReplayNote("unplayed", where, _phase_of(rs, state, where)))
    return agreed, None


_UNREAD: Any = object()  # (``_written``'s: not read yet)


def _written(rs: Ruleset, state: Any, where: str) -> Any:
    """A recorded state as the rules write states (``query normal_state``, run unchecked, with its
    orders: the same run each time, so run once a state), or None: not a record, no such query, or a
    state the rules cannot read."""
    if not isinstance(state, dict) or rs.program.query(NORMAL_QUERY) is None:
        return None
    try:
        return rs.run({**state, "orders": state.get("orders", [])}, NORMAL_QUERY, validate=False, state_name=where)
    except RunError:
        return None


def _read_once(rs: Ruleset, state: Any, where: str, written: Any) -> tuple[Any, list[str]]:
    """A recorded state with each item of its lists that is, as the rules write it (``written``, by
    ``query normal_state``), the same as an item before it left out: one thing a record wrote twice (a
    piece logged with and without a detail the rules do not keep), when the state the record gives is
    one the rules refuse. Returns it with the pointers of the items left out."""
    if not isinstance(state, dict) or not isinstance(written, dict):
        return state, []
    out = dict(state)
    again: list[str] = []
    for key, items in written.items():
        if key == "orders" or not isinstance(items, list) or not isinstance(state.get(key), list) \
                or len(state[key]) != len(items):
            continue
        seen: set[str] = set()
        keep = []
        for n, item in enumerate(items):
            text = _canon(item)
            if text in seen:
                again.append(f"/{str(key).replace('~', '~0').replace('/', '~1')}/{n}")
            else:
                seen.add(text)
                keep.append(state[key][n])
        out[key] = keep
    if not again or not rs.state_errors({**state, "orders": state.get("orders", [])}, where):
        return state, []  # (a state the rules accept as written is played as written: pieces may be alike)
    return out, again


def _phase_of(rs: Ruleset, state: Any, where: str) -> str | None:
    """A recorded state's phase name, when the rules can name it (a state they pass over is one they
    may refuse to play)."""
    if not isinstance(state, dict) or rs.program.query(PHASE_NAME_QUERY) is None:
        return None
    try:
        name = rs.run({**state, "orders": []}, PHASE_NAME_QUERY, validate=False, state_name=where)
    except RunError:
        return None
    return name if isinstance(name, str) else None


def _recorded_next(rs: Ruleset, triple: tuple[str, Any, Any], step: Step,
                   steps: list[Step]) -> tuple[dict[str, Any], str, list[tuple[str, Any, Any]]]:
    """A record's next state (where, state, as the rules write states: ``written``, or ``_UNREAD``:
    ``_written``; when the ruleset has a ``query normal_state``: `STP(sc)` is `stp/sc`), its place, and how
    it differs from the state computed (``step.next``)."""
    next_where, recorded, written = triple
    if not isinstance(recorded, dict):
        raise _not_an_object(next_where, steps)
    if written is _UNREAD:
        written = _written(rs, recorded, next_where)
    if isinstance(written, dict):  # (else as written: a state the rules cannot read is refused by the state check)
        recorded = {f: v for f, v in written.items() if f in recorded}
    recorded = {f: v for f, v in recorded.items() if f != "orders"}
    return recorded, next_where, record_differences(recorded, step.next)


def _canon(value: Any) -> str:
    """A value's text with its maps' keys and its lists' items in one order: lists are collections."""
    return json.dumps(_sorted(value), sort_keys=True, ensure_ascii=False)


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(v) for k, v in value.items()}
    if isinstance(value, list):
        return sorted((_sorted(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True, ensure_ascii=False))
    return value


def _as_recorded(recorded: Any, computed: Any) -> Any:
    """A computed list item as a record gives it: a record's fields the recorded one gives, else all."""
    if isinstance(recorded, dict) and isinstance(computed, dict) and all(k in computed for k in recorded):
        return {k: computed[k] for k in recorded}
    return computed


def _near_differences(recorded: Any, computed: Any, path: str) -> list[tuple[str, Any, Any]] | None:
    """The field-by-field differences of two records that agree on more of the recorded one's fields
    than they differ on (the same item, changed), else None (different items)."""
    if not (isinstance(recorded, dict) and isinstance(computed, dict)):
        return None
    differing = sum(1 for k in recorded if k not in computed or _canon(recorded[k]) != _canon(computed[k]))
    if differing * 2 >= len(recorded):
        return None
    return record_differences(recorded, {k: computed[k] for k in recorded if k in computed}, path)


def record_differences(recorded: Any, computed: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """Where a computed value departs from a recorded one, as (JSON pointer, recorded, computed):
    maps key by key (a top-level field the record leaves out is not compared: records seldom hold
    everything; deeper down, a key on one side only is a difference), lists as collections (order
    aside, at every depth: an item recorded but not computed is listed as (pointer, item, "(missing)"),
    one computed but not recorded as (pointer, "(not recorded)", item), except that a recorded record
    and a computed one that agree on most of the recorded fields are one item changed, listed field by
    field under the recorded item's index); a list's item that is a record matches a computed record
    on the fields the record gives (a game log may give an item without a field the rules work out
    for it). A field that is an empty list on one side and absent on the other is no difference: both
    say there is none."""
    if isinstance(recorded, dict) and isinstance(computed, dict):
        out = []
        for k in list(recorded) + ([k for k in computed if k not in recorded] if path else []):
            key = str(k).replace("~", "~0").replace("/", "~1")
            if recorded.get(k, []) == [] and computed.get(k, []) == []:
                continue  # an empty list and no list at all both say: none
            if k not in computed:
                out.append((f"{path}/{key}", recorded[k], "(absent)"))
            elif k not in recorded:
                out.append((f"{path}/{key}", "(absent)", computed[k]))
            else:
                out.extend(record_differences(recorded[k], computed[k], f"{path}/{key}"))
        return out
    if isinstance(recorded, list) and isinstance(computed, list):
        left = list(range(len(computed)))  # computed items not matched yet
        missing = []
        for n, item in enumerate(recorded):
            text = _canon(item)
            found = next((i for i in left if _canon(_as_recorded(item, computed[i])) == text), None)
            if found is None:
                missing.append(n)
            else:
                left.remove(found)
        out = []
        for n in missing:  # a record that agrees with a computed one on most of its fields is that one, changed
            item = recorded[n]
            near = [(len(d), i, d) for i in left for d in [_near_differences(item, computed[i], f"{path}/{n}")]
                    if d is not None]
            if near:
                _, i, diffs = min(near)
                left.remove(i)
                out.extend(diffs)
            else:
                out.append((path or "/", item, "(missing)"))
        return out + [(path or "/", "(not recorded)", computed[i]) for i in left]
    if _canon(recorded) != _canon(computed):
        return [(path or "/", recorded, computed)]
    return []
