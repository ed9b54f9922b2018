"""One diagnostic type for every stage: parse (P), check (C), state (S), evaluation (E), warnings (W).

Codes are registered in ``CODES`` with a one-line summary; ``docs/diagnostics.md`` documents each
one and a test checks that the two agree.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from typing import Any, Iterable


@dataclass(frozen=True, order=True)
class Span:
    """A source location: 1-based line and column, end exclusive; ``file`` may be a JSON path."""

    file: str
    line: int = 0
    col: int = 0
    end_line: int = 0
    end_col: int = 0

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
    "C015": ("error", "state schema cannot be loaded"),
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
    "W101": ("warning", "unused definition"),
    "W102": ("warning", "unreachable step"),
    "W103": ("warning", "unused import"),
    "S001": ("error", "state cannot be read"),
    "S002": ("error", "state does not satisfy the ruleset's schema"),
    "S003": ("error", "input too large"),
    "S004": ("error", "malformed test case"),
    "S005": ("error", "test case names a file it may not read"),
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
    "U001": ("error", "usage error"),
    "U002": ("error", "output file cannot be written"),
    "I001": ("error", "internal error"),
}


@dataclass(frozen=True)
class Related:
    span: Span
    message: str


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

    @property
    def severity(self) -> str:
        return CODES.get(self.code, ("error", ""))[0]

    @property
    def is_error(self) -> bool:
        return self.severity == "error"

    def sort_key(self) -> tuple[Any, ...]:
        return (self.span.file, self.span.line, self.span.col, self.pointer or "", self.code, self.message)

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


def sort_diagnostics(diags: Iterable[Diagnostic]) -> list[Diagnostic]:
    unique: dict[tuple[Any, ...], Diagnostic] = {}
    for d in diags:
        unique.setdefault(d.sort_key(), d)
    return sorted(unique.values(), key=Diagnostic.sort_key)


def use_colour(stream: Any) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


def render_text(diag: Diagnostic, sources: dict[str, str] | None = None, colour: bool = False) -> str:
    """rustc-style: ``path:line:col: error[C001]: message``, the source line, a caret line, help."""

    def paint(text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if colour else text

    sev = diag.severity
    head_sev = paint(f"{sev}[{diag.code}]", "1;31" if sev == "error" else "1;33")
    where = str(diag.span)
    if diag.pointer is not None:
        where = f"{diag.span.file}#{diag.pointer}"
    lines = [f"{where}: {head_sev}: {diag.message}"]
    text = (sources or {}).get(diag.span.file)
    if text is not None and diag.span.line:
        src_lines = text.splitlines()
        if 0 < diag.span.line <= len(src_lines):
            src = src_lines[diag.span.line - 1].expandtabs(1)
            gutter = f"{diag.span.line:>4} | "
            lines.append(gutter + src)
            start = max(diag.span.col, 1)
            end = diag.span.end_col if diag.span.end_line == diag.span.line else len(src) + 1
            width = max(1, end - start)
            lines.append(" " * (len(gutter) + start - 1) + paint("^" * width, "1;31" if sev == "error" else "1;33"))
    if diag.schema_rule:
        lines.append(f"  = schema rule: {diag.schema_rule}")
    for rel in diag.related:
        lines.append(f"  = note: {rel.span}: {rel.message}")
    if diag.help:
        lines.append(f"  = help: {diag.help}")
    return "\n".join(lines)


def render_all(diags: Iterable[Diagnostic], sources: dict[str, str] | None = None, stream: Any = None) -> str:
    colour = use_colour(stream if stream is not None else sys.stderr)
    return "\n".join(render_text(d, sources, colour) for d in diags)


def to_json_text(diags: Iterable[Diagnostic]) -> str:
    return json.dumps([d.to_json() for d in diags], indent=2, sort_keys=True)
