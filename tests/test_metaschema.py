"""The fast meta-schema check (``lang.metaschema``) may only say "certainly valid" of a schema that
jsonschema's ``check_schema`` (draft 2020-12, with the formats a ruleset's check gives it) finds
nothing in: mutated bundled schemas, schemas drawn from the meta-schema's keywords (mostly refused),
and schemas drawn valid by construction with near-valid ones beside them (one wrong value), on which
the two must agree both ways."""

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
from validator.lang.metaschema import DRAFT_2020_12, MAX_DEPTH, certainly_valid

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


# Schemas drawn valid by construction (each keyword with a value of the shape the meta-schema asks),
# and the same with one keyword's value made wrong: the fast check must take the first (it answers
# for every schema of these shapes, or it saves nothing) and refuse the second, as jsonschema does.
NAMES = ["a", "b", "id", "x_1", "name"]
REFS = ["#", "#/$defs/a", "#/$defs/b", "#node", "other.json", "other.json#/$defs/a", "https://example.com/s.json"]
PATTERNS = ["^[a-z]+$", "\\d+", "^x_", "[0-9]{2,3}", "a|b", "\\p{L}", "(?i)abc", ""]
TYPES = sorted(["array", "boolean", "integer", "null", "number", "object", "string"])
json_scalars = (st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-10, 10, allow_nan=False) | st.sampled_from(NAMES))
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.sampled_from(NAMES), inner, max_size=2), max_leaves=5)
counts = st.integers(0, 5)
numbers = st.integers(-5, 5) | st.floats(-5, 5, allow_nan=False)
texts = st.lists(st.sampled_from(NAMES), max_size=3, unique=True)


def _keywords(inner: Any) -> Any:
    """(keyword, value) pairs of a schema whose subschemas are drawn by ``inner``."""
    schema_map = st.dictionaries(st.sampled_from(NAMES), inner, max_size=3)
    schema_array = st.lists(inner, min_size=1, max_size=3)
    kw = st.sampled_from
    return st.one_of(
        st.tuples(kw(["type"]), st.sampled_from(TYPES) | st.lists(st.sampled_from(TYPES), min_size=1, max_size=3, unique=True)),
        st.tuples(kw(["properties", "$defs", "dependentSchemas"]), schema_map),
        st.tuples(kw(["patternProperties"]), st.dictionaries(st.sampled_from(PATTERNS), inner, max_size=2)),
        st.tuples(kw(["items", "not", "if", "then", "else", "additionalProperties", "contains", "propertyNames",
                      "unevaluatedItems", "unevaluatedProperties"]), inner),
        st.tuples(kw(["prefixItems", "anyOf", "oneOf", "allOf"]), schema_array),
        st.tuples(kw(["enum", "examples"]), st.lists(json_values, max_size=3)),
        st.tuples(kw(["const", "default"]), json_values),
        st.tuples(kw(["required"]), texts),
        st.tuples(kw(["dependentRequired"]), st.dictionaries(st.sampled_from(NAMES), texts, max_size=2)),
        st.tuples(kw(["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]), numbers),
        st.tuples(kw(["multipleOf"]), st.integers(1, 5) | st.floats(0.125, 4)),
        st.tuples(kw(["minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties",
                      "minContains", "maxContains"]), counts),
        st.tuples(kw(["pattern"]), st.sampled_from(PATTERNS)),
        st.tuples(kw(["uniqueItems", "deprecated", "readOnly", "writeOnly"]), st.booleans()),
        st.tuples(kw(["title", "description", "$comment"]), st.text(max_size=5)),
        st.tuples(kw(["format"]), st.sampled_from(["date", "email", "uri", "regex", "made-up"])),
        st.tuples(kw(["$ref", "$dynamicRef"]), st.sampled_from(REFS)),
        st.tuples(kw(["$anchor", "$dynamicAnchor"]), st.sampled_from(["node", "_x", "a-b.c", "meta"])),
        st.tuples(kw(["$id"]), st.sampled_from(["s.json", "https://example.com/s.json", "urn:x:y", "s.json#"])),
        st.tuples(kw(["x-note", "other"]), json_values),  # (a keyword the meta-schema does not name: anything)
    )


def _schema_of(inner: Any) -> Any:
    return st.lists(_keywords(inner), max_size=5).map(dict)


valid_schemas = st.recursive(st.booleans() | _schema_of(st.booleans()), _schema_of, max_leaves=12).map(
    lambda s: s if isinstance(s, bool) else {"$schema": DRAFT_2020_12, **s} if len(s) % 3 == 0 else s)

# one wrong value a keyword can be given, and the meta-schema's reason it is wrong
WRONG: list[tuple[str, Any]] = [
    ("type", "strng"), ("type", []), ("type", ["string", "string"]), ("type", 3), ("type", ["int"]),
    ("properties", {"a": 3}), ("properties", []), ("$defs", {"a": "x"}), ("dependentSchemas", {"a": None}),
    ("patternProperties", {"(": {}}), ("patternProperties", {"a": []}), ("items", [{}]), ("items", 3),
    ("not", "x"), ("additionalProperties", None), ("contains", 1.5), ("prefixItems", []), ("anyOf", []),
    ("oneOf", {}), ("allOf", [{}, 2]), ("enum", {}), ("enum", "a"), ("examples", 3), ("required", ["a", "a"]),
    ("required", "a"), ("required", [1]), ("dependentRequired", {"a": ["b", "b"]}), ("dependentRequired", []),
    ("minimum", "0"), ("maximum", True), ("exclusiveMinimum", None), ("multipleOf", 0), ("multipleOf", -1.5),
    ("minLength", -1), ("maxLength", 1.5), ("minItems", "1"), ("maxProperties", True), ("pattern", "("),
    ("pattern", "a(?=b)"), ("pattern", 3), ("uniqueItems", "yes"), ("readOnly", 0), ("title", 2),
    ("description", None), ("format", 1), ("$ref", 3), ("$dynamicRef", []), ("$anchor", "1x"),
    ("$anchor", "a b"), ("$dynamicAnchor", ""), ("$id", "a#b"), ("$id", 7), ("$schema", 3),
    ("$vocabulary", {"https://example.com/v": 1}), ("dependencies", {"a": ["b", 1]}), ("definitions", [True]),
]


def _subschema_paths(schema: Any, here: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The places in a schema drawn by ``valid_schemas`` that hold an object schema (the keywords the
    test draws subschemas under; a mutation there the meta-schema checks)."""
    if not isinstance(schema, dict):
        return []
    out = [here]
    for k, v in schema.items():
        if k in ("properties", "$defs", "dependentSchemas", "patternProperties"):
            for name, x in v.items():
                out += _subschema_paths(x, here + (k, name))
        elif k in ("prefixItems", "anyOf", "oneOf", "allOf"):
            for i, x in enumerate(v):
                out += _subschema_paths(x, here + (k, i))
        elif k in ("items", "not", "if", "then", "else", "additionalProperties", "contains", "propertyNames",
                   "unevaluatedItems", "unevaluatedProperties"):
            out += _subschema_paths(v, here + (k,))
    return out


@st.composite
def near_valid_schemas(draw: Any) -> Any:
    """A valid drawn schema with one keyword's value, at one of its object schemas, made wrong."""
    schema = draw(valid_schemas.filter(lambda s: isinstance(s, dict)))
    path = draw(st.sampled_from(_subschema_paths(schema)))
    keyword, value = draw(st.sampled_from(WRONG))
    return mutated(schema, path, "add", value, keyword) if path else {**schema, keyword: value}


def test_drawn_schemas_are_mostly_valid_and_the_fast_check_agrees_with_jsonschema_both_ways() -> None:
    """On a valid draw the fast check says valid (and jsonschema agrees: the draw is valid); on a
    near-valid one (one wrong value) both refuse it. Most draws are valid, so that "certainly valid"
    is exercised where it says so, not only where a random schema is refused anyway."""
    seen: dict[str, list[bool]] = {"valid": [], "near-valid": []}
    sizes: list[int] = []

    @settings(max_examples=800, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(draw=st.one_of(st.tuples(st.just("valid"), valid_schemas), st.tuples(st.just("valid"), valid_schemas),
                          st.tuples(st.just("near-valid"), near_valid_schemas())))  # (two valid draws in three)
    def check(draw: tuple[str, Any]) -> None:
        kind, schema = draw
        fast, slow = certainly_valid(schema, FORMATS.conforms), _valid(schema)
        if fast:
            assert slow, schema  # the tool's claim: "valid" only where jsonschema finds nothing
        assert slow == (kind == "valid"), schema  # (the strategy's: a valid draw is valid, a wrong value is wrong)
        assert fast == slow, schema  # (and on these shapes the fast check answers: it is never unsure)
        seen[kind].append(slow)
        sizes.append(len(json_paths(schema)))

    check()
    n = len(seen["valid"]) + len(seen["near-valid"])
    accepted = sum(seen["valid"])
    print(f"{accepted}/{n} drawn schemas valid ({accepted / n:.0%}), {len(seen['near-valid'])} near-valid refused,"
          f" {sum(sizes) / n:.1f} JSON places a schema, {sum(s >= 10 for s in sizes)} with ten or more")
    assert accepted / n > 0.5
    assert len(seen["near-valid"]) > 0.1 * n
