"""A fast acceptance check of a schema against the draft 2020-12 meta-schema, in front of jsonschema's.

Every state schema and data schema a ruleset names is checked against its draft's meta-schema
(``engine.state._validator``: a ``C015`` when it is not valid). jsonschema does that by walking the
meta-schema's seven vocabularies, resolving a ``$ref`` or ``$dynamicRef`` (through ``referencing``)
at every subschema: 25 to 80 ms a schema, some 4% of a cold ``ruleval check rulesets/``.

``certainly_valid`` answers in one walk of the schema, with the same tests on the same keywords: it
says True only when the meta-schema finds nothing, and when it is not sure (a value of a type it does
not take, a schema nested deeper than ``MAX_DEPTH``) it says False, which only sends the schema to
jsonschema, which gives the verdict and the message. It never says what is wrong. The formats the
meta-schema asks for (``uri``, ``uri-reference``, ``regex``) are tested by the caller's
``conforms(value, format)``: the format checker jsonschema would be given, so a format it checks is
checked alike. ``tests/test_metaschema.py`` holds it to jsonschema on mutated schemas.

What the meta-schema of draft 2020-12 (``https://json-schema.org/draft/2020-12/schema``, with its
vocabularies core, applicator, unevaluated, validation, meta-data, format-annotation, content, and
the keywords of earlier drafts it still describes) asks of a schema: an object or a truth value;
for each keyword it names, a value of the shape below; a keyword it does not name, anything.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any, Callable

from ..core.frozen import FrozenDict, FrozenList

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
MAX_DEPTH = 40  # deeper, jsonschema's own walk decides (and says when it is too deep for it)

# keywords whose value is a schema, an object of schemas, a non-empty array of schemas
_SCHEMA = frozenset({"items", "contains", "additionalProperties", "propertyNames", "if", "then", "else", "not",
                     "unevaluatedItems", "unevaluatedProperties", "contentSchema"})
_SCHEMA_MAP = frozenset({"$defs", "definitions", "properties", "dependentSchemas"})
_SCHEMA_ARRAY = frozenset({"prefixItems", "allOf", "anyOf", "oneOf"})
_TEXT = frozenset({"title", "description", "$comment", "format", "contentEncoding", "contentMediaType"})
_TRUTH = frozenset({"deprecated", "readOnly", "writeOnly", "uniqueItems"})
_ARRAY = frozenset({"enum", "examples"})
_NUMBER = frozenset({"maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"})
_COUNT = frozenset({"maxLength", "minLength", "maxItems", "minItems", "maxContains", "minContains",
                    "maxProperties", "minProperties"})
_URI_REFERENCE = frozenset({"$ref", "$dynamicRef", "$recursiveRef"})
_ANCHOR = frozenset({"$anchor", "$dynamicAnchor", "$recursiveAnchor"})
_SIMPLE_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})
_NUMBERS = (int, float, Fraction)
# an object, an array: as read from a file, or as the loader hands out a schema (read-only: ``core.frozen``)
_OBJECTS = (dict, FrozenDict)
_ARRAYS = (list, FrozenList)
# keywords whose value need only be of one of these Python types (a text, a truth value, an array, a number)
_OF_TYPE: dict[str, tuple[type, ...]] = {**dict.fromkeys(_TEXT, (str,)), **dict.fromkeys(_TRUTH, (bool,)),
                                         **dict.fromkeys(_ARRAY, _ARRAYS), **dict.fromkeys(_NUMBER, _NUMBERS)}
# the meta-schema's own patterns, searched as jsonschema's `pattern` keyword searches them (Python's `re`)
_ANCHOR_PATTERN = re.compile("^[A-Za-z_][-A-Za-z0-9._]*$")
_ID_PATTERN = re.compile("^[^#]*#?$")


def _text_array(v: Any) -> bool:
    """The meta-schema's ``stringArray``: an array of texts, no two equal."""
    return type(v) in _ARRAYS and all(type(x) is str for x in v) and len(set(v)) == len(v)


def certainly_valid(schema: Any, conforms: Callable[[Any, str], bool]) -> bool:
    """True only when ``schema`` is valid against the draft 2020-12 meta-schema with the formats
    ``conforms`` checks (jsonschema's ``check_schema`` would raise nothing); False when it is not,
    or when this check is not sure."""
    todo: list[tuple[Any, int]] = [(schema, 0)]
    while todo:
        node, depth = todo.pop()
        t = type(node)
        if t is bool:
            continue
        if t not in _OBJECTS or depth > MAX_DEPTH:
            return False
        below = depth + 1
        for k, v in node.items():
            if k in _SCHEMA:
                todo.append((v, below))
            elif k in _SCHEMA_MAP:
                if type(v) not in _OBJECTS:
                    return False
                todo.extend((x, below) for x in v.values())
            elif k in _SCHEMA_ARRAY:
                if type(v) not in _ARRAYS or not v:
                    return False
                todo.extend((x, below) for x in v)
            elif k in _OF_TYPE:
                if type(v) not in _OF_TYPE[k]:
                    return False
            elif k in _COUNT:
                if type(v) is not int or v < 0:
                    return False
            elif k in _URI_REFERENCE:
                if type(v) is not str or not conforms(v, "uri-reference"):
                    return False
            elif k in _ANCHOR:
                if type(v) is not str or not _ANCHOR_PATTERN.search(v):
                    return False
            elif k == "type":
                if type(v) is str:
                    if v not in _SIMPLE_TYPES:
                        return False
                elif not (type(v) in _ARRAYS and v and all(type(x) is str and x in _SIMPLE_TYPES for x in v)
                          and len(set(v)) == len(v)):
                    return False
            elif k == "pattern":
                if type(v) is not str or not conforms(v, "regex"):
                    return False
            elif k == "patternProperties":
                if type(v) not in _OBJECTS or not all(type(p) is str and conforms(p, "regex") for p in v):
                    return False
                todo.extend((x, below) for x in v.values())
            elif k == "required":
                if not _text_array(v):
                    return False
            elif k == "dependentRequired":
                if type(v) not in _OBJECTS or not all(_text_array(x) for x in v.values()):
                    return False
            elif k == "dependencies":  # (each entry a schema, or an array of texts)
                if type(v) not in _OBJECTS:
                    return False
                for x in v.values():
                    if type(x) in _ARRAYS:
                        if not _text_array(x):
                            return False
                    else:
                        todo.append((x, below))
            elif k == "multipleOf":
                if type(v) not in _NUMBERS or not v > 0:
                    return False
            elif k == "$schema":
                if type(v) is not str or not conforms(v, "uri"):
                    return False
            elif k == "$id":
                if type(v) is not str or not conforms(v, "uri-reference") or not _ID_PATTERN.search(v):
                    return False
            elif k == "$vocabulary":
                if type(v) not in _OBJECTS or not all(type(u) is str and conforms(u, "uri") and type(x) is bool
                                                  for u, x in v.items()):
                    return False
    return True
