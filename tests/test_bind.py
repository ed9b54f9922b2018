"""The binding stage (``validator.lang.bind``, issue 41): what each global name means is decided once
per unit, beside the shared AST, and the engines read it instead of looking names up."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from validator.api import load_ruleset
from validator.lang import ast as A
from validator.lang import bind

BASE = 'ruleset t.base\ndef bonus = 1\ndef strength(n) = n + bonus\nquery main = strength(1)\n'
# the base's `strength` is one declaration object, read in two namespaces: the variant's (where
# `bonus` is the override) and the imported module's (where it is the base's own)
VARIANT = '''ruleset t.variant
extends "base.rules"
import "base.rules" as std
override def bonus = 10
query both = {mine: strength(1), theirs: std.strength(1), lam: [fn(bonus) => bonus * 2][0](3),
              comp: [bonus for bonus in [7]], member: std.bonus}
'''
WANT = {"mine": 11, "theirs": 2, "lam": 6, "comp": [7], "member": 1}


def _load(root: Path) -> Any:
    (root / "ruleval.toml").write_text("")
    (root / "base.rules").write_text(BASE)
    (root / "variant.rules").write_text(VARIANT)
    rs = load_ruleset(root / "variant.rules", use_cache=False)
    assert not [d for d in rs.diagnostics if d.is_error], [str(d) for d in rs.diagnostics]
    return rs


@pytest.mark.parametrize("engine", ["reference", "backend"])
def test_a_shared_declaration_is_bound_in_each_namespace_that_reads_it(tmp_path: Path, engine: str) -> None:
    rs = _load(tmp_path)
    assert rs.run({}, query="both", engine=engine) == WANT
    program = rs.program
    units = [u for u in program.units.values() if u.name == "strength"]
    assert len(units) == 2 and units[0].decl is units[1].decl  # one declaration, two units
    assert program.entry.key in {u.ns for u in units}
    for unit in units:  # `bonus` is its own namespace's: the variant's override, or the module's own
        [name] = [n for n in _names(unit.decl) if n.id == "bonus"]
        ref = bind.binding(program, unit)[id(name)]
        assert isinstance(ref, bind.UnitRef) and ref.unit.ns == unit.ns and ref.unit.name == "bonus"


@pytest.mark.parametrize("engine", ["reference", "backend"])
def test_no_name_is_looked_up_once_the_units_are_bound(tmp_path: Path, engine: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    rs = _load(tmp_path)
    assert rs.run({}, query="both", engine=engine) == WANT  # binds the units the query reaches

    def looked_up(*args: Any) -> Any:
        raise AssertionError(f"a name looked up while a rule runs: {args[-1]}")

    monkeypatch.setattr(bind, "meaning", looked_up)
    assert rs.run({}, query="both", engine="reference") == WANT
    assert rs.run({}, query="both", engine="backend") == WANT


def test_locals_are_left_out_of_the_binding(tmp_path: Path) -> None:
    rs = _load(tmp_path)
    program = rs.program
    both = program.units[(program.entry.key, "both")]
    bound = bind.binding(program, both)
    kinds = {n.id: type(bound.get(id(n))).__name__ for n in _names(both.decl)}
    # `bonus` is a lambda's parameter and a comprehension's name there; `std` a module
    assert kinds == {"bonus": "NoneType", "strength": "UnitRef", "std": "ModuleRef"}


def _names(node: Any) -> list[A.Name]:
    if isinstance(node, A.Name):
        return [node]
    if isinstance(node, tuple):
        return [n for x in node for n in _names(x)]
    if isinstance(node, A.Node):
        return [n for f in node._compared for n in _names(getattr(node, f))]
    return []
