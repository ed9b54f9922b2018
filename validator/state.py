"""State stage: read a game state and validate it against the ruleset's JSON Schema.

Every schema violation becomes an ``S002`` diagnostic with the JSON pointer of the offending value
and the schema keyword that failed; nothing runs on an invalid state.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from .diagnostics import Diagnostic, DiagnosticError, Span

MAX_STATE_BYTES = 5_000_000
MAX_ERRORS = 50


def pointer(path: Any) -> str:
    parts = [str(p).replace("~", "~0").replace("/", "~1") for p in path]
    return "/" + "/".join(parts) if parts else ""


def read_state_text(text: str, shown: str) -> Any:
    if len(text) > MAX_STATE_BYTES:
        raise DiagnosticError([Diagnostic("S003", f"state is {len(text)} bytes, more than {MAX_STATE_BYTES}",
                                          Span(shown), pointer="")])
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DiagnosticError([Diagnostic("S001", f"invalid JSON: {exc.msg}",
                                          Span(shown, exc.lineno, exc.colno, exc.lineno, exc.colno + 1))]) from None
    except RecursionError:
        raise DiagnosticError([Diagnostic("S001", "JSON nested too deeply", Span(shown, 1, 1, 1, 2))]) from None


def read_state_file(path: Path) -> Any:
    shown = str(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DiagnosticError([Diagnostic("S001", f"cannot read state `{shown}`: {exc.strerror}", Span(shown))]) from None
    if len(data) > MAX_STATE_BYTES:
        raise DiagnosticError([Diagnostic("S003", f"state is {len(data)} bytes, more than {MAX_STATE_BYTES}", Span(shown),
                                          pointer="")])
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise DiagnosticError([Diagnostic("S001", "state is not UTF-8 text", Span(shown, 1, 1, 1, 2))]) from None
    return read_state_text(text, shown)


@lru_cache(maxsize=32)
def _validator(schema_json: str) -> Any:
    import jsonschema

    schema = json.loads(schema_json)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def schema_errors(state: Any, schema: dict[str, Any], shown: str) -> list[Diagnostic]:
    import jsonschema

    try:
        validator = _validator(json.dumps(schema, sort_keys=True))
    except jsonschema.SchemaError as exc:
        return [Diagnostic("C015", f"the ruleset's state schema is invalid: {exc.message}", Span(shown))]
    diags = []
    try:
        errors = sorted(validator.iter_errors(state), key=lambda e: (list(map(str, e.absolute_path)), e.validator))
    except RecursionError:
        return [Diagnostic("S001", "state nested too deeply", Span(shown), pointer="")]
    for err in errors[:MAX_ERRORS]:
        rule = f"{err.validator}: {json.dumps(err.validator_value)[:80]}"
        message = err.message if len(err.message) <= 160 else err.message[:157] + "..."
        diags.append(Diagnostic("S002", message, Span(shown), pointer=pointer(err.absolute_path),
                                schema_rule=f"{pointer(err.absolute_schema_path)} ({rule})"))
    if len(errors) > MAX_ERRORS:
        diags.append(Diagnostic("S002", f"... and {len(errors) - MAX_ERRORS} more schema errors", Span(shown), pointer=""))
    return diags


def resolve_pointer(state: Any, ptr: str) -> tuple[bool, Any]:
    """Follow an RFC 6901 pointer; (False, None) if some part is missing."""
    if ptr in ("", "/"):
        return True, state
    cur = state
    for raw in ptr.lstrip("/").split("/"):
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(cur, dict):
            if part not in cur:
                return False, None
            cur = cur[part]
        elif isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
            cur = cur[int(part)]
        else:
            return False, None
    return True, cur
