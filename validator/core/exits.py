"""Exit codes, one table for every command (README.md, "Exit codes"; docs/diagnostics.md), and the
usage error. Every class of diagnostic maps to one code: ``exit_code``."""

from __future__ import annotations

VERSION = "0.1.0"  # ruleval's (validator.__version__)

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INPUT, EXIT_INTERNAL = 0, 1, 2, 3, 4


class UsageError(Exception):
    """The command line is wrong (U001, exit 2)."""
