"""Exact dice on the backend: the paths of an enumeration share the entries no die reaches
(``shares.Pool``, ``shares.pooled``). Every enumeration is compared with the reference's, which
shares nothing (each path a run from the start): the same outcomes, probabilities, events and order,
and the same error (E004 included) under budgets that run out part way through a path. The programs
are drawn to meet what could make a shared entry wrong: a die reaching a shared function through a
function value or a die given as its argument, a decision read through one, a value returned by a
shared function given to a memoized function that rolls (where two copies of one value would roll
twice), recursion, the depth limit, a function named as a value, and the state check. A planted bug
(a definition that rolls, shared as if no die reached it) is caught by the same comparison."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import validator
from validator.api import RunError, load_ruleset
from validator.engine import reference as R
from validator.engine import shares as S
from validator.tools.errata import generator_state

ROOT = Path(__file__).resolve().parent.parent
_DIR = Path(tempfile.mkdtemp(prefix="ruleval-exact-shared-"))
(_DIR / "ruleval.toml").write_text("")


def outcome(rs: Any, state: Any, engine: str, query: str = "main", budget: int | None = None) -> tuple[str, Any]:
    """An exact enumeration's JSON, or its diagnostics."""
    options: dict[str, Any] = {"query": query, "exact": True, "engine": engine}
    if budget is not None:
        options["budget"] = budget
    try:
        return "ok", rs.run(state, **options)
    except RunError as err:
        return "error", [(d.code, d.message, str(d.span), d.help, d.pointer) for d in err.diagnostics]


class _Counting:
    """The reference interpreter, counting the steps of every path it runs (what the budget covers)."""

    def __init__(self, program: Any) -> None:
        self.interp, self.steps = R.Interpreter(program), 0

    def run_query(self, run: R.Run, unit: Any, args: list[Any], check: Any = None) -> Any:
        try:
            return self.interp.run_query(run, unit, args, check)
        finally:
            self.steps += run.steps


def reference_steps(rs: Any, state: Any, query: str = "main") -> int | None:
    """The steps the reference's whole enumeration takes (None if it fails with the default budget)."""
    counting = _Counting(rs.program)
    try:
        unit = rs.program.query(query)
        R._with_room(unit, lambda: R._run_exact_on(counting, rs.program, state, query, [], R.DEFAULT_STEP_BUDGET,
                                                   None, None))
    except (R.EvalError, R.MissingInput):
        return None
    return counting.steps


def differences(rs: Any, state: Any, query: str = "main", budgets: list[int] = ()) -> list[Any]:
    """Where the backend's enumeration differs from the reference's: with the default budget, with each
    of ``budgets``, and with the reference's own count and one step fewer (an E004 in its last path)."""
    total = reference_steps(rs, state, query)
    found = []
    for budget in [None, *budgets, *([total, total - 1] if total else [])]:
        fast, ref = outcome(rs, state, "backend", query, budget), outcome(rs, state, "reference", query, budget)
        if fast != ref:
            found.append((budget, fast, ref))
    return found


# ---------------------------------------------------------------- Here I Stand

HIS = validator.load_ruleset(ROOT / "rulesets" / "his" / "his.rules")


def _his_state(seed: int) -> Any:
    return HIS.run(generator_state(HIS), query="generate", args=[seed], seed=seed, validate=False)


@pytest.mark.parametrize("seed", range(8))
def test_an_exact_here_i_stand_move_is_the_references_on_generated_states(seed: int) -> None:
    state = _his_state(seed)
    total = reference_steps(HIS, state)
    assert total is not None
    budgets = [total // 2, total // 3 + 7] if seed % 4 == 1 else []  # (the reference takes up to a second each)
    assert differences(HIS, state, budgets=budgets) == [], seed


def test_the_benchmarks_here_i_stand_move_is_the_references() -> None:
    import json
    state = json.loads((ROOT / "rulesets" / "his" / "examples" / "three_interceptors_and_avoid.json").read_text())
    fast = outcome(HIS, state, "backend")
    assert fast[0] == "ok" and fast[1]["paths"] == 35
    assert fast == outcome(HIS, state, "reference")


# ---------------------------------------------------------------- programs drawn to meet the sharing

# Definitions: pure ones (shared), and those that roll, recur or read a decision (not shared).
DEFS = """ruleset fuzz.shared
input xs: list[int] at "/xs" default [1, 2, 3]
input k: int at "/k" default 2
def base = [x * k for x in xs]
def pick(n) = base[n % len(base)] + k
def wrap(l) = [v + 1 for v in l]
def tagged(l) = {items: l, n: len(l)}
def apply(f, n) = f(n) + len(base)
def rank(n) = -(n % 3)
def order = sort_by(base, rank)
def down(n) = if n <= 0 then 0 else down(n - 1) + 1
def deep = down(k)
def die_of(n) = roll(1d6) + n
def once_per(x) = roll(1d3)
def twice = pick(1) + pick(2)
decision big(n) cite "D" = n > 3
def via_big(n) = if big(n) then 1 else 0
"""

# Statements of the procedure's step after the first die `r` (each reads what the definitions above give).
STATEMENTS = [
    "acc := acc + pick(r)",
    "acc := acc + apply(fn(n) => n + r, 2)",  # a die given to a shared function through a function value
    "acc := acc + apply(fn(n) => roll(1d3) + n, 1)",  # a die rolled in it through one
    "acc := acc + apply(fn(n) => if n + r > 4 then roll(1d2) else 1, 2)",  # the path's die looked at, then one rolled
    "acc := acc + apply(fn(n) => if big(n) then 1 else 0, r)",  # a decision read in it through one
    "acc := acc + len(wrap(base)) + len(wrap([r, r]))",  # shared arguments, then the path's own
    "acc := acc + once_per(tagged(wrap(base))) + once_per(tagged(wrap(base)))",  # one value: one roll
    "acc := acc + once_per(wrap(base)) + once_per(base)",
    "acc := acc + once_per(tagged(base)) + once_per(tagged(base))",  # a light function's one record: one roll
    "acc := acc + first(order) + deep",
    "acc := acc + die_of(1) + die_of(1) + via_big(r)",
    "acc := acc + twice + pick(k)",
    "acc := acc + apply(pick, r)",  # a shared function named as a value, given a die
    "acc := acc + (if r > 3 then pick(0) else len(wrap(order)))",
    "acc := acc + zed",
]


@st.composite
def shared_programs(draw: Any) -> tuple[str, dict[str, Any], list[int]]:
    before = draw(st.lists(st.sampled_from(STATEMENTS), max_size=2))
    after = draw(st.lists(st.sampled_from(STATEMENTS), min_size=1, max_size=4))
    die = draw(st.sampled_from(["1d6", "2d3", "1d3"]))
    check = draw(st.sampled_from(["[]", "[x for x in base if x < 0]", "[n for n in [twice] if n < -100]"]))
    # a third input, whose default rolls a die or reads a definition (the paths then bind it each)
    extra = draw(st.sampled_from(["", "roll(1d2)", "base", "[k]"]))
    defs = DEFS + (f'input z: any at "/z" default {extra}\ndef zed = len(str(z))\n' if extra else "def zed = 0\n")
    text = (defs + f"query validate_state = {check}\n"
            + 'procedure proc cite "P" {\n  var acc = 0\n  var r = 0\n'
            + '  step first cite "P" {\n' + "".join(f"    {s}\n" for s in before) + "  }\n"
            + '  step second cite "P" {\n'
            + f"    r := roll({die})\n" + "".join(f"    {s}\n" for s in after)
            + '    emit "rolled" {acc: acc, r: shown(r)}\n  }\n}\n'
            + "query main = proc()\n")
    state = {"xs": draw(st.lists(st.integers(-3, 6), min_size=1, max_size=4)), "k": draw(st.integers(0, 3))}
    budgets = draw(st.lists(st.integers(1, 600), max_size=2))
    return text, state, budgets


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=shared_programs())
def test_an_enumeration_whose_paths_share_entries_is_the_references(program: tuple[str, dict[str, Any], list[int]]) -> None:
    text, state, budgets = program
    path = _DIR / "shared.rules"
    path.write_text(text)
    rs = load_ruleset(path, use_cache=False)
    assert rs.ok, (text, [str(d) for d in rs.diagnostics if d.is_error])
    assert differences(rs, state, budgets=budgets) == [], text


@pytest.mark.parametrize("add", ["k", "1"])
def test_the_depth_limit_is_met_where_the_reference_meets_it(tmp_path: Path, add: str) -> None:
    """A shared value whose computation goes four calls deep (functions named as values, which read an
    input or, state-free, do not: their calls count toward the depth limit all the same), computed on
    one path from the procedure and read, on another, from deep in a recursion: computed again there,
    so that the depth limit stops it where the reference's does (E005 past some depth, else not)."""
    (tmp_path / "ruleval.toml").write_text("")
    path = tmp_path / "deep.rules"
    found = set()
    for n in range(140, 150):
        path.write_text(
            'ruleset fuzz.deep\ninput k: int at "/k" default 2\n'
            f"def call(f, n) = f(n) + {add}\ndef f1(n) = n + {add}\ndef f2(n) = call(f1, n) + {add}\n"
            f"def f3(n) = call(f2, n) + {add}\ndef f4(n) = call(f3, n) + {add}\ndef tower = call(f4, k)\n"
            "def reach(n) = if n <= 0 then tower else reach(n - 1)\n"
            'procedure proc cite "P" {\n  var acc = 0\n  step s cite "P" {\n    let r = roll(1d3)\n'
            f"    acc := if r < 2 then tower else reach({n})\n"  # (the first path reads it shallow)
            '    emit "e" {acc: acc}\n  }\n}\nquery main = proc()\n')
        rs = load_ruleset(path, use_cache=False)
        assert rs.ok
        assert differences(rs, {"k": 1}) == [], n
        found.add(outcome(rs, {"k": 1}, "reference")[0])
    assert found == {"ok", "error"}  # (the limit falls within the range)


def test_a_record_made_again_by_a_light_function_is_the_same_record_to_a_memo_that_rolls() -> None:
    """`tagged(base)` twice is one record (its memo, kept although `tagged` is light: the record's
    identity is seen, ``memos.Memos.unseen``), for which `once_per` rolls once: 2, 4 or 6; `tagged([1])`
    twice is two records (two lists), rolled for twice."""
    path = _DIR / "tagged.rules"
    path.write_text("ruleset fuzz.t\ndef tagged(l) = {items: l, n: len(l)}\ndef once_per(x) = roll(1d3)\n"
                    "def base = [1]\nquery main = once_per(tagged(base)) + once_per(tagged(base))\n"
                    "query two = once_per(tagged([1])) + once_per(tagged([1]))\n")
    rs = load_ruleset(path, use_cache=False)
    assert rs.ok
    for query, outcomes in (("main", [2, 4, 6]), ("two", [2, 3, 4, 5, 6])):
        assert differences(rs, {}, query) == [], query
        assert sorted(o["result"] for o in outcome(rs, {}, "reference", query)[1]["outcomes"]) == outcomes


def test_a_planted_bug_sharing_a_definition_that_rolls_is_caught(monkeypatch: Any) -> None:
    """The comparison above catches a wrong sharing: a definition that rolls a die, shared as if no die
    reached it (computed once, in a run of its own with dice of its own), gives another distribution."""
    path = _DIR / "planted.rules"
    text = (DEFS + 'procedure proc cite "P" {\n  var acc = 0\n  step s cite "P" {\n'
            "    let r = roll(1d3)\n    acc := r + die_of(0)\n"
            '    emit "e" {acc: acc}\n  }\n}\nquery main = proc()\n')
    path.write_text(text)
    rs = load_ruleset(path, use_cache=False)
    assert differences(rs, {}) == []
    shared = S.shared
    monkeypatch.setattr(S, "shared", lambda backend, unit: shared(backend, unit) or unit.name == "die_of")
    monkeypatch.setattr(S, "NO_DICE", R.SeededDice(0))  # (and its run of its own rolls the die itself)
    path = _DIR / "planted2.rules"  # (another program: the writings kept for the first are not played for it)
    path.write_text(text + "def planted = 1\n")
    rs = load_ruleset(path, use_cache=False)
    found = differences(rs, {})
    assert found and found[0][0] is None and found[0][1][0] == "ok" and found[0][1][1] != found[0][2][1]


def test_an_exact_run_recurses_as_deep_as_a_seeded_one(tmp_path: Path) -> None:
    """An enumeration has the room for Python's recursion a seeded run has (``reference._with_room``):
    a recursion the depth limit allows is not cut short by Python's own limit on either engine."""
    (tmp_path / "ruleval.toml").write_text("")
    path = tmp_path / "down.rules"
    path.write_text("ruleset fuzz.down\ndef down(n) = if n <= 0 then 0 else down(n - 1) + 1\n"
                    "query main = down(149) + roll(1d2)\n")
    rs = load_ruleset(path, use_cache=False)
    seeded = rs.run({}, seed=1, engine="reference")
    for engine in ("reference", "backend"):
        found = outcome(rs, {}, engine)
        assert found[0] == "ok" and seeded in [o["result"] for o in found[1]["outcomes"]], engine


def test_the_inputs_are_shared_with_the_entries_that_hold_them(monkeypatch: Any) -> None:
    """Binding the inputs once for all paths (``shares.bind_inputs``) is needed for the answers, not only
    for speed: a shared value holding an input's map (made by the binding), given with that map read on
    a later path to a memo that rolls, is one value in the reference's run (one roll); were each path
    to bind its own inputs, the two would be two maps on that path and roll twice. Planted: each path
    binds its own."""
    path = _DIR / "inputs_held.rules"
    path.write_text('ruleset fuzz.held\ninput us: list[map[str, int]] at "/us"\n'
                    "def first = us[0]\ndef per(u) = roll(1d3)\n"
                    'procedure proc cite "P" {\n  var acc = 0\n  step s cite "P" {\n'
                    "    let r = roll(1d2)\n    acc := r * 10 + per(first) + per(us[0])\n"
                    '    emit "e" {acc: acc}\n  }\n}\nquery main = proc()\n')
    rs = load_ruleset(path, use_cache=False)
    assert differences(rs, {"us": [{"n": 1}]}) == []
    monkeypatch.setattr(S, "bind_inputs", lambda proto, run, bind: bind(run))  # (the pool kept: not off)
    path = _DIR / "inputs_held2.rules"  # (another program: the writings kept for the first are not played for it)
    path.write_text(path.with_name("inputs_held.rules").read_text() + "def planted = 1\n")
    found = differences(load_ruleset(path, use_cache=False), {"us": [{"n": 1}]})
    assert found and found[0][1] != found[0][2]
