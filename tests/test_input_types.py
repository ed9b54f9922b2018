"""A value given from outside holds to its declared type, checked and made its kinds by one walk
(``lang.kinds``; docs/language.md, "Declarations" and "Records and maps"): a state's inputs, with or
without a schema (S002 at the value's pointer in the state, exit 3, the input's declaration as a note),
on both engines alike; a typed data import (C030 at the value's line in the data file); a query's
arguments (S008: tests/test_query_args.py). Before, an input was read as the state gave it: the text
"3" for `n: int` answered `n == 3` false, a list for `set[str]` was no set, with no warning."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from validator.api import RunError, load_ruleset
from validator.core.jsontext import exact_numbers
from validator.lang import ast as A
from validator.lang.kinds import DeclaredKinds, Unfit
from validator.lib.values import Map
from small_rulesets import loaded, project

ENGINES = ("reference", "backend")

RULES = '''ruleset t.inputs "typed inputs, no schema"
record R { a: int, b?: str }
enum E { x, y }
input n: int at "/n" default 3
input s: set[str] at "/s" default {"a"}
input m: map[str, int] at "/m" default {"a" => 1}
input r: R at "/r" default {a: 1}
input e: E at "/e" default "x"
input o: str? at "/o" default "t"
input rs: list[R] at "/rs" default []
input x: number at "/x" default 1
query main = {n3: n == 3, sa: s == {"a"}, ma: m == {"a" => 1}, ra: r.a, e: e, o: o == none, rs: len(rs), x2: x * 2}
'''
DEFAULTS = {"n3": True, "sa": True, "ma": True, "ra": 1, "e": "x", "o": False, "rs": 0, "x2": 2}


@pytest.fixture(scope="module")
def rs(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return loaded(tmp_path_factory.mktemp("inputs"), RULES)


# (the state, the pointer at fault, words the message holds)
WRONG = [
    ({"n": "3"}, "/n", ["`n`", "int", '"3"']),  # the text "3" is no number: `n == 3` was false
    ({"n": 2.5}, "/n", ["int", "2.5"]),
    ({"s": "a"}, "/s", ["set[str]", '"a"']),
    ({"s": ["a", 1]}, "/s/1", ["str", "1"]),
    ({"m": {"a": "1"}}, "/m/a", ["int", '"1"']),
    ({"m": ["a"]}, "/m", ["map[str, int]"]),
    ({"r": {"b": "x"}}, "/r", ["`R`", "`a`"]),  # a record missing a field
    ({"r": {"a": 1, "b": 2}}, "/r/b", ["str", "2"]),
    ({"e": "z"}, "/e", ["`E`", '"z"']),  # an enum's non-member
    ({"o": 1}, "/o", ["str?", "1"]),
    ({"rs": [{"a": 1}, {"a": None}]}, "/rs/1/a", ["int", "null"]),  # a list of records, deep
    ({"rs": [{"a": 1}, [1]]}, "/rs/1", ["`R`", "[1]"]),
    ({"x": "0.5"}, "/x", ["`number`", '"0.5"']),  # a `number` takes a fraction, not its text
    ({"x": True}, "/x", ["`number`", "true"]),
]


def refused(rs: Any, state: Any, engine: str) -> list[Any]:
    with pytest.raises(RunError) as caught:
        rs.run(state, engine=engine)
    assert caught.value.kind == "state"
    assert all(d.code == "S002" for d in caught.value.diagnostics), caught.value
    return caught.value.diagnostics


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("state,pointer,words", WRONG)
def test_an_input_of_another_type_is_refused_at_its_pointer(rs: Any, engine: str, state: Any, pointer: str,
                                                            words: list[str]) -> None:
    [d] = refused(rs, state, engine)
    assert d.pointer == pointer
    for word in words:
        assert word in d.message, (word, d.message)
    assert d.span.file == "<state>"  # said in the state, not at a line of the ruleset
    assert d.related and d.related[0].span.file.endswith("main.rules") and d.related[0].span.line > 0
    assert rs.state_errors(state) and rs.state_errors(state)[0].pointer == pointer  # (`validate` says it too)


# (the state, what `main` gives: a list given for a set is that set, an object for a map a map)
RIGHT = [
    ({}, DEFAULTS),
    ({"n": 3, "s": ["a", "a"], "m": {"a": 1}}, DEFAULTS),
    ({"n": 3.0}, DEFAULTS),  # (read exactly: the whole number 3)
    ({"x": 0.25}, {**DEFAULTS, "x2": "1/2"}),  # a `number` any number, read exactly (a fraction answered as its text)
    ({"r": {"a": 1, "b": "x", "extra": [1]}}, DEFAULTS),  # fields a record does not declare are kept, unchecked
    ({"e": "y", "o": None, "rs": [{"a": 2}]}, {**DEFAULTS, "e": "y", "o": True, "rs": 1}),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("state,answer", RIGHT)
def test_an_input_of_its_type_is_read_as_its_type_says(rs: Any, engine: str, state: Any, answer: Any) -> None:
    assert rs.run(state, engine=engine) == answer
    assert rs.state_errors(state) == []


@pytest.mark.parametrize("engine", ENGINES)
def test_every_input_at_fault_is_said(rs: Any, engine: str) -> None:
    found = refused(rs, {"n": "3", "e": "z", "s": ["a"]}, engine)
    assert sorted(d.pointer for d in found) == ["/e", "/n"]


@pytest.mark.parametrize("engine", ENGINES)
def test_an_unvalidated_run_checks_its_inputs_too(rs: Any, engine: str) -> None:
    with pytest.raises(RunError) as caught:
        rs.run({"n": "3"}, validate=False, engine=engine)
    assert [d.pointer for d in caught.value.diagnostics] == ["/n"]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_set_input_is_a_set_when_its_schema_says_an_array(engine: str, tmp_path: Path) -> None:
    """The schema checks an array; the declared type makes it the set the rules compare."""
    schema = {"type": "object", "properties": {"s": {"type": "array", "items": {"type": "string"}}}}
    rs = loaded(tmp_path, 'ruleset t.set "set"\nschema "s.json"\ninput s: set[str] at "/s"\n'
                          'query main = [s == {"a"}, "a" in s]\n', files={"s.json": json.dumps(schema)})
    assert rs.run({"s": ["a", "a"]}, engine=engine) == [True, True]


def test_the_command_line_says_it_in_the_state_file_with_exit_3(cli: Any, tmp_path: Path) -> None:
    path = project(tmp_path, RULES, files={"state.json": '{\n  "n": "3"\n}\n'})
    r = cli("run", str(path), "--state", str(tmp_path / "state.json"))
    assert r.code == 3, r.out + r.err
    assert "state.json:2:8: error[S002]" in r.err and "main.rules:4:1" in r.err, r.err
    assert "Traceback" not in r.err


def test_a_default_is_typed_by_the_checker(tmp_path: Path) -> None:
    """A default is a value of the ruleset, not of the state: the checker holds it to the declared type."""
    rs = loaded(tmp_path, 'ruleset t.default "d"\ninput n: int at "/n" default "x"\n'
                          'input s: set[str] at "/s" default ["a"]\nquery main = [n, s]\n', ok=False)
    assert [(d.code, d.span.line) for d in rs.diagnostics if d.is_error] == [("C004", 2), ("C004", 3)]


# ---------------------------------------------------------------- typed data imports


def test_a_typed_import_that_does_not_fit_is_said_at_the_data(tmp_path: Path) -> None:
    rs = loaded(tmp_path, 'ruleset t.data "data"\nrecord Side { name: str, strength: map[str, int] }\n'
                          'record Board { sides: list[Side] }\nimport "board.yaml" as board: Board\n'
                          "query main = len(board.sides)\n",
                files={"board.yaml": "sides:\n  - name: north\n    strength: {inf: three}\n"}, ok=False)
    assert not rs.ok
    [d] = [d for d in rs.diagnostics if d.is_error]
    assert d.code == "C030" and d.pointer == "/sides/0/strength/inf"
    assert d.span.file.endswith("board.yaml") and (d.span.line, d.span.col) == (3, 21), d
    assert '"three"' in d.message and "int" in d.message
    assert d.related and d.related[0].span.file.endswith("main.rules") and d.related[0].span.line == 4
    (tmp_path / "board.yaml").write_text("sides:\n  - name: north\n    strength: {inf: 3}\n")
    assert load_ruleset(tmp_path / "main.rules", use_cache=False).run({}) == 1


def test_the_checker_says_a_typed_import_that_does_not_fit(cli: Any, tmp_path: Path) -> None:
    path = project(tmp_path, 'ruleset t.rows "rows"\nimport "rows.json" as rows: set[int]\nquery main = 1 in rows\n',
                   files={"rows.json": '[1, "2"]'})
    r = cli("check", str(path))
    assert r.code == 1 and "rows.json:1:5: error[C030]" in r.out + r.err, r.out + r.err


# ---------------------------------------------------------------- the walk against an independent reading

_RECORD = A.RecordDecl("Rec", (A.FieldDecl("a", A.TypeRef("int"), False), A.FieldDecl("b", A.TypeRef("str"), True)))
_ENUM = A.EnumDecl("En", ("x", "y"), ())
_KINDS = DeclaredKinds({"Rec": _RECORD, "En": _ENUM})


def _types() -> Any:
    leaves = st.sampled_from(["int", "number", "str", "bool", "none", "any", "Rec", "En"]).map(A.TypeRef)

    def grow(inner: Any) -> Any:
        return st.one_of(
            st.builds(lambda t, o: A.TypeRef("list", (t,), o), inner, st.booleans()),
            st.builds(lambda t, o: A.TypeRef("set", (t,), o),
                      st.sampled_from(["int", "str", "bool", "En"]).map(A.TypeRef), st.booleans()),
            st.builds(lambda t, o: A.TypeRef("map", (A.TypeRef("str"), t), o), inner, st.booleans()),
            st.builds(lambda t: A.TypeRef(t.name, t.args, True), inner))
    return st.recursive(leaves, grow, max_leaves=4)


_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(["x", "y", "z", ""]),
              st.just(Fraction(1, 2)), st.just(Fraction(2))),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3)),
    max_leaves=6)


def _fits(v: Any, t: A.TypeRef) -> bool:
    """What the docs say a type takes of a JSON value, read independently of ``kinds``."""
    if t.optional and v is None:
        return True
    n = t.name
    if n == "any":
        return True
    if n == "int":
        return (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, Fraction) and v.denominator == 1)
    if n == "number":
        return isinstance(v, (int, Fraction)) and not isinstance(v, bool)
    if n == "str":
        return isinstance(v, str)
    if n == "bool":
        return isinstance(v, bool)
    if n == "none":
        return v is None
    if n == "En":
        return v in ("x", "y") and isinstance(v, str)
    if n == "Rec":
        return isinstance(v, dict) and "a" in v and _fits(v["a"], A.TypeRef("int")) and \
            ("b" not in v or isinstance(v["b"], str))
    if n in ("list", "set"):
        return isinstance(v, list) and all(_fits(x, t.args[0]) for x in v)
    if n == "map":
        return isinstance(v, dict) and all(_fits(x, t.args[1]) for x in v.values())
    raise AssertionError(n)


def _made(v: Any, got: Any, t: A.TypeRef) -> bool:
    """Whether ``got`` is ``v`` made the kinds ``t`` declares: sets where it says set, maps where map."""
    if v is None or t.name in ("any", "int", "number", "str", "bool", "none", "En"):
        return got is v
    if t.name == "set":
        return type(got) is frozenset and len(got) == len({(type(x) is bool, x) for x in v})
    if t.name == "list":
        return type(got) is list and len(got) == len(v) and all(_made(x, y, t.args[0]) for x, y in zip(v, got))
    if t.name == "map":
        return type(got) is Map and got.keys() == v.keys() and all(_made(v[k], got[k], t.args[1]) for k in v)
    return type(got) is dict and got == v  # (Rec: its fields need no making)


@settings(max_examples=400, deadline=None)
@given(_types(), _values)
def test_the_walk_accepts_what_an_independent_reading_accepts(t: A.TypeRef, v: Any) -> None:
    try:
        got = _KINDS.fit(v, t)
    except Unfit as bad:
        assert not _fits(v, t), (A.type_text(t), v, bad.message)
        return
    assert _fits(v, t), (A.type_text(t), v)
    assert _made(v, got, t), (A.type_text(t), v, got)


# ---------------------------------------------------------------- what a state schema proves (the backend's inputs)


def test_a_schema_that_does_not_prove_the_type_leaves_the_check_to_the_walk(tmp_path: Path) -> None:
    """The backend's inputs on a validated state skip only what the schema proves: one that takes a text
    or a number for `n: int` proves nothing, and the text is still refused (the schema alone let it by)."""
    schema = {"type": "object", "properties": {"n": {"type": ["integer", "string"]},
                                               "u": {"type": "array", "items": {"$ref": "#/$defs/unit"}}},
              "$defs": {"unit": {"type": "object", "required": ["a"], "properties": {"a": {"type": "integer"}}}}}
    rs = loaded(tmp_path, 'ruleset t.proof "proof"\nschema "s.json"\nrecord U { a: int, b: str }\n'
                          'input n: int at "/n" default 0\ninput u: list[U] at "/u" default []\n'
                          "query main = [n == 3, len(u)]\n", files={"s.json": json.dumps(schema)})
    for engine in ENGINES:
        assert rs.run({"n": 3, "u": [{"a": 1, "b": "x"}]}, engine=engine) == [True, 1]
        for state, pointer in [({"n": "3"}, "/n"), ({"u": [{"a": 1}]}, "/u/0")]:  # (`b`: the schema does not require it)
            with pytest.raises(RunError) as caught:
                rs.run(state, engine=engine)
            assert [(d.code, d.pointer) for d in caught.value.diagnostics] == [("S002", pointer)], engine


def _schemas() -> Any:
    leaves = st.one_of(
        st.sampled_from(["string", "integer", "boolean", "null"]).map(lambda n: {"type": n}),
        st.sampled_from([["string", "null"], ["integer", "string"]]).map(lambda n: {"type": n}),
        st.lists(st.sampled_from(["x", "y", "z", 1, None, True]), min_size=1, max_size=3).map(lambda m: {"enum": m}),
        st.just({"$ref": "#/$defs/rec"}), st.just({}))

    def grow(inner: Any) -> Any:
        return st.one_of(
            st.builds(lambda i: {"type": "array", "items": i}, inner),
            st.builds(lambda a, o: {"type": "object", "additionalProperties": a,
                                    **({"propertyNames": {"enum": ["a"]}} if o else {})}, inner, st.booleans()),
            st.builds(lambda p, r: {"type": "object", "properties": p, "required": r},
                      st.dictionaries(st.sampled_from(["a", "b"]), inner, max_size=2),
                      st.lists(st.sampled_from(["a", "b"]), max_size=2, unique=True)),
            st.builds(lambda x, y: {"anyOf": [x, y]}, inner, inner))
    return st.recursive(leaves, grow, max_leaves=4)


_JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.sampled_from(["x", "y", "z", 0.5, 2.0])),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3)),
    max_leaves=6)
_REC_SCHEMA = {"type": "object", "required": ["a"], "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}}


def _schema_for(t: A.TypeRef) -> Any:
    """Schemas near what ``t`` takes: some prove it, some take more (a text for `int`, a record's field
    left out, a map's values unchecked), so that the property meets both."""
    n = t.name
    if n == "list" or n == "set":
        out = st.one_of(_schema_for(t.args[0]).map(lambda i: {"type": "array", "items": i}), st.just({"type": "array"}))
    elif n == "map":
        out = st.one_of(_schema_for(t.args[1]).map(lambda i: {"type": "object", "additionalProperties": i}),
                        st.builds(lambda i, j: {"type": "object", "properties": {"a": i}, "additionalProperties": j},
                                  _schema_for(t.args[1]), _schema_for(t.args[1])),
                        st.just({"type": "object", "properties": {"a": {"type": "integer"}}}))
    else:
        out = st.sampled_from({
            "int": [{"type": "integer"}, {"type": ["integer", "string"]}, {"enum": [1, 2]}, {"enum": [1, "x"]},
                    {"type": "number"}],
            "number": [{"type": "number"}, {"type": "integer"}, {"type": ["number", "boolean"]}, {"enum": [1, 0.5]}],
            "str": [{"type": "string"}, {"enum": ["x", "y"]}, {"type": ["string", "null"]}],
            "bool": [{"type": "boolean"}, {"enum": [True]}, {"enum": [0]}],
            "none": [{"type": "null"}, {"const": None}],
            "any": [{}],
            "En": [{"enum": ["x"]}, {"enum": ["x", "z"]}, {"type": "string"}],
            "Rec": [{"$ref": "#/$defs/rec"}, {"type": "object", "required": ["a"], "properties": {"a": {"type": "integer"}}},
                    {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}},
                    {"type": "object", "required": ["a"], "properties": {"a": {"type": "integer"}},
                     "additionalProperties": {"type": "string"}}],
        }[n])
    if t.optional:
        out = st.one_of(out, out.map(lambda x: {"anyOf": [x, {"type": "null"}]}))
    return out


def _value_for(t: A.TypeRef) -> Any:
    """Values of ``t`` mostly, JSON values else."""
    n = t.name
    if t.optional and n != "none":
        return st.one_of(st.none(), _value_for(A.TypeRef(n, t.args)))
    if n in ("list", "set"):
        return st.lists(_value_for(t.args[0]), max_size=3)
    if n == "map":
        return st.dictionaries(st.sampled_from(["a", "b"]), _value_for(t.args[1]), max_size=2)
    fit = {"int": st.one_of(st.integers(-2, 2), st.sampled_from([2.0, 0.5])),
           "number": st.sampled_from([0, -1, 2, 0.5, 2.0, -1.25, 0.1]),
           "str": st.sampled_from(["x", "y", "z"]), "bool": st.booleans(), "none": st.none(),
           "any": _JSON_VALUES, "En": st.sampled_from(["x", "y", "z"]),
           "Rec": st.fixed_dictionaries({"a": st.integers(0, 2)}, optional={"b": st.sampled_from(["x", 1]), "c": st.just(1)})}[n]
    return st.one_of(fit, fit, fit, _JSON_VALUES)


@settings(max_examples=500, deadline=None)
@given(st.data())
def test_what_a_schema_proves_holds_of_every_value_it_accepts(data: Any) -> None:
    """Soundness of ``facts.schema_proves``: a value the schema accepts, where it proves the type, fits it."""
    from jsonschema import Draft202012Validator

    from validator.engine.facts import schema_proves

    t = data.draw(_types())
    schema = data.draw(st.one_of(_schema_for(t), _schemas()))
    v = exact_numbers(data.draw(_value_for(t)))  # (as a state is read before its check: 0.5 is 1/2, 2.0 is 2)
    root = {**schema, "$defs": {"rec": _REC_SCHEMA}}
    if not schema_proves(root, root, t, _KINDS) or not Draft202012Validator(root).is_valid(v):
        return
    try:
        _KINDS.fit(v, t)
    except Unfit as bad:
        raise AssertionError((A.type_text(t), schema, v, bad.message)) from None


@pytest.mark.parametrize("named", ["string", "integer", "number", "boolean", "null", ["number", "null"]])
@pytest.mark.parametrize("scalar", ["int", "number", "str", "bool", "none"])
def test_what_a_scalar_schema_proves_holds_of_every_value_it_accepts(named: Any, scalar: str) -> None:
    """The scalars alone, every pair (the property above meets each only now and then): a proof holds of
    each value jsonschema takes, read as a state's are (2.0 is 2, 0.5 is 1/2, true no number)."""
    from jsonschema import Draft202012Validator

    from validator.engine.facts import schema_proves

    t, schema = A.TypeRef(scalar), {"type": named}
    values = [exact_numbers(v) for v in (0, -2, 2.0, 0.5, 0.1, 1e20, True, False, None, "x", "")]
    taken = [v for v in values if Draft202012Validator(schema).is_valid(v)]
    assert taken
    fits = [_fits(v, t) for v in taken]
    assert schema_proves(schema, schema, t, _KINDS) == all(fits), (taken, fits)


def test_the_bundled_inputs_are_proven_by_their_schemas() -> None:
    """What keeps the check within 1 % of a Diplomacy turn (docs/speed.md): the schema proves every input,
    and the backend's runs on a state that passed it walk each input by the walk that only converts; the
    runs on any other state (an untyped backend) check in full."""
    root = Path(__file__).resolve().parent.parent
    for path in ("rulesets/diplomacy/standard.rules", "rulesets/his/his.rules", "rulesets/jomini/re.rules"):
        rs = load_ruleset(root / path)
        typed, untyped = rs.backend(typed=True), rs.backend(typed=False)
        for u in rs.program.inputs():
            if u.ret is not None:
                kinds = rs.program.loaded.namespaces[u.ns].kinds
                assert typed.facts.input_proven(u), (path, u.name)
                assert typed.interp.input_fitter(u) is kinds.fitter(u.ret, True), (path, u.name)
                assert untyped.interp.input_fitter(u) is kinds.fitter(u.ret, False), (path, u.name)


# ---------------------------------------------------------------- `state_errors`: the inputs bound as a run binds them


def test_a_state_missing_an_input_is_refused_with_or_without_a_state_check(tmp_path: Path) -> None:
    """Without `validate_state`, `state_errors` walked the inputs it found and passed over a missing one (no
    default): the state was said valid, and every run of it then refused (S002 missing)."""
    for name, check in (("plain", ""), ("checked", "query validate_state = []\n")):
        rs = loaded(tmp_path, f'ruleset t.{name} "m"\ninput n: int at "/n"\n{check}query main = n\n', f"{name}.rules")
        assert [(d.code, d.pointer) for d in rs.state_errors({})] == [("S002", "/n")], name
        with pytest.raises(RunError) as caught:
            rs.run({})
        assert [(d.code, d.pointer) for d in caught.value.diagnostics] == [("S002", "/n")], name
        assert rs.state_errors({"n": 1}) == [] and rs.run({"n": 1}) == 1


_PROVING = {"type": "object", "properties": {"n": {"type": "integer"}, "s": {"type": "array", "items": {"type": "string"}},
                                             "r": {"$ref": "#/$defs/r"}},
            "$defs": {"r": {"type": "object", "required": ["a"], "properties": {"a": {"type": "integer"}}}}}


@pytest.mark.parametrize("schema", [None, _PROVING])
def test_state_errors_finds_what_a_run_finds_with_or_without_a_state_check(tmp_path: Path, schema: Any) -> None:
    """One path: a ruleset without `validate_state` binds its inputs as the state check's run does (the same
    engine, reading what the schema proves: ``_PROVING`` proves `n`, `s` and `r`), so both say the same of a
    state, and what a run refuses it for."""
    head = RULES if schema is None else RULES.replace('"typed inputs, no schema"\n', '"typed"\nschema "s.json"\n')
    files = {"s.json": json.dumps(schema)}
    one = loaded(tmp_path, head, "plain.rules", files)
    other = loaded(tmp_path, head + "query validate_state = []\n", "checked.rules", files)
    states = [s for s, _, _ in WRONG] + [s for s, _ in RIGHT] + [{"n": "3", "e": "z", "s": ["a"]}, {"r": {"a": 1.5}}]
    for state in states:
        found = [(d.code, d.pointer, d.message) for d in one.state_errors(state)]
        assert found == [(d.code, d.pointer, d.message) for d in other.state_errors(state)], state
        try:
            one.run(state)
            ran = []
        except RunError as refused:
            ran = [(d.code, d.pointer, d.message) for d in refused.diagnostics]
        assert sorted(found) == sorted(ran), state  # (a run's diagnostics are said in the state's order)


def test_a_number_is_proven_by_a_schema_of_numbers(tmp_path: Path) -> None:
    """`"type": "number"` (or `"integer"`) proves `number`: a state's numbers are read exactly before its check
    (0.5 is 1/2), and jsonschema takes no truth value for a number; it proves no `int` (0.5 is none)."""
    schema = {"type": "object", "properties": {"x": {"type": "number"}, "w": {"type": "integer"}, "n": {"type": "number"}}}
    rs = loaded(tmp_path, 'ruleset t.num "numbers"\nschema "s.json"\ninput x: number at "/x" default 0\n'
                          'input w: number at "/w" default 0\ninput n: int at "/n" default 0\nquery main = [x * 2, w, n]\n',
                files={"s.json": json.dumps(schema)})
    proven = {u.name: rs.backend(typed=True).facts.input_proven(u) for u in rs.program.inputs()}
    assert proven == {"x": True, "w": True, "n": False}
    for engine in ENGINES:
        assert rs.run({"x": 0.25, "w": 2.0, "n": 3}, engine=engine) == ["1/2", 2, 3]
        for state, pointer in [({"x": True}, "/x"), ({"n": 0.5}, "/n")]:
            with pytest.raises(RunError) as caught:
                rs.run(state, engine=engine)
            assert [(d.code, d.pointer) for d in caught.value.diagnostics] == [("S002", pointer)], (engine, state)
