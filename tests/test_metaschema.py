"""The fast meta-schema check (``lang.metaschema``) may only say "certainly valid" of a schema that
jsonschema's ``check_schema`` (draft 2020-12, with the formats a ruleset's check gives it) finds
nothing in: mutated bundled schemas and schemas drawn from the meta-schema's keywords, both ways."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzzing import json_paths, mutated
from validator.engine.state import _search_pattern, schema_problem
from validator.lang.metaschema import MAX_DEPTH, certainly_valid

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = {str(p.relative_to(ROOT)): json.loads(p.read_text(encoding="utf-8")) for p in sorted(ROOT.glob("schemas/*/*.json"))}
CLS = jsonschema.Draft202012Validator
FORMATS = jsonschema.FormatChecker()
FORMATS.checkers = {**CLS.FORMAT_CHECKER.checkers, "regex": (_search_pattern, (re.error,))}

KEYWORDS = [  # the meta-schema's, and one it does not name
    "items", "contains", "additionalProperties", "propertyNames", "if", "then", "else", "not", "unevaluatedItems",
    "unevaluatedProperties", "contentSchema", "$defs", "definitions", "properties", "dependentSchemas", "prefixItems",
    "allOf", "anyOf", "oneOf", "title", "description", "$comment", "format", "contentEncoding", "contentMediaType",
    "deprecated", "readOnly", "writeOnly", "uniqueItems", "enum", "examples", "maximum", "exclusiveMaximum", "minimum",
    "exclusiveMinimum", "maxLength", "minLength", "maxItems", "minItems", "maxContains", "minContains", "maxProperties",
    "minProperties", "$ref", "$dynamicRef", "$recursiveRef", "$anchor", "$dynamicAnchor", "$recursiveAnchor", "type",
    "pattern", "patternProperties", "required", "dependentRequired", "dependencies", "multipleOf", "$schema", "$id",
    "$vocabulary", "const", "default", "other"]

scalars = (st.none() | st.booleans() | st.integers(-2, 5) | st.floats(allow_nan=False, allow_infinity=False, width=32)
           | st.sampled_from(["", "a", "string", "integer", "#", "#/x", "a#b", "urn:x", "https://json-schema.org/draft/2020-12/schema",
                              "^[a-z]+$", "(", "a(?=b)", "\\d", "_x", "1x", "x\n", "array", "object", "number"]))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.sampled_from(KEYWORDS) | st.text(max_size=3), inner, max_size=3), max_leaves=8)


def _valid(schema: Any) -> bool:
    try:
        CLS.check_schema(schema, format_checker=FORMATS)
    except jsonschema.SchemaError:
        return False
    return True


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_the_bundled_schemas_are_certainly_valid(name: str) -> None:
    """The fast check takes every bundled schema (else it would save nothing), and jsonschema agrees."""
    assert certainly_valid(SCHEMAS[name], FORMATS.conforms)
    assert _valid(SCHEMAS[name])


@pytest.mark.parametrize("schema", [
    {"type": "strng"}, {"type": []}, {"type": ["string", "string"]}, {"minLength": -1}, {"minLength": 1.5},
    {"pattern": "a(?=b)"}, {"patternProperties": {"(": {}}}, {"required": ["a", "a"]}, {"allOf": []},
    {"properties": {"a": 3}}, {"items": [{}]}, {"$id": "a#b"}, {"$anchor": "1x"}, {"multipleOf": 0},
    {"dependencies": {"a": ["b", 1]}}, {"$vocabulary": {"x": 1}}, {"enum": {}}, {"const": 1, "title": 2}, [], 3,
])
def test_what_the_meta_schema_refuses_is_never_certainly_valid(schema: Any) -> None:
    assert not _valid(schema)
    assert not certainly_valid(schema, FORMATS.conforms)


def test_a_schema_deeper_than_the_walk_goes_is_left_to_jsonschema() -> None:
    deep: Any = {}
    for _ in range(MAX_DEPTH + 2):
        deep = {"items": deep}
    assert _valid(deep)
    assert not certainly_valid(deep, FORMATS.conforms)
    assert schema_problem(deep) is None  # (jsonschema's verdict, as before)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
@settings(max_examples=120, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_mutated_schema_is_certainly_valid_only_when_jsonschema_finds_it_valid(name: str, data: Any) -> None:
    path = data.draw(st.sampled_from(json_paths(SCHEMAS[name])))
    how = data.draw(st.sampled_from(["replace", "delete", "add"])) if path else "replace"
    keyword = data.draw(st.sampled_from(KEYWORDS)) if path else ""
    schema = mutated(SCHEMAS[name], path, how, data.draw(values), keyword)
    if certainly_valid(schema, FORMATS.conforms):
        assert _valid(schema), schema


@settings(max_examples=600, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=st.dictionaries(st.sampled_from(KEYWORDS), values, max_size=4))
def test_a_drawn_schema_is_certainly_valid_only_when_jsonschema_finds_it_valid(schema: Any) -> None:
    if certainly_valid(schema, FORMATS.conforms):
        assert _valid(schema), schema
