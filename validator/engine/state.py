"""State stage: read a game state and validate it against the ruleset's JSON Schema.

Every schema violation becomes an ``S002`` diagnostic with the JSON pointer of the offending value
and the schema keyword that failed; nothing runs on an invalid state.
"""

from __future__ import annotations

import itertools
import json
import re
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from ..core import jsontext
from ..core.diagnostics import Diagnostic, DiagnosticError, Span, closest_name, pointer_order, utf8_fault
from ..core.frozen import FrozenDict
from .schema_messages import either, expand, few, shown

MAX_STATE_BYTES = 5_000_000
MAX_ERRORS = 50
MAX_SUGGESTED_KEYS = 100  # unexpected keys of one object looked at for a did-you-mean (one diagnostic names them all)
MAX_MEANT = 5  # did-you-means in its help


def pointer(path: Any) -> str:
    parts = [str(p).replace("~", "~0").replace("/", "~1") for p in path]
    return "/" + "/".join(parts) if parts else ""


def written_at(schema: Any, path: Any) -> list[Any]:
    """Where a keyword jsonschema names by ``path`` is written in the schema's file. jsonschema's path
    goes through each ``$ref`` as if the schema it refers to were written in its place
    (``/properties/units/items/properties/type/enum``), which names no place in the file when a
    ``$ref`` is on the way; each reference within the file (``#/$defs/unit_type``) is followed here, so
    the pointer names the keyword where the author wrote it (``/$defs/unit_type/enum``). A reference to
    another file, or by an anchor, leaves the path as jsonschema gave it."""
    node, at, hops = schema, [], 0
    for part in path:
        while part == "$ref" or (isinstance(node, dict) and part not in node and "$ref" in node):
            ref = node.get("$ref") if isinstance(node, dict) else None
            hops += 1
            if not isinstance(ref, str) or not ref.startswith("#") or (ref[1:] and not ref.startswith("#/")) or hops > 64:
                return list(path)  # (elsewhere, by an anchor, or a reference to a reference ... that never ends)
            found, node = resolve_pointer(schema, ref[1:])
            if not found:
                return list(path)
            at = list(pointer_parts(ref[1:]))
            if part == "$ref":  # (a jsonschema that names the keyword itself: the referred schema is the next step)
                break
        else:
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
                node = node[part]
            else:
                return list(path)
            at.append(part)
    return at


def read_state_text(text: str, shown: str) -> Any:
    if len(text) > MAX_STATE_BYTES:
        raise DiagnosticError([Diagnostic("S003", f"state is {len(text)} bytes, more than {MAX_STATE_BYTES}",
                                          Span(shown), pointer="")])
    return jsontext.loads(text, shown)  # strict: no NaN, no huge integers, no lone surrogates, bounded depth


def read_state_file(path: Path, root: Path | None = None) -> Any:
    """A state file's JSON: a regular file (under ``root`` when given: a test case's ``state_file``)
    of at most ``MAX_STATE_BYTES``, read through ``confine``."""
    return read_state_text(state_file_text(path, root), str(path))


def state_file_text(path: Path, root: Path | None = None) -> str:
    """``read_state_file``'s text, before it is read as JSON (kept by a command that places what is
    said of the state at its lines: ``at_lines``)."""
    from ..core.confine import Refused, read_bytes

    shown = str(path)
    try:
        data = read_bytes(path, MAX_STATE_BYTES, root, shown)
    except Refused as exc:
        if exc.reason == "large":
            size = f"{exc.size} bytes" if exc.size is not None else "too large"
            raise DiagnosticError([Diagnostic("S003", f"state is {size}, more than {MAX_STATE_BYTES}", Span(shown),
                                              pointer="")]) from None
        raise DiagnosticError([Diagnostic("S001", f"cannot read state: {exc.message}", Span(shown))]) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, col, problem = utf8_fault(exc)
        raise DiagnosticError([Diagnostic("S001", f"state is not UTF-8 text: {problem}", Span(shown, line, col, line, col + 1),
                                          help="save the state as UTF-8")]) from None
    return text


def at_lines(diags: list[Diagnostic], shown: str, text: str | None) -> list[Diagnostic]:
    """Diagnostics about the state read from JSON ``text`` (named ``shown``), each said by a JSON pointer
    alone placed at the line and column of the value it names there (else of the nearest value
    enclosing it), the pointer kept; the others as they are."""
    from dataclasses import replace

    if text is None or not any(d.pointer is not None and not d.span.line and d.span.file == shown for d in diags):
        return diags
    positions = jsontext.Positions(text)
    out = []
    for d in diags:
        where = None
        if d.pointer is not None and not d.span.line and d.span.file == shown:
            parts = pointer_parts(d.pointer)
            where = positions.key(parts) if d.at_key else None
            if where is None:  # (the value, else its nearest enclosing one written)
                where = next((w for n in range(len(parts), -1, -1) if (w := positions.of(parts[:n])) is not None), None)
        out.append(d if where is None else replace(d, span=Span(shown, *where)))
    # what is said of the state in the order of its places (line, column, then pointer), each in the
    # order given where two share them; anything else where it was
    slots = [i for i, d in enumerate(out) if d.pointer is not None and d.span.file == shown]
    placed = sorted((out[i] for i in slots), key=lambda d: (d.span.line, d.span.col, pointer_order(d.pointer or "")))
    for i, d in zip(slots, placed):
        out[i] = d
    return out


def _search_pattern(pattern: Any) -> Any:
    """A schema's `pattern`, run by RE2 in linear time (``patterns``): a JSON Schema pattern matches
    anywhere in the text. Raises ``re.error`` for one RE2 cannot take."""
    from ..lib.patterns import PatternError, compiled

    if not isinstance(pattern, str):
        raise re.error("a pattern is a text")
    try:
        return compiled(pattern)
    except PatternError as exc:
        raise re.error(str(exc)) from None


def _re2_keywords(cls: Any) -> Any:
    """``cls`` with the keywords that match patterns (`pattern`, `patternProperties`, and
    `additionalProperties`, which skips what `patternProperties` matched) run by RE2, so that no
    pattern of a schema can backtrack for ever on a state's text."""
    import jsonschema
    from jsonschema.exceptions import ValidationError

    def pattern(validator: Any, patrn: Any, instance: Any, schema: Any) -> Any:
        if validator.is_type(instance, "string") and _search_pattern(patrn).search(instance) is None:
            yield ValidationError(f"expected a text matching {shown(patrn)}, got {shown(instance)}")

    def pattern_properties(validator: Any, pattern_properties: Any, instance: Any, schema: Any) -> Any:
        if not validator.is_type(instance, "object"):
            return
        for patrn, subschema in pattern_properties.items():
            rx = _search_pattern(patrn)
            for k, v in instance.items():
                if rx.search(k) is not None:
                    yield from validator.descend(v, subschema, path=k, schema_path=patrn)

    def additional_properties(validator: Any, ap: Any, instance: Any, schema: Any) -> Any:
        if not validator.is_type(instance, "object"):
            return
        properties = schema.get("properties", {})
        rxs = [_search_pattern(p) for p in schema.get("patternProperties", {})]
        extras = [k for k in instance if k not in properties and not any(rx.search(k) is not None for rx in rxs)]
        if validator.is_type(ap, "object"):
            for extra in extras:
                yield from validator.descend(instance[extra], ap, path=extra)
        elif not ap and extras:
            # (what was expected: the keys the schema names, and the patterns of the others)
            allowed = [shown(k) for k in properties] + [f"a key matching {shown(p)}" for p in
                                                        schema.get("patternProperties", {})]
            expected = either(few(allowed, 90)) if allowed else "no key"
            named = [k for k in properties if isinstance(k, str)]
            # one error per object, naming its unexpected keys, at the first key (``at_lines``): an object of
            # many would otherwise spend the state's MAX_ERRORS and hide the errors after it
            keys = few([shown(k) for k in extras], 90)
            if keys[-1] == "...":
                keys[-1] = f"{len(extras) - len(keys) + 1} more"
            listed = keys[0] if len(keys) == 1 else f"{', '.join(keys[:-1])} and {keys[-1]}"
            error = ValidationError(f"unexpected key{'s' if len(extras) > 1 else ''} {listed} (expected {expected})",
                                    path=[extras[0]])
            meant = [(extra, close) for extra in extras[:MAX_SUGGESTED_KEYS] if isinstance(extra, str)
                     and (close := closest_name(extra, named))][:MAX_MEANT]
            error.ruleval_at_key = True
            error.ruleval_help = (f"did you mean `{meant[0][1]}`?" if len(extras) == 1 and meant else
                                  "; ".join(f"`{extra}`: did you mean `{close}`?" for extra, close in meant) or None)
            yield error

    def unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Any:
        if unique and validator.is_type(instance, "array"):
            seen: dict[Any, int] = {}
            for i, item in enumerate(instance):
                key = _equality_key(item)
                if key in seen:
                    yield ValidationError(f"expected unique items, but item {i} equals item {seen[key]}: {shown(item)}")
                    return
                seen[key] = i

    return jsonschema.validators.extend(cls, {"pattern": pattern, "patternProperties": pattern_properties,
                                              "additionalProperties": additional_properties,
                                              "uniqueItems": unique_items})


def _equality_key(v: Any) -> Any:
    """A hashable key equal for JSON values JSON Schema calls equal (numbers by value, so 1 and 1.0;
    a truth value never equal to a number; objects whatever the order of their keys): `uniqueItems`
    in one pass, where jsonschema compares the items of a list of objects pairwise (quadratic)."""
    t = type(v)
    if t is bool:
        return ("bool", v)
    if t is dict:
        return ("object", frozenset((k, _equality_key(x)) for k, x in v.items()))
    if t is list:
        return ("array", tuple(_equality_key(x) for x in v))
    return v  # (a text, a number or none: no tuple equals one)


@lru_cache(maxsize=32)
def _validator(schema_json: str, resources_json: str = "{}") -> Any:
    """A jsonschema validator whose ``$ref``s resolve to the given files only: never retrieved from
    anywhere (``schemarefs.registry``)."""
    import jsonschema

    from ..lang.metaschema import certainly_valid as certainly_valid_schema
    from ..lang.schemarefs import registry

    schema = _from_key_text(schema_json)
    cls = jsonschema.validators.validator_for(schema)
    # checked against its meta-schema, whose `format: regex` (a `pattern`, a `patternProperties` key)
    # must be a pattern RE2 runs, as the keywords below run them (``_re2_keywords``)
    formats = jsonschema.FormatChecker()
    formats.checkers = {**cls.FORMAT_CHECKER.checkers, "regex": (_search_pattern, (re.error,))}
    if not (cls is jsonschema.Draft202012Validator and certainly_valid_schema(schema, formats.conforms)):
        cls.check_schema(schema, format_checker=formats)  # (the verdict and its message, when not surely valid)
    return _re2_keywords(cls)(schema, format_checker=cls.FORMAT_CHECKER,
                              registry=registry(schema, _from_key_text(resources_json)))


# A schema read from JSON holds its decimals exactly (``jsontext.loads``: `multipleOf: 0.1` is 1/10), so
# that a state's 0.3 is a multiple of it; the validator is kept by the schema's text, which writes a
# fraction as a one-entry object ``{_FRACTION: "1/10"}`` read back as the fraction.
_FRACTION = "\u0000fraction"


def _key_text(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=_fraction_entry)


def _fraction_entry(x: Any) -> Any:
    if isinstance(x, Fraction):
        return {_FRACTION: f"{x.numerator}/{x.denominator}"}
    raise TypeError(f"{type(x).__name__} in a schema")


def _from_key_text(text: str) -> Any:
    return json.loads(text, object_hook=lambda d: Fraction(d[_FRACTION]) if len(d) == 1 and _FRACTION in d else d)


_BY_ID: dict[int, list[Any]] = {}
_FAST_BY_ID: dict[int, list[Any]] = {}


def _read_only(*values: Any) -> bool:
    """Whether a schema (and the files its references name) cannot change: as the loader hands them out
    (``core.frozen``). Only such a schema's verdicts are kept by its identity; another's are made afresh
    at each call, as a caller may change it in place between two."""
    return all(v is None or type(v) is FrozenDict for v in values)


def _validators(schema: dict[str, Any], resources: dict[str, Any] | None = None) -> tuple[Any, Any]:
    """(jsonschema validator, fast acceptance check or None) for a schema, kept per read-only schema object
    and its references' files. The fast check (``fast_check``) only ever answers "certainly valid"."""
    kept = _BY_ID.get(id(schema))
    if kept is None or kept[0] is not schema or kept[1] is not resources:
        validator = _validator(_key_text(schema), _key_text(resources or {}))
        if not _read_only(schema, resources):
            return validator, _fast(schema)[1]
        if len(_BY_ID) >= 64:
            _BY_ID.clear()
        # [schema, resources (kept, so that their ids are never reused), validator]
        kept = _BY_ID[id(schema)] = [schema, resources, validator]
    return kept[2], _fast(schema)[1]


def _fast(schema: dict[str, Any]) -> list[Any]:
    """[schema, ``fast_check(schema)``, whether that check accepts no value holding a float
    (``float_free``)], kept per read-only schema object."""
    kept = _FAST_BY_ID.get(id(schema))
    if kept is None or kept[0] is not schema:
        fast = fast_check(schema)
        kept = [schema, fast, fast is not None and float_free(schema)]
        if _read_only(schema):
            if len(_FAST_BY_ID) >= 64:
                _FAST_BY_ID.clear()
            _FAST_BY_ID[id(schema)] = kept
    return kept


# What a schema's check may know without jsonschema. ``schema_problem`` finds nothing in a schema of draft
# 2020-12 that the fast meta-schema walk (``metaschema.certainly_valid``) accepts, whose fast check can be made
# (``_fast``: its RE2 patterns compile) and whose text can key its validator (``_key_text``), when the formats
# that walk asks about are tested by ``_surely_conforms``: it says True only where every format checker
# jsonschema may use says True. jsonschema's checkers of `uri` and `uri-reference` depend on optional packages
# (rfc3987, rfc3986-validator: present, they refuse what RFC 3986 refuses; absent, nothing is refused), so
# these take only texts that RFC 3986 and RFC 3987 both derive (no percent sign, no IP literal, no port), and
# leave any other to jsonschema; `regex` is RE2's (``_search_pattern``), as for jsonschema's check.
_PCHAR = r"[A-Za-z0-9._~!$&'()*+,;=:@-]"
_TAIL = rf"(?:\?(?:{_PCHAR}|[/?])*)?(?:#(?:{_PCHAR}|[/?])*)?"
_AFTER = rf"(?:/{_PCHAR}*)*"  # path-abempty
# (//reg-name path-abempty | path-absolute | path-rootless (or path-noscheme: no `:` in its first segment) | empty)
_HIER = "(?://[A-Za-z0-9._~-]+{a}|/(?:{p}+{a})?|{first}+{a}|)".format
_SURE_URI = rf"[A-Za-z][A-Za-z0-9+.-]*:{_HIER(a=_AFTER, p=_PCHAR, first=_PCHAR)}{_TAIL}"  # (compiled when first used)
_SURE_RELATIVE = _HIER(a=_AFTER, p=_PCHAR, first=_PCHAR.replace(":", "")) + _TAIL
_SURE_BY_ID: dict[int, list[Any]] = {}


def _surely_conforms(value: Any, format: str) -> bool:
    """True only when ``value`` is of ``format`` for jsonschema's format checker however it is installed."""
    if format == "regex":
        try:
            return bool(_search_pattern(value))
        except re.error:
            return False
    if type(value) is not str:
        return False
    if format == "uri":
        return re.fullmatch(_SURE_URI, value) is not None
    if format == "uri-reference":
        return re.fullmatch(_SURE_URI, value) is not None or re.fullmatch(_SURE_RELATIVE, value) is not None
    return False


def _surely_usable(schema: Any, resources: dict[str, Any] | None) -> bool:
    """True only when ``schema_problem`` would find nothing in the schema (see ``_surely_conforms``); False
    when it might find something, or when the schema names other files (``resources``)."""
    if resources or not isinstance(schema, dict):
        return False
    kept = _SURE_BY_ID.get(id(schema))
    if kept is not None and kept[0] is schema:
        return kept[1]  # type: ignore[no-any-return]
    from ..lang.metaschema import DRAFT_2020_12, certainly_valid as certainly_valid_schema

    try:
        sure = (schema.get("$schema") == DRAFT_2020_12 and certainly_valid_schema(schema, _surely_conforms)
                and _endless_ref(schema) is None and (_key_text(schema), _fast(schema)) is not None)
    except (TypeError, ValueError, RecursionError, re.error):  # (what ``_validators`` would raise: it says)
        sure = False
    if _read_only(schema):
        if len(_SURE_BY_ID) >= 64:
            _SURE_BY_ID.clear()
        _SURE_BY_ID[id(schema)] = [schema, sure]  # (the schema kept, so its id is never reused)
    return sure


_DATA_KEYWORDS = frozenset({"enum", "const", "default", "examples"})  # (values, not schemas)


def _endless_ref(schema: Any) -> str | None:
    """The JSON pointer of a ``$ref`` from which the schema's check comes back to where it was without
    reading into the value (through ``$ref``, ``allOf``, ``anyOf``, ``oneOf``, ``not``, ``if``, ``then``,
    ``else``, ``dependentSchemas``): checking a value that reaches it would never end. None if there is
    none. Only references within the schema are followed (``#``, ``#/...``), and none inside a part
    with an ``$id`` of its own (its ``#`` is another document)."""
    places: dict[int, tuple[str, ...]] = {}  # every subschema (a map): its place
    nodes: list[dict[str, Any]] = []
    own_id: set[int] = set()
    todo: list[tuple[Any, tuple[str, ...], bool]] = [(schema, (), False)]
    while todo:
        node, at, inside = todo.pop()
        if isinstance(node, dict):
            if id(node) in places:
                continue
            places[id(node)] = at
            nodes.append(node)
            inside = inside or (bool(at) and "$id" in node)
            if inside:
                own_id.add(id(node))
            todo += [(v, at + (str(k),), inside) for k, v in node.items() if k not in _DATA_KEYWORDS]
        elif isinstance(node, list):
            todo += [(v, at + (str(i),), inside) for i, v in enumerate(node)]

    def target(ref: str) -> Any:
        return resolve_pointer(schema, unquote(ref[1:]))[1]

    def in_place(node: dict[str, Any]) -> list[Any]:
        out = [x for k in ("allOf", "anyOf", "oneOf") if isinstance(node.get(k), list) for x in node[k]]
        out += [node.get(k) for k in ("not", "if", "then", "else")]
        if isinstance(node.get("dependentSchemas"), dict):
            out += node["dependentSchemas"].values()
        ref = node.get("$ref")
        if isinstance(ref, str) and (ref == "#" or ref.startswith("#/")) and id(node) not in own_id:
            out.append(target(ref))
        return [x for x in out if isinstance(x, dict) and id(x) in places]

    done: set[int] = set()
    for start in nodes:  # (a walk from each part not yet walked, along the parts applied in place)
        if id(start) in done:
            continue
        path, on_path = [start], {id(start)}
        stack = [iter(in_place(start))]
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                stack.pop()
                on_path.discard(id(node := path.pop()))
                done.add(id(node))
                continue
            if id(nxt) in on_path:  # back to a part on the way: a cycle, one of whose steps is a `$ref`
                cycle = path[next(i for i, n in enumerate(path) if n is nxt):]
                return pointer(min(places[id(n)] for i, n in enumerate(cycle) if isinstance(n.get("$ref"), str)
                                   and target(n["$ref"]) is cycle[(i + 1) % len(cycle)]) + ("$ref",))  # (the first)
            if id(nxt) not in done:
                stack.append(iter(in_place(nxt)))
                path.append(nxt)
                on_path.add(id(nxt))
    return None


def schema_problem(schema: dict[str, Any], resources: dict[str, Any] | None = None) -> tuple[str, str] | None:
    """Why a schema cannot be used (what follows "the schema" in a C015) and the JSON pointer of where in
    the schema, or None when it can be: it must be valid against its draft's meta-schema, its
    patterns must be RE2's, and no reference in it may lead back to itself without reading into the value."""
    if _surely_usable(schema, resources):  # (jsonschema would find nothing: not imported for it)
        return None
    import jsonschema

    try:
        _validators(schema, resources)
    except jsonschema.SchemaError as exc:
        from .schema_messages import expand  # (said as a state's S002 is: `expected a number, got "x"`)

        try:
            at, _, said, _ = next(expand(exc, jsonschema.validators.validator_for(schema).META_SCHEMA, 1))
        except Exception:  # (a meta-schema rule the wording does not know: jsonschema's own words)
            at, said = exc, exc.message
        return f"is invalid: {said}", pointer(at.absolute_path)
    except re.error as exc:
        return f"has a pattern RE2 cannot run: {exc}", ""
    except RecursionError:
        return "is nested too deeply to be checked", ""
    endless = _endless_ref(schema)
    if endless is not None:
        return "refers back to itself without reading into the value: checking a state would never end", endless
    return None


def certainly_valid(state: Any, schema: dict[str, Any], exact: bool = False) -> bool:
    """True only when the fast check accepts the state, so that ``schema_errors`` would find nothing in it;
    with ``exact``, only when the state also holds no float (so that ``jsontext.exact_numbers`` gives the
    state itself), which the fast check's verdict says when it accepts no value holding one (``float_free``):
    each value it accepts then passed a test of its type, and those of a text (a key too) and an integer
    refuse what no JSON text holds (a lone surrogate, more than ``jsontext.MAX_INT_DIGITS`` digits), so
    that such a state is also one ``jsontext.value_problem`` finds nothing in (the API's intake walks it
    no more: ``api.Ruleset.evaluate``; a recursive schema's check asks the nesting too, ``fast_check``).
    For a schema ``schema_problem`` finds nothing in, which a ruleset's check makes sure of (C015): it asks
    nothing of jsonschema, which a process whose states all pass never imports."""
    try:
        _, fast, no_float = _fast(schema)
        return fast is not None and (no_float or not exact) and fast(state) is True
    except (RecursionError, re.error):
        return False


def schema_errors(state: Any, schema: dict[str, Any], shown: str,
                  resources: dict[str, Any] | None = None, whose: str = "the ruleset's state schema") -> list[Diagnostic]:
    """The state's S002 diagnostics; ``resources`` are the files the schema's ``$ref``s name (by URI).
    ``whose`` names the schema in the messages of a schema that cannot be used (C015, C025)."""
    problem = schema_problem(schema, resources)
    if problem is not None:
        return [Diagnostic("C015", f"{whose} {problem[0]}", Span(shown))]
    fast = _fast(schema)[1]
    if fast is not None:
        try:
            if fast(state):  # accepted: jsonschema would find nothing; otherwise it says what is wrong
                return []
        except RecursionError:
            pass
    from referencing.exceptions import Unresolvable

    validator, _ = _validators(schema, resources)
    try:  # the first MAX_ERRORS + 1 only (a hostile state can hold millions), then sorted
        errors = sorted(itertools.islice(validator.iter_errors(state), MAX_ERRORS + 1),
                        key=lambda e: (pointer_order(pointer(e.absolute_path)), e.validator))
    except RecursionError:
        return [Diagnostic("S001", "state nested too deeply", Span(shown), pointer="")]
    except re.error as exc:
        return [Diagnostic("C015", f"{whose} has a pattern RE2 cannot run: {exc}", Span(shown))]
    except Unresolvable as exc:  # a reference the load-time walk did not foresee: nothing is fetched
        ref = str(getattr(exc, "ref", "") or "")
        ref = ref if len(ref) <= 80 else ref[:77] + "..."
        return [Diagnostic("C025", f"the reference `{ref}` of {whose} is not a schema file of the ruleset",
                           Span(shown), help="ruleval never fetches schemas; refer to files inside the ruleset root")]
    told: list[tuple[tuple[tuple[int, int, str], ...], Diagnostic]] = []
    seen = set()
    try:  # (an `anyOf` every alternative of which failed is told by the nearest one: ``schema_messages``)
        for err in errors[:MAX_ERRORS]:
            for at, by, message, help in expand(err, schema, MAX_ERRORS + 1):
                rule = f"{by.validator}: {json.dumps(by.validator_value, default=str)[:80]}"
                where, schema_rule = pointer(at.absolute_path), f"{pointer(written_at(schema, by.absolute_schema_path))} ({rule})"
                if (where, schema_rule, message) in seen:  # (`required` names every key it misses at once)
                    continue
                seen.add((where, schema_rule, message))
                # (a long message is cut in its middle: its start says what was expected, its end what was found)
                message = message if len(message) <= 160 else message[:100] + " ... " + message[-55:]
                told.append((pointer_order(where), Diagnostic(
                    "S002", message, Span(shown), help=help, pointer=where, schema_rule=schema_rule,
                    at_key=getattr(at, "ruleval_at_key", False))))
    except RecursionError:
        return [Diagnostic("S001", "state nested too deeply", Span(shown), pointer="")]
    told.sort(key=lambda t: t[0])
    diags = [d for _, d in told[:MAX_ERRORS]]
    if len(errors) > MAX_ERRORS or len(told) > MAX_ERRORS:
        diags.append(Diagnostic("S002", f"... and more schema errors (the first {MAX_ERRORS} are shown)", Span(shown),
                                pointer=""))
    return diags


def _unescape(part: str) -> str:
    """A JSON pointer's part as the key it names (RFC 6901: ``~1`` is ``/``, ``~0`` is ``~``)."""
    return part.replace("~1", "/").replace("~0", "~")


@lru_cache(maxsize=1024)
def pointer_parts(ptr: str) -> tuple[str, ...]:
    """A pointer's unescaped parts (a program's input pointers are read again at every run)."""
    if ptr in ("", "/"):
        return ()
    return tuple(_unescape(raw) for raw in ptr.lstrip("/").split("/"))


def resolve_pointer(state: Any, ptr: str) -> tuple[bool, Any]:
    """Follow an RFC 6901 pointer; (False, None) if some part is missing."""
    cur = state
    for part in pointer_parts(ptr):
        if isinstance(cur, dict):
            if part not in cur:
                return False, None
            cur = cur[part]
        elif isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
            cur = cur[int(part)]
        else:
            return False, None
    return True, cur


# ---------------------------------------------------------------- a fast acceptance check
#
# jsonschema's general machinery costs milliseconds per state. `fast_check` compiles a schema that
# uses only the common keywords below into closures answering "certainly valid?". It is conservative:
# it answers False whenever it is not sure (an unusual type, a float where an integer is wanted, an
# enum of non-text values...), and a False only sends the state to jsonschema, which gives the real
# verdict and the diagnostics. A schema with any other keyword gets no fast check at all.

_ANNOTATIONS = frozenset({"description", "title", "default", "examples", "$comment", "deprecated", "readOnly",
                          "writeOnly", "$defs", "definitions"})
_FAST_DRAFTS = frozenset({"https://json-schema.org/draft/2020-12/schema", "https://json-schema.org/draft/2019-09/schema"})


class Unsupported(Exception):
    pass


def ref_target(schema: Any, ref: str) -> Any:
    """The part of the schema a local reference (``#``, ``#/$defs/x``) points at."""
    node: Any = schema
    for raw in ref[2:].split("/") if ref != "#" else []:
        part = _unescape(raw)
        if "%" in part or not isinstance(node, dict) or part not in node:
            raise Unsupported(ref)
        node = node[part]
    return node


def _enum_parts(members: Any) -> tuple[frozenset[Any], frozenset[Any], frozenset[Any], bool]:
    """An enum's texts, integers, truth values and whether none is one, each tested by its own type:
    JSON booleans are no numbers (while True == 1 in Python); a float equal to a listed integer, or a
    listed array or object, is left to jsonschema."""
    if not isinstance(members, list) or not members:
        raise Unsupported(members)
    return (frozenset(e for e in members if type(e) is str), frozenset(e for e in members if type(e) is int),
            frozenset(e for e in members if type(e) is bool), any(e is None for e in members))


def _record_shape(kws: dict[str, Any]) -> tuple[list[str], dict[str, Any], bool] | None:
    """``type: object`` with only ``required``, ``properties`` and ``additionalProperties: false``
    (the common shape of a record): (required keys, properties, closed), or None for another shape."""
    if kws.get("type") != "object" or not set(kws) <= {"type", "required", "properties", "additionalProperties"}:
        return None
    need = kws.get("required", [])
    props = kws.get("properties", {})
    if kws.get("additionalProperties", False) is not False:
        return None
    if not isinstance(need, list) or not all(isinstance(p, str) for p in need) or not isinstance(props, dict):
        return None
    return need, props, "additionalProperties" in kws  # closed: no key outside `properties`


def fast_check(schema: Any) -> Any:
    """A closure ``state -> bool`` (True only when the state is certainly valid), or None."""
    if not isinstance(schema, dict) or schema.get("$schema") not in _FAST_DRAFTS:
        return None
    refs: dict[str, Any] = {}
    looped = []  # (a recursive reference met)

    def resolve(ref: Any) -> Any:
        if not isinstance(ref, str) or not (ref == "#" or ref.startswith("#/")):
            raise Unsupported(ref)
        if ref in refs:
            done = refs[ref]
            if done is not None:  # built already: called directly
                return done  # type: ignore[no-any-return]
            looped.append(ref)
            return lambda x: refs[ref](x)  # a recursive reference, still being built
        refs[ref] = None
        refs[ref] = build(ref_target(schema, ref), False)
        return refs[ref]

    def build(s: Any, root: bool) -> Any:
        if s is True:
            return lambda x: True
        if not isinstance(s, dict):
            raise Unsupported(s)
        kws = {k: v for k, v in s.items() if not (k in _ANNOTATIONS or (root and k in ("$schema", "$id")))}
        fused = _fused_object(kws, build) or _fused_text(kws)
        if fused is not None:
            return fused
        checks: list[Any] = [keyword(k, v, s) for k, v in kws.items()]
        if not checks:
            return lambda x: True
        if len(checks) == 1:
            return checks[0]
        items = tuple(checks)

        def all_checks(x: Any) -> bool:
            for c in items:
                if not c(x):
                    return False
            return True
        return all_checks

    def keyword(k: str, v: Any, s: dict[str, Any]) -> Any:
        if k == "$ref":
            return resolve(v)
        if k == "if":  # `then` when the instance satisfies `if`, else `else`; either left out: no check
            cond = build(v, False)
            then = build(s["then"], False) if "then" in s else None
            other = build(s["else"], False) if "else" in s else None
            # `cond` is sure only when true (a check here may say false of a valid instance): when it is
            # not, the instance must pass both branches to be certainly valid
            return lambda x: (then is None or then(x)) and (cond(x) or other is None or other(x))
        if k in ("then", "else"):  # (read with `if`; without it they check nothing)
            return lambda x: True
        if k == "type":
            names = [v] if isinstance(v, str) else v
            if not isinstance(names, list) or not names:
                raise Unsupported(v)
            tests = tuple(_type_test(n) for n in names)
            if len(tests) == 1:
                return tests[0]
            return lambda x: any(t(x) for t in tests)
        if k == "enum":
            texts, ints, bools, null = _enum_parts(v)

            def enum_member(x: Any) -> bool:
                t = type(x)
                if t is str:
                    return x in texts
                if t is int:
                    return x in ints
                if t is bool:
                    return x in bools
                return x is None and null
            enum_member.known = texts  # type: ignore[attr-defined]  # (see ``_fused_object``)
            return enum_member
        if k == "const":
            if not isinstance(v, str):
                raise Unsupported(v)
            return lambda x: type(x) is str and x == v
        if k in ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"):
            if type(v) is not int:
                raise Unsupported(v)
            kind = {"L": str, "I": list, "P": dict}[k[3]]
            if k.startswith("min"):
                return lambda x: type(x) is not kind or len(x) >= v
            return lambda x: type(x) is not kind or len(x) <= v
        if k in ("minimum", "maximum"):
            if type(v) not in (int, float):
                raise Unsupported(v)
            if k == "minimum":
                return lambda x: type(x) not in _NUMBERS or x >= v
            return lambda x: type(x) not in _NUMBERS or x <= v
        if k == "pattern":
            if not isinstance(v, str):
                raise Unsupported(v)
            rx = _search_pattern(v)
            return lambda x: type(x) is not str or ((x.isascii() or _lone(x) is None) and rx.search(x) is not None)
        if k == "required":
            if not isinstance(v, list) or not all(isinstance(p, str) for p in v):
                raise Unsupported(v)
            need = tuple(v)
            return lambda x: type(x) is not dict or all(p in x for p in need)
        if k == "properties":
            if not isinstance(v, dict):
                raise Unsupported(v)
            props = {p: build(sub, False) for p, sub in v.items()}

            def properties(x: Any) -> bool:
                if type(x) is not dict:
                    return True
                for p, check in props.items():
                    if p in x and not check(x[p]):
                        return False
                return True
            return properties
        if k == "additionalProperties":
            if "patternProperties" in s:
                raise Unsupported(k)
            known = frozenset(s.get("properties", {}))
            if v is False:
                return lambda x: type(x) is not dict or all(type(p) is str and p in known for p in x)
            extra = build(v, False)

            def additional(x: Any) -> bool:  # (a loop, not `all` of a generator: a map of many entries is common)
                if type(x) is dict:
                    for p, item in x.items():
                        if type(p) is not str or (p not in known and (not extra(item) or
                                                                      not p.isascii() and _lone(p) is not None)):
                            return False
                return True
            return additional
        if k == "propertyNames":
            name_ok = build(v, False)
            return lambda x: type(x) is not dict or all(type(p) is str and name_ok(p) for p in x)
        if k == "items":
            if isinstance(v, list):
                raise Unsupported(k)
            item = build(v, False)
            skip = len(s["prefixItems"]) if isinstance(s.get("prefixItems"), list) else 0  # (those read by it)

            def items(x: Any) -> bool:
                if type(x) is list:
                    for i in x[skip:] if skip else x:
                        if not item(i):
                            return False
                return True
            return items
        if k == "prefixItems":  # (2020-12: the first items, each by the schema at its place; 2019-09 knows no such word)
            if not isinstance(v, list) or schema.get("$schema") != "https://json-schema.org/draft/2020-12/schema":
                raise Unsupported(k)
            firsts = tuple(build(sub, False) for sub in v)
            return lambda x: type(x) is not list or all(c(i) for c, i in zip(firsts, x))
        if k == "uniqueItems":
            if v is False:
                return lambda x: True
            if v is not True:
                raise Unsupported(v)
            return lambda x: type(x) is not list or (all(type(i) is str for i in x) and len(set(x)) == len(x))
        if k == "anyOf":
            if not isinstance(v, list) or not v:
                raise Unsupported(v)
            subs = tuple(build(sub, False) for sub in v)
            return lambda x: any(c(x) for c in subs)
        raise Unsupported(k)

    try:
        check = build(schema, True)
    except (Unsupported, re.error, RecursionError):
        return None
    if not looped:  # (what it accepts nests no deeper than the schema: within ``jsontext.MAX_DEPTH``)
        return check

    def within_depth(x: Any) -> bool:  # (a recursive schema bounds no nesting: the state's is asked, as the API's intake does)
        return jsontext.value_problem(x) is None and check(x)  # type: ignore[no-any-return]
    return within_depth


def float_free(schema: Any) -> bool:
    """Whether ``fast_check(schema)`` accepts no value that is or holds a float: each value it
    accepts passed a test of its own type that no float passes (a text, an integer, a truth value,
    none, an enum's member, a constant), or is an object each of whose entries, or an array each of
    whose items, the check reads with a schema of that kind (a closed object: `additionalProperties`
    false or such a schema). Conservative: False when not sure (a `number`, an open object, an array
    without `items`, `if`). A reference is followed; one met again on its own path is taken as
    float-free (an accepted value is finite, so every value under it is read by the schemas on the
    way down, and none of them lets a float through)."""
    on_path: set[str] = set()

    def node(s: Any) -> bool:
        if not isinstance(s, dict):
            return False  # (`true`: anything)
        kws = {k: v for k, v in s.items() if k not in _ANNOTATIONS and k not in ("$schema", "$id")}
        if "enum" in kws or "const" in kws:  # members are texts, integers, truth values or none (``_enum_parts``)
            return True
        ref = kws.get("$ref")
        if isinstance(ref, str) and (ref == "#" or ref.startswith("#/")):
            if ref in on_path:
                return True
            on_path.add(ref)
            try:
                if node(ref_target(schema, ref)):
                    return True
            except Unsupported:
                pass
            finally:
                on_path.discard(ref)
        subs = kws.get("anyOf")
        if isinstance(subs, list) and subs and all(node(b) for b in subs):
            return True
        names = kws.get("type")
        names = [names] if isinstance(names, str) else names
        if not isinstance(names, list) or not names:
            return False
        for name in names:
            if name in ("string", "integer", "boolean", "null"):
                continue
            if name == "object":
                extra = kws.get("additionalProperties", True)
                props = kws.get("properties", {})
                if "patternProperties" in kws or not isinstance(props, dict) or \
                        not (extra is False or node(extra)) or not all(node(p) for p in props.values()):
                    return False
            elif name == "array":
                firsts = kws.get("prefixItems", [])
                if not isinstance(firsts, list) or not all(node(f) for f in firsts):
                    return False
                if not node(kws.get("items", True)) and not (type(kws.get("maxItems")) is int
                                                             and kws["maxItems"] <= len(firsts)):
                    return False
            else:
                return False
        return True

    return node(schema)


def _fused_object(kws: dict[str, Any], build: Any) -> Any:
    """``type: object`` with only ``required``, ``properties`` and ``additionalProperties: false``
    (the common shape of a record) as one closure: one pass over the object's keys. The same verdict
    as the keywords checked one by one."""
    shape = _record_shape(kws)
    if shape is None:
        return None
    need, props, closed = shape
    need_t = tuple(need)
    # per property: its check, and texts known to pass it (a text check's accepted texts, an enum's
    # texts; ``known`` on the check), tested here without calling it
    checks: dict[str, tuple[Any, Any]] = {}
    for p, sub in props.items():
        check = build(sub, False)
        checks[p] = (check, getattr(check, "known", frozenset()))

    def record(x: Any) -> bool:
        if type(x) is not dict:
            return False
        for p in need_t:
            if p not in x:
                return False
        for p, v in x.items():
            c = checks.get(p)
            if c is None:
                if closed:
                    return False
            elif not (type(v) is str and v in c[1]) and not c[0](v):
                return False
        return True
    return record


def _fused_text(kws: dict[str, Any]) -> Any:
    """``type: string`` with only length limits and a pattern, as one closure (the same verdict)."""
    if kws.get("type") != "string" or not set(kws) <= {"type", "minLength", "maxLength", "pattern"}:
        return None
    lo, hi, pattern = kws.get("minLength", 0), kws.get("maxLength"), kws.get("pattern")
    if type(lo) is not int or (hi is not None and type(hi) is not int) or \
            (pattern is not None and not isinstance(pattern, str)):
        return None
    rx = _search_pattern(pattern) if pattern is not None else None
    accepted: set[str] = set()  # texts found valid before (names, places: states repeat them), up to a bound

    def text(x: Any) -> bool:
        if type(x) is not str:
            return False
        if x in accepted:
            return True
        if not x.isascii() and _lone(x) is not None:
            return False
        n = len(x)
        if n < lo or (hi is not None and n > hi):
            return False
        if rx is not None and rx.search(x) is None:
            return False
        if len(accepted) < _ACCEPTED_CAP:
            accepted.add(x)
        return True
    text.known = accepted  # type: ignore[attr-defined]  # (see ``_fused_object``)
    return text


_ACCEPTED_CAP = 4096


# a JSON number as a state holds it: a decimal is read exactly, a fraction (``jsontext.exact_numbers``)
_NUMBERS = (int, float, Fraction)


def _type_test(name: Any) -> Any:
    if name == "number":
        return lambda x: type(x) in _NUMBERS
    if name == "string":
        return lambda x: type(x) is str and (x.isascii() or _lone(x) is None)
    if name == "integer":
        return lambda x: type(x) is int and abs(x) < _TOO_MANY_DIGITS
    t = _JSON_TYPES.get(name) if isinstance(name, str) else None
    if t is None:
        raise Unsupported(name)
    return lambda x: type(x) is t


_JSON_TYPES = {"string": str, "integer": int, "boolean": bool, "null": type(None), "object": dict, "array": list}
# what no JSON text holds, which a text or an integer of the state must not be for the check to say
# valid: the API's intake takes a state the check accepts as one ``jsontext.value_problem`` finds nothing in
_lone = jsontext.LONE_SURROGATE.search
_TOO_MANY_DIGITS = jsontext.TOO_MANY_DIGITS
