"""ruleval: game rules as data, run by a generic interpreter.

Stages, each usable on its own: ``parse`` (text -> AST), ``load_ruleset`` (load, check and compile),
``Ruleset.run`` (validate a state and evaluate a query). The CLI (``ruleval``) is built on these.
"""

from __future__ import annotations

from typing import Any

from .core.exits import VERSION as __version__
__all__ = ["load_ruleset", "check_paths", "parse", "Diagnostic", "DiagnosticError", "RunError", "__version__"]


def __getattr__(name: str) -> Any:
    # Lazy: `import validator` stays cheap; the parser and jsonschema load on first use.
    if name in ("load_ruleset", "check_paths", "parse", "RunError"):
        from . import api
        return getattr(api, name)
    if name in ("Diagnostic", "DiagnosticError"):
        from .core import diagnostics
        return getattr(diagnostics, name)
    raise AttributeError(name)
