"""What an S002 (and a C026) says: a schema error of jsonschema told in JSON notation.

The people who read these messages write JSON, so a value is shown as JSON (``true``, ``null``,
``"x"``, ``{"a": 1}``), cut after ``SHOWN`` characters, and each message of a common keyword says what
was expected: ``expected a text, got true``. A value that fails every alternative of an ``anyOf`` or a
``oneOf`` is told by the alternative that came nearest, chosen by jsonschema's own ``relevance`` (the
order its ``best_match`` descends by): its errors at their own pointers, and, as help, what the other
alternatives were. When alternatives fail alike (jsonschema cannot rank them apart), they are told
together: ``expected a text or null, got 5``.

Nothing here runs for a valid state, and nothing imports jsonschema before an error exists.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from ..core.jsontext import SHOWN, number, shown

_A = {"string": "a text", "integer": "an integer", "number": "a number", "boolean": "true or false",
      "null": "null", "array": "a list", "object": "an object"}
_MANY = {"string": "texts", "integer": "integers", "number": "numbers", "boolean": "truth values",
         "null": "nulls", "array": "lists", "object": "objects"}


def either(words: list[str]) -> str:
    """``a``, ``a or b``, ``a, b or c`` (each told once, in order)."""
    words = list(dict.fromkeys(words))
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def members(values: list[Any], limit: int = SHOWN) -> list[str]:
    """Values in JSON notation for a list of alternatives: as many as ``limit`` characters hold, then ``...``."""
    words = few([shown(v) for v in itertools.islice(values, limit)], limit)
    return words + ["..."] if len(values) > limit and words[-1] != "..." else words


def few(words: list[str], limit: int) -> list[str]:
    """The first of ``words`` that ``limit`` characters hold (at least one), then ``...`` for the others."""
    size = 0
    for i, w in enumerate(words):
        size += len(w) + 2
        if size > limit + 2 and i:
            return words[:i] + ["..."]
    return words


def _listed(values: list[Any]) -> str:
    """Values in JSON notation, separated by commas; past ``SHOWN`` characters, ``...`` for the others."""
    return ", ".join(members(values))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _types(types: Any) -> list[str]:
    names = [types] if isinstance(types, str) else list(types) if isinstance(types, list) else []
    return [_A.get(t, f'of type "{t}"') for t in names if isinstance(t, str)]


def kinds(schema: Any, root: Any = None, depth: int = 0) -> list[str]:
    """What a schema accepts, in a few words each (``a text``, ``null``, ``"none"``), for the help of an
    alternative; empty when it cannot be said shortly. A local ``$ref`` is followed in ``root``."""
    if schema is True:
        return ["anything"]
    if not isinstance(schema, dict) or depth > 8:
        return []
    if "const" in schema:
        return [shown(schema["const"])]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return members(schema["enum"])
    if "type" in schema:
        words = _types(schema["type"])
        items = schema.get("items")
        if words == ["a list"] and isinstance(items, dict) and isinstance(items.get("type"), str):
            return [f"a list of {_MANY.get(items['type'], 'values')}"]
        return words
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#") and root is not None:
        from .state import Unsupported, ref_target

        try:
            return kinds(ref_target(root, ref), root, depth + 1)
        except Unsupported:
            return []
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            each = [kinds(s, root, depth + 1) for s in schema[key]]
            return [k for words in each for k in words] if all(each) else []
    for kind, keys in (("an object", ("properties", "required", "additionalProperties", "patternProperties")),
                       ("a list", ("items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains")),
                       ("a text", ("pattern", "minLength", "maxLength", "format")),
                       ("a number", ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"))):
        if any(k in schema for k in keys):
            return [kind]
    return []


_NAMING = frozenset(("properties", "patternProperties", "dependentSchemas", "dependentRequired", "$defs", "definitions"))


def _key_of_name(err: Any) -> bool:
    """Whether the error is about a key of an object (under a ``propertyNames`` keyword, not under a
    property of that name), whose pointer is the object's."""
    path = list(err.absolute_schema_path)
    return any(p == "propertyNames" and (i == 0 or path[i - 1] not in _NAMING) for i, p in enumerate(path))


def alternatives(err: Any) -> list[str] | None:
    """The values or kinds of value a `type`, `enum` or `const` error expected (``["a text", "null"]``,
    ``['"land"', '"sea"']``), or None for another error. A long list ends in ``...``."""
    kw, want = err.validator, err.validator_value
    if kw == "type":
        return _types(want)
    if kw == "const":
        return [shown(want)]
    if kw == "enum" and isinstance(want, list) and want:
        return members(want)
    return None


def told(err: Any) -> tuple[str, str | None]:
    """(what was expected or what is wrong, the value as shown or None): a message is
    ``"<first>, got <second>"``, or the first alone."""
    kw, want, v = err.validator, err.validator_value, err.instance
    got = shown(v)
    if err.schema is False:
        return "no value is allowed here", got
    wants = alternatives(err)
    if wants is not None:
        return f"expected {either(wants)}", got
    bound = {"minimum": "at least", "maximum": "at most", "exclusiveMinimum": "more than",
             "exclusiveMaximum": "less than"}
    if kw in bound:
        return f"expected {bound[kw]} {number(want)}", got
    if kw == "pattern":  # (``state._re2_keywords`` says the same)
        return f"expected a text matching {shown(want)}", got
    if kw == "multipleOf":
        return f"expected a multiple of {number(want)}", got
    if kw in ("minLength", "maxLength") and isinstance(v, str):
        if kw == "minLength" and want == 1:
            return "expected a non-empty text", got
        if kw == "maxLength" and want == 0:
            return "expected an empty text", got
        side = "at least" if kw == "minLength" else "at most"
        return f"expected {side} {_plural(want, 'character')}", f"{len(v)}: {got}"
    if kw in ("minItems", "maxItems", "minProperties", "maxProperties") and isinstance(v, (list, dict)):
        noun = "list" if kw.endswith("Items") else "object"
        if kw.startswith("min") and want == 1:
            return f"expected a non-empty {noun}", got
        if kw.startswith("max") and want == 0:
            return f"expected an empty {noun}", got
        side = "at least" if kw.startswith("min") else "at most"
        word = "item" if kw.endswith("Items") else "key"
        return f"expected {side} {_plural(want, word)}", str(len(v))
    if kw == "required" and isinstance(v, dict):
        missing = [k for k in want if k not in v]
        return f"missing required key{'s' if len(missing) > 1 else ''} {_listed(missing)}", None
    if kw == "dependentRequired" and isinstance(v, dict):
        said = []
        for key, needs in want.items():
            missing = [k for k in needs if k not in v] if key in v else []
            if missing:
                said.append(f"key{'s' if len(missing) > 1 else ''} {_listed(missing)} (required when {shown(key)} is present)")
        return "missing " + "; ".join(said), None
    if kw == "format":
        return f"expected the format {shown(want)}", got
    if kw == "items" and want is False and isinstance(v, list):
        return f"expected at most {_plural(len(err.schema.get('prefixItems', [])), 'item')}", str(len(v))
    if kw == "contains":
        least = _plural(err.schema.get("minContains", 1), "item")
        return f"expected at least {least} matching its \"contains\" rule", "none"
    if kw in ("minContains", "maxContains"):
        side = "at least" if kw == "minContains" else "at most"
        return f"expected {side} {_plural(want, 'item')} matching its \"contains\" rule", None
    if kw == "not":
        words = kinds(want)
        return (f"expected anything but {either(words)}" if words else 'expected another value (its "not" rule)'), got
    if kw == "oneOf" and not err.context:
        return 'expected exactly one alternative of its "oneOf" to match', f"{got}, which matches several"
    return err.message, None  # (another keyword, or a message of ``state._re2_keywords``: already told so)


def message(err: Any) -> str:
    first, got = told(err)
    if _key_of_name(err) and isinstance(err.instance, str):  # (the pointer is the object's: name the key)
        return f"the key {shown(err.instance)}: {first}"
    return first if got is None else f"{first}, got {got}"


def expand(err: Any, root: Any, limit: int) -> Iterator[tuple[Any, Any, str, str | None]]:
    """(error whose place it is, error whose schema rule it is, message, help) for each thing to tell of
    ``err``, at most ``limit`` of them: ``err`` itself, or, for an ``anyOf`` or a ``oneOf`` every
    alternative of which failed, what the nearest alternative found (see the module's text)."""
    if err.validator not in ("anyOf", "oneOf") or not err.context:
        yield err, err, message(err), getattr(err, "ruleval_help", None) or _meant(err)  # (``state._re2_keywords``'s advice)
        return
    from jsonschema.exceptions import relevance

    # jsonschema's best_match descends into the context error it ranks lowest (the deepest; then one that
    # at least matches its schema's type) and stops where two rank alike; here a tie within one
    # alternative still chooses that alternative, and a tie between alternatives tells them together
    try:
        keys = [relevance(e) for e in err.context]
        low = min(keys)
        tied = [e for e, k in zip(err.context, keys) if k == low]
    except TypeError:  # (paths within one value compare; should two not, the alternatives are told together)
        tied = list(err.context)
    chosen = {e.relative_schema_path[0] for e in tied}
    where = _where(err)
    if len(chosen) == 1:
        (b,) = chosen
        others = [_alternative(err, o, root) for o in range(len(err.validator_value)) if o != b]
        if others and all(others):
            help = f"{where} may instead be {either([w for words in others for w in words])}"
        else:
            help = f"{where} may instead match another alternative of its \"{err.validator}\""
        yield from _each([e for e in err.context if e.relative_schema_path[0] == b], root, limit, help)
        return
    gots = {told(e)[1] for e in tied}
    wants = [w for e in tied for w in alternatives(e) or [""]]
    if len({tuple(e.relative_path) for e in tied}) == 1 and len(gots) == 1 and None not in gots and all(wants):
        # one message, `expected a text or null, got 5`: what each alternative expected, together
        yield tied[0], err, f"expected {either(wants)}, got {gots.pop()}", None
        return
    help = f"{where} matches none of the alternatives of its \"{err.validator}\"; what each one found is shown"
    yield from _each(tied, root, limit, help)


def _meant(err: Any) -> str | None:
    """``did you mean `x`?`` for a text an `enum` refuses, when one of its texts is close to it."""
    if err.validator != "enum" or not isinstance(err.instance, str) or not isinstance(err.validator_value, list):
        return None
    from ..core.diagnostics import closest_name

    close = closest_name(err.instance, [m for m in err.validator_value if isinstance(m, str)])
    return f"did you mean `{close}`?" if close else None


def _each(errors: list[Any], root: Any, limit: int, help: str) -> Iterator[tuple[Any, Any, str, str | None]]:
    count = 0
    for e in errors:
        for at, rule, said, inner_help in expand(e, root, limit - count):
            yield at, rule, said, help if inner_help is None else f"{inner_help}; {help}"
            count += 1
            if count >= limit:
                return


def _where(err: Any) -> str:
    from .state import pointer

    return pointer(err.absolute_path) or "the whole JSON value"


def _alternative(err: Any, b: int, root: Any) -> list[str]:
    """What alternative ``b`` of an ``anyOf``/``oneOf`` error accepts, in a few words; from the schema
    jsonschema checked the value against where that alternative failed at the value itself (a
    ``$ref`` already followed), else from the alternative as written."""
    for e in err.context:
        if e.relative_schema_path[0] == b and not e.relative_path:
            words = kinds(e.schema, root)
            if words:
                return words
    return kinds(err.validator_value[b], root)
