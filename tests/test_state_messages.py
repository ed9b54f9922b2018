"""What an S002 says (``engine.schema_messages``): values in JSON notation, each message saying what was
expected, at the pointer of the value at fault; a value failing every alternative of an `anyOf` is told
by the nearest alternative, at its own pointers, or by all of them together when they fail alike.

Each expectation is built from the test's own schema and value (``J`` is JSON notation), not copied
from a run."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import validator
from validator.api import RunError
from validator.engine.state import MAX_ERRORS, schema_errors

ROOT = Path(__file__).resolve().parent.parent
DRAFT = "https://json-schema.org/draft/2020-12/schema"


def J(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def either(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def said(sub: Any, value: Any) -> list[tuple[str, str]]:
    """(pointer, message) of each S002 of ``value`` held at `/x` of an object whose `x` must satisfy ``sub``."""
    schema = {"$schema": DRAFT, "type": "object", "properties": {"x": sub}}
    found = schema_errors({"x": value}, schema, "s.json")
    assert all(d.code == "S002" for d in found), found
    return [(d.pointer or "", d.message) for d in found]


PATTERN = r"^[a-z]+\d$"
BIG = "x" * 300

# (the keyword's schema, a value failing it, the message it must give at /x)
KEYWORDS = {
    "type": ({"type": "string"}, True, f"expected a text, got {J(True)}"),
    "type of several": ({"type": ["string", "null"]}, 5, "expected a text or null, got 5"),
    "type of an object value": ({"type": "array"}, {"a": None, "b": [True, "é"]},
                                f"expected a list, got {J({'a': None, 'b': [True, 'é']})}"),
    "enum": ({"enum": ["a", None, 1]}, "z", f"expected {either([J('a'), J(None), J(1)])}, got {J('z')}"),
    "const": ({"const": {"a": [1, True]}}, {"a": [1, False]}, f"expected {J({'a': [1, True]})}, got {J({'a': [1, False]})}"),
    "minimum": ({"minimum": 3}, 1, "expected at least 3, got 1"),
    "maximum": ({"maximum": 99}, 100, "expected at most 99, got 100"),
    "exclusiveMinimum": ({"exclusiveMinimum": 0}, 0, "expected more than 0, got 0"),
    "exclusiveMaximum": ({"exclusiveMaximum": 0.5}, 0.5, "expected less than 0.5, got 0.5"),
    "multipleOf": ({"multipleOf": 0.5}, 0.3, "expected a multiple of 0.5, got 0.3"),
    "minLength": ({"minLength": 3}, "ab", f"expected at least 3 characters, got 2: {J('ab')}"),
    "minLength 1": ({"minLength": 1}, "", f"expected a non-empty text, got {J('')}"),
    "maxLength": ({"maxLength": 2}, "abcd", f"expected at most 2 characters, got 4: {J('abcd')}"),
    "minItems": ({"minItems": 2}, [1], "expected at least 2 items, got 1"),
    "minItems 1": ({"minItems": 1}, [], "expected a non-empty list, got []"),
    "maxItems": ({"maxItems": 1}, [1, 2], "expected at most 1 item, got 2"),
    "minProperties": ({"minProperties": 2}, {"a": 1}, "expected at least 2 keys, got 1"),
    "maxProperties 0": ({"maxProperties": 0}, {"a": 1}, f"expected an empty object, got {J({'a': 1})}"),
    "pattern": ({"pattern": PATTERN}, "AB", f"expected a text matching {J(PATTERN)}, got {J('AB')}"),
    "uniqueItems": ({"uniqueItems": True}, ["a", "b", "a"],
                    f"expected unique items, but item 2 equals item {['a', 'b', 'a'].index('a')}: {J('a')}"),
    "format": ({"format": "date"}, "5 May", f"expected the format {J('date')}, got {J('5 May')}"),
    "required": ({"required": ["a", "b", "c"]}, {"b": 1}, f"missing required keys {J('a')}, {J('c')}"),
    "additionalProperties": ({"properties": {"a": {}, "b": {}}, "additionalProperties": False}, {"a": 1, "c": 2},
                             f"unexpected key {J('c')} (expected {J('a')} or {J('b')})"),
    "additionalProperties with patterns": ({"patternProperties": {"^p": {}}, "additionalProperties": False}, {"q": 1},
                                           f"unexpected key {J('q')} (expected a key matching {J('^p')})"),
    "propertyNames": ({"propertyNames": {"pattern": PATTERN}}, {"Bur": 1},
                      f"the key {J('Bur')}: expected a text matching {J(PATTERN)}"),
    "dependentRequired": ({"dependentRequired": {"a": ["b"]}}, {"a": 1},
                          f"missing key {J('b')} (required when {J('a')} is present)"),
    "not": ({"not": {"type": "null"}}, None, "expected anything but null, got null"),
    "contains": ({"contains": {"type": "string"}}, [1], 'expected at least 1 item matching its "contains" rule, got none'),
    "items false": ({"prefixItems": [{}], "items": False}, [1, 2], "expected at most 1 item, got 2"),
    "oneOf of several": ({"oneOf": [{"type": "integer"}, {"minimum": 0}]}, 3,
                         'expected exactly one alternative of its "oneOf" to match, got 3, which matches several'),
    "a long value cut": ({"type": "integer"}, BIG, f"expected an integer, got {J(BIG)[:77]}..."),
}


# (an unexpected key is told at the key, not at its object)
AT_KEY = {"additionalProperties": "/x/c", "additionalProperties with patterns": "/x/q"}


@pytest.mark.parametrize("name", list(KEYWORDS))
def test_each_keyword_says_what_was_expected_in_json_notation(name: str) -> None:
    sub, value, message = KEYWORDS[name]
    assert said(sub, value) == [(AT_KEY.get(name, "/x"), message)]


def test_an_unexpected_key_is_told_at_the_key_with_its_line_and_column() -> None:
    from validator.engine.state import at_lines

    schema = {"$schema": DRAFT, "type": "object", "additionalProperties": False,
              "properties": {"provinces": {}, "units": {"type": "array", "items": {
                  "type": "object", "additionalProperties": False, "properties": {"id": {}, "type": {}}}}}}
    text = '{"units": [{"id": "a", "extra": 1, "tpye": 2}],\n "provinecs": {}}'
    found = at_lines(schema_errors(json.loads(text), schema, "s.json"), "s.json", text)
    told = [(d.pointer, d.span.line, d.span.col, d.span.end_col, d.help) for d in found]
    # (the unexpected keys of one object are one error, at the first of them, its help for the misspelt one)
    assert told == [("/units/0/extra", 1, 24, 31, "`tpye`: did you mean `type`?"),
                    ("/provinecs", 2, 2, 13, "did you mean `provinces`?")], told
    assert [d.message.split(" (")[0] for d in found] == [f"unexpected keys {J('extra')} and {J('tpye')}",
                                                         f"unexpected key {J('provinecs')}"]


def test_a_text_an_enum_refuses_is_told_the_member_it_likely_meant() -> None:
    found = schema_errors({"x": ["armi", "zzz"]}, {"$schema": DRAFT, "type": "object", "properties": {
        "x": {"type": "array", "items": {"enum": ["army", "fleet", None]}}}}, "s.json")
    assert [(d.pointer, d.help) for d in found] == [("/x/0", "did you mean `army`?"), ("/x/1", None)], found


def test_what_is_said_of_a_state_is_in_the_order_of_its_places() -> None:
    """By line, then column, then pointer, whatever order they came in (a ruleset's own checks of a state
    come after the schema's); two at one place keep their order; another file's stay where they were."""
    from validator.core.diagnostics import Diagnostic, Span
    from validator.engine.state import at_lines

    text = '{"a": 1, "b": {"c": 2},\n "d": 3}'
    came = [Diagnostic("S002", "d", Span("s.json"), pointer="/d"), Diagnostic("C001", "other", Span("r.rules", 9, 1)),
            Diagnostic("S002", "c", Span("s.json"), pointer="/b/c"), Diagnostic("S002", "a", Span("s.json"), pointer="/a"),
            Diagnostic("S002", "whole", Span("s.json"), pointer=""), Diagnostic("S002", "a again", Span("s.json"), pointer="/a")]
    found = at_lines(came, "s.json", text)
    assert [(d.message, d.span.line, d.span.col) for d in found] == [
        ("whole", 1, 1), ("other", 9, 1), ("a", 1, 7), ("a again", 1, 7), ("c", 1, 21), ("d", 2, 7)]


def test_no_message_holds_a_python_repr() -> None:
    """Not `True`, `None`, `'x'`: each failing value of the table, and its keyword's, as JSON writes them."""
    for sub, value, _ in KEYWORDS.values():
        for _, message in said(sub, value):
            assert not re.search(r"\bTrue\b|\bFalse\b|\bNone\b|'", message), message


def test_required_names_every_missing_key_once_at_the_object() -> None:
    schema = {"$schema": DRAFT, "type": "object", "required": ["a", "b"]}
    found = schema_errors({}, schema, "s.json")
    assert [(d.pointer, d.message, d.schema_rule) for d in found] == [
        ("", f"missing required keys {J('a')}, {J('b')}", f'/required (required: {J(["a", "b"])})')]


# ------------------------------------------------------------------ anyOf / oneOf

def test_alternatives_that_all_fail_at_the_value_are_named_together() -> None:
    members = [1, "two"]
    for key in ("anyOf", "oneOf"):
        sub = {key: [{"type": "string", "minLength": 5}, {"type": "array"}, {"enum": members}], "$comment": "x"}
        # the value is a text: the first alternative matches its type, so it alone is told
        assert said(sub, "abc") == [("/x", f"expected at least 5 characters, got 3: {J('abc')}")]
        assert said(sub, True) == [("/x", f"expected {either(['a text', 'a list'] + [J(m) for m in members])}, got true")]


def test_alternatives_failing_alike_deeper_are_merged_at_their_pointer_or_each_told() -> None:
    kinds = ["a", "b"]
    sub = {"anyOf": [{"type": "object", "properties": {"kind": {"const": k}}} for k in kinds]}
    assert said(sub, {"kind": "c"}) == [("/x/kind", f"expected {either([J(k) for k in kinds])}, got {J('c')}")]
    keys = ["p", "q"]
    sub = {"anyOf": [{"type": "object", "required": [k]} for k in keys]}
    found = schema_errors({"x": {}}, {"$schema": DRAFT, "properties": {"x": sub}}, "s.json")
    assert [(d.pointer, d.message) for d in found] == [("/x", f"missing required key {J(k)}") for k in keys]
    assert all(d.help and d.help.startswith("/x matches none of the alternatives") for d in found), found


def test_a_tie_within_one_alternative_still_chooses_it() -> None:
    sub = {"anyOf": [{"type": "null"}, {"type": "string", "minLength": 3, "pattern": "^a"}]}
    found = schema_errors({"x": "bb"}, {"$schema": DRAFT, "properties": {"x": sub}}, "s.json")
    assert [(d.pointer, d.message.split(",")[0], d.help) for d in found] == [
        ("/x", "expected at least 3 characters", "/x may instead be null"),
        ("/x", f"expected a text matching {J('^a')}", "/x may instead be null")]


def test_a_large_invalid_value_in_an_alternative_stays_bounded() -> None:
    sub = {"anyOf": [{"type": "null"}, {"type": "array", "items": {"type": "string"}}]}
    found = schema_errors({"x": list(range(20_000))}, {"$schema": DRAFT, "properties": {"x": sub}}, "s.json")
    assert len(found) == MAX_ERRORS + 1 and found[-1].message.startswith("... and more schema errors")
    assert [d.pointer for d in found[:3]] == ["/x/0", "/x/1", "/x/2"]  # (in the items' order)
    assert found[0].message == "expected a text, got 0" and found[0].help == "/x may instead be null"


def _his_state() -> dict:
    from test_his import one_interceptor

    return one_interceptor() | {"decisions": {"intercept": [{"power": "france", "from": True, "units": "x"}]}}


def _nobody() -> str:
    """The values a decision of the HIS state schema may take instead of a list, as a help names them."""
    schema = json.loads((ROOT / "schemas/his/state.schema.json").read_text(encoding="utf-8"))
    return either([J(v) for v in schema["$defs"]["nobody"]["enum"]])


def test_his_intercept_is_told_at_the_fields_at_fault() -> None:
    with pytest.raises(RunError) as exc:
        validator.load_ruleset(ROOT / "rulesets/his/his.rules").run(_his_state(), seed=1)
    found = [(d.code, d.pointer, d.message, d.help) for d in exc.value.diagnostics]
    help = f"/decisions/intercept may instead be {_nobody()}"
    assert found == [("S002", "/decisions/intercept/0/from", f"expected a text, got {J(True)}", help),
                     ("S002", "/decisions/intercept/0/units", f"expected a list, got {J('x')}", help)]
    with pytest.raises(RunError) as exc:
        validator.load_ruleset(ROOT / "rulesets/his/his.rules").run(_his_state() | {"decisions": {"intercept": 5}})
    assert [(d.pointer, d.message) for d in exc.value.diagnostics] == [
        ("/decisions/intercept", f"expected {_nobody().replace(' or ', ', ')} or a list, got 5")]


def test_the_diagnostics_page_shows_what_the_his_example_prints(cli, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    page = (ROOT / "docs/diagnostics.md").read_text(encoding="utf-8")
    block = re.search(r"```text\n(state\.json:\d+:\d+: error\[S002\]: expected a text, got true.*?)```", page, re.S)
    assert block is not None
    (tmp_path / "state.json").write_text(json.dumps(_his_state(), indent=2), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    r = cli("run", str(ROOT / "rulesets/his/his.rules"), "--state", "state.json")
    shown = block.group(1).splitlines()
    assert r.code == 3 and shown[-1] == "..." and r.err.splitlines()[:len(shown) - 1] == shown[:-1], r.err


def test_diplomacy_attacker_origin_is_told_by_its_nearest_alternative() -> None:
    rs = validator.load_ruleset(ROOT / "rulesets/diplomacy/standard.rules")
    state = json.loads((ROOT / "rulesets/diplomacy/examples/retreat.json").read_text(encoding="utf-8"))
    where = "/dislodged/0/attacker_from"
    for value, message, help in (("", f"expected a non-empty text, got {J('')}", f"{where} may instead be null"),
                                 (5, "expected a text or null, got 5", None)):
        state["dislodged"][0]["attacker_from"] = value
        with pytest.raises(RunError) as exc:
            rs.run(state)
        assert [(d.pointer, d.message, d.help) for d in exc.value.diagnostics] == [(where, message, help)]


def test_jomini_hex_is_told_by_its_pattern() -> None:
    rs = validator.load_ruleset(ROOT / "rulesets/jomini/re.rules")
    schema = json.loads((ROOT / "schemas/jomini/state.schema.json").read_text(encoding="utf-8"))
    pattern = schema["$defs"]["hex"]["pattern"]
    state = json.loads((ROOT / "rulesets/jomini/examples/small.json").read_text(encoding="utf-8"))
    state["units"][0]["hex"] = "12a4"
    with pytest.raises(RunError) as exc:
        rs.run(state)
    assert [(d.pointer, d.message, d.help) for d in exc.value.diagnostics] == [
        ("/units/0/hex", f"expected a text matching {J(pattern)}, got {J('12a4')}", "/units/0/hex may instead be null")]


def test_a_data_file_keeps_the_help_of_its_alternatives(tmp_path: Path) -> None:
    """C026 (imported data) says what S002 says, its own help first."""
    (tmp_path / "s.json").write_text(json.dumps({"$schema": DRAFT, "properties": {
        "x": {"anyOf": [{"type": "null"}, {"type": "array", "items": {"type": "integer"}}]}}}), encoding="utf-8")
    (tmp_path / "d.json").write_text(json.dumps({"x": ["one"]}), encoding="utf-8")
    (tmp_path / "main.rules").write_text('import "d.json" as d with schema "s.json"\nquery main = d\n', encoding="utf-8")
    found = [(d.code, d.pointer, d.message, d.help) for d in validator.load_ruleset(tmp_path / "main.rules").diagnostics
             if d.is_error]
    assert [f[:3] for f in found] == [("C026", "/x/0", f"expected an integer, got {J('one')}")]
    own, alternatives = str(found[0][3]).split("; ")
    assert re.fullmatch(r"`.*d\.json` must satisfy `.*s\.json`", own) and alternatives == "/x may instead be null", found


def test_the_schema_rule_is_where_the_keyword_is_written_through_refs() -> None:
    """jsonschema's path goes through a `$ref` as if the schema it names were written in its place:
    `/properties/a/items/properties/c/properties/d/enum` is no place in this schema's file. The rule
    shown follows each reference within the file to the keyword as written; a path with no `$ref` on
    its way, and one through a reference to another file, stay as jsonschema gives them."""
    schema = {"$schema": DRAFT, "type": "object", "$defs": {
        "c": {"$ref": "#/$defs/d"}, "d": {"type": "object", "required": ["e"], "properties": {"e": {"enum": [1, 2]}}}},
        "properties": {"a": {"type": "array", "items": {"type": "object", "properties": {
            "b": {"type": "integer"}, "c": {"$ref": "#/$defs/c"}}}}}}
    found = schema_errors({"a": [{"b": "x"}, {"c": {"e": 3}}, {"c": {}}]}, schema, "s.json")
    rules = {d.pointer: (d.schema_rule or "").split(" (")[0] for d in found}
    assert rules == {"/a/0/b": "/properties/a/items/properties/b/type", "/a/1/c/e": "/$defs/d/properties/e/enum",
                     "/a/2/c": "/$defs/d/required"}, rules
    for where in rules.values():  # each names a keyword of the schema as written
        node = schema
        for part in where.lstrip("/").split("/"):
            node = node[part]
    diplomacy = json.loads((ROOT / "rulesets" / "diplomacy" / "examples" / "movement_1901.json").read_text())
    diplomacy["units"][0]["type"] = "submarine"
    with pytest.raises(RunError) as exc:
        validator.load_ruleset(ROOT / "rulesets" / "diplomacy" / "standard.rules").run(diplomacy)
    assert [d.schema_rule for d in exc.value.diagnostics] == ['/$defs/unit_type/enum (enum: ["army", "fleet"])']


def test_an_unexpected_key_of_a_case_state_is_told_at_the_key_in_the_case_file(tmp_path: Path) -> None:
    (tmp_path / "s.schema.json").write_text(json.dumps({
        "$schema": DRAFT, "type": "object", "additionalProperties": False, "properties": {"units": {
            "type": "array", "items": {"type": "object", "additionalProperties": False, "properties": {"id": {}}}}}}))
    (tmp_path / "s.rules").write_text('schema "s.schema.json"\ninput units: list[any] at "/units"\nquery main = len(units)\n')
    (tmp_path / "c.yaml").write_text("ruleset: s.rules\ncases:\n  - id: a\n    state:\n      units:\n"
                                     "        - id: x\n          extra: 1\n    expect: 1\n")
    import io

    from validator.tools.cli import main

    out, err = io.StringIO(), io.StringIO()
    code = main(["test", str(tmp_path / "c.yaml")], stdout=out, stderr=err)
    out, err = out.getvalue(), err.getvalue()
    assert code == 3 and f"{tmp_path / 'c.yaml'}:7:11: S002: unexpected key" in out + err, out + err
