"""The sound kinds (``validator.engine.facts``) against the values the reference computes: each node a
kind is claimed for, on random programs (``tests/programs.py``), evaluates to a value of that Python
type every time the reference evaluates it; a wrong claim fails here. ``RULEVAL_FUZZ_LONG=1`` runs
many more programs."""

from __future__ import annotations

import dis
import json
import os
import tempfile
import types
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from programs import programs
from validator.api import RunError, load_ruleset
from validator.lang import ast as A
from validator.engine import reference as R
from validator.engine import written
from validator.engine.facts import Facts
from validator.lib.runtime import ScriptedDice, SeededDice

LONG = bool(os.environ.get("RULEVAL_FUZZ_LONG"))
_ROOT = Path(tempfile.mkdtemp(prefix="ruleval-facts-"))
(_ROOT / "ruleval.toml").write_text("")


class Observed(R.Interpreter):
    """The reference, each value of a node a kind is claimed for looked at as it is computed, and each
    argument given to a parameter a kind is claimed for."""

    def __init__(self, program: Any, claims: dict[int, type]):
        super().__init__(program)
        self.claims = claims
        facts = solved(program)
        self.params = {u.index: [facts.param(p) for p in u.params] for u in program.units.values()}
        self.seen = 0
        self.wrong: list[tuple[Any, type, Any]] = []

    def call_unit(self, run: R.Run, unit: Any, args: list[Any], span: Any) -> Any:
        for p, kind, value in zip(unit.params, self.params.get(unit.index, ()), args):
            if kind is not None:
                self.seen += 1
                if type(value) is not kind:
                    self.wrong.append((p, kind, value))
        return super().call_unit(run, unit, args, span)

    def evaluate(self, run: R.Run, e: Any, env: R.Frame) -> Any:
        value = super().evaluate(run, e, env)
        kind = self.claims.get(id(e))
        if kind is not None:
            self.seen += 1
            if type(value) is not kind:
                self.wrong.append((e, kind, value))
        return value


def solved(program: Any, typed: bool = False) -> Facts:
    """The kinds of ``program``, its parameters' solved (as a run has them); ``typed``: its inputs' from
    its state schema (as a run on a state the schema accepts has them)."""
    facts = Facts(program, typed)
    facts.solve()
    return facts


def claims(program: Any, typed: bool = False) -> dict[int, type]:
    """Every kind claimed for a node of ``program``, by the node's identity."""
    facts = solved(program, typed)
    out: dict[int, type] = {}
    for unit in program.units.values():
        for node, kind in facts.of(unit).items():
            assert out.setdefault(node, kind) is kind
    return out


def observe(rs: Any, state: Any, options: dict[str, Any], claimed: dict[int, type] | None = None) -> Observed:
    """The reference's run of a query (the state check first), observed (``Observed``)."""
    seen = Observed(rs.program, claims(rs.program) if claimed is None else claimed)
    dice = ScriptedDice(options["dice"]) if "dice" in options else SeededDice(options.get("seed", 0))
    try:
        R.run_query(rs.program, state, options["query"], list(options.get("args") or []), dice,
                    options.get("budget", 5_000_000), engine=seen, check=lambda findings: None)
    except (R.EvalError, R.MissingInput):
        pass  # (what it computed before the error was looked at)
    return seen


def unit(rs: Any, name: str) -> Any:
    return rs.program.units[(rs.program.entry.key, name)]


SHARDS = 2


@pytest.mark.parametrize("shard", range(SHARDS))
@settings(max_examples=2500 if LONG else 150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
@given(program=programs())
def test_every_kind_claimed_is_the_kind_of_the_values_the_reference_computes(
        shard: int, program: tuple[str, dict[str, Any], dict[str, Any]]) -> None:
    text, state, options = program
    path = _ROOT / f"program{shard}.rules"
    path.write_text(text)
    rs = load_ruleset(path, use_cache=False)
    assert rs.ok, (text, [str(d) for d in rs.diagnostics if d.is_error])
    seen = observe(rs, state, options)
    assert not seen.wrong, (text, [(str(e.span), k.__name__, v) for e, k, v in seen.wrong])


KINDS = """input xs: any at "/xs" default [1, 2]
enum Side { left, right }
def n = len(xs) + 1
def half(k) = k // 2
def named = "x" + str(n)
def mixed(k) = if k > 0 then k else "none"
def big(k) = k > 9
def fits(k) = let m = n * 2; [m - k < 3, not (k in xs), -m, half(m), mixed(k), left, named ?? 1, big(k)]
query main(k) = fits(k)
"""


def test_kinds_are_claimed_where_the_language_fixes_them_and_looked_at(tmp_path: Path) -> None:
    """The claims on a program of every kind of fact are each seen in a run, and they are the ones the
    language fixes: `half(m)` is an integer (`half` is only called with one), a call of a definition
    whose branches differ (`mixed(k)`) is not claimed."""
    path = tmp_path / "kinds.rules"
    path.write_text(KINDS)
    rs = load_ruleset(path, use_cache=False)
    assert rs.ok, rs.diagnostics
    claimed = claims(rs.program)
    seen = observe(rs, {"xs": [1, 2, 3]}, {"query": "main", "args": [1]})
    assert not seen.wrong and seen.seen > 20 and len(claimed) > 20
    body = unit(rs, "fits").body
    items = body.body.items  # type: ignore[union-attr]
    want = [bool, bool, int, int, None, str, str, bool]
    assert [claimed.get(id(i)) for i in items] == want
    assert claimed.get(id(body)) is list and claimed.get(id(body.value)) is int  # type: ignore[union-attr]


def test_a_wrong_claim_is_seen() -> None:
    """The observer sees a claim the values break: a parameter given a text claimed an integer."""
    path = _ROOT / "wrong.rules"
    path.write_text(KINDS)
    rs = load_ruleset(path, use_cache=False)
    param = unit(rs, "half").body.left  # type: ignore[union-attr]
    seen = observe(rs, {}, {"query": "main", "args": [1]}, {id(param): str})
    assert seen.seen and [(k, v) for _, k, v in seen.wrong] == [(str, 6)]


def names_run(sources: list[str]) -> set[str]:
    """The global names the bytecode of the backend's ``sources`` loads: none of a branch whose condition
    the writer knows, which it writes as `if True:` or `elif False:` and Python's compiler leaves out."""
    names: set[str] = set()
    todo = [compile(source, "<shown>", "exec") for source in sources]
    while todo:
        code = todo.pop()
        names.update(i.argval for i in dis.get_instructions(code) if i.opname == "LOAD_GLOBAL")
        todo.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return names


def test_the_backend_writes_no_type_test_of_a_value_whose_kind_is_sound(tmp_path: Path) -> None:
    """`len(xs) + 1 < 3`: an integer plus one, compared with a number, tested for nothing."""
    path = tmp_path / "sound.rules"
    path.write_text('input xs: any at "/xs" default []\ndef small = len(xs) + 1 < 3\nquery main = small\n')
    rs = load_ruleset(path, use_cache=False)
    shown = rs.backend(typed=True).source_of(unit(rs, "small"))
    assert not {"_type", "_compare", "_arith"} & names_run(shown), shown
    assert rs.run({"xs": [1]}) is True and rs.run({"xs": [1, 2]}) is False



BUILT_KINDS = """input xs: any at "/xs" default [1, 2]
def m = {"a" => 1, "b" => 2}
def flags = {true, false}
def rec = {x: "p", y: "q"}
def built = [keys(m)[0], keys(rec)[0], values(rec)[0], values(m)[0], sorted(flags)[0], reverse(m)[0],
             unique([3, 1, 3])[0], sorted(["b", "a"], fn(w) => w)[0], concat(flags, [true])[0],
             concat(keys(m), values(rec))[0], merge(rec, {y: 1, z: true}).x, merge(rec, {y: 1, z: true}).y,
             merge(rec, {y: 1, z: true}).z, merge(rec, m), sorted(xs)[0], keys(xs)]
query main = built
"""


def test_the_kinds_of_built_ins_results_are_their_declarations_and_hold(tmp_path: Path) -> None:
    """A built-in's result kind declared beside it (``Builtin.kind``): `keys`, `sorted`, `reverse`, `unique`
    give a list of what walking their argument gives (a set's truth values as themselves, a map's keys,
    a record's labels), `values` its values, `concat` the join of both walks, `merge` of two records a
    record (a field of both: either's kind; with a map, `merge` gives a map: nothing claimed); an argument of no kind
    (an input) gives a list of nothing known, and `keys` of a list (an error) no value. Each item read
    is claimed, and the reference's values are of the kinds claimed."""
    path = tmp_path / "built.rules"
    path.write_text(BUILT_KINDS)
    rs = load_ruleset(path, use_cache=False)
    assert rs.ok, rs.diagnostics
    claimed = claims(rs.program)
    items = unit(rs, "built").body.items  # type: ignore[union-attr]
    assert [claimed.get(id(i)) for i in items] == [str, str, str, int, bool, str, int, str, bool, str, str, None, bool, None,
                                                      None, list]
    seen = observe(rs, {"xs": [2, 1]}, {"query": "main"}, claimed)
    assert not seen.wrong and seen.seen > 20
    with pytest.raises(RunError):
        rs.run({"xs": [2, 1]})
    from validator.lib.builtins import BUILTINS
    assert {n for n, b in BUILTINS.items() if b.kind is not None} == {"keys", "values", "sorted", "reverse", "unique",
                                                                      "concat", "merge"}

# ---------------------------------------------------------------- kinds of data, parameters, items, fields

_WORD = st.sampled_from(["a", "b", "c"])
_SCALAR = st.one_of(st.integers(-3, 3), st.booleans(), _WORD, st.none())
_PLACES = ["a", "b", "c", "d"]


@st.composite
def _data(draw: Any) -> dict[str, Any]:
    """Imported data: adjacency lists (texts, or now and then anything), place records (a field that
    some leave out, one that is sometimes none), a list of numbers (or of anything)."""
    odd = draw(st.booleans())  # (some data mixes kinds: no claim may then be made)
    item = _SCALAR if odd and draw(st.booleans()) else _WORD
    places = draw(st.lists(st.sampled_from(_PLACES), min_size=1, max_size=4, unique=True))
    info = {}
    for p in places:
        rec: dict[str, Any] = {"kind": draw(st.sampled_from(["land", "sea"]) if not odd else _SCALAR),
                               "n": draw(st.integers(0, 3))}
        if draw(st.booleans()):
            rec["coasts"] = draw(st.lists(_WORD, max_size=2))
        if draw(st.booleans()):
            rec["home"] = draw(st.one_of(st.none(), _WORD))
        info[p] = rec
    return {"adj": {p: draw(st.lists(item, max_size=3)) for p in places}, "info": info,
            "xs": draw(st.lists(_SCALAR if odd else st.integers(-3, 3), max_size=4)), "flag": draw(_SCALAR)}


_CALLS = {  # each parameter's arguments: of one kind, or of two, or a query's own (any kind)
    "near": ["u", '{prov: k, n: 1, kind: "land"}', '{prov: "a", n: len(k), kind: k}'],
    "twice": ["d.xs", "[1, 2]", "k"],
    "label": ["u.prov", "str(i)", "k", "d.flag"],
}


@st.composite
def typed_programs(draw: Any) -> tuple[str, dict[str, Any], list[Any]]:
    """A program whose kinds come from imported data (drawn), from the calls of definitions no value
    names (their arguments drawn from those of one kind or of several), from loops over data and from
    records built: (ruleset text, data, the query's argument)."""
    picks = {f: draw(st.lists(st.sampled_from(c), min_size=1, max_size=2)) for f, c in _CALLS.items()}
    return _typed_text(picks), draw(_data()), [draw(st.sampled_from(["a", "b", "x"]))]


def _typed_text(picks: dict[str, list[str]]) -> str:
    return f"""ruleset fuzz.typed
import "data.json" as d
def adj = d.adj
def reach(p, t) = t in (adj[p] ?? [])
def kind_of(p) = d.info[p].kind
def coasts(p) = d.info[p].coasts ?? []
def place(p) = {{prov: p, n: len(coasts(p)) + d.info[p].n, kind: kind_of(p), home: d.info[p].home}}
def units = [place(p) for p in keys(d.info)]
def near(u, t) = reach(u.prov, t) or u.n > 1 or u.kind == "sea"
def twice(xs, n) = if n <= 0 then [] else concat(xs, twice(xs, n - 1))
def label(x) = x ?? "none"
def count_all(xs) = len([x for x in xs if x != none])
query main(k) = [
  [{{near: {' or '.join(f'near({a}, t)' for a in picks['near'])}, home: u.home ?? "-", kind: u.kind}}
    for u in units for t in d.adj[u.prov] ?? []],
  [{' + '.join(f'len(twice({a}, 2))' for a in picks['twice'])} for x in d.xs],
  [[{', '.join(f'label({a})' for a in picks['label'])}] for i in range(2) for u in units],
  [(p, r.kind, r.n + 1, len(r.coasts ?? [])) for p, r in d.info],
  {{p => count_all(v) for p, v in d.adj}},
  [x for x in d.xs if x == 1],
  d.flag ?? 0,
  adj[k] ?? [k]
]
"""


@settings(max_examples=1000 if LONG else 60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
@given(program=typed_programs())
def test_the_kinds_of_data_parameters_items_and_fields_are_those_the_reference_computes(
        program: tuple[str, dict[str, Any], list[Any]]) -> None:
    text, data, args = program
    folder = _ROOT / "typed"
    folder.mkdir(exist_ok=True)
    (folder / "data.json").write_text(json.dumps(data))
    (folder / "typed.rules").write_text(text)
    rs = load_ruleset(folder / "typed.rules", use_cache=False)
    assert rs.ok, (text, [str(d) for d in rs.diagnostics if d.is_error])
    seen = observe(rs, {}, {"query": "main", "args": args})
    assert not seen.wrong, (text, data, [(str(getattr(e, "span", e)), k.__name__, v) for e, k, v in seen.wrong])


def test_typed_programs_make_the_new_kinds() -> None:
    """The drawn programs do claim what they are for: a parameter's kind (of `reach`, given texts), the
    kind of data read (`adj[p] ?? []`), a record's field (`u.prov`), a loop's item over data."""
    folder = _ROOT / "typed_fixed"
    folder.mkdir(exist_ok=True)
    (folder / "data.json").write_text(json.dumps({"adj": {"a": ["b"], "b": ["a"]}, "xs": [1, 2], "flag": 1,
                                                  "info": {"a": {"kind": "land", "n": 1}, "b": {"kind": "sea", "n": 0}}}))
    text = _typed_text({f: c[:1] for f, c in _CALLS.items()})  # (arguments of one kind each)
    (folder / "typed.rules").write_text(text)
    rs = load_ruleset(folder / "typed.rules", use_cache=False)
    facts = solved(rs.program)
    reach, place = unit(rs, "reach"), unit(rs, "place")
    assert [facts.param(p) for p in reach.params] == [str, None] or [facts.param(p) for p in reach.params] == [str, str]
    assert facts.param(place.params[0]) is str and facts.result(place) is dict
    body = reach.body  # `t in (adj[p] ?? [])`
    assert facts.of(reach).get(id(body.right)) is list  # type: ignore[union-attr]
    seen = observe(rs, {}, {"query": "main", "args": ["a"]})
    assert not seen.wrong and seen.seen > 50


# ---------------------------------------------------------------- the bundled rulesets, run by the reference

_BUNDLED = Path(__file__).resolve().parents[1] / "rulesets"
_CASES = [("diplomacy/standard.rules", f"diplomacy/examples/{n}.json", "main")
          for n in ("movement_1901", "support_and_dislodgement", "retreat", "adjustment")] + [
    ("diplomacy/standard.rules", "diplomacy/examples/movement_1901.json", "next_state"),
    ("jomini/re.rules", "jomini/examples/small.json", "main"),
    ("his/his.rules", "his/examples/three_interceptors_and_avoid.json", "main")]


@pytest.mark.parametrize("rules, state, query", _CASES)
def test_the_kinds_claimed_in_the_bundled_rulesets_are_those_of_a_reference_run(rules: str, state: str, query: str) -> None:
    """Every claim on a bundled ruleset (data read, parameters, loops, fields; inputs by the state
    schema, each state being one it accepts) observed in the reference's run of a case of it; a
    Diplomacy game played on from its start (spring, fall, winter)."""
    rs = load_ruleset(_BUNDLED / rules, use_cache=False)
    claimed = claims(rs.program, typed=True)
    current = json.loads((_BUNDLED / state).read_text())
    turns = 3 if query == "next_state" else 1
    seen_total = 0
    for turn in range(turns):
        assert rs.state_schema_errors(current) == []
        seen = observe(rs, current, {"query": query}, claimed)
        assert not seen.wrong, [(str(getattr(e, "span", e)), k.__name__, v) for e, k, v in seen.wrong][:10]
        seen_total += seen.seen
        if turn + 1 < turns:
            current = rs.run(current, query="next_state")
    assert seen_total > 1000


def test_the_kinds_of_inputs_hold_on_random_diplomacy_turns() -> None:
    """The claims with the inputs' kinds from the state schema, observed on random movement turns (the
    steady-turn benchmark's states: orders of every form, some of them garbage), each accepted by the
    schema."""
    import sys

    if str(_BUNDLED.parent) not in sys.path:  # (`bench` is a top-level package of the checkout)
        sys.path.insert(0, str(_BUNDLED.parent))
    from bench.peers.dip_positions import random_turns

    rs = load_ruleset(_BUNDLED / "diplomacy/standard.rules", use_cache=False)
    claimed = claims(rs.program, typed=True)
    for state in random_turns(7, 4 if not LONG else 40, 34):
        assert rs.state_schema_errors(state) == []
        seen = observe(rs, state, {"query": "main"}, claimed)
        assert not seen.wrong and seen.seen > 1000, [(str(getattr(e, "span", e)), k.__name__, v)
                                                     for e, k, v in seen.wrong][:10]


def test_a_wrong_claim_of_a_parameter_or_of_data_is_seen() -> None:
    """Mutations: the kind claimed of a read of data (`army_adj`, a record of lists) turned into a list,
    and each kind claimed of a parameter into another; the observer sees both wrong on Diplomacy's
    first turn."""
    rs = load_ruleset(_BUNDLED / "diplomacy/standard.rules", use_cache=False)
    program = rs.program
    state = json.loads((_BUNDLED / "diplomacy/examples/movement_1901.json").read_text())
    adj = unit(rs, "army_adj")
    claimed = claims(program)
    assert claimed.get(id(adj.body)) is dict
    seen = observe(rs, state, {"query": "main"}, {**claimed, id(adj.body): list})
    assert [v for e, k, v in seen.wrong if e is adj.body and k is list]
    facts = solved(program)
    swapped = {u.index: [None if facts.param(p) is None else int if facts.param(p) is not int else str for p in u.params]
               for u in program.units.values()}
    assert any(k is not None for ks in swapped.values() for k in ks)
    again = Observed(program, {})
    again.params = swapped
    R.run_query(program, state, "main", [], SeededDice(0), 5_000_000, engine=again, check=lambda findings: None)
    assert again.wrong and all(isinstance(e, A.Param) for e, _, _ in again.wrong)


# ---------------------------------------------------------------- a writing played again: keyed by the kinds

_VARIANT = """ruleset kinds.variant
extends "base.rules"
import "two.json" as d
"""
# `plus` reads a kind of its data that differs between the programs in three ways: by a named definition
# whose result's Python type differs (an integer, or none known); by data it reads itself, of one Python
# type (a record) whose fields' kinds differ; by a named definition whose result is of one Python type (a
# record) whose fields' kinds differ (``Facts.key``: the deep kinds)
_PLUS = {
    "result": "def pick(k) = d.m[k] ?? 0\ndef plus(k) = pick(k) - 1\n",
    "data": "def plus(k) = (d.m[k] ?? 0) - 1\n",
    "deep result": "def table() = d.m\ndef plus(k) = (table()[k] ?? 0) - 1\n",
}


@pytest.mark.parametrize("how", sorted(_PLUS))
def test_a_writing_is_not_played_again_for_a_program_whose_data_kinds_differ(tmp_path: Path, how: str) -> None:
    """Two programs of one declaration of `plus`, whose data differ in kind (numbers, texts): the
    writing of `plus` made for the first (where its `- 1` subtracts from an integer, untested) is not
    played again for the second, where the reference's error must be given; a third program whose
    data are other numbers gives `plus` the first's key (``written.key``: the writing is played again)."""
    (tmp_path / "one.json").write_text(json.dumps({"m": {"a": 3}}))
    (tmp_path / "two.json").write_text(json.dumps({"m": {"a": "x"}}))
    (tmp_path / "three.json").write_text(json.dumps({"m": {"a": 7}}))
    base = f'ruleset kinds.base\nimport "one.json" as d\n{_PLUS[how]}query main(k: str) = plus(k)\n'
    (tmp_path / "base.rules").write_text(base)
    (tmp_path / "variant.rules").write_text(_VARIANT)
    (tmp_path / "same.rules").write_text(_VARIANT.replace("two.json", "three.json"))
    one = load_ruleset(tmp_path / "base.rules", use_cache=False)
    two = load_ruleset(tmp_path / "variant.rules", use_cache=False)
    three = load_ruleset(tmp_path / "same.rules", use_cache=False)
    assert one.ok and two.ok and three.ok, (one.diagnostics, two.diagnostics, three.diagnostics)
    plus_one, plus_two = unit(one, "plus"), unit(two, "plus")
    assert plus_one.decl is plus_two.decl is unit(three, "plus").decl  # (one declaration: a writing could be played again)
    if how == "result":
        assert solved(one.program).result(unit(one, "pick")) is int and solved(two.program).result(unit(two, "pick")) is None
    assert "_arith" not in names_run(one.backend(typed=True).source_of(plus_one))
    assert one.run({}, query="main", args=["a"]) == 2
    assert three.run({}, query="main", args=["a"]) == 6
    with pytest.raises(RunError) as err:
        two.run({}, query="main", args=["a"])
    with pytest.raises(RunError) as ref:
        two.run({}, query="main", args=["a"], engine="reference")
    assert str(err.value) == str(ref.value)
    keys = [written.key(rs.backend(typed=True), unit(rs, "plus"), [], []) for rs in (one, two, three)]
    assert keys[0] != keys[1] and keys[0] == keys[2]


# ---------------------------------------------------------------- the kinds of inputs, from the state schema

_SCHEMAS = [
    {"type": "integer"}, {"type": "string", "maxLength": 3}, {"enum": ["a", "b", None]}, {"type": ["boolean", "null"]},
    {"type": "array", "items": {"type": "string"}}, {"type": "array"}, {"type": "number"},
    {"type": "object", "additionalProperties": False, "required": ["a"],
     "properties": {"a": {"type": "integer"}, "b": {"$ref": "#/$defs/word"}}},
    {"type": "object", "propertyNames": {"type": "string"}, "additionalProperties": {"type": "array",
                                                                                     "items": {"type": "integer"}}},
    {"type": "object", "properties": {"a": {"type": "integer"}}},
    {"anyOf": [{"type": "string"}, {"type": "array", "items": {"$ref": "#/$defs/word"}}]},
    {"type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "integer"}},
]
_JSON = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(["a", "b", "abcd"])),
                     lambda inner: st.one_of(st.lists(inner, max_size=3),
                                             st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3)),
                     max_leaves=8)


def conforms(value: Any, kind: Any) -> bool:
    """Whether ``value`` is of the deep kind ``kind`` (``facts``'s forms), as far as it says."""
    from validator.engine import facts as F

    if kind is None:
        return True
    if kind is F.NOTHING:
        return False
    if type(kind) is type:
        return type(value) is kind
    tag = kind[0]
    if tag == "?":
        return value is None or conforms(value, kind[1])
    if tag == "list":
        return type(value) is list and all(conforms(x, kind[1]) for x in value)
    if tag == "rec":
        fields = dict(kind[1]) if kind[1] is not None else None
        return type(value) is dict and all(type(k) is str and conforms(x, kind[2]) for k, x in value.items()) and (
            fields is None or set(value) <= set(fields) and all(conforms(value.get(f), k) for f, k in fields.items()))
    raise AssertionError(kind)


@settings(max_examples=400 if LONG else 120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=_JSON, which=st.integers(0, len(_SCHEMAS) - 1))
def test_a_value_a_schema_accepts_is_of_the_kind_the_schema_gives(value: Any, which: int) -> None:
    """``facts.schema_kind`` against the state check (``state.schema_errors``): a value of JSON's own
    types that it accepts is of the kind claimed (a record's fields, a list's items, none where a field
    may be left out)."""
    from validator.engine.facts import schema_kind
    from validator.engine.state import schema_errors

    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", **_SCHEMAS[which],
              "$defs": {"word": {"type": "string"}}}
    kind = schema_kind(schema, schema)
    if not schema_errors(value, schema, "<state>"):
        assert conforms(value, kind), (schema, value, kind)


def test_the_schemas_kinds_are_claimed() -> None:
    """The kinds the test above holds to account are claimed: an integer, a text, a list of texts, a
    record of known fields (one that may be left out read as none), a text or a list of texts."""
    from validator.engine.facts import schema_kind

    schema = {"$defs": {"word": {"type": "string"}}}
    kinds = [schema_kind(schema, s) for s in _SCHEMAS]
    assert kinds[:5] == [int, str, ("?", str), ("?", bool), ("list", str)] and kinds[5:7] == [("list", None), None]
    assert kinds[7] == ("rec", (("a", int), ("b", ("?", str))), None)
    assert kinds[8] == ("rec", None, ("list", int)) and kinds[9] is None and kinds[11] is None
    assert kinds[10] is None  # (a text or a list: no one Python type)


_TYPED = """ruleset typed.inputs
schema "state.schema.json"
input n: int at "/n"
input words: list[str] at "/words" default []
input pair: any at "/pair/a" default "none"
def more = n + 1
def first = if len(words) > 0 then words[0] else "-"
def long = [w + "!" for w in words if len(w) > 1]
query main = [more, first, long, pair]
"""
_TYPED_SCHEMA = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
                 "additionalProperties": False, "required": ["n"],
                 "properties": {"n": {"type": "integer"}, "words": {"type": "array", "items": {"type": "string"}},
                                "pair": {"type": "object", "additionalProperties": False,
                                         "properties": {"a": {"type": "integer"}}}}}


def test_a_validated_run_takes_the_kinds_of_its_inputs_from_the_schema_and_an_unvalidated_one_does_not(
        tmp_path: Path) -> None:
    """On a state its schema accepts, the inputs have the schema's kinds (`n` an integer, `words` a list
    of texts; `pair`, an integer or its default text: none) and `n + 1` is written with no test; a run
    with ``validate=False`` runs code that tests them (its backend's inputs have no kind), and gives
    the reference's error on a state the schema refuses, as the reference does (here, the inputs' own
    declared types refuse it)."""
    (tmp_path / "typed.rules").write_text(_TYPED)
    (tmp_path / "state.schema.json").write_text(json.dumps(_TYPED_SCHEMA))
    rs = load_ruleset(tmp_path / "typed.rules", use_cache=False)
    assert rs.ok, rs.diagnostics
    good = {"n": 2, "words": ["ab", "c"], "pair": {"a": 1}}
    assert rs.run(good) == rs.run(good, engine="reference") == [3, "ab", ["ab!"], 1]
    assert rs.run({"n": 2}) == [3, "-", [], "none"]
    typed, plain = rs.backend(typed=True), rs.backend(typed=False)
    inputs = {u.name: u for u in rs.program.units.values() if u.kind == "input"}
    assert [typed.facts.input_kind(inputs[k]) for k in ("n", "words", "pair")] == [int, ("list", str), None]
    assert plain.facts.input_kind(inputs["n"]) is None
    assert "_type(" not in "\n".join(typed.source_of(unit(rs, "more")))
    from validator.engine.facts import _inner_id
    assert not _inner_id(_TYPED_SCHEMA, True) and _inner_id({"$defs": {"a": {"$id": "a.json"}}}, True)
    assert "_type(" in "\n".join(plain.source_of(unit(rs, "more")))
    bad = {"n": "x", "words": [1]}
    with pytest.raises(RunError) as refused:
        rs.run(bad)
    assert refused.value.kind == "state"
    with pytest.raises(RunError) as err:
        rs.run(bad, validate=False)
    with pytest.raises(RunError) as ref:
        rs.run(bad, validate=False, engine="reference")
    # (what the inputs declare is checked on every run, validated or not: ``kinds``, the same on both engines)
    assert str(err.value) == str(ref.value) and err.value.kind == "state"
    assert [d.pointer for d in err.value.diagnostics] == ["/n", "/words/0"]
    assert rs.run({"n": 5, "words": ["xyz"]}, validate=False) == [6, "xyz", ["xyz!"], "none"]


def test_a_state_the_schema_accepts_of_a_subclass_runs_without_the_schemas_kinds(tmp_path: Path) -> None:
    """A text of a subclass of `str` passes jsonschema's type test (not the fast check's, which tests
    the type itself); it does not marshal, so the run is made by the backend whose inputs have no kind
    (``api.Ruleset._checked``), with the reference's result."""
    class Word(str):
        pass

    (tmp_path / "typed.rules").write_text(_TYPED)
    (tmp_path / "state.schema.json").write_text(json.dumps(_TYPED_SCHEMA))
    rs = load_ruleset(tmp_path / "typed.rules", use_cache=False)
    state = {"n": 1, "words": [Word("ab")]}
    assert rs.run(state) == rs.run(state, engine="reference")
    assert rs.backend(typed=False).facts.solved and not rs.backend(typed=True).facts.solved
