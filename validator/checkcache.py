"""A cache of `ruleval check` results, so that checking unchanged rulesets costs no parsing.

An entry holds the diagnostics of one ruleset and the SHA-256 of every file it read (modules,
data, schema, clause catalogue); it is used only while all of them are unchanged, for the same
ruleval version, grammar and interpreter source, from the same working folder (diagnostics show paths relative to it).
Entries are JSON: nothing read back from the cache is ever executed. The cache lives in
``$RULEVAL_CACHE_DIR``, else ``$XDG_CACHE_HOME/ruleval``, else ``~/.cache/ruleval``;
``RULEVAL_NO_CACHE=1`` or ``ruleval check --no-cache`` turns it off. Any problem with the cache
(unwritable folder, corrupt entry) only means the ruleset is checked afresh.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from .diagnostics import Diagnostic, Related, Span

_KEY_CACHE: list[str] = []


def cache_dir() -> Path | None:
    """Where check results are kept; None when that cache is turned off."""
    if os.environ.get("RULEVAL_NO_CACHE"):
        return None
    return cache_base()


def cache_base() -> Path:
    """ruleval's cache folder (check results, and the parser's tables, which are kept even with
    the check cache off: like Lark's grammar cache they depend on ruleval alone)."""
    base = os.environ.get("RULEVAL_CACHE_DIR")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "ruleval"


def _tool_key() -> str:
    """ruleval's version, grammar and own code: any change to the checker never reads old entries."""
    if not _KEY_CACHE:
        from . import __version__
        from .syntax import _grammar_text

        h = hashlib.sha256(_grammar_text().encode("utf-8"))
        for source in sorted(Path(__file__).resolve().parent.glob("*.py")):
            h.update(source.read_bytes())
        _KEY_CACHE.append(f"{__version__}:{h.hexdigest()[:24]}")
    return _KEY_CACHE[0]


def _digest(path: str) -> str | None:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def _entry_path(folder: Path, ruleset: Path) -> Path:
    name = hashlib.sha256(f"{os.getcwd()}\0{ruleset.resolve()}".encode()).hexdigest()[:32]
    return folder / f"{name}.json"


def _span_json(s: Span) -> list[Any]:
    return [s.file, s.line, s.col, s.end_line, s.end_col]


def diag_to_json(d: Diagnostic) -> dict[str, Any]:
    return {"code": d.code, "message": d.message, "span": _span_json(d.span), "help": d.help, "pointer": d.pointer,
            "schema_rule": d.schema_rule, "related": [[_span_json(r.span), r.message] for r in d.related]}


def diag_from_json(j: dict[str, Any]) -> Diagnostic:
    return Diagnostic(str(j["code"]), str(j["message"]), Span(*j["span"]), help=j.get("help"), pointer=j.get("pointer"),
                      schema_rule=j.get("schema_rule"),
                      related=tuple(Related(Span(*s), str(m)) for s, m in j.get("related", [])))


def lookup(ruleset: Path) -> list[Diagnostic] | None:
    """The cached diagnostics of a ruleset whose files are all unchanged, else None."""
    folder = cache_dir()
    if folder is None:
        return None
    try:
        entry = json.loads(_entry_path(folder, ruleset).read_text(encoding="utf-8"))
        if entry.get("tool") != _tool_key():
            return None
        files = entry["files"]
        if not files or any(_digest(f) != h for f, h in files.items()):
            return None
        return [diag_from_json(d) for d in entry["diagnostics"]]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def store(ruleset: Path, files: list[str], diagnostics: list[Diagnostic]) -> None:
    """Remember a ruleset's diagnostics; a ruleset that could not find a file is not cached (the
    file may appear later)."""
    folder = cache_dir()
    if folder is None or any(d.code in ("C005", "C007") for d in diagnostics):
        return
    digests = {f: _digest(f) for f in files}
    if not digests or any(h is None for h in digests.values()):
        return
    entry = {"tool": _tool_key(), "files": digests, "diagnostics": [diag_to_json(d) for d in diagnostics]}
    try:
        folder.mkdir(parents=True, exist_ok=True)
        target = _entry_path(folder, ruleset)
        tmp = target.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(entry), encoding="utf-8")
        tmp.replace(target)
    except OSError:
        pass
