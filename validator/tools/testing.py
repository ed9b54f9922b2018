"""``ruleval test``: YAML test cases, one format for every rule family.

A case file holds ``ruleset:`` (path relative to the file) and ``cases:``; each case has an ``id``,
a ``state`` (or ``state_file``), optional ``query``/``args``/``dice``/``seed``/``exact``, and
expectations: ``expect`` (matched as a subset of the result: maps by key, lists item by item;
``{exactly: VALUE}`` a value whole, maps with no key more), ``probabilities`` (exact mode), or
``expect_error`` (a diagnostic code). A case with none of them, or an expected map written empty
under a key, checks nothing, and is refused (S007). ``xfail: reason`` keeps a known failure
visible. ``clauses:`` names what the case exercises, for ``ruleval coverage``.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, Sequence, TextIO

import yaml

from ..core import confine, safeyaml
from ..core.confine import Refused, find_root
from .common import bundled_file
from .report import xml_attr, xml_text
from ..core.diagnostics import CODES, Diagnostic, Span, closest_name, one_line, utf8_fault

MAX_CASE_FILE_BYTES = 20_000_000
MAX_SHOWN = 60  # characters of a value shown in a failure message
MAX_MESSAGE = 240  # characters of a failure message

CASE_KEYS = {"id", "title", "clauses", "state", "state_file", "query", "args", "dice", "seed", "exact", "expect",
             "probabilities", "expect_error", "xfail", "options", "note", "ruleset"}


@dataclass
class Case:
    id: str
    file: str
    line: int
    data: dict[str, Any]
    ruleset: str
    root: str = ""  # the case file's ruleset root: its `state_file` must lie under it (empty: imported cases)
    index: int = -1  # its place in its file's `cases` list, where its state is written (-1: imported cases)
    state_path: str = ""  # the `state_file` its state was read from, when a sweep sends that state inline


@dataclass
class Outcome:
    case: Case
    status: str  # passed failed xfailed xpassed error
    message: str = ""
    seconds: float = 0.0
    actual: Any = None
    code: str | None = None  # an erroring case's diagnostic code (S004, S001, E003...): the exit code follows it
    at: tuple[int, int] | None = None  # (line, col) in the case file of what failed (a value expected, a field)
    said: "_Said | None" = None  # what its message is made of, placed in the case file where that is read
    help: str = ""  # the help of the diagnostic that stopped it (E007: add dice to the case's `dice:` list)


@dataclass
class _Said:
    """A failure's message before it is placed in the case file (``_compose``): a sweep's worker, which
    reads no case file, sends it, and the outcome is composed again where the file is read."""
    status: str  # the outcome's status before an `xfail` turns it
    diags: list[Diagnostic] = field(default_factory=list)  # what refused the run...
    prefix: str = ""  # (`expected E003, got `)
    problems: list[tuple[tuple[str, ...] | None, str]] = field(default_factory=list)  # ...or (value in the case, text)


@dataclass
class Suite:
    cases: list[Case] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    docs: dict[str, Any] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)  # the text of each case file a diagnostic is said in


_LINE_KEYS = ("__line__", "__lines__")


def _strip_lines(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _strip_lines(x) for k, x in v.items() if k not in _LINE_KEYS}
    if isinstance(v, list):
        return [_strip_lines(x) for x in v]
    return v


def load_suite(paths: list[str], expectations: bool = True) -> Suite:
    """The cases of the files and folders named; ``expectations=False`` for a reader of their states alone
    (``diff --cases``), which does not refuse a case whose expectations check nothing (S007)."""
    suite = Suite()
    files: list[tuple[Path, bool]] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            # found by walking: inside the folder's root and a regular file, or refused (a symlink to
            # another user's file, a FIFO) with S005; `_`-files are data beside the cases
            found, refused = confine.walk(p, (".yaml",), skip_prefix="_")
            files.extend((x, False) for x in found)
            for path, exc in refused:
                suite.diagnostics.append(Diagnostic("S005", f"test file {exc.message}", Span(confine.display_path(path)),
                                                    help="a case file found in a folder must be a regular file under "
                                                         "the folder's ruleset root"))
        elif p.is_file():
            files.append((p, True))
        else:
            suite.diagnostics.append(Diagnostic("U001", f"`{raw}` not found", Span(raw)))
    for f, named in files:
        before = len(suite.diagnostics)
        text = _load_file(f, suite, named, expectations)
        if text is not None and len(suite.diagnostics) > before:  # (the line under each, as a ruleset's)
            suite.sources[confine.display_path(f)] = text
    return suite


def _read_case_file(path: Path, shown: str) -> tuple[Any, str]:
    """A case file's YAML (``safeyaml``, with line numbers) and its text, bounded; raises ``Refused`` or
    ``yaml.YAMLError``."""
    text = confine.read_bytes(path, MAX_CASE_FILE_BYTES, None, shown).decode("utf-8")
    return safeyaml.load(text, line_numbers=True), text


def _expects_nothing(data: dict[str, Any]) -> tuple[tuple[str, ...], str, str] | None:
    """Where a case's expectations check nothing (S007): the parts of the key, why, and a help."""
    exactly = "`{exactly: {}}` expects a map or record with no key"
    if not any(key in data for key in ("expect", "probabilities", "expect_error")):
        return ("id",), "the case has no expectation (`expect`, `probabilities` or `expect_error`): it checks nothing", \
            "write what the run must give (`expect:`), the chances of its outcomes (`probabilities:`) or the " \
            "diagnostic it must raise (`expect_error:`)"
    if isinstance(data.get("expect"), dict) and not data["expect"]:
        return ("expect",), "`expect: {}` checks nothing (an expected map is matched as at least its keys)", \
            f"write the fields of the result the case checks; {exactly}"
    found = _empty_map_at(data.get("expect"), ("expect",))
    if found is not None:
        return found, f"`{found[-1]}: {{}}` checks nothing (an expected map is matched as at least its keys)", \
            f"write what it must hold, or leave the key out if anything will do; {exactly}"
    probabilities = data.get("probabilities")
    if probabilities == []:
        return ("probabilities",), "`probabilities: []` checks nothing", "give `where` and `p` of an outcome"
    for i, want in enumerate(probabilities if isinstance(probabilities, list) else []):
        where = want.get("where") if isinstance(want, dict) else None
        if isinstance(want, dict) and "where" not in want:
            return ("probabilities", str(i)), "a probability without `where` is that of every outcome", \
                "name the fields of the outcomes whose probability is `p` in `where`"
        if isinstance(where, dict) and not where:
            return ("probabilities", str(i), "where"), "`where: {}` matches every outcome", \
                "name the fields of the outcomes whose probability is `p`"
        found = _empty_map_at(where, ("probabilities", str(i), "where"))
        if found is not None:
            return found, f"`{found[-1]}: {{}}` checks nothing (a pattern's map is matched as at least its keys)", \
                f"write what it must hold, or leave the key out; {exactly}"
    return None


def _ruleset_path(base: Path, ref: str) -> str:
    """The ruleset a case names: a path from its case file's folder, or a ``bundled:`` name (one the
    bundle lacks is left as written, for the run to report)."""
    try:
        found = bundled_file(ref)
    except Refused:
        return ref
    return str(base / ref) if found is None else str(found)


def _confined(suite: Suite, base: Path, root: Path, ref: Any, key: str, at: Span) -> bool:
    """Whether a path a case names (``ruleset``, ``state_file``, written at ``at``) may be read: under the
    case file's root, a regular file. A missing file is left to the run, which reports it."""
    try:
        if key != "ruleset" or bundled_file(str(ref)) is None:  # (a `bundled:` name is read under the bundle)
            confine.check_file(base / str(ref), root, str(ref))
        return True
    except Refused as exc:
        if exc.reason == "missing":
            return True
        suite.diagnostics.append(Diagnostic(
            "S005", f"`{key}` {exc.message}", at,
            help="a test case reads only regular files under its ruleset root (the folder holding `ruleval.toml`)"))
        return False


def _unreadable(problem: str, at: Span, help: str | None = None) -> Diagnostic:
    """A case file (or an importer's input) that cannot be read (S004)."""
    return Diagnostic("S004", f"cannot read test file: {problem}", at, help=help)


def _load_file(path: Path, suite: Suite, named: bool = False, expectations: bool = True) -> str | None:
    """Reads a case file's cases into ``suite``; its text, once read."""
    shown = confine.display_path(path)
    if named and path.suffix == ".rules":  # (read as YAML it would fail on some line, blaming the wrong thing)
        suite.diagnostics.append(Diagnostic(
            "S004", f"`{shown}` is a ruleset, not a case file", Span(shown, 1, 1, 1, 2),
            help="give the case files or folders that run it (each names its ruleset in `ruleset:`); "
                 "`ruleval check` takes rulesets"))
        return None
    try:
        doc, text = _read_case_file(path, shown)
    except Refused as exc:
        suite.diagnostics.append(_unreadable(exc.message, Span(shown)))
        return None
    except UnicodeDecodeError as exc:
        line, col, problem = utf8_fault(exc)
        suite.diagnostics.append(_unreadable(problem, Span(shown, line, col, line, col + 1)))
        return None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        problem = getattr(exc, "problem", None) or (str(exc).splitlines() or ["nested too deeply"])[0]
        suite.diagnostics.append(_unreadable(problem, Span(shown, line, col, line, col + 1)))
        return None
    except (RecursionError, ValueError, OverflowError) as exc:  # nested too deep; an integer past Python's digit limit
        suite.diagnostics.append(_unreadable(_value_fault(exc), Span(shown, 1, 1, 1, 2),
                                             help="a case file holds a few levels of maps and lists, and integers "
                                                  "of at most 60 digits"))
        return None
    if not isinstance(doc, dict) or "cases" not in doc:
        if named:  # found in a folder it may be data next to the cases; named, it must be a case file
            suite.diagnostics.append(Diagnostic("S004", f"`{shown}` is not a case file: it has no `cases:` list",
                                                Span(str(path), 1, 1, 1, 2),
                                                help="a case file holds `ruleset:` and `cases:` (docs/tools.md)"))
        return text
    ruleset = doc.get("ruleset")
    cases = doc.get("cases")

    def at(parts: tuple[str, ...], line: int) -> Span:
        """Where the key ``parts`` name is written in the file (the file composed only when a diagnostic
        needs it), else the nearest value enclosing it, else the line given."""
        where = _located(shown, parts, text, key=True)
        return Span(shown, *where) if where is not None else Span(shown, line, 1, line, 2)

    if not isinstance(cases, list):
        suite.diagnostics.append(Diagnostic("S004", "`cases` must be a list", at(("cases",), 1),
                                            help="one item per case: `- id: NAME` and its fields, indented under `cases:`"))
        return text
    root = find_root(path)
    if isinstance(ruleset, str) and not _confined(suite, path.parent, root, ruleset, "ruleset", at(("ruleset",), 1)):
        return text
    suite.docs[shown] = _strip_lines(doc)
    seen: set[str] = set()
    for index, raw in enumerate(cases):
        line = raw.get("__line__", 1) if isinstance(raw, dict) else 1
        here = ("cases", str(index))
        unknown = sorted(set(raw) - CASE_KEYS - set(_LINE_KEYS)) if isinstance(raw, dict) else []
        if not isinstance(raw, dict) or "id" not in raw:
            near = [k for k in unknown if closest_name(str(k), ["id"]) == "id"]
            suite.diagnostics.append(Diagnostic(
                "S004", "a case needs an `id`",
                at((*here, str(near[0])) if near else here, line),
                help=f"`{near[0]}`: did you mean `id`?" if near else None))
            continue
        if unknown:
            close = closest_name(str(unknown[0]), sorted(CASE_KEYS))
            suite.diagnostics.append(Diagnostic(
                "S004", f"case `{raw['id']}` has unknown key `{unknown[0]}`",
                at((*here, str(unknown[0])), line),
                help=f"did you mean `{close}`?" if close else "keys: " + ", ".join(sorted(CASE_KEYS))))
            continue
        if isinstance(raw["id"], bool) or not isinstance(raw["id"], (str, int)) or not str(raw["id"]).strip():
            suite.diagnostics.append(Diagnostic("S004", f"a case's `id` is a name (a text), not {_show(_strip_lines(raw['id']))}",
                                                at((*here, "id"), line), help="`- id: NAME`: a name of its own in the file"))
            continue
        cid = str(raw["id"])
        if cid in seen:
            suite.diagnostics.append(Diagnostic("S004", f"case id `{cid}` appears twice", at((*here, "id"), line)))
        seen.add(cid)
        rs = raw.get("ruleset", ruleset)
        if not isinstance(rs, str):
            if rs is None:
                suite.diagnostics.append(Diagnostic("S004", "no `ruleset` for this case", at(here, line),
                                                    help="name it in the case, or for every case at the top of the file"))
            else:  # (written, but not a path: said at the key that holds it)
                key = (*here, "ruleset") if "ruleset" in raw else ("ruleset",)
                suite.diagnostics.append(Diagnostic("S004", f"`ruleset` must be a path (a text), not {_show(_strip_lines(rs))}",
                                                    at(key, line)))
            continue
        empty = _expects_nothing(_strip_lines(raw)) if expectations else None
        if empty is not None:
            parts, why, help_ = empty
            suite.diagnostics.append(Diagnostic("S007", f"case `{cid}`: {why}",
                                                at((*here, *parts), line), help=help_))
            continue
        if "ruleset" in raw and not _confined(suite, path.parent, root, rs, "ruleset", at((*here, "ruleset"), line)):
            continue
        if "state_file" in raw and not _confined(suite, path.parent, root, raw["state_file"], "state_file",
                                                 at((*here, "state_file"), line)):
            continue
        suite.cases.append(Case(cid, shown, line, _strip_lines(raw), _ruleset_path(path.parent, rs), str(root), index))
    return text


# ---------------------------------------------------------------- matching


def _num(v: Any) -> Fraction | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return Fraction(v)
    if isinstance(v, float):
        return Fraction(v).limit_denominator(10**9) if math.isfinite(v) else None
    if isinstance(v, str) and "/" in v:
        a, _, b = v.partition("/")
        try:
            return Fraction(int(a), int(b))
        except (ValueError, ZeroDivisionError):
            return None
    return None


def _show(value: Any) -> str:
    """A value in a failure message, in the language's notation (``values.notation``: a text in
    quotes, `{a: 1}` for a record, `{"k" => 1}` for a map, `none`), cut to ``MAX_SHOWN`` characters
    (a result may hold anything a state held; a message is a pointer to the difference, not a copy
    of the value). What a case expects is read as a state is: an object is a record."""
    from ..lib.values import notation

    try:
        text = notation(value)
    except (TypeError, ValueError, RecursionError):
        text = str(type(value).__name__)
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 3] + "..."


def _noted(result: Any) -> Callable[[str, Any], str]:
    """How a failure message shows what a run gave at a JSON pointer of its answer: the language's value
    there (``textview.part_at`` of the run's ``api.Result``), in the notation; the JSON part where the
    values have none."""
    from .textview import part_at

    def got(pointer: str, actual: Any) -> str:
        found, value = part_at(result, pointer)
        return _show(value if found else actual)
    return got


def _clip(message: str) -> str:
    return message if len(message) <= MAX_MESSAGE else message[: MAX_MESSAGE - 3] + "..."


def _exactly(expected: Any) -> bool:
    """Whether an expected value is ``{exactly: VALUE}``: VALUE compared whole, a map in it with no key
    more than it writes (``{exactly: {}}``: an empty map or record)."""
    return isinstance(expected, dict) and len(expected) == 1 and "exactly" in expected


def _approx(expected: Any) -> bool:
    """Whether an expected value is ``{approx: NUMBER[, tol: NUMBER]}``."""
    return isinstance(expected, dict) and set(expected) <= {"approx", "tol"} and "approx" in expected


def _empty_map_at(expected: Any, parts: tuple[str, ...] = ()) -> tuple[str, ...] | None:
    """The parts of the first place in an expectation (or a `where` pattern) where a map is written empty
    under a key, or None. A map is matched as at least its keys, so an empty one asks nothing of what is
    there; as a list's item it holds that item's place (the list's length is compared), and inside
    ``{exactly: ...}`` it asks for an empty map."""
    if _exactly(expected) or _approx(expected):
        return None
    if isinstance(expected, dict):
        for k, v in expected.items():
            if isinstance(v, dict) and not v:
                return (*parts, str(k))
            found = _empty_map_at(v, (*parts, str(k)))
            if found is not None:
                return found
    elif isinstance(expected, list):
        for i, v in enumerate(expected):
            found = _empty_map_at(v, (*parts, str(i)))
            if found is not None:
                return found
    return None


def first_difference(expected: Any, actual: Any, path: str = "",
                     got: Callable[[str, Any], str] | None = None) -> str | None:
    """None if ``actual`` matches ``expected``; else a description at the JSON pointer of the first
    difference. ``got`` shows a part of ``actual`` given its pointer (``_noted``: the run's own values
    in the notation); without it, the JSON part itself."""
    found = difference_at(expected, actual, path, got)
    return None if found is None else f"{found[0]}: {found[1]}"


def difference_at(expected: Any, actual: Any, path: str = "",
                  got: Callable[[str, Any], str] | None = None, whole: bool = False) -> tuple[str, str] | None:
    """``first_difference`` as (the JSON pointer of the first difference, what differs there); ``whole``
    inside ``{exactly: ...}``, where a map the result has holds no key more than the expected one."""
    where = path or "/"
    shown = got or (lambda _, part: _show(part))
    if _exactly(expected):
        return difference_at(expected["exactly"], actual, path, got, whole=True)
    if _approx(expected):
        a = _num(actual)
        if a is None:
            return where, f"expected a number near {_show(expected['approx'])}, got {shown(path, actual)}"
        if abs(float(a) - float(expected["approx"])) > float(expected.get("tol", 1e-9)):
            return where, f"expected {_show(expected['approx'])} ± {_show(expected.get('tol', 1e-9))}, got {float(a):.6f}"
        return None
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return where, f"expected a record or map, got {shown(path, actual)}"
        for k, v in expected.items():
            at = f"{path}/{str(k).replace('~', '~0').replace('/', '~1')}"
            if k not in actual:
                close = closest_name(str(k), actual)
                return at, f"missing (expected {_show(v)}" + (f"; did you mean `{close}`?)" if close else ")")
            diff = difference_at(v, actual[k], at, got, whole)
            if diff:
                return diff
        extra = next((k for k in actual if k not in expected), None) if whole else None
        if extra is not None:
            at = f"{path}/{str(extra).replace('~', '~0').replace('/', '~1')}"
            return where, f"unexpected key `{extra}` (got {shown(at, actual[extra])}): `exactly` lists every key"
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return where, f"expected a list, got {shown(path, actual)}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            diff = difference_at(e, a, f"{path}/{i}", got, whole)
            if diff:
                return diff
        if len(expected) != len(actual):
            side = "unexpected" if len(actual) > len(expected) else "missing"
            extra = (shown(f"{path}/{len(expected)}", actual[len(expected)]) if len(actual) > len(expected)
                     else _show(expected[len(actual)]))
            return where, f"expected {len(expected)} items, got {len(actual)} ({side} {extra})"
        return None
    if expected == actual and type(expected) is type(actual):
        return None
    ne, na = _num(expected), _num(actual)
    if ne is not None and na is not None and ne == na:
        return None
    return where, f"expected {_show(expected)}, got {shown(path, actual)}"


def refresh(expected: Any, actual: Any) -> Any:
    """``--update``: the actual values, in the shape of what the case already expects (what already
    matches is kept as written); an empty map it writes as ``{exactly: {}}`` (written ``{}``, it would
    check nothing: S007)."""
    if first_difference(expected, actual) is None:
        return expected
    if _exactly(expected):
        return {"exactly": actual}
    if isinstance(expected, dict) and isinstance(actual, dict) and "approx" not in expected:
        return {k: refresh(v, actual[k]) if k in actual else v for k, v in expected.items()}
    return _as_expected(actual)


def _as_expected(actual: Any) -> Any:
    """A value a run gave, as an expectation that checks all of it: an empty map is ``{exactly: {}}``."""
    if isinstance(actual, dict):
        return {k: _as_expected(v) for k, v in actual.items()} if actual else {"exactly": {}}
    if isinstance(actual, list):
        return [_as_expected(v) for v in actual]
    return actual


# ---------------------------------------------------------------- running


def _value_fault(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return str(exc).split(";")[0][:120]


def _said_at(case: Case, d: Diagnostic) -> tuple[str, tuple[int, int, int, int] | None]:
    """A diagnostic of a case's run in one line: one about a part of its state at that value's line and
    column in the case file when the state is written there (with the pointer), else at the pointer in
    its `state_file`; one about an argument (S008) at that value in the case's `args`; any other where
    its span says."""
    if d.pointer is None:
        return f"{d.span}: {d.code}: {d.message}", None
    if d.code == "S008":  # (its pointer is into the arguments: ``arguments.checked_args``)
        from ..engine.state import pointer_parts

        at = _nearest(case, ("args", *pointer_parts(d.pointer))) if "args" in case.data else None
        if at is None:
            return f"{case.file}#{case.id}: {d.code}: {d.message} (at args{d.pointer})", None
        return f"{case.file}:{at[0]}:{at[1]}: {d.code}: {d.message} (at args{d.pointer})", at
    if case.state_path or "state_file" in case.data:
        from ..core.diagnostics import DiagnosticError
        from ..engine.state import at_lines, state_file_text

        shown = case.state_path or _state_file_shown(case)
        try:  # (read again, under the case file's root: the file's line and column of the value)
            span = at_lines([d], d.span.file, state_file_text(Path(shown), Path(case.root) if case.root else None))[0].span
        except (DiagnosticError, OSError, RecursionError, ValueError):
            span = d.span
        if span.line:
            return f"{shown}:{span.line}:{span.col}: {d.code}: {d.message} (at {d.pointer or '/'})", None
        return f"{shown}#{d.pointer}: {d.code}: {d.message}", None
    from ..engine.state import pointer_parts

    where = _nearest(case, ("state", *pointer_parts(d.pointer)), key=d.at_key) if "state" in case.data else None
    if where is None and case.index < 0 and case.line > 0:  # (an imported case: at its line, with the pointer)
        return f"{case.file}:{case.line}:1: {d.code}: {d.message} (at {d.pointer or '/'})", (case.line, 1, case.line, 2)
    if where is None:  # (the file changed since it was read: said by the pointer alone)
        return f"{case.file}#{case.id}#{d.pointer}: {d.code}: {d.message}", None
    return f"{case.file}:{where[0]}:{where[1]}: {d.code}: {d.message} (at {d.pointer or '/'})", where


def _field_of(case: Case, d: Diagnostic) -> str | None:
    """The field of the case that a diagnostic of its run is about, where the case writes it: `state_file`
    for a part of the state read from it, `query` for a query the ruleset lacks, `args` for their
    number and their types (S008), `dice` for a script that ran out or that the rules did not use up."""
    if d.code == "S008":
        field = "args"
    elif d.pointer is not None:
        field = "state_file"
    elif d.code == "E008":
        field = "args" if "args" in case.data and d.message.startswith("query ") else "query"
    else:
        field = {"E007": "dice", "E014": "dice"}.get(d.code, "")
    return field if field in case.data else None


def _state_file_shown(case: Case) -> str:
    """The `state_file` a case names, as paths are shown (``confine.display_path``: it was not named on the
    command line, so relative to the working folder where it lies under it, else absolute)."""
    return confine.display_path(Path(case.file).parent / str(case.data["state_file"]))


def _state_of(case: Case) -> Any:
    data = case.data
    if "state_file" in data:
        from dataclasses import replace as replaced

        from ..core.diagnostics import DiagnosticError
        from ..engine.state import read_state_file

        path = Path(case.file).parent / str(data["state_file"])
        try:  # confined again when read (the file may have changed since the suite was loaded)
            return read_state_file(path, Path(case.root) if case.root else None)
        except DiagnosticError as exc:  # a file that is not there (or too large) is said where the case names it
            where = _nearest(case, ("state_file",))
            at = Span(case.file, *where) if where is not None else Span(case.file, case.line, 1, case.line, 2)
            raise DiagnosticError([replaced(d, span=at) if d.span.file == str(path) and not d.span.line else d
                                   for d in exc.diagnostics]) from None
    state = data.get("state", {})
    from ..core.jsontext import exact_numbers, value_problem

    problem = value_problem(state)  # what a state file would be refused for (YAML writes `.nan` too)
    if problem is not None:
        from ..core.diagnostics import DiagnosticError

        from ..engine.state import pointer_parts

        where = _nearest(case, ("state", *pointer_parts(problem[0])))  # (at the value, as a state file's is)
        raise DiagnosticError([Diagnostic("S001", f"state of case `{case.id}`: {problem[1]}",
                                          Span(case.file, *where) if where is not None
                                          else Span(case.file, case.line, 1, case.line, 2), pointer=problem[0])])
    return exact_numbers(state)  # (YAML's 0.1 is the decimal it writes, as in a JSON state file)


def _probability(v: Any) -> bool:
    """A probability a case may expect: a number or a fraction text (`"7/12"`) from 0 to 1."""
    if isinstance(v, str) and "/" not in v:
        return False
    n = _num(v)
    return n is not None and Fraction(0) <= n <= 1


def _probabilities(v: Any) -> bool:
    """`probabilities` as a case gives them: a list of {where, p[, tol]} (tol a number from 0)."""
    if not isinstance(v, list):
        return False
    for w in v:
        if not (isinstance(w, dict) and "p" in w and set(w) <= {"where", "p", "tol"} and _probability(w["p"])):
            return False
        tol = w.get("tol")
        if tol is not None and (isinstance(tol, str) or (n := _num(tol)) is None or n < 0):
            return False
    return True


_FIELD_TYPES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "query": (lambda v: isinstance(v, str), "a text"),
    "args": (lambda v: isinstance(v, list), "a list"),
    # (a face below 1 is no die's, whatever it rolls: said here, at the item; one above a die's sides is
    # known only at the roll, E011)
    "dice": (lambda v: isinstance(v, list) and all(type(x) is int and x >= 1 for x in v),
             "a list of die faces, integers from 1"),
    "seed": (lambda v: v is None or type(v) is int, "an integer"),
    "exact": (lambda v: isinstance(v, bool), "true or false"),
    "probabilities": (_probabilities, "a list of {where, p[, tol]}, p from 0 to 1 (`0.25`, `\"7/12\"`)"),
    # (a code no diagnostic has, `E0005` or `S02`, never matches: the case could only fail, and say so wrongly)
    "expect_error": (lambda v: isinstance(v, str) and v in CODES, "a diagnostic code of docs/diagnostics.md (`S002`)"),
    # (`xfail: 3`, `xfail: true` or `xfail:` marked the case a known failure with no reason in words)
    "xfail": (lambda v: isinstance(v, str) and bool(v.strip()), "the reason the case is known to fail, in words (a text)"),
    "clauses": (lambda v: isinstance(v, str) or (isinstance(v, list) and all(isinstance(c, str) for c in v)),
                "a list of clause ids"),
}


_RUN_FIELDS = ("query", "args", "dice", "seed", "exact")  # (what a run of the case is given: not its expectations)


def case_fault(case: Case, run_only: bool = False) -> Diagnostic | None:
    """What makes a case unrunnable as written (S004: a field of the wrong kind, two sources of dice, a
    value no JSON state or result could hold, as YAML writes `.nan`, in what it passes or expects), at the
    value at fault in the case file where it can be found, else at the case's line; None when nothing.
    ``run_only``: only what its run is given, not its expectations (for a command that runs the cases
    without them, ``diff --cases``)."""
    fault = _fault(case, run_only)
    if fault is None:
        return None
    at = _nearest(case, fault[0])
    return Diagnostic("S004", f"case `{case.id}`: {fault[1]}",
                      Span(case.file, *at) if at is not None else Span(case.file, case.line, 1, case.line, 2))


def _fault(case: Case, run_only: bool = False) -> tuple[tuple[str, ...], str] | None:
    """``case_fault``'s problem, with the parts of the pointer to its value in the case."""
    from ..core.jsontext import value_problem
    from ..engine.state import pointer_parts

    for key, (ok, kind) in _FIELD_TYPES.items():
        if key in case.data and not ok(case.data[key]) and (key in _RUN_FIELDS or not run_only):
            value = case.data[key]
            # (a list with an item of the wrong kind: said at that item, as a value JSON has not is)
            # (a key that takes no list, as `xfail`, at the list: its items are not at fault)
            bad = next((i for i, x in enumerate(value) if not ok([x])), None) if isinstance(value, list) and ok([]) else None
            if bad is not None:
                return (key, str(bad)), f"`{key}` must be {kind} (item {bad} is {_show(value[bad])})"
            return (key,), f"`{key}` must be {kind}"
    if "state" in case.data and "state_file" in case.data:  # (the file was read and `state` passed over, silently)
        return ("state_file",), "`state` and `state_file` both give the case's state: keep one"
    sources = [k for k in ("seed", "dice") if case.data.get(k) is not None]
    if sources and (len(sources) > 1 or case.data.get("exact") or case.data.get("probabilities")):
        other = sources[1] if len(sources) > 1 else "exact" if case.data.get("exact") else "probabilities"
        return (other,), f"`{sources[0]}` and `{other}` both say where the dice come from: keep one"
    for key in ("args",) if run_only else ("args", "expect", "probabilities"):
        problem = value_problem(case.data.get(key))
        if problem is not None:
            return (key, *pointer_parts(problem[0] or "")), f"`{key}` at `{problem[0] or '/'}`: {problem[1]}"
    return None


def _nearest(case: Case, parts: tuple[str, ...], key: bool = False) -> tuple[int, int, int, int] | None:
    """Where the value ``parts`` name in the case is written (``key``: its entry's key), else its nearest
    enclosing value that is (an item the result has and the expectation lacks is said at the list; a state
    value a YAML merge key brings, at the state); None for an imported case or a file that cannot be read now."""
    return None if case.index < 0 else _located(case.file, ("cases", str(case.index), *parts), key=key)


def ruleset_missing(case: Case, rs: Any = None) -> Diagnostic | None:
    """S004 at the case's `ruleset:` when the file it names is not there or is no regular file: the
    case's fault, an input fault (exit 3) as a missing `state_file` is (S001), not a finding of the
    ruleset (C005, C024: exit 1), whatever the case expects. None otherwise (an import of the ruleset
    that is missing is the ruleset's finding, C005, which a case may expect). ``rs``: the case's ruleset
    loaded, else it is loaded when the file is not a regular file."""
    if rs is None:
        try:
            if Path(case.ruleset).is_file():
                return None
        except (OSError, ValueError):
            pass
        from ..api import load_ruleset

        rs = load_ruleset(case.ruleset)
    if rs.ok:
        return None
    first = next(d for d in rs.diagnostics if d.is_error)
    if first.code not in ("C005", "C024") or first.span.line or not _same_file(first.span.file, case.ruleset):
        return None
    at = _ruleset_key(case)
    if at is None:
        return None
    return Diagnostic("S004", f"case `{case.id}`: {first.message}", Span(case.file, *at), help=first.help)


def _ruleset_key(case: Case) -> tuple[int, int, int, int] | None:
    """Where the case's ruleset is named: its own `ruleset:` key, else its file's."""
    if case.index < 0:
        return None
    own = "ruleset" in case.data
    return _located(case.file, ("cases", str(case.index), "ruleset") if own else ("ruleset",), key=True)


def _same_file(a: str, b: str) -> bool:
    try:
        return a == b or Path(a).resolve() == Path(b).resolve()
    except (OSError, RuntimeError, ValueError):
        return False


def _located(file: str, parts: tuple[str, ...], text: str | None = None,
             key: bool = False) -> tuple[int, int, int, int] | None:
    """The one way to find a place in a case file: where the value (``key``: the key of the entry)
    ``parts`` name from the file's top is written, else the nearest value enclosing it that is; None
    when the file cannot be read or composed now. ``text``: the file's text, when it was just read."""
    positions = _positions(file, text)
    for n in range(len(parts), 0, -1) if positions is not None else ():
        try:
            where = (positions.key(parts) if key and n == len(parts) else None) or positions.of(parts[:n])
        except (RecursionError, ValueError, IndexError):
            return None
        if where is not None:
            return where
    return None


_POSITIONS: dict[str, tuple[str, Any]] = {}  # a case file's text when last read, and where its values are


def _positions(file: str, text: str | None = None) -> Any:
    """Where the values of a case file are written (``safeyaml.Positions``), composed once for as long as
    its text is the same: the text given where the file was just read (loading it), else the file read
    again (a failure's message: a case holds no positions); None for a file that cannot be read now."""
    try:
        if text is None:
            text = confine.read_bytes(Path(file), MAX_CASE_FILE_BYTES, None, file).decode("utf-8")
        kept = _POSITIONS.get(file)
        if kept is None or kept[0] != text:
            if len(_POSITIONS) >= 16:
                _POSITIONS.clear()
            kept = _POSITIONS[file] = (text, safeyaml.Positions(text))
        return kept[1]
    except (Refused, OSError, UnicodeDecodeError, yaml.YAMLError, RecursionError, ValueError, IndexError):
        return None


def run_case(case: Case, engine: str = "backend", rs: Any = None) -> Outcome:
    """A case's outcome; ``rs``: its ruleset already loaded (a sweep's worker is sent it as content)."""
    from ..api import RunError, load_ruleset
    from ..core.diagnostics import DiagnosticError

    data = case.data
    started = time.perf_counter()
    malformed = case_fault(case)
    if malformed is not None:
        at = malformed.span
        return _finish(case, "error", f"{at}: {malformed.code}: {malformed.message}",
                       (at.line, at.col, at.end_line, at.end_col) if at.line else None, started=started,
                       code=malformed.code, as_written=False)
    rs = rs if rs is not None else load_ruleset(case.ruleset)
    want_error = data.get("expect_error")
    missing = ruleset_missing(case, rs)
    if missing is not None:  # (before `expect_error`: a case expecting C005 would pass on a typo of its ruleset)
        return _finish(case, "error", f"{case.file}:{missing.span.line}:{missing.span.col}: S004: {missing.message}",
                       (missing.span.line, missing.span.col, missing.span.end_line, missing.span.end_col),
                       started=started, code="S004", help=missing.help or "", as_written=False)
    if not rs.ok:
        codes = {d.code for d in rs.diagnostics if d.is_error}
        if want_error in codes:
            return _finish(case, "passed", "", started=started)
        first = next(d for d in rs.diagnostics if d.is_error)
        named = _ruleset_key(case) if not first.span.line and _same_file(first.span.file, case.ruleset) else None
        if named is not None:  # the file the case names, as a whole (missing, not a regular file): at its name
            return _finish(case, "error", f"{case.file}:{named[0]}:{named[1]}: {first.code}: {first.message}", named,
                           started=started, code=first.code, help=first.help or "")
        return _finish(case, "error", f"ruleset does not check: {first.span}: {first.code}: {first.message}",
                       started=started, code=first.code, help=first.help or "")
    try:
        state = _state_of(case)
        answer = rs.evaluate(state, query=data.get("query", "main"), args=data.get("args"), seed=data.get("seed"),
                             dice=data.get("dice"), exact=bool(data.get("exact") or data.get("probabilities")),
                             state_name=f"{case.file}#{case.id}", engine=engine)
        result = answer.json()
    except (RunError, DiagnosticError) as exc:
        raised = [d.code for d in exc.diagnostics]
        if want_error and want_error in raised:
            return _finish(case, "passed", "", started=started)
        said = _Said("failed" if want_error else "error", list(exc.diagnostics),
                     f"expected {want_error}, got " if want_error else "")
        return _finish(case, said.status, *_compose(case, said), started=started, code=exc.diagnostics[0].code,
                       said=said)
    if want_error:
        return _finish(case, "failed", f"expected diagnostic {want_error}, but the case ran", started=started,
                       actual=result)
    from ..engine.state import pointer_parts

    problems: list[tuple[tuple[str, ...] | None, str]] = []
    if "expect" in data:
        found = difference_at(data["expect"], result, got=None if answer.exact is not None else _noted(answer))
        if found:
            problems.append((("expect", *pointer_parts(found[0] if found[0] != "/" else "")), f"{found[0]}: {found[1]}"))
    for i, want in enumerate(data.get("probabilities") or []):
        diff = _check_probability(want, result, i)
        if diff:
            problems.append((("probabilities", str(i)), diff))
    if "expect" not in data and "probabilities" not in data:
        problems.append((None, "the case has no expectation (`expect`, `probabilities` or `expect_error`)"))
    if not problems:
        return _finish(case, "passed", "", started=started, actual=result)
    said = _Said("failed", problems=problems)
    return _finish(case, "failed", *_compose(case, said), started=started, actual=result, said=said)


def _compose(case: Case, said: _Said) -> tuple[str, tuple[int, int, int, int] | None]:
    """A failure's message and the place in the case file of what failed first, where that is found."""
    if said.diags:
        parts = [_said_at(case, d) for d in said.diags]
        where = next((w for _, w in parts if w is not None), None)
        if where is None:  # (said elsewhere, a ruleset's line or a state file's: placed at the case's field at fault)
            field = next((f for f in map(lambda d: _field_of(case, d), said.diags) if f is not None), None)
            where = None if field is None else _nearest(case, (field,))
        return said.prefix + "; ".join(m for m, _ in parts), where
    first = next((p for p, _ in said.problems if p is not None), None)
    return "; ".join(t for _, t in said.problems), None if first is None else _nearest(case, first)


def _relocated(case: Case, o: Outcome) -> Outcome:
    """A sweep's outcome of ``case`` (run where its file is not read), its message placed in the file here."""
    if o.said is None:
        return replace(o, case=case)
    message, at = _compose(case, o.said)
    again = _finish(case, o.said.status, message, at, started=0.0, actual=o.actual, code=o.code, said=o.said)
    return replace(again, seconds=o.seconds)


def _unknown_fields(pattern: Any, values: list[Any], path: str) -> tuple[str, list[str]] | None:
    """The first field of a `where` pattern that no value has (its pointer, and the fields they do
    have), or None: a misspelt field would make the pattern match nothing, and a probability of 0 pass."""
    if _exactly(pattern):
        return _unknown_fields(pattern["exactly"], values, path)
    if not isinstance(pattern, dict) or _approx(pattern):
        return None
    for key, sub in pattern.items():
        having = [v[key] for v in values if isinstance(v, dict) and key in v]
        if not having:
            return f"{path}/{key}", sorted({str(k) for v in values if isinstance(v, dict) for k in v})
        found = _unknown_fields(sub, having, f"{path}/{key}")
        if found is not None:
            return found
    return None


def _check_probability(want: Any, result: Any, i: int) -> str | None:
    if not isinstance(want, dict) or "p" not in want:
        return f"/probabilities/{i}: needs `where` (a result pattern) and `p`"
    where = want.get("where", {})
    results = [o["result"] for o in result.get("outcomes", [])]
    unknown = _unknown_fields(where, results, "")
    if unknown is not None and results:
        path, known = unknown
        close = closest_name(path.rsplit("/", 1)[-1], known)
        return (f"/probabilities/{i}/where: `{path}` is no field of any outcome's result, so the pattern can match none"
                + (f" (did you mean `{close}`?)" if close else f" (fields: {', '.join(sorted(known)[:12])})"))
    total = Fraction(0)
    for o in result.get("outcomes", []):
        if first_difference(where, o["result"]) is None:
            total += Fraction(o["probability"])
    target = _num(want["p"]) if not isinstance(want["p"], float) else None
    tol = want.get("tol")
    if target is not None and tol is None:
        if total != target:
            return f"/probabilities/{i}: P({_show(where)}) is {total}, expected {target}"
        return None
    goal = float(want["p"]) if target is None else float(target)
    if abs(float(total) - goal) > float(tol or 1e-9):
        return f"/probabilities/{i}: P({_show(where)}) is {float(total):.6f}, expected {goal} ± {tol}"
    return None


def _said_help(case: Case, diags: list[Diagnostic]) -> str:
    """The helps of what refused a case's run, each once; a script of dice that ran out or was not all
    rolled (E007, E014) is the case's `dice:` list, and the help says so (not the API's "the script")."""
    if "dice" in case.data:
        from .common import dice_named

        diags = dice_named(diags, "the case's `dice:` list")
    return "; ".join(dict.fromkeys(d.help for d in diags if d.help))


def _finish(case: Case, status: str, message: str, at: tuple[int, int, int, int] | None = None, *, started: float,
            actual: Any = None, code: str | None = None, said: _Said | None = None, help: str = "",
            as_written: bool = True) -> Outcome:
    """The case's outcome; its `xfail` reason turns it (xfailed, xpassed) unless the case could not run
    as written (``as_written`` false: a malformed case is its author's to fix, not a known failure)."""
    if said is not None and said.diags:
        help = _said_help(case, said.diags)
    xfail = case.data.get("xfail") if as_written else None
    if xfail:
        if status == "passed":
            status, message, help = "xpassed", f"marked xfail ({xfail}) but passed", ""
        else:
            status, message = "xfailed", f"{xfail} [{message}]"
    return Outcome(case, status, _clip(message), time.perf_counter() - started, actual, code if status == "error" else None,
                   None if at is None else (at[0], at[1]), said, _clip(help))


def _guarded(case: Case, rs: Any = None) -> Outcome:
    try:
        return run_case(case, rs=rs)
    except Exception as exc:  # a bug met by one case: that case errs, the others still run
        return Outcome(case, "error", f"I001: internal error: {type(exc).__name__}: {exc}", code="I001")


def _case_task(rulesets: list[Any], item: tuple[int, Case]) -> Outcome:
    """A sweep's piece: one case, on its ruleset (sent as content), its state given inline."""
    k, case = item
    return _guarded(case, rulesets[k])


def run_suite(suite: Suite, keyword: str | None = None, jobs: int | None = 1, cluster: str | None = None,
              err: Any = None) -> list[Outcome]:
    """The outcomes of the suite's cases (those ``keyword`` matches), in order. With more than one job
    or a cluster, a sweep (``tools/sweep``): each case is a piece, its ruleset sent as content and its
    state read here and sent inline; a case whose ruleset does not check, or whose state cannot be
    read, or that is malformed, runs here (what it says names files on this machine); what failed in a
    case run there is placed in its case file here."""

    from ..api import load_ruleset
    from .sweep import run_sweep

    cases = [c for c in suite.cases
             if not keyword or keyword.lower() in f"{c.file}::{c.id} {c.data.get('title', '')}".lower()]
    if (jobs == 1 and not cluster) or len(cases) < 2:
        return [_guarded(c) for c in cases]
    here: dict[int, Outcome] = {}
    rulesets: list[Any] = []
    index: dict[int, int] = {}
    items: list[tuple[int, Case]] = []
    where: list[int] = []
    for i, case in enumerate(cases):
        rs = load_ruleset(case.ruleset)
        if case_fault(case) is not None or not rs.ok:
            here[i] = _guarded(case)
            continue
        try:
            state = _state_of(case)
        except Exception:  # (said by the case's run, here)
            here[i] = _guarded(case)
            continue
        if id(rs) not in index:
            index[id(rs)] = len(rulesets)
            rulesets.append(rs)
        data = {**{k: v for k, v in case.data.items() if k != "state_file"}, "state": state}
        shown = _state_file_shown(case) if "state_file" in case.data else ""
        # (index -1: a worker reads no case file, which on a cluster's machine is not this one)
        items.append((index[id(rs)], replace(case, data=data, state_path=shown, index=-1)))
        where.append(i)
    sw = run_sweep(_case_task, rulesets, items, jobs=jobs, cluster=cluster, what="cases", err=err)
    for i, o in zip(where, sw.results):
        here[i] = _relocated(cases[i], o)  # (what failed is placed in the case file here, where it is read)
    return [here[i] for i in sorted(here)]


def junit(outcomes: list[Outcome], file_diags: Sequence[Diagnostic] = ()) -> str:
    """JUnit XML: a test case per case run, and an erring one per problem of a case file itself
    (``file_diags``: S004, S005), which no case carries."""
    rows = [f'  <testcase classname={xml_attr(d.span.file)} name={xml_attr(f"{d.code} (case file)")} time="0">'
            f'<error message={xml_attr(d.message[:200])}>{xml_text(f"{d.span}: {d.code}: {d.message}")}</error></testcase>'
            for d in file_diags if d.is_error]
    fails = sum(1 for o in outcomes if o.status in ("failed", "xpassed"))
    errors = sum(1 for o in outcomes if o.status == "error") + len(rows)
    skipped = sum(1 for o in outcomes if o.status == "xfailed")
    for o in outcomes:
        body = ""
        text = o.message + (f"\nhelp: {o.help}" if o.help else "")
        if o.status in ("failed", "xpassed"):
            body = f"<failure message={xml_attr(o.message[:200])}>{xml_text(text)}</failure>"
        elif o.status == "error":
            body = f"<error message={xml_attr(o.message[:200])}>{xml_text(text)}</error>"
        elif o.status == "xfailed":
            body = f"<skipped message={xml_attr(o.message[:200])}/>"
        rows.append(f'  <testcase classname={xml_attr(o.case.file)} name={xml_attr(o.case.id)} '
                    f'time="{o.seconds:.4f}">{body}</testcase>')
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<testsuite name="ruleval" tests="{len(rows)}" failures="{fails}" errors="{errors}" '
            f'skipped="{skipped}">\n' + "\n".join(rows) + "\n</testsuite>\n")


def summary_counts(outcomes: list[Outcome]) -> dict[str, int]:
    counts = {k: 0 for k in ("passed", "failed", "xfailed", "xpassed", "error")}
    for o in outcomes:
        counts[o.status] += 1
    return counts


def ruleset_warnings(outcomes: list[Outcome]) -> list[Diagnostic]:
    """The warnings of every ruleset the run cases used (for --deny-warnings and SARIF)."""
    from ..api import load_ruleset
    from ..core.diagnostics import sort_diagnostics

    found: list[Diagnostic] = []
    for path in sorted({o.case.ruleset for o in outcomes}):
        found += [d for d in load_ruleset(path).diagnostics if not d.is_error]
    return sort_diagnostics(found)


def cases_from_importer(ruleset: str, query: str, file: str) -> Suite:
    """Turn a foreign test format into cases with the ruleset's own importer query (text -> cases)."""
    from ..api import load_ruleset

    rs = load_ruleset(ruleset)
    suite = Suite()
    if not rs.ok:
        suite.diagnostics.extend(d for d in rs.diagnostics if d.is_error)
        return suite
    try:  # (bounded and confined as a case file is read; a foreign format's stray bytes replaced)
        text = confine.read_bytes(Path(file), MAX_CASE_FILE_BYTES, None, file).decode("utf-8", errors="replace")
    except Refused as exc:
        suite.diagnostics.append(_unreadable(exc.message, Span(file)))
        return suite
    if query not in rs.queries():  # (the option names what is not there: as `replay --import` says it)
        from ..core.exits import UsageError

        raise UsageError(f"`{rs.path}` has no `query {query}` to import `{file}` with")
    raw = rs.run({}, query=query, args=[text], validate=False)
    if not isinstance(raw, list):
        suite.diagnostics.append(Diagnostic("S004", f"importer `{query}` must return a list of cases", Span(ruleset)))
        return suite
    for n, c in enumerate(raw):
        line = c.get("line") if isinstance(c, dict) else None
        line = line if type(line) is int and line > 0 else 0
        where = Span(file, line, 1) if line else Span(file)
        if not isinstance(c, dict) or "id" not in c:
            suite.diagnostics.append(Diagnostic("S004", f"importer `{query}`: its case {n + 1} has no `id`", where))
            continue
        # what the importer could not read of the case, each at its line: the case is not run without it
        problems = c.get("problems")
        if problems:
            for p in problems if isinstance(problems, list) else [problems]:
                at = p.get("line") if isinstance(p, dict) else None
                said = p.get("message") if isinstance(p, dict) else p
                suite.diagnostics.append(Diagnostic(
                    "S004", f"importer `{query}`, case `{c['id']}`: {said}",
                    Span(file, at, 1) if type(at) is int and at > 0 else where))
            continue
        # what a case file may not hold, an importer may not make: a case whose expectations check nothing
        empty = _expects_nothing(c)
        if empty is not None:
            parts, why, help_ = empty
            suite.diagnostics.append(Diagnostic("S007", f"case `{c['id']}` (made by importer `{query}`, at "
                                                        f"{'.'.join(parts)}): {why}", where, help=help_))
            continue
        suite.cases.append(Case(str(c["id"]), file, line, c, ruleset))
    return suite


def cmd_test(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..core.exits import UsageError, exit_code, exit_for_code
    from ..core.diagnostics import render_all

    if args.ruleset and not args.import_with:  # (it was ignored without a word)
        raise UsageError("--ruleset goes with --import QUERY; a case file names its own ruleset (`ruleset:`)")
    if args.junit:
        confine.can_be_written(args.junit)  # said before the cases run, not after
    if args.import_with:
        if not args.ruleset:
            raise UsageError("--import needs --ruleset RULESET")
        from .common import require_regular

        # (paths on the command line: one not there, or a folder, is a usage error saying which, exit 2)
        require_regular(args.ruleset, "ruleset")
        for p in args.paths:
            require_regular(p, "file to import")
        suite = Suite()
        for p in args.paths:
            part = cases_from_importer(args.ruleset, args.import_with, p)
            suite.cases += part.cases
            suite.diagnostics += part.diagnostics
    else:
        suite = load_suite(args.paths)
    if args.junit:  # (before a case runs: the report would replace a case file, or a ruleset, it reads)
        from .common import not_overwriting

        not_overwriting(args.junit, "--junit", [*(("case file", f) for f in sorted({c.file for c in suite.cases})),
                                                *(("case file", p) for p in args.paths),
                                                *(("ruleset", r) for r in sorted({c.ruleset for c in suite.cases}))])
    if suite.diagnostics:
        err.write(render_all(suite.diagnostics, suite.sources, err) + "\n")
        if not suite.cases:  # (the reports a CI job reads still say so)
            _reports(args, out, [], [], suite.diagnostics)
            return exit_code(suite.diagnostics)
    outcomes = run_suite(suite, args.k, args.jobs, args.cluster, err)
    if not outcomes and not suite.diagnostics:
        nothing = nothing_to_run(args.paths, args.k)
        err.write(render_all(nothing, None, err) + "\n")
        if args.format != "text" or args.junit:  # (the reports a CI job reads still say so)
            _reports(args, out, [], [], nothing)
        return exit_code(nothing)
    counts = summary_counts(outcomes)
    warnings = ruleset_warnings(outcomes)
    if args.update:
        from .caseupdate import update_files

        n, notes = update_files(outcomes)
        for note in notes:
            err.write(f"note: {one_line(note)}\n")
        err.write(f"updated {n} expectation{'s' if n != 1 else ''}\n")
    if args.format != "text" or args.junit:
        _reports(args, out, outcomes, warnings, suite.diagnostics)
    if args.format == "sarif" or (args.deny_warnings and args.format == "text"):
        from ..lib.runtime import said

        said(warnings)  # (a data check's I002 among them, said there: not again at the command's end, ``cli.main``)
    if args.format == "text":
        for o in outcomes:
            if o.status in ("failed", "error", "xpassed") or (args.verbose and o.status != "passed"):
                out.write(f"{o.status.upper()} {one_line(o.case.file)}:{o.case.line} {one_line(o.case.id)}\n"
                          f"    {one_line(o.message)}\n" + (f"    help: {one_line(o.help)}\n" if o.help else ""))
            elif args.verbose:
                out.write(f"PASSED {one_line(o.case.id)}\n")
        extra = [f"{counts[k]} {k}" + ("s" if k == "error" and counts[k] > 1 else "")
                 for k in ("xfailed", "xpassed", "error") if counts[k]]
        if extra:
            out.write(", ".join(extra) + "\n")
        out.write(f"{counts['passed']} passed, {counts['failed'] + counts['error'] + counts['xpassed']} failed\n")
    bad = counts["failed"] + counts["error"] + counts["xpassed"]
    if args.deny_warnings and warnings:
        if args.format == "text":
            err.write(render_all(warnings, None, err) + "\n")
        bad += len(warnings)
    # a case that could not run says why by its code: a malformed case or state (S) is bad input, exit 3; a
    # bug met by one (I001), 4
    return max([exit_code(suite.diagnostics, findings=bad > 0)]
               + [exit_for_code(o.code) for o in outcomes if o.status == "error" and o.code])


def _reports(args: argparse.Namespace, out: TextIO, outcomes: list[Outcome], warnings: list[Diagnostic],
             file_diags: list[Diagnostic]) -> None:
    """The machine-read reports of a run (`--junit FILE`, `--format json|junit|sarif|github`), the
    problems of the case files themselves (``file_diags``) in each."""
    if args.junit:
        confine.write_atomic(args.junit, junit(outcomes, file_diags))
    if args.format == "json":
        counts = summary_counts(outcomes)
        out.write(json.dumps({"summary": counts, "cases": [
            {"file": o.case.file, "id": o.case.id, "status": o.status, "message": o.message,
             **({"help": o.help} if o.help else {}), "seconds": round(o.seconds, 4)} for o in outcomes],
            "diagnostics": [d.to_json() for d in file_diags]}, indent=2) + "\n")
    elif args.format == "junit":
        out.write(junit(outcomes, file_diags))
    elif args.format == "sarif":
        from .report import sarif_cases

        out.write(json.dumps(sarif_cases(outcomes, warnings, file_diags), indent=2) + "\n")
    elif args.format == "github":
        from .report import github_command, github_line

        for d in file_diags:
            out.write(github_line(d) + "\n")
        for o in outcomes:
            if o.status in ("failed", "error", "xpassed"):
                line, col = o.at or (o.case.line, 0)
                out.write(github_command("error", o.message + (f" (help: {o.help})" if o.help else ""), o.case.file,
                                         line, col, title=o.case.id) + "\n")


def nothing_to_run(paths: list[str], k: str | None = None) -> list[Diagnostic]:
    """S004 at each path named (as the other diagnostics are placed) when no test case was found there,
    or none matching ``-k``: a gate that ran nothing must not pass, since a wrong folder, file or filter
    would hide every failure."""
    what = f"matching `{k}` " if k else ""
    why = ("`-k` keeps the cases whose file, id or title contains its text" if k else
           "name case files (YAML with `ruleset:` and `cases:`, docs/tools.md) or folders holding them")
    return [Diagnostic("S004", f"no test cases {what}found", Span(p), help=why) for p in paths]


def register(sub: Any, commands: dict[str, Callable[[argparse.Namespace, TextIO, TextIO], int]]) -> None:
    p = sub.add_parser("test", help="run YAML test cases")
    p.add_argument("paths", nargs="+", help="case files or folders")
    p.add_argument("-k", help="only cases whose file, id or title contains this text")
    p.add_argument("--update", action="store_true", help="rewrite failing expectations with the actual results")
    p.add_argument("--junit", help="also write a JUnit XML report to this file")
    p.add_argument("--format", choices=["text", "json", "junit", "sarif", "github"], default="text")
    p.add_argument("--deny-warnings", action="store_true",
                   help="fail (exit 1) when a ruleset the cases use has warnings")
    p.add_argument("--import", dest="import_with", metavar="QUERY",
                   help="read the files with the ruleset's importer query (test suites in another program's text format)")
    p.add_argument("--ruleset", help="ruleset for --import")
    p.add_argument("-v", "--verbose", action="store_true")
    from .sweep import add_sweep_options

    add_sweep_options(p)
    commands["test"] = cmd_test
