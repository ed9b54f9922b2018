"""The fast acceptance check in front of jsonschema may only ever say "certainly valid" when
jsonschema agrees: mutated states of every bundled schema are checked both ways."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzzing import json_paths, mutated
from validator.engine.state import certainly_valid, fast_check, float_free

ROOT = Path(__file__).resolve().parent.parent


def _his_state() -> Any:
    doc = yaml.safe_load((ROOT / "tests" / "cases" / "his" / "interception.yaml").read_text(encoding="utf-8"))
    return doc["cases"][0]["state"]


SAMPLES = {
    "diplomacy": json.loads((ROOT / "rulesets/diplomacy/examples/movement_1901.json").read_text()),
    "jomini": json.loads((ROOT / "rulesets/jomini/examples/small.json").read_text()),
    "his": _his_state(),
}
SCHEMAS = {name: json.loads((ROOT / "schemas" / name / "state.schema.json").read_text()) for name in SAMPLES}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 200) | st.floats(allow_nan=False, width=32)
    | st.text(max_size=6) | st.sampled_from(["army", "fleet", "0304", "lon", "stp/sc", "spring", "odd-q"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_fast_check_is_active_and_accepts_the_sample(name: str) -> None:
    fast = fast_check(SCHEMAS[name])
    assert fast is not None, f"the fast check does not cover the {name} schema, so this test would prove nothing"
    assert fast(SAMPLES[name]) is True
    assert not list(jsonschema.Draft202012Validator(SCHEMAS[name]).iter_errors(SAMPLES[name]))


def _mutated(sample: Any, data: Any, hows: list[str]) -> tuple[Any, str]:
    """The sample with one value replaced, deleted or added (as ``hows`` allow), where and as drawn;
    and which mutation, where."""
    path = data.draw(st.sampled_from(json_paths(sample)))
    how = data.draw(st.sampled_from(hows))
    return mutated(sample, path, how, data.draw(json_values)), f"{how} at {path}"


@pytest.mark.parametrize("name", sorted(SAMPLES))
@settings(max_examples=150, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fast_check_never_accepts_what_jsonschema_rejects(name: str, data: Any) -> None:
    schema = SCHEMAS[name]
    state, mutation = _mutated(SAMPLES[name], data, ["replace", "delete", "add"])
    cls = jsonschema.validators.validator_for(schema)
    valid = not list(cls(schema, format_checker=cls.FORMAT_CHECKER).iter_errors(state))
    verdict = fast_check(schema)(state)
    if verdict:
        assert valid, f"fast check accepted an invalid state (mutation {mutation})"


# every keyword the fast check takes, in the shapes it takes them (records, texts, and one by one)
KITCHEN = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$defs": {"name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 5},
              "kind": {"enum": ["a", 1, True, None]}},
    "type": "object",
    "properties": {
        "rec": {"type": "object", "additionalProperties": False, "required": ["n", "k"],
                "properties": {"n": {"$ref": "#/$defs/name"}, "k": {"$ref": "#/$defs/kind"}, "o": {"type": "integer"}}},
        "exact": {"type": "object", "additionalProperties": False, "required": ["n"], "properties": {"n": {"const": "x"}}},
        "open": {"type": "object", "required": ["n"], "properties": {"n": {"type": ["string", "null"]}}},
        "num": {"type": "number", "minimum": 0, "maximum": 9.5},
        "list": {"type": "array", "minItems": 1, "maxItems": 3, "uniqueItems": True, "items": {"$ref": "#/$defs/name"}},
        "map": {"type": "object", "maxProperties": 2, "minProperties": 1, "propertyNames": {"maxLength": 2},
                "additionalProperties": {"anyOf": [{"type": "boolean"}, {"type": "array", "items": {"type": "integer"}}]}},
        "loose": {"required": ["a"], "properties": {"a": {"pattern": "b"}}, "minLength": 2},
        "any": True,
        "recs": {"type": "array", "maxItems": 2, "items": {"type": "object", "additionalProperties": False,
                                                          "required": ["n"], "properties": {"n": {"$ref": "#/$defs/name"}}}},
        "tuple": {"type": "array", "maxItems": 4, "prefixItems": [{"$ref": "#/$defs/name"}, {"type": "integer"}],
                  "items": {"type": "boolean"}},
    },
    "additionalProperties": {"type": "string"},
}


@settings(max_examples=400, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=st.dictionaries(st.sampled_from(["rec", "exact", "open", "num", "list", "map", "loose", "any", "recs", "tuple",
                                              "zz"]),
                             json_values | st.fixed_dictionaries({"n": json_values, "k": json_values})
                             | st.lists(st.sampled_from(["ab", "A", 1, -2, True, False, None, 1.5]), max_size=5), max_size=4))
def test_the_fast_check_never_accepts_what_jsonschema_rejects_on_every_keyword(value: Any) -> None:
    fast = fast_check(KITCHEN)
    assert fast is not None
    if fast(value):
        assert jsonschema.Draft202012Validator(KITCHEN).is_valid(value), value


@pytest.mark.parametrize("value", [{"n": "x"}, {"m": "x"}, {1: "x"}, {}, {"n": "x", "m": "x"}, {"n": "y"}, ["n"]])
def test_a_closed_record_of_required_properties_is_told_as_jsonschema_tells_it(value: Any) -> None:
    """A record whose properties are all required and no other allowed: as many keys but another one (or
    one that is no text) is refused, as jsonschema refuses it."""
    schema = {"$schema": KITCHEN["$schema"], **KITCHEN["properties"]["exact"]}
    valid = jsonschema.Draft202012Validator(schema).is_valid(value) if all(type(k) is str for k in value) else False
    assert fast_check(schema)(value) is valid
    empty = {"$schema": KITCHEN["$schema"], "type": "object", "additionalProperties": False, "properties": {}}
    assert fast_check(empty)(value) is (value == {})


@pytest.mark.parametrize("where, bad", [("type", ["army"]), ("type", {"a": 1}), ("power", ["england"]),
                                        ("type", 1), ("power", None)])
def test_a_value_where_a_text_is_asked_fails_the_fast_check(where: str, bad: Any) -> None:
    """A unit's type (an enum of texts) and power (texts known to pass, else a pattern) are asked of a
    set of texts with no type test first: a list or map there (no key of a set) fails the check as
    a number or none does, never raises; jsonschema then says why."""
    state = copy.deepcopy(SAMPLES["diplomacy"])
    state["units"][0][where] = bad
    assert fast_check(SCHEMAS["diplomacy"])(state) is False
    assert not jsonschema.Draft202012Validator(SCHEMAS["diplomacy"]).is_valid(state)
    assert fast_check(SCHEMAS["diplomacy"])(SAMPLES["diplomacy"]) is True


@pytest.mark.parametrize("members", [[0, 1], [0, 1, "a", None, True], [True], [1.0, "x"], [[1], {"a": 1}]])
def test_enum_by_json_type(members: list[Any]) -> None:
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "enum": members}
    fast = fast_check(schema)
    assert fast is not None
    for x in [0, 1, 2, True, False, 1.0, 0.0, "a", "x", None, [1], {"a": 1}]:
        valid = jsonschema.Draft202012Validator(schema).is_valid(x)
        if fast(x):
            assert valid, (members, x)  # never "certainly valid" when it is not
        elif type(x) in (int, str, bool, type(None)) and any(type(m) is type(x) and m == x for m in members):
            raise AssertionError(f"{x!r} is listed in {members} and should be accepted at once")


def test_texts_found_valid_before_are_kept_per_check_only() -> None:
    """A text check keeps the texts it accepted (states repeat names and places); a kept text is
    accepted again without its pattern, and only by that check: another check's limits still apply."""
    check = fast_check({"$schema": "https://json-schema.org/draft/2020-12/schema",
                        "type": "object", "additionalProperties": False,
                        "properties": {"power": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 8},
                                       "short": {"type": "string", "maxLength": 3},
                                       "code": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 3}}})
    assert check is not None
    for _ in range(2):
        assert check({"power": "england"}) is True
        assert check({"power": "England"}) is False
        assert check({"short": "england"}) is False  # accepted above, but as a `power`
        assert check({"code": "england"}) is False  # (the same pattern, another part: its own texts)
        assert check({"power": 7}) is False
    assert check({"short": "lon"}) is True and check({"power": "lon"}) is True


def test_if_then_else_is_certain_only_when_both_branches_hold_where_if_is_unsure() -> None:
    """The fast check of `if` may say false of an instance jsonschema finds satisfying it (a float 0.0
    against `enum: [0]`); it then asks both branches, never the `else` alone, so it never accepts what
    jsonschema rejects."""
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
              "if": {"properties": {"first": {"enum": [0]}}, "required": ["first"]},
              "then": {"properties": {"cols": {"maximum": 100}}}, "else": {"properties": {"cols": {"maximum": 99}}}}
    fast = fast_check(schema)
    assert fast is not None
    cls = jsonschema.validators.validator_for(schema)
    for first in (0, 0.0, 1, None, False, "0"):
        for cols in (99, 100, 101):
            state = {"cols": cols} if first is None else {"first": first, "cols": cols}
            valid = cls(schema).is_valid(state)
            if fast(state):
                assert valid, state
            assert fast(state) == valid or (first == 0.0 and type(first) is float), state


def _floats_in(v: Any) -> bool:
    if type(v) is float:
        return True
    if isinstance(v, dict):
        return any(_floats_in(x) for x in v.values())
    if isinstance(v, (list, tuple)):
        return any(_floats_in(x) for x in v)
    return False


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_the_bundled_state_schemas_let_no_float_through(name: str) -> None:
    """Their fast check accepts no value holding a float (``float_free``): a state it accepts is its own
    exact reading (``jsontext.exact_numbers``), so a validated run reads it once, not twice."""
    assert float_free(SCHEMAS[name]) is True
    assert certainly_valid(SAMPLES[name], SCHEMAS[name], exact=True) is True


@pytest.mark.parametrize("name", sorted(SAMPLES))
@settings(max_examples=150, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_state_with_a_float_is_never_certainly_exact(name: str, data: Any) -> None:
    schema = SCHEMAS[name]
    state, _ = _mutated(SAMPLES[name], data, ["replace", "add"])
    if _floats_in(state):
        assert certainly_valid(state, schema, exact=True) is False


@pytest.mark.parametrize("schema, free", [
    ({"type": "number"}, False), ({"type": "integer"}, True), ({"enum": ["a", 1]}, True), (True, False),
    ({"type": "object", "properties": {"a": {"type": "string"}}}, False),  # open: any other key, any value
    ({"type": "object", "additionalProperties": False, "properties": {"a": {"type": "string"}}}, True),
    ({"type": "object", "additionalProperties": {"type": "number"}}, False),
    ({"type": "array"}, False), ({"type": "array", "items": {"type": "string"}}, True),
    ({"anyOf": [{"type": "string"}, {"type": "number"}]}, False), ({"required": ["a"]}, False),
    ({"$ref": "#/$defs/t", "$defs": {"t": {"type": "array", "items": {"$ref": "#/$defs/t"}}}}, True),
])
def test_float_free_is_said_only_of_schemas_that_refuse_every_float(schema: Any, free: bool) -> None:
    full = {"$schema": KITCHEN["$schema"], **schema} if isinstance(schema, dict) else schema
    assert float_free(full) is free
    if free:
        for value in [1.5, [1.5], {"a": 1.5}, [[1.5]], {"a": [1.5]}]:
            assert fast_check(full)(value) is False


# random schemas of the keywords the fast check writes, nested (records, maps, lists, alternatives,
# conditions, references), and values drawn near them: the written check may accept only what
# jsonschema accepts
_KEYS = ["a", "b", "c"]
_vals = st.recursive(
    st.none() | st.booleans() | st.sampled_from([0, 1, 2, 3, -1, 0.0, 1.5, 2.0])
    | st.sampled_from(["", "a", "b", "ab", "ba", "abc"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from([*_KEYS, "d"]), inner, max_size=3),
    max_leaves=8)
_leaf_schemas = st.sampled_from([
    True, {"type": "string"}, {"type": "integer"}, {"type": "number"}, {"type": "boolean"}, {"type": "null"},
    {"type": "object"}, {"type": "array"}, {"type": ["string", "null"]}, {"type": ["integer", "array"]},
    {"enum": ["a", "b"]}, {"enum": [0, True, None, "a"]}, {"enum": [1, 2.0]}, {"const": "a"},
    {"type": "string", "maxLength": 1}, {"type": "string", "minLength": 1, "maxLength": 2, "pattern": "^a"},
    {"type": "string", "pattern": "^a", "maxLength": 3},
    {"pattern": "b$"}, {"minLength": 1}, {"maxLength": 1}, {"minimum": 1}, {"maximum": 2}, {"minimum": 0.5},
    {"type": "integer", "minimum": 0, "maximum": 2}, {"required": ["a"]}, {"minProperties": 1}, {"maxProperties": 1},
    {"minItems": 1}, {"maxItems": 1}, {"uniqueItems": True}, {"uniqueItems": False}, {"$ref": "#/$defs/d"},
    {"$ref": "#"}])


def _nested(inner: Any) -> Any:
    props = st.dictionaries(st.sampled_from(_KEYS), inner, max_size=3)
    need = st.lists(st.sampled_from(_KEYS), max_size=3)
    return st.one_of(
        st.builds(lambda p, r, closed: {"type": "object", "properties": p, "required": r,
                                        **({"additionalProperties": False} if closed else {})}, props, need, st.booleans()),
        st.builds(lambda p, r: {"type": "object", "properties": p, "required": [k for k in r if k in p] or list(p)[:1],
                                "additionalProperties": False}, props, need),
        st.builds(lambda p: {"properties": p}, props),
        st.builds(lambda p, extra: {"type": "object", "properties": p, "additionalProperties": extra}, props, inner),
        st.builds(lambda extra, names: {"type": "object", "additionalProperties": extra, "propertyNames": names},
                  inner, st.sampled_from([{"maxLength": 1}, {"enum": ["a", "b"]}, {"type": "string", "pattern": "^[ab]"}, True])),
        st.builds(lambda names: {"propertyNames": names}, st.sampled_from([{"maxLength": 1}, {"const": "a"}])),
        st.builds(lambda i, n: {"type": "array", "items": i, "maxItems": n}, inner, st.integers(0, 3)),
        st.builds(lambda i: {"items": i}, inner),
        st.builds(lambda xs: {"anyOf": xs}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda c, t, e: {"if": c, **({"then": t} if t is not None else {}), **({"else": e} if e is not None else {})},
                  inner, st.none() | inner, st.none() | inner),
        st.builds(lambda a, b: {**a, **b} if isinstance(a, dict) and isinstance(b, dict) else a, inner, inner),
    )


_schemas = st.recursive(_leaf_schemas, _nested, max_leaves=6)


@settings(max_examples=1500, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=_schemas, d=_schemas, values=st.lists(_vals, min_size=1, max_size=6))
def test_a_written_fast_check_never_accepts_what_jsonschema_rejects(body: Any, d: Any, values: list[Any]) -> None:
    """Random schemas of every keyword the fast check writes, in every nesting (a closed record's keys read
    by subscript, a map's names and entries in one walk, a reference written in place or called):
    ``fast_check`` says True only of values jsonschema finds valid."""
    schema = {"$schema": KITCHEN["$schema"], "$defs": {"d": d}, **(body if isinstance(body, dict) else {"anyOf": [body]})}
    fast = fast_check(schema)
    if fast is None:
        return
    validator = jsonschema.Draft202012Validator(schema)
    for value in values:
        try:
            verdict = fast(value)
        except RecursionError:
            continue
        if verdict:
            try:  # (a reference to itself alone, which jsonschema follows for ever: it then says S001, so the
                # fast check must not have said valid)
                valid = validator.is_valid(value)
            except RecursionError:
                valid = False
            assert valid, (schema, value)


def test_the_random_schemas_are_accepted_often_enough_to_test_something() -> None:
    """(The property above proves nothing if the written checks never say True.)"""
    accepted = 0

    @settings(max_examples=300, derandomize=True, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(body=_schemas, values=st.lists(_vals, min_size=1, max_size=6))
    def count(body: Any, values: list[Any]) -> None:
        nonlocal accepted
        schema = {"$schema": KITCHEN["$schema"], "$defs": {"d": True}, **(body if isinstance(body, dict) else {})}
        fast = fast_check(schema)
        if fast is not None:
            accepted += sum(1 for v in values if fast(v))
    count()
    assert accepted > 200, accepted


def test_an_if_whose_test_never_ends_is_never_certainly_valid() -> None:
    """jsonschema reads `if` whatever the branches (and a reference to itself alone never ends: the state
    check then says S001); so the fast check reads `if`'s test too, even with no `else`, and never says
    valid where jsonschema says nothing valid."""
    loop = {"$ref": "#/$defs/d"}
    schema = {"$schema": KITCHEN["$schema"], "if": loop, "then": True, "$defs": {"d": loop}}
    with pytest.raises(RecursionError):
        jsonschema.Draft202012Validator(schema).is_valid(1)
    assert certainly_valid(1, schema) is False


_no_json = st.sampled_from(["\ud800", "a\udc00b", "é\udfff", 10 ** 401, -(10 ** 401), 10 ** 4000])
_hostile_values = st.recursive(
    _no_json | st.sampled_from(["army", "fleet", "lon", "england", "spring", 1901, 3]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["vie", "\ud800", "units"]), inner,
                                                               max_size=3),
    max_leaves=4)


@pytest.mark.parametrize("name", sorted(SAMPLES))
@settings(max_examples=150, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_state_no_json_text_holds_is_never_certainly_exact(name: str, data: Any) -> None:
    """The API's intake walks no state the fast check takes with ``exact`` (``api.Ruleset.evaluate``): such a
    state must be one ``jsontext.value_problem`` finds nothing in, so the check refuses a text holding a lone
    surrogate (a value or a key) and an integer past 401 digits wherever they stand, as a text of the
    state would be refused (S001)."""
    from validator.core.jsontext import value_problem

    path = data.draw(st.sampled_from(json_paths(SAMPLES[name])))
    state = mutated(SAMPLES[name], path, data.draw(st.sampled_from(["replace", "add"])), data.draw(_hostile_values))
    if certainly_valid(state, SCHEMAS[name], exact=True):
        assert value_problem(state, subclasses=True) is None, path


@pytest.mark.parametrize("schema, bad", [
    ({"type": "string"}, "a\ud800"), ({"type": "string", "maxLength": 9}, "\udc00"), ({"type": "integer"}, 10 ** 401),
    ({"type": "integer", "minimum": 0}, 10 ** 4000), ({"type": ["integer", "null"]}, -(10 ** 401)),
    ({"type": "object", "additionalProperties": {"type": "integer"}}, {"\ud800": 1}),
    ({"type": "object", "propertyNames": {"maxLength": 3}, "additionalProperties": {"type": "integer"}}, {"\ud800": 1}),
    ({"type": "string", "pattern": "^a"}, "a\ud800"), ({"pattern": "^a"}, "a\ud800"),
], ids=lambda x: None if isinstance(x, dict) else type(x).__name__)
def test_the_fast_check_refuses_a_lone_surrogate_and_an_integer_past_401_digits(schema: Any, bad: Any) -> None:
    full = {"$schema": KITCHEN["$schema"], **schema}
    check = fast_check(full)
    assert check is not None and check(bad) is False  # (a `pattern` meets no lone surrogate: RE2 could not read it)
    assert certainly_valid(bad, full) is False
    if isinstance(bad, int):
        assert check(10 ** 401 - 1) is True


NODE = {"type": "object", "additionalProperties": False,
        "properties": {"n": {"type": "integer"}, "next": {"$ref": "#/$defs/node"}}}
RECURSIVE = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": {"node": NODE}, "$ref": "#/$defs/node"}


def _nested(levels: int) -> Any:
    value: Any = {"n": 1}
    for _ in range(levels):
        value = {"next": value}
    return value


@pytest.mark.parametrize("levels", [99, 100, 150, 300])
def test_a_recursive_schema_s_fast_check_holds_the_depth_limit(tmp_path: Path, levels: int) -> None:
    """A recursive schema bounds no nesting: its fast check took a state nested 100 to 300 deep (within Python's
    recursion), so the API's intake, which walks no state the check takes, ran it. Past 100 levels (``jsontext
    .MAX_DEPTH``) the check is not sure, and the state is S001 at its place, before any rule runs."""
    from validator.api import RunError, load_ruleset
    from validator.core.jsontext import MAX_DEPTH, value_problem

    state = _nested(levels)
    deep = levels + 1 > MAX_DEPTH  # (the objects nested: each level's, and the innermost)
    assert float_free(RECURSIVE) and (levels > 200 or jsonschema.Draft202012Validator(RECURSIVE).is_valid(state))
    assert certainly_valid(state, RECURSIVE, exact=True) is not deep
    assert (value_problem(state) is not None) is deep
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "s.schema.json").write_text(json.dumps(RECURSIVE))
    (tmp_path / "r.rules").write_text('ruleset r "r"\nschema "s.schema.json"\nquery main = 1\n')
    rs = load_ruleset(tmp_path / "r.rules")
    assert rs.ok, rs.diagnostics
    if not deep:
        assert rs.run(state) == 1
        return
    with pytest.raises(RunError) as caught:
        rs.run(state)
    (d,) = caught.value.diagnostics
    assert (d.code, d.message, d.pointer) == ("S001", f"state nested more than {MAX_DEPTH} deep", "/next" * MAX_DEPTH)


@pytest.mark.parametrize("value, valid", [(["ab", 1], True), (["ab", 1, True, False], True), (["ab"], True), ([], True),
                                          ([1, "ab"], False), (["ab", 1, 2], False), (["ab", 1.5], False),
                                          (["ab", 1, True, True, True], False)])
def test_prefix_items_read_the_first_items_by_place_and_items_the_rest(value: Any, valid: bool) -> None:
    """`prefixItems` (2020-12) checks each first item by the schema at its place, and `items` only the
    items after them, as jsonschema reads them; a 2019-09 schema, where the word means nothing, is not
    taken by the fast check (its `items` would then read every item)."""
    schema = {"$schema": KITCHEN["$schema"], **KITCHEN["properties"]["tuple"], "$defs": KITCHEN["$defs"]}
    assert jsonschema.Draft202012Validator(schema).is_valid(value) is valid
    assert fast_check(schema)(value) is valid
    assert fast_check({**schema, "$schema": "https://json-schema.org/draft/2019-09/schema"}) is None
