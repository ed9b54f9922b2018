"""One diagnostic type for every stage: parse (P), check (C), state (S), evaluation (E), warnings (W).

Codes are registered in ``CODES`` with a one-line summary; ``docs/diagnostics.md`` documents each
one and a test checks that the two agree.
"""

from __future__ import annotations

import functools
import heapq
import json
import os
import re
import sys
from dataclasses import dataclass
from typing import Any, Collection, Iterable


@dataclass(frozen=True, order=True)
class Span:
    """A source location: 1-based line and column, end exclusive; ``file`` may be a JSON path."""

    file: str
    line: int = 0
    col: int = 0
    end_line: int = 0
    end_col: int = 0

    def __init__(self, file: str, line: int = 0, col: int = 0, end_line: int = 0, end_col: int = 0) -> None:
        # (what the dataclass would write, less its five calls of `object.__setattr__`: a span is
        # made for every node of every parsed module)
        d = self.__dict__
        d["file"] = file
        d["line"] = line
        d["col"] = col
        d["end_line"] = end_line
        d["end_col"] = end_col

    def __str__(self) -> str:
        if self.line:
            return f"{self.file}:{self.line}:{self.col}"
        return self.file


NO_SPAN = Span("<input>")

# code -> (severity, summary). The summary documents the code; messages carry the detail.
CODES: dict[str, tuple[str, str]] = {
    "P001": ("error", "unexpected token"),
    "P002": ("error", "unexpected character"),
    "P003": ("error", "unexpected end of file"),
    "P004": ("error", "file is not valid UTF-8"),
    "P005": ("error", "file too large"),
    "P006": ("error", "nesting too deep"),
    "P007": ("error", "bidirectional control character"),
    "C001": ("error", "unknown name"),
    "C002": ("error", "duplicate definition"),
    "C003": ("error", "wrong number of arguments"),
    "C004": ("error", "type mismatch"),
    "C005": ("error", "imported file not found"),
    "C006": ("error", "import cycle"),
    "C007": ("error", "file outside the ruleset root"),
    "C008": ("error", "data file cannot be read"),
    "C009": ("error", "bad table shape"),
    "C010": ("error", "citation of an unknown clause"),
    "C011": ("error", "rule without a citation"),
    "C012": ("error", "unknown field"),
    "C013": ("error", "override of a definition that does not exist"),
    "C014": ("error", "invalid pattern"),
    "C015": ("error", "schema cannot be loaded"),
    "C016": ("error", "unknown enum member"),
    "C017": ("error", "unknown step"),
    "C018": ("error", "not callable"),
    "C019": ("error", "cycle policy for something that is not a decision"),
    "C020": ("error", "statement not allowed here"),
    "C021": ("error", "redefinition without `override`"),
    "C022": ("error", "assignment to something that is not a procedure variable"),
    "C023": ("error", "literal too large"),
    "C024": ("error", "not a regular file"),
    "C025": ("error", "schema reference that is not followed"),
    "C026": ("error", "imported data does not satisfy its schema"),
    "C027": ("error", "imported data fails the ruleset's data check"),
    "C028": ("error", "data check that needs a state"),
    "C029": ("error", "table lookup that can only miss"),
    "C030": ("error", "imported data does not fit its declared type"),
    "W101": ("warning", "unused definition"),
    "W102": ("warning", "unreachable step"),
    "W103": ("warning", "unused import"),
    "W104": ("warning", "override that copies its base"),
    "W105": ("warning", "module that reads other data than its importer"),
    "W106": ("warning", "definition that calls itself whatever happens"),
    "W107": ("warning", "cell override outside the table's grid"),
    "S001": ("error", "state cannot be read"),
    "S002": ("error", "state does not satisfy the ruleset's schema"),
    "S003": ("error", "input too large"),
    "S004": ("error", "malformed test case"),
    "S005": ("error", "test case names a file it may not read"),
    "S006": ("error", "game file entry that cannot be played"),
    "S007": ("error", "expectation that checks nothing"),
    "S008": ("error", "query argument that does not fit its parameter's type"),
    "E001": ("error", "type error at run time"),
    "E002": ("error", "missing field or key"),
    "E003": ("error", "division by zero"),
    "E004": ("error", "evaluation step budget exceeded"),
    "E005": ("error", "recursion limit exceeded"),
    "E006": ("error", "cycle with no applicable policy"),
    "E007": ("error", "scripted dice exhausted"),
    "E008": ("error", "no such query"),
    "E009": ("error", "value cannot be used as a key"),
    "E010": ("error", "too many outcomes to enumerate"),
    "E011": ("error", "invalid argument to a built-in"),
    "E012": ("error", "decision used outside resolution"),
    "E013": ("error", "result too large to write"),
    "E014": ("error", "scripted dice left unused"),
    "U001": ("error", "usage error"),
    "U002": ("error", "output file cannot be written"),
    "I001": ("error", "internal error"),
    "I002": ("warning", "generated code Python refuses"),
}


@dataclass(frozen=True)
class Related:
    span: Span
    message: str


def pointer_order(pointer: str) -> tuple[tuple[int, int, str], ...]:
    """A JSON pointer's order among others: its parts one by one, a list index by its number (``/x/2``
    before ``/x/10``), before a key, keys as texts."""
    return tuple((0, int(p), p) if p.isascii() and p.isdigit() else (1, 0, p) for p in pointer.split("/"))


@dataclass(frozen=True)
class Diagnostic:
    """A finding with a location; ``pointer`` is a JSON pointer when the location is in a state."""

    code: str
    message: str
    span: Span = NO_SPAN
    help: str | None = None
    pointer: str | None = None
    related: tuple[Related, ...] = ()
    schema_rule: str | None = None
    # (the pointer names an object's member whose key itself is at fault, an unexpected key: placed at the key)
    at_key: bool = False

    @property
    def severity(self) -> str:
        return CODES.get(self.code, ("error", ""))[0]

    @property
    def is_error(self) -> bool:
        return self.severity == "error"

    def sort_key(self) -> tuple[Any, ...]:
        return (self.span.file, self.span.line, self.span.col, pointer_order(self.pointer or ""), self.code, self.message)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "file": self.span.file,
            "line": self.span.line,
            "col": self.span.col,
            "end_line": self.span.end_line,
            "end_col": self.span.end_col,
        }
        if self.pointer is not None:
            out["pointer"] = self.pointer
        if self.schema_rule is not None:
            out["schema_rule"] = self.schema_rule
        if self.help:
            out["help"] = self.help
        if self.related:
            out["related"] = [{"location": str(r.span), "message": r.message} for r in self.related]
        return out


class DiagnosticError(Exception):
    """Raised to abandon a stage; carries the diagnostics gathered so far."""

    def __init__(self, diagnostics: Iterable[Diagnostic]):
        self.diagnostics = sorted(diagnostics, key=Diagnostic.sort_key)
        super().__init__("; ".join(d.message for d in self.diagnostics))


def utf8_fault(exc: UnicodeDecodeError) -> tuple[int, int, str]:
    """Where the first byte that is not UTF-8 stands in the bytes being decoded (``exc.object``): its
    line and column (counted in characters, from 1), and what to say of it."""
    data = bytes(exc.object)
    before = data[: exc.start]
    start_of_line = before.rfind(b"\n") + 1
    col = len(before[start_of_line:].decode("utf-8", "replace")) + 1
    return before.count(b"\n") + 1, col, f"byte 0x{data[exc.start]:02x} is not valid UTF-8"


def sort_diagnostics(diags: Iterable[Diagnostic]) -> list[Diagnostic]:
    unique: dict[tuple[Any, ...], Diagnostic] = {}
    for d in diags:
        unique.setdefault(d.sort_key(), d)
    return sorted(unique.values(), key=Diagnostic.sort_key)


def use_colour(stream: Any) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


# Characters that must not reach a terminal or an XML document as they are: C0 and C1 controls but
# newline and tab (ESC starts terminal escape sequences; CR rewrites the line), bidirectional
# marks, embeddings, overrides and isolates (they reorder what is shown: "Trojan Source"), the
# line and paragraph separators, lone surrogates (no encoding can write them) and U+FFFE/U+FFFF.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069"
                     "\ud800-\udfff\ufffe\uffff]")


def _escaped(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


# "did you mean": a name longer than this is not matched; of the candidates, only this many nearest
# in length are compared with it; a check may look at this many candidates in all (``Suggestions``)
MAX_SUGGESTED_NAME = 80
MAX_SUGGESTION_CANDIDATES = 500
SUGGESTION_WORK = 2_000_000


def closest_name(name: str, candidates: Iterable[Any]) -> str | None:
    """The candidate closest to ``name`` (``difflib.get_close_matches``, cut-off 0.6), or None. Bounded:
    a long name is not matched, and only the ``MAX_SUGGESTION_CANDIDATES`` candidates nearest it in
    length are compared (each comparison costs the product of the lengths), so one call costs the
    candidates' number, not its square."""
    if len(name) > MAX_SUGGESTED_NAME:
        return None
    near = [t for c in candidates if len(t := c if type(c) is str else str(c)) <= MAX_SUGGESTED_NAME]
    if len(near) > MAX_SUGGESTION_CANDIDATES:
        size = len(name)
        near = heapq.nsmallest(MAX_SUGGESTION_CANDIDATES, near, key=lambda c: abs(len(c) - size))
    import difflib  # (here, as textwrap below: a check that finds nothing to say imports neither)

    found = difflib.get_close_matches(name, near, 1)
    return found[0] if found else None


class Suggestions:
    """The "did you mean"s of one check: each costs the candidates it looks at, and once ``work`` of them
    are spent the check suggests nothing more (a file of many thousand unknown names, each among many
    thousand known ones, would otherwise cost their product)."""

    def __init__(self, work: int = SUGGESTION_WORK):
        self.left = work

    def affordable(self, candidates: int) -> bool:
        """Whether a suggestion among ``candidates`` names may still be made (and if so, it is paid)."""
        self.left -= candidates
        return self.left >= 0

    def closest(self, name: str, candidates: Collection[Any]) -> str | None:
        return closest_name(name, candidates) if self.affordable(len(candidates)) else None


def visible(text: str) -> str:
    """``text`` safe to print on a terminal or write into XML: each unsafe character (see ``_UNSAFE``)
    is shown as its escape (ESC as ``\\x1b``, U+202E as ``\\u202e``), so that nothing a ruleset, state,
    test case or file name holds can move the cursor, recolour, reorder or forge what follows it.
    Newline and tab are kept. Every text output goes through this one function."""
    if _UNSAFE.search(text) is None:
        return text
    return _UNSAFE.sub(_escaped, text)


def one_line(text: str) -> str:
    """``visible`` on one line: a line feed shown as ``\\n`` too (``visible`` already escapes a
    carriage return)."""
    return visible(text).replace("\n", "\\n")


@functools.lru_cache(maxsize=16)
def _line_starts(text: str) -> tuple[int, ...]:
    """Offsets where the lines of a source begin, computed once per source text (a check reporting
    20 000 diagnostics on one file shows 20 000 of its lines). Lines end at ``\\n`` only, as the
    parser counts them."""
    return (0, *(m.end() for m in re.finditer("\n", text)))


def _line_bounds(text: str, line: int) -> tuple[int, int] | None:
    """Offsets of the start and end (before its line break) of line ``line`` (1-based), or None."""
    starts = _line_starts(text)
    if not 0 < line <= len(starts):
        return None
    start = starts[line - 1]
    if start == len(text) and line > 1:  # the empty remainder after a final line break
        return None
    end = starts[line] - 1 if line < len(starts) else len(text)
    if end > start and text[end - 1] == "\r":
        end -= 1
    return start, end


SNIPPET_WIDTH = 160  # the most of a source line shown under a diagnostic


def _snippet(text: str, bounds: tuple[int, int], start: int, end: int) -> tuple[str, int, int]:
    """The part of a source line shown (made visible), and where the caret starts (0-based) in it and
    how wide it is. ``start``/``end`` are 1-based columns; a line longer than ``SNIPPET_WIDTH`` is
    shown as a window around ``start`` (only that part is read), so a huge one-line file cannot
    multiply the output, or the time, by its count of diagnostics. A tab is shown as one space."""
    length = bounds[1] - bounds[0]
    first, last = 0, length
    if length > SNIPPET_WIDTH:
        first = min(max(0, start - 1 - SNIPPET_WIDTH // 3), length - SNIPPET_WIDTH)
        last = first + SNIPPET_WIDTH
    a = min(max(first, start - 1), last)
    b = min(max(a, end - 1), last)

    def part(i: int, j: int) -> str:
        return visible(text[bounds[0] + i:bounds[0] + j].replace("\t", " "))

    head = ("..." if first > 0 else "") + part(first, a)
    marked = part(a, b)
    shown = head + marked + part(b, last) + ("..." if last < length else "")
    return shown, len(head), max(1, len(marked))


def render_text(diag: Diagnostic, sources: dict[str, str] | None = None, colour: bool = False) -> str:
    """rustc-style: ``path:line:col: error[C001]: message``, the source line, a caret line, help.
    Everything taken from the input (paths, messages, the source line) goes through ``visible``."""

    def paint(text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if colour else text

    sev = diag.severity
    head_sev = paint(f"{sev}[{diag.code}]", "1;31" if sev == "error" else "1;33")
    where = str(diag.span)
    if diag.pointer is not None and not diag.span.line:
        where = f"{diag.span.file}#{diag.pointer}"
    # the head is one line: a line break in the message (an order or name from the input) is shown as
    # its escape, so that no text of the input can start a line of its own (a forged `error[...]`)
    lines = [f"{one_line(where)}: {head_sev}: {one_line(diag.message)}"]
    text = (sources or {}).get(diag.span.file)
    if text is not None and diag.span.line:
        bounds = _line_bounds(text, diag.span.line)
        if bounds is not None:
            start = max(diag.span.col, 1)
            end = diag.span.end_col if diag.span.end_line == diag.span.line else bounds[1] - bounds[0] + 1
            shown, caret_at, width = _snippet(text, bounds, start, max(end, start + 1))
            gutter = f"{diag.span.line:>4} | "
            lines.append(gutter + shown)
            lines.append(" " * (len(gutter) + caret_at) + paint("^" * width, "1;31" if sev == "error" else "1;33"))
    if diag.pointer and diag.span.line:  # (the whole input's pointer, empty, is said by its place alone)
        lines += _field("pointer", one_line(diag.pointer))
    if diag.schema_rule:
        lines += _field("schema rule", one_line(diag.schema_rule))
    for rel in diag.related:
        lines += _field("note", f"{one_line(str(rel.span))}: {one_line(rel.message)}")
    if diag.help:
        lines += _field("help", visible(diag.help))
    return "\n".join(lines)


WIDTH = 100  # the widest line of text ruleval writes for a person (a word longer than that aside)


def wrap_words(text: str, first: str = "", rest: str = "  ", width: int = WIDTH) -> list[str]:
    """``text`` over lines of at most ``width`` columns, the first after ``first`` and the others after
    ``rest``; no word is broken, so that a path or pointer stays whole for copying."""
    import textwrap

    return textwrap.wrap(text, width, initial_indent=first, subsequent_indent=rest, break_long_words=False,
                         break_on_hyphens=False) or [first.rstrip()]


def _field(label: str, text: str) -> list[str]:
    """``  = label: text``, wrapped under its first word (each line of a text of several lines on its own)."""
    head = f"  = {label}: "
    pad = " " * len(head)
    out: list[str] = []
    for para in text.split("\n"):
        out += wrap_words(para, head if not out else pad, pad)
    return out


def render_all(diags: Iterable[Diagnostic], sources: dict[str, str] | None = None, stream: Any = None) -> str:
    colour = use_colour(stream if stream is not None else sys.stderr)
    return "\n".join(render_text(d, sources, colour) for d in diags)


def to_json_text(diags: Iterable[Diagnostic]) -> str:
    return json.dumps([d.to_json() for d in diags], indent=2, sort_keys=True)
