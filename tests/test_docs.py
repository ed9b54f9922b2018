"""The language reference documents every built-in the interpreter registers."""

from __future__ import annotations

import re
from pathlib import Path

from validator.lib.builtins import BUILTINS

DOC = (Path(__file__).resolve().parent.parent / "docs" / "language.md").read_text(encoding="utf-8")


def test_every_builtin_is_documented() -> None:
    words = set(re.findall(r"[a-z_]+", DOC))
    missing = sorted(name for name in BUILTINS if name not in words)
    assert not missing, f"built-ins missing from docs/language.md: {missing}"


def test_every_builtin_has_a_docstring_or_is_obvious() -> None:
    # the registry's own text is what `ruleval` could show; the arithmetic/text basics need none
    obvious = {"abs", "lower", "upper", "trim", "replace", "starts_with", "ends_with"}
    undocumented = sorted(b.name for b in BUILTINS.values() if not b.doc and b.name not in obvious)
    assert not undocumented, undocumented


def _rule_lines(block: str) -> list[str]:
    lines = []
    for raw in block.splitlines():
        line = re.sub(r"\s+#.*$", "", raw).strip()  # a trailing comment explains; the code must be real
        if line and line != "..." and not line.startswith("#"):
            lines.append(line)
    return lines


def _bare_blocks(page: str) -> list[str]:
    """The fenced blocks with no info string (excerpts); those with one (```` ```console ````, a file
    shown) are checked by tests/test_readme.py."""
    blocks, info, lines = [], None, []
    for line in page.splitlines():
        if line.startswith("```"):
            if info is None:
                info, lines = line[3:].strip(), []
            else:
                if not info:
                    blocks.append("\n".join(lines))
                info = None
        elif info is not None:
            lines.append(line)
    return blocks


def test_language_examples_are_excerpts_of_the_bundled_rulesets() -> None:
    root = Path(__file__).resolve().parent.parent
    corpus = {" ".join(line.split()) for p in (root / "rulesets").rglob("*.rules")
              for line in p.read_text(encoding="utf-8").splitlines()}
    blocks = _bare_blocks(DOC)
    missing = [line for b in blocks for line in _rule_lines(b)
               if not line.startswith("$") and " ".join(line.split()) not in corpus]
    assert not missing, f"docs/language.md shows lines no bundled ruleset has: {missing}"
