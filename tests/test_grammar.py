"""The parser factory and the AST boundary: LALR + strict + positions, keywords agree with the
grammar, and no Lark object leaves the syntax stage."""

from __future__ import annotations

import re
from pathlib import Path

from lark import Token, Tree

from validator.lang import ast as A
from validator.lang import syntax

GRAMMAR = Path(__file__).resolve().parent.parent / "grammar" / "ruleval.lark"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def test_parser_options() -> None:
    opts = syntax.parser().options
    assert opts.parser == "lalr"
    assert opts.strict is True
    assert opts.propagate_positions is True
    assert syntax.parser() is syntax.parser()  # built once


def test_keywords_match_grammar() -> None:
    literals = set(re.findall(r'"([a-z]+)"', GRAMMAR.read_text(encoding="utf-8")))
    assert set(syntax.KEYWORDS) == literals
    assert len(syntax.KEYWORDS) == len(set(syntax.KEYWORDS))


SAMPLE = '''
ruleset demo.walk "a walk"
enum Kind { foot, horse }
record Unit { kind: Kind, at: str, tired?: bool }
input units: list[Unit] at "/units" default []
const limit: int = 3
table cost[kind, ground] cite "R1" {
  | kind  | flat | hill |
  | foot  | 1    | 2    |
  | horse | 1    | -    |
}
def speed(u: Unit) -> int = if u.kind == foot then 1 elif u.tired ?? false then 0 else 2
def pairs = {k => v for k, v in {"a" => 1} if v > 0}
decision holds(x) cite "R2" = not holds(x) or x > 1
cycle holds cite "R2" { otherwise => settle cycle as true cite "R2" }
procedure turn(n) cite "R3" {
  var total = 0
  step add cite "R3" {
    for i in range(n) if i % 2 == 0 { total := total + i  if total > 10 { break } }
    require total >= 0 else "negative"
    emit "added" {total: total}
  }
  step done cite "R3" { stop }
}
query main = {s: [speed(u) for u in units], t: turn(4), p: pairs, f: (fn(x) => x + limit)(1),
              r: {kind: "foot", at: "0101"} with {at: "0202"}, c: cost["foot", "flat"], d: roll(2d6) >= 2}
'''


def walk(node: object, seen: list[str]) -> None:
    assert not isinstance(node, (Tree, Token)), f"lark object {type(node).__name__} leaked: {node!r}"
    if isinstance(node, (list, tuple)):
        for x in node:
            walk(x, seen)
    elif isinstance(node, A.Node):
        seen.append(type(node).__name__)
        for name in node._fields:
            walk(getattr(node, name), seen)
    elif isinstance(node, dict):
        for k, v in node.items():
            walk(k, seen)
            walk(v, seen)
    else:
        assert type(node).__module__ in ("builtins", "fractions", A.__name__, "validator.core.diagnostics"), type(node)


def test_no_lark_objects_in_ast() -> None:
    module = syntax.parse_module(SAMPLE, "sample.rules")
    seen: list[str] = []
    walk(module, seen)
    assert len(seen) > 50


def test_ast_nodes_are_frozen_with_spans() -> None:
    module = syntax.parse_module(SAMPLE, "sample.rules")
    decl = module.decls[0]
    assert decl.span.file == "sample.rules" and decl.span.line == 3
    try:
        decl.name = "other"  # type: ignore[misc]
    except Exception as exc:
        assert type(exc).__name__ == "FrozenInstanceError"
    else:
        raise AssertionError("AST nodes must be frozen")


def test_every_fixture_parses_or_gives_a_diagnostic() -> None:
    from validator.core.diagnostics import DiagnosticError

    for path in FIXTURES.rglob("*.rules"):
        text = path.read_text(encoding="utf-8")
        try:
            walk(syntax.parse_module(text, path.name), [])
        except DiagnosticError as err:
            assert err.diagnostics and all(d.code.startswith(("P", "C")) for d in err.diagnostics)


def _parse_help(text: str) -> tuple[str, str]:
    from validator.core.diagnostics import DiagnosticError

    for parse in (syntax.parse_module, syntax.parse_module_with_lark):  # the fast path and Lark's
        try:
            parse(text, "x.rules")
        except DiagnosticError as exc:
            d = exc.diagnostics[0]
            assert "__" not in (d.help or "") and "anon" not in (d.help or "").lower(), d.help
            last = (d.message, d.help or "")
        else:
            raise AssertionError("no parse error")
    return last


def test_parse_errors_name_tokens_as_a_person_reads_them() -> None:
    """`=` where `:=` was meant: the help shows `:=`, never Lark's internal name `__ANON_2`."""
    message, help_ = _parse_help('procedure p cite "X" {\n  var a = 0\n  step s cite "X" {\n    a = 1\n  }\n}\n')
    assert message == "unexpected `=`" and "`:=`" in help_


def test_require_else_takes_a_text_in_quotes() -> None:
    text = 'def why = "no"\nprocedure p cite "X" {\n  var a = 0\n  step s cite "X" {\n    require a > 0 else why\n  }\n}\n'
    message, help_ = _parse_help(text)
    assert message == "unexpected `why`" and "text in quotes" in help_
