"""`override` that extends: in an override, `base` is the definition it replaces (issue 41), resolved
when the ruleset loads, for every kind of definition and on both engines; `check` warns when an
override copies its base instead (W104)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from validator.api import load_ruleset

BASE = '''
ruleset t.base
def bonus = 1
rule strength(n) cite "R1" = n + bonus
table cost[kind] -> int cite "R2" {
  | foot  | 1 |
  | horse | 2 |
}
decision holds(x) cite "R3" = x > 0
procedure tally(n) cite "R4" {
  var total = n
  step add cite "R4" { total := total + 1 }
}
query main = {s: strength(2), b: bonus, c: cost["horse"], h: holds(0), p: tally(1).total}
'''

VARIANT = '''
ruleset t.variant
extends "base.rules"
override def bonus = base + 10
override rule strength(n) cite "R1" = if n > 5 then 0 else base(n) * 2
override table cost[kind] -> int cite "R2" {
  | foot  | base["foot"]      |
  | horse | base["horse"] + 5 |
  | ship  | 9                 |
}
override decision holds(x) cite "R3" = x == 0 or base(x)
override procedure tally(n) cite "R4" {
  var total = base(n).total
  step add cite "R4" { total := total * 100 }
}
'''

LAYER = '''
ruleset t.layer
extends "variant.rules"
override rule strength(n) cite "R1" = base(n) + 1000
'''


def _load(root: Path, name: str, **files: str) -> Any:
    (root / "ruleval.toml").write_text("")
    for fname, text in files.items():
        (root / fname).write_text(text)
    return load_ruleset(root / name, use_cache=False)


@pytest.mark.parametrize("engine", ["reference", "backend"])
def test_an_override_calls_what_it_replaces_for_every_kind_of_definition(tmp_path: Path, engine: str) -> None:
    rs = _load(tmp_path, "variant.rules", **{"base.rules": BASE, "variant.rules": VARIANT})
    assert not [d for d in rs.diagnostics if d.is_error], [str(d) for d in rs.diagnostics]
    # the base's own rule reads the variant's `bonus` (11): names are the variant's, `base` the replaced one
    assert rs.run({}, engine=engine) == {"s": (2 + 11) * 2, "b": 11, "c": 7, "h": True, "p": 200}


@pytest.mark.parametrize("engine", ["reference", "backend"])
def test_a_variant_of_a_variant_extends_the_extension(tmp_path: Path, engine: str) -> None:
    rs = _load(tmp_path, "layer.rules", **{"base.rules": BASE, "variant.rules": VARIANT, "layer.rules": LAYER})
    assert not [d for d in rs.diagnostics if d.is_error], [str(d) for d in rs.diagnostics]
    assert rs.run({}, engine=engine)["s"] == (2 + 11) * 2 + 1000
    alone = _load(tmp_path, "variant.rules")
    assert alone.run({}, engine=engine)["s"] == (2 + 11) * 2  # loading the layer changed nothing of the variant


def test_base_outside_an_override_and_a_local_named_base_are_refused(tmp_path: Path) -> None:
    rs = _load(tmp_path, "variant.rules", **{
        "base.rules": BASE,
        "variant.rules": 'extends "base.rules"\ndef extra = base + 1\n'
                         'override rule strength(base) cite "R1" = base + 1\nquery other = extra\n'
                         'override def bonus = let base = 1; sum([b for base in [2] for b in [base]])\n'})
    found = [(d.code, d.span.line) for d in rs.diagnostics if d.is_error]
    assert ("C001", 2) in found and ("C002", 3) in found, found
    assert found.count(("C002", 5)) == 2, found  # (a `let` and a comprehension's name)
    [unknown] = [d for d in rs.diagnostics if d.code == "C001"]
    assert "override" in (unknown.help or "")


def test_an_override_that_copies_its_base_is_warned(tmp_path: Path) -> None:
    base = ('rule grade(n) cite "R1" =\n  if n > 10 then "high"\n  elif n > 5 then "middle"\n'
            '  elif n > 2 then "low"\n  else "none"\nquery main = grade(3)\n')
    copied = ('extends "base.rules"\noverride rule grade(n) cite "R1" =\n  if n > 10 then "high"\n'
              '  elif n > 5 then "middle"\n  elif n > 2 then "low"\n  elif n > 1 then "tiny"\n  else "none"\n')
    extended = ('extends "base.rules"\noverride rule grade(n) cite "R1" =\n'
                '  if n > 1 and n <= 2 then "tiny" else base(n)\n')
    warned = _load(tmp_path, "copied.rules", **{"base.rules": base, "copied.rules": copied})
    assert [(d.code, d.span.line) for d in warned.diagnostics] == [("W104", 2)]
    clean = _load(tmp_path, "extended.rules", **{"extended.rules": extended})
    assert clean.diagnostics == []
    assert [warned.run({}), clean.run({})] == ["low", "low"]


def test_explain_ir_shows_names_bound_and_the_backend_s_source(tmp_path: Path) -> None:
    import io

    from validator.tools.cli import main

    _load(tmp_path, "variant.rules", **{"base.rules": BASE, "variant.rules": VARIANT})
    out, err = io.StringIO(), io.StringIO()
    code = main(["explain", str(tmp_path / "variant.rules"), "--ir", "strength"], stdout=out, stderr=err)
    text = out.getvalue()
    assert code == 0, err.getvalue()
    # (`if n > 5 then 0 else base(n) * 2`: the second branch is unknown, so is the whole)
    assert text.startswith("rule strength(n: any) -> any  [R1]\n")
    [base_line] = [ln for ln in text.splitlines() if ln.strip().startswith("Name base ")]
    assert "-> rule `strength` at" in base_line and "base.rules:4" in base_line
    # each read of the parameter is its slot, typed as the checker infers it
    assert "    Param n -> slot 0\n" in text and [ln.strip() for ln in text.splitlines()].count("Name n -> slot 0 : any") == 2
    assert "Compare > : bool\n" in text and "Int 5 : int\n" in text
    assert "\n    def _strength(ctx, _p1):\n" in text and "Traceback" not in text + err.getvalue()
    err = io.StringIO()
    assert main(["explain", str(tmp_path / "variant.rules"), "--ir", "nothing"], stdout=io.StringIO(), stderr=err) == 2
    assert "U001" in err.getvalue()


CYCLE_BASE = '''
ruleset t.cycle
decision a(x) cite "R1" = not b(x)
decision b(x) cite "R2" = not a(x)
cycle a, b cite "R3" {
  when any(c.decision == "a" for c in cycle) => settle [c for c in cycle if c.decision == "a"] as true cite "R3"
  otherwise => settle cycle as false cite "R3"
}
query main = [a(1), b(1)]
'''


@pytest.mark.parametrize("engine", ["reference", "backend"])
def test_a_cycle_that_runs_through_base_is_settled_by_the_policy_of_the_decision_replaced(
        tmp_path: Path, engine: str) -> None:
    # the override reaches `b` only through `base`: the cycle a -> base of a -> b -> a is still a cycle of
    # `a` and `b`, which the base's policy names; without it the run would stop with E006
    rs = _load(tmp_path, "v.rules", **{"base.rules": CYCLE_BASE,
                                       "v.rules": 'ruleset t.v\nextends "base.rules"\n'
                                                  'override decision a(x) cite "R1" = base(x)\n'})
    assert rs.diagnostics == []
    # the policy settles `a` true, so b = not a is false; a policy-free reading would be E006
    assert rs.run({}, engine=engine) == [True, False]


def test_an_override_with_another_number_of_parameters_is_said_at_the_override(tmp_path: Path, cli) -> None:
    """`override rule cut_by(s, t)` of the standard rules' `cut_by(s)` was said as one C003 at each call
    in standard.rules, a file the designer does not edit: it is one C003 at the override, naming what it
    replaces; a call in the variant's own file with the wrong count is still said where it is."""
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "v.rules").write_text('ruleset my.v "v"\nextends "bundled:diplomacy/standard.rules"\n'
                                      'override rule cut_by(s, t) cite "DIP-P1" = []\n'
                                      'def mine = cut_by("bur")\n', encoding="utf-8")
    r = cli("check", str(tmp_path / "v.rules"))
    errors = [line for line in r.err.splitlines() if "error[" in line]
    assert r.code == 1 and all(line.startswith(str(tmp_path / "v.rules")) for line in errors), r.err
    assert any(":3:1: error[C003]: `override` of `cut_by` takes 2 parameters, but the definition it replaces "
               "takes 1" in line for line in errors), r.err
    assert any(":4:12: error[C003]: `cut_by` takes 2 arguments, not 1" in line for line in errors), r.err
