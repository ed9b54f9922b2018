"""The package's layout shows its architecture: each layer imports only the layers below it, so no
module imports another that imports it back (issue 21).

    core  <  lib  <  lang  <  engine  <  api  <  tools

core: diagnostics, confined reading, strict JSON/YAML, caches, exit codes. lib: what the language
gives at run time (values, built-ins, patterns, dice). lang: syntax, AST, loading, the checked
program and its checks. engine: the reference interpreter, the backend, the state check. api: the
public functions. tools: the command line and the authoring tools."""

from __future__ import annotations

import ast
from pathlib import Path

VALIDATOR = Path(__file__).resolve().parent.parent / "validator"
LAYERS = ["core", "lib", "lang", "engine", "api", "tools"]


def layer_of(module: str) -> int:
    parts = module.split(".")
    name = parts[1] if len(parts) > 1 else ""
    if name in LAYERS:
        return LAYERS.index(name)
    return len(LAYERS)  # validator/__init__.py and __main__.py stand above everything


def imports(path: Path) -> list[tuple[str, int]]:
    """The validator modules a file imports (at any depth, type-checking-only imports aside)."""
    rel = path.relative_to(VALIDATOR.parent).with_suffix("")
    package = list(rel.parts[:-1]) if rel.name != "__init__" else list(rel.parts[:-1])
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for n in ast.walk(node))
    out = []
    for node in ast.walk(tree):
        if id(node) in skip or not isinstance(node, ast.ImportFrom) or not node.level:
            continue
        base = package[: len(package) - node.level + 1]
        target = ".".join(base + ([node.module] if node.module else []))
        for alias in node.names if not node.module else [None]:
            out.append((target if alias is None else f"{target}.{alias.name}", node.lineno))
    return out


def test_each_layer_imports_only_the_layers_below_it() -> None:
    wrong = []
    for path in sorted(VALIDATOR.rglob("*.py")):
        module = ".".join(path.relative_to(VALIDATOR.parent).with_suffix("").parts)
        own = layer_of(module)
        for target, line in imports(path):
            if layer_of(target) > own:
                wrong.append(f"{path.relative_to(VALIDATOR.parent)}:{line} imports {target}")
    assert not wrong, "\n".join(wrong)


def test_the_layers_exist() -> None:
    for layer in LAYERS:
        assert (VALIDATOR / layer).is_dir() or (VALIDATOR / f"{layer}.py").is_file(), layer


def test_the_version_is_the_package_s() -> None:
    import re

    from validator.core.exits import VERSION

    pyproject = (VALIDATOR.parent / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^version = "([^"]+)"', pyproject, re.M).group(1) == VERSION  # type: ignore[union-attr]
