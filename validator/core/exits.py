"""Exit codes, one table for every command (README.md, "Exit codes"; docs/diagnostics.md), and the
usage error. Every class of diagnostic maps to one code: ``exit_code``."""

from __future__ import annotations

from typing import Any, Iterable

VERSION = "0.1.0"  # ruleval's (validator.__version__)

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INPUT, EXIT_INTERNAL = 0, 1, 2, 3, 4

# The class of a diagnostic code (its first letter) -> the exit code of a command that reports it
# as an error. P, C, E and W (a warning fails only under --deny-warnings) are findings.
EXIT_BY_CLASS: dict[str, int] = {
    "P": EXIT_FINDINGS, "C": EXIT_FINDINGS, "E": EXIT_FINDINGS, "W": EXIT_FINDINGS,
    "U": EXIT_USAGE, "S": EXIT_INPUT, "I": EXIT_INTERNAL,
}


def exit_for_code(code: str) -> int:
    """The exit code a command ends with when it reports ``code`` as an error."""
    return EXIT_BY_CLASS.get(code[:1], EXIT_INTERNAL)


def exit_code(diags: Iterable[Any], findings: bool = False) -> int:
    """The exit code of a command that reported ``diags`` (``Diagnostic``s; warnings count only if
    the caller passes them) and, with ``findings``, also failed cases or differences: the largest
    code that applies, so an internal error is never hidden behind a finding, nor bad input behind
    a failed case."""
    codes = [exit_for_code(d.code) for d in diags]
    if findings:
        codes.append(EXIT_FINDINGS)
    return max(codes, default=EXIT_OK)


class UsageError(Exception):
    """The command line is wrong (U001, exit 2)."""
