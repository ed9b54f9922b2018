"""The public API, one function per stage; the CLI is a thin shell over it.

>>> rs = load_ruleset("rulesets/his/his.rules")          # doctest: +SKIP
>>> rs.run(state, dice=[6, 3])                            # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import sys
import time
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

from . import ast as A
from . import deep
from .checker import run_passes
from .codegen import note_run
from .compiler import Program, compile_program
from .diagnostics import Diagnostic, DiagnosticError, Span, sort_diagnostics
from .jsontext import value_problem
from .loader import Loaded, display_path, load
from .runtime import (DEFAULT_STEP_BUDGET, MAX_EXACT_PATHS, Context, DiceSource, EvalError, ExactDice, ScriptedDice,
                      SeededDice)
from .state import certainly_valid, resolve_pointer, schema_errors
from .syntax import parse_module
from .values import to_json


_T = TypeVar("_T")
_VALID_STATES: dict[tuple[str, str], Any] = {}


VALIDATE_QUERY = "validate_state"


class RunError(DiagnosticError):
    """Evaluation could not produce a result; ``kind`` is "state" (exit 3) or "eval" (exit 1)."""

    def __init__(self, diagnostics: list[Diagnostic], kind: str):
        super().__init__(diagnostics)
        self.kind = kind


def parse(text: str, path: str = "<string>") -> A.Module:
    """Parse one ruleset source to its AST (raises ``DiagnosticError``)."""
    return deep.call(parse_module, text, path)


@dataclass
class Ruleset:
    """A loaded, checked and compiled ruleset."""

    path: str
    program: Program
    diagnostics: list[Diagnostic]
    files: dict[str, int]

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

    def validate_state(self, state: Any, shown: str = "<state>") -> list[Diagnostic]:
        schema = self.program.entry.schema
        if schema is None or certainly_valid(state, schema):
            return []
        try:  # a state already found valid (e.g. the same state run with many seeds) is not checked again
            key = (self.path, json.dumps(state, sort_keys=True))
        except (TypeError, ValueError):
            key = None
        if key is not None and _VALID_STATES.get(key) is schema:
            return []
        errors = schema_errors(state, schema, shown)
        if key is not None and not errors:
            if len(_VALID_STATES) >= 256:
                _VALID_STATES.clear()
            _VALID_STATES[key] = schema
        return errors

    def ruleset_state_errors(self, state: Any, shown: str, budget: int = DEFAULT_STEP_BUDGET) -> list[Diagnostic]:
        """What a schema cannot say (a place missing from the map, two pieces on one spot): a ruleset may
        declare ``query validate_state`` returning ``[{pointer, message}]``; each item is an S002."""
        return self._budget_exact(lambda slow: self._ruleset_state_errors(state, shown, budget, slow))[0]

    def _budget_exact(self, call: Callable[[bool], _T]) -> _T:
        """``call(slow=False)``; a run of generated code that ran out of steps, again on closures only.
        Generated code checks the budget in loops, recursive calls and as the run leaves it, so it finds
        an overrun late and elsewhere (``codegen.Generator.charge``): the closures report it where it
        happened. (Generated code charges at least the closures' steps, often more; when the closures do
        not run out, their result is the run's.)"""
        try:
            return call(False)
        except RunError as err:
            if self.program.generated is None or not any(d.code == "E004" for d in err.diagnostics):
                raise
        return call(True)

    def _ruleset_state_errors(self, state: Any, shown: str, budget: int,
                              slow: bool = False) -> tuple[list[Diagnostic], dict[Any, Any], dict[Any, Any]]:
        """The S002 diagnostics, what the check memoized that no die touched, and the inputs it bound
        (for the run after it, on the same state: see below what is not handed over)."""
        unit = self.program.query(VALIDATE_QUERY)
        if unit is None or unit.arity:
            return [], {}, {}
        ctx = Context(state, SeededDice(0), budget=budget, slow=slow)
        found = self._evaluate(ctx, unit, [])
        # nothing is shared when the check emitted events (a memoized value would skip emitting them
        # again), nor when an input's default rolled a die (the run rolls its own: what was computed from
        # that input, tainted or not, may differ)
        nothing = bool(ctx.events or ctx.bound_rolls)
        memo = ({} if nothing else ctx.memo if not ctx.tainted  # the check's context ends here: no copy
                else {k: v for k, v in ctx.memo.items() if k not in ctx.tainted})
        inputs = {} if nothing else ctx.inputs
        if not isinstance(found, (list, tuple)):
            return [Diagnostic("E001", f"`{VALIDATE_QUERY}` must give a list of {{pointer, message}}, not "
                                       f"`{str(to_json(found))[:40]}`", unit.decl.span)], memo, inputs
        diags = []
        for item in found:
            item = item if isinstance(item, dict) else {"message": str(to_json(item))}
            diags.append(Diagnostic("S002", str(item.get("message", "invalid state")), Span(shown),
                                    pointer=str(item.get("pointer", "")),
                                    schema_rule=f"ruleset query `{VALIDATE_QUERY}`"
                                                + (f" ({', '.join(map(str, item['cites']))})" if item.get("cites") else "")))
        return diags, memo, inputs

    def _dice(self, seed: int | None, dice: list[int] | None) -> DiceSource:
        if dice is not None:
            return ScriptedDice(dice)
        return SeededDice(0 if seed is None else seed)

    def run(self, state: Any, query: str = "main", args: list[Any] | None = None, *, seed: int | None = None,
            dice: list[int] | None = None, exact: bool = False, explain: bool = False,
            budget: int = DEFAULT_STEP_BUDGET, validate: bool = True, state_name: str = "<state>") -> Any:
        """Run a query on a state; returns the JSON-ready result. Raises ``RunError`` with diagnostics."""
        if not self.ok:
            raise RunError([d for d in self.diagnostics if d.is_error], "ruleset")
        note_run(self.program)
        started = time.perf_counter()
        try:
            return self._budget_exact(lambda slow: self._run(state, query, args, seed, dice, exact, explain, budget,
                                                             validate, state_name, slow))
        except RecursionError:  # outside evaluation (which reports E005 itself): a state too deep to walk
            raise self._too_deep(state, query, state_name) from None
        finally:  # the time runs take tells when the program is worth generating (``codegen.note_run``)
            self.program.run_seconds += time.perf_counter() - started

    def _too_deep(self, state: Any, query: str, state_name: str) -> RunError:
        problem = value_problem(state)
        if problem is not None and problem[1].startswith("nested"):
            return RunError([Diagnostic("S001", f"state {problem[1]}", Span(state_name), pointer=problem[0],
                                        help="a state is a few levels of records and lists; flatten this part")],
                            "state")
        unit = self.program.query(query)
        return RunError([Diagnostic("E005", "evaluation recursed too deeply",
                                    unit.decl.span if unit is not None else Span(self.path),
                                    help="a value nests too deeply to be checked or written")], "eval")

    def _run(self, state: Any, query: str, args: list[Any] | None, seed: int | None, dice: list[int] | None,
             exact: bool, explain: bool, budget: int, validate: bool, state_name: str, slow: bool) -> Any:
        checked: dict[Any, Any] = {}
        inputs: dict[Any, Any] = {}
        if validate:
            errors = self.validate_state(state, state_name)
            if not errors:
                errors, checked, inputs = self._ruleset_state_errors(state, state_name, budget, slow)
            if errors:  # (a schema that cannot be used is the ruleset's error, not the state's)
                raise RunError(errors, "ruleset" if any(d.code.startswith("C") for d in errors) else "state")
        unit = self.program.query(query)
        if unit is None:
            known = ", ".join(self.queries()) or "none"
            raise RunError([Diagnostic("E008", f"ruleset has no query `{query}`", Span(self.path),
                                       help=f"queries: {known}")], "usage")
        args = list(args or [])
        if unit.arity != len(args):
            raise RunError([Diagnostic("E008", f"query `{query}` takes {unit.arity} arguments, not {len(args)}",
                                       unit.decl.span)], "usage")
        if exact:
            return self._run_exact(state, unit, args, budget, explain, slow)
        ctx = Context(state, self._dice(seed, dice), budget=budget, trace=explain, slow=slow)
        if not explain and checked:  # the same state: what `validate_state` computed (with no die) holds here too
            ctx.memo = checked
            ctx.inputs = inputs  # (bound from the same state; empty, so bound again, if a die was rolled)
        value = self._evaluate(ctx, unit, args)
        out = self._to_json(value, unit)
        if ctx.events and isinstance(out, dict) and "events" not in out:
            out["events"] = to_json(ctx.events)
        if explain and isinstance(out, dict):
            out["explain"] = explanation(ctx)
        return out

    @staticmethod
    def _to_json(value: Any, unit: Any) -> Any:
        try:
            return to_json(value)
        except ValueError as exc:  # e.g. an integer past Python's digit limit for text
            raise RunError([Diagnostic("E011", f"the result cannot be written: {exc}", unit.decl.span,
                                       help="a number grew too large; check the rule that computes it")],
                           "eval") from None

    def _bind_inputs(self, ctx: Context) -> None:
        for nskey, decl, default in self.program.inputs:
            ok, value = resolve_pointer(ctx.state, decl.pointer)
            if not ok:
                if default is None:
                    raise RunError([Diagnostic("S002", f"input `{decl.name}` is missing from the state", decl.span,
                                               pointer=decl.pointer,
                                               help=f"the state needs a value at `{decl.pointer}`, "
                                                    "or give the input a `default`")],
                                   "state")
                value = default([ctx])
            ctx.inputs[(nskey, decl.name)] = value
        ctx.bound_rolls = ctx.rolls

    def _evaluate(self, ctx: Context, unit: Any, args: list[Any]) -> Any:
        old_limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old_limit, 12000))
        try:
            if not ctx.inputs:  # (handed over from the state check, see `_run`)
                self._bind_inputs(ctx)
            return unit.fn(ctx, *args)
        except EvalError as err:
            raise RunError([err.diagnostic()], "eval") from None
        except RecursionError:
            raise RunError([Diagnostic("E005", "evaluation recursed too deeply", unit.decl.span,
                                       help="a rule calls itself without reaching a base case")], "eval") from None
        finally:
            sys.setrecursionlimit(old_limit)

    def _run_exact(self, state: Any, unit: Any, args: list[Any], budget: int, explain: bool, slow: bool) -> Any:
        """Enumerate every dice outcome by re-running along each branch of the fork tree."""
        outcomes: dict[str, list[Any]] = {}
        path: list[int] = []
        paths = 0
        dice = ExactDice()
        while True:
            ctx = Context(state, dice, budget=budget, path=path, slow=slow)
            if dice.shared:
                ctx.memo.update(dice.shared)
            value = self._to_json(self._evaluate(ctx, unit, args), unit)
            events = to_json(ctx.events)  # before weighing the path: this may fork too
            dice.share_after(ctx)
            prob = Fraction(1)
            for choice, weights in ctx.forks:
                prob *= weights[choice]
            key = json.dumps(value, sort_keys=True)
            if key in outcomes:
                outcomes[key][1] += prob
            else:
                outcomes[key] = [value, prob, events]
            paths += 1
            if paths > MAX_EXACT_PATHS:
                raise RunError([Diagnostic("E010", f"more than {MAX_EXACT_PATHS} dice outcomes to enumerate",
                                           unit.decl.span, help="use --seed or --dice instead of --exact")], "eval")
            # next path: bump the deepest fork that still has an untried branch
            taken = [c for c, _ in ctx.forks]
            sizes = [len(w) for _, w in ctx.forks]
            i = len(taken) - 1
            while i >= 0 and taken[i] + 1 >= sizes[i]:
                i -= 1
            if i < 0:
                break
            path = taken[:i] + [taken[i] + 1]
        total = sum((o[1] for o in outcomes.values()), Fraction(0))
        ranked = sorted(outcomes.values(), key=lambda o: (-o[1], json.dumps(o[0], sort_keys=True)))
        result: dict[str, Any] = {
            "exact": True,
            "paths": paths,
            "total": _frac(total),
            "outcomes": [{"probability": _frac(p), "p": round(float(p), 6), "result": v, "events": ev}
                         for v, p, ev in ranked],
        }
        return result


def _frac(p: Fraction) -> str:
    return f"{p.numerator}/{p.denominator}"


def explanation(ctx: Context) -> dict[str, Any]:
    root = ctx.trace_stack[0] if ctx.trace_stack else {"children": []}
    edges = sorted({(json.dumps(to_json(list(a))), json.dumps(to_json(list(b)))) for a, b in ctx.decision_edges})
    settled = [{"decision": to_json(list(k)), "value": to_json(s.value), "cites": list(s.cites)}
               for k, s in ctx.settled.items()]
    # the decisions met, so that the identity keys of `decision_edges` can be shown with their arguments
    decisions = [{"key": to_json(list(k)), "decision": k[0], "args": to_json(list(a)),
                  "value": to_json(ctx.dvalue.get(k))} for k, a in ctx.decisions.items()]
    return {"trace": root["children"], "decision_edges": [[json.loads(a), json.loads(b)] for a, b in edges],
            "cycles": ctx.cycles, "settled": settled, "decisions": decisions}


_cache: dict[str, Ruleset] = {}


def _fresh(rs: Ruleset) -> bool:
    for f, mtime in rs.files.items():
        try:
            if Path(f).stat().st_mtime_ns != mtime:
                return False
        except OSError:
            return False
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


def load_ruleset(path: str | Path, *, use_cache: bool = True) -> Ruleset:
    """Load, check and compile a ruleset file; cached while none of its files changes."""
    p = Path(path)
    key = f"{os.getcwd()}\0{p.resolve()}"  # diagnostics show paths relative to the working folder
    if use_cache and key in _cache and _fresh(_cache[key]):
        return _cache[key]
    if not p.is_file():
        diag = Diagnostic("C005", f"ruleset `{path}` not found", Span(str(path)))
        return Ruleset(str(path), Program(Loaded(p.parent, _empty_ns(p), {}, {}, [])), [diag], {})
    rs = deep.call(_load_ruleset, p)  # the AST walks recurse: room for long chains such as `1 + 1 + ...`
    _cache[key] = rs
    return rs


def _load_ruleset(p: Path) -> Ruleset:
    with collector_paused():
        try:
            loaded = load(p)
        except (ValueError, OverflowError, RecursionError, OSError) as exc:
            return _unreadable(p, exc)
        try:
            program = compile_program(loaded)
            diags = list(loaded.diagnostics) + list(program.diagnostics)
            if not any(d.is_error for d in diags if d.code.startswith("P")):
                diags += run_passes(program)
        except RecursionError:
            program = Program(loaded)
            diags = list(loaded.diagnostics) + [_too_deep(loaded)]
    files: dict[str, int] = {}
    for ns in loaded.namespaces.values():
        for shown in ns.chain:
            try:
                files[str(Path(shown).resolve())] = Path(shown).stat().st_mtime_ns
            except OSError:
                pass
        for dep in [b.path for b in ns.data.values()] + [ns.schema_path, ns.clauses_path]:
            if dep is None:
                continue
            try:
                files[str(Path(dep).resolve())] = Path(dep).stat().st_mtime_ns
            except OSError:
                pass
    return Ruleset(display_path(p), program, sort_diagnostics(diags), files)


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
    from .loader import Namespace
    return Namespace(str(p), str(p))


def ruleset_files(paths: list[str] | list[str | Path]) -> tuple[list[Path], list[str]]:
    """The ``.rules`` files named or found under the given folders, and the paths that do not exist."""
    files: list[Path] = []
    missing: list[str] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            files.extend(sorted(x for x in p.rglob("*.rules") if x.is_file()))
        elif p.is_file():
            files.append(p)
        else:
            missing.append(str(raw))
    return files, missing


@dataclass
class CheckedRuleset:
    """A ruleset's check result from the check cache: its diagnostics, sources read on demand."""

    path: str
    diagnostics: list[Diagnostic]

    @property
    def sources(self) -> dict[str, str]:
        out = {}
        for f in {d.span.file for d in self.diagnostics}:
            try:
                out[f] = Path(f).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                pass
        return out


def check_paths(paths: list[str | Path], use_cache: bool = True, jobs: int = 1) -> tuple[list[Any], list[Diagnostic]]:
    """Check every ruleset file under the given files or folders; all diagnostics, sorted. With
    ``use_cache``, a ruleset none of whose files changed since it was last checked is not parsed
    again (see ``checkcache``). With ``jobs`` > 1, folders are checked in that many processes
    (see `_check_in_processes`); the result is the same."""
    from . import checkcache

    files, missing = ruleset_files(paths)
    diags = [Diagnostic("C005", f"`{raw}` not found", Span(raw)) for raw in missing]
    found: dict[Path, Any] = {}
    todo = []
    for f in files:
        cached = checkcache.lookup(f) if use_cache else None
        if cached is not None:
            found[f] = CheckedRuleset(display_path(f), cached)
        else:
            todo.append(f)
    with collector_paused():  # across all of them: re-enabled in between, it would scan each one's objects
        if jobs > 1 and len(todo) > 1 and hasattr(os, "fork"):
            found.update(_check_in_processes(todo, use_cache, jobs))
        else:
            found.update(_check_here(todo, use_cache))
    results = [found[f] for f in files]
    for r in results:
        diags.extend(r.diagnostics)
    return results, sort_diagnostics(diags)


def _check_here(files: list[Path], use_cache: bool) -> dict[Path, Any]:
    from . import checkcache

    out: dict[Path, Any] = {}
    for f in files:
        rs = load_ruleset(f)
        if use_cache:
            checkcache.store(f, list(rs.files), rs.diagnostics)
        out[f] = rs
    return out


def _shares(files: list[Path], jobs: int) -> list[list[Path]]:
    """Files in at most ``jobs`` shares of about equal size; one folder's files stay together, as
    they usually extend one base ruleset, which each process parses and compiles once."""
    folders: dict[Path, list[Path]] = {}
    sizes: dict[Path, int] = {}
    for f in files:
        folders.setdefault(f.parent, []).append(f)
        sizes[f.parent] = sizes.get(f.parent, 0) + f.stat().st_size
    shares: list[list[Path]] = [[] for _ in range(min(jobs, len(folders)))]
    loads = [0] * len(shares)
    for folder in sorted(folders, key=lambda d: sizes[d], reverse=True):  # largest first, to the lightest share
        i = loads.index(min(loads))
        shares[i].extend(folders[folder])
        loads[i] += sizes[folder]
    return [sh for sh in shares if sh]


def _check_in_processes(files: list[Path], use_cache: bool, jobs: int) -> dict[Path, Any]:
    """Check shares of the files in forked processes (this one takes the first share). A child
    sends its rulesets' diagnostics back as JSON and exits; if a child fails in any way, its
    share is checked here instead, so the result never depends on how the work was split."""
    from . import checkcache

    shares = _shares(files, jobs)
    children = []
    here = list(shares[0])
    for share in shares[1:]:
        try:  # no more descriptors or processes: the share is checked here
            read_end, write_end = os.pipe()
        except OSError:
            here.extend(share)
            continue
        try:
            pid = os.fork()
        except OSError:
            os.close(read_end)
            os.close(write_end)
            here.extend(share)
            continue
        if pid == 0:  # the child: check, report, and leave without returning into the caller
            code = 1
            try:
                os.close(read_end)
                done = _check_here(share, use_cache)
                payload = json.dumps([[str(f), [checkcache.diag_to_json(d) for d in done[f].diagnostics]]
                                      for f in share])
                with os.fdopen(write_end, "w", encoding="utf-8") as pipe:
                    pipe.write(payload)
                code = 0
            finally:
                os._exit(code)
        os.close(write_end)
        children.append((pid, read_end, share))
    out = _check_here(here, use_cache)
    for pid, read_end, share in children:
        with os.fdopen(read_end, encoding="utf-8") as pipe:
            payload = pipe.read()
        _, status = os.waitpid(pid, 0)
        try:
            if status != 0:
                raise ValueError(f"worker exited with status {status}")
            for name, items in json.loads(payload):
                f = Path(name)
                out[f] = CheckedRuleset(display_path(f), [checkcache.diag_from_json(d) for d in items])
            if any(f not in out for f in share):
                raise ValueError("worker left out a ruleset")
        except (ValueError, KeyError, TypeError):
            out.update(_check_here(share, use_cache))
    return out
