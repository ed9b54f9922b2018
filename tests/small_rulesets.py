"""A test's small ruleset, written into a folder of its own (a project: an empty `ruleval.toml`) with the
files it reads beside it, and loaded afresh (no cache): what many tests did line by line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from validator.api import load_ruleset


def project(folder: Path, text: str, name: str = "main.rules", files: dict[str, str] | None = None) -> Path:
    """``folder`` made a project holding the ruleset ``text`` as ``name`` and ``files`` (name: text beside
    it): the ruleset's path."""
    (folder / "ruleval.toml").write_text("")
    for other, written in (files or {}).items():
        (folder / other).write_text(written, encoding="utf-8")
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def loaded(folder: Path, text: str, name: str = "main.rules", files: dict[str, str] | None = None,
           ok: bool = True) -> Any:
    """The ruleset ``project`` writes, loaded afresh; one that should check (``ok``) is asserted to."""
    rs = load_ruleset(project(folder, text, name, files), use_cache=False)
    assert rs.ok or not ok, [str(d) for d in rs.diagnostics]
    return rs
