"""The fast backend against the reference interpreter: the same results, the same diagnostics at
the same places and steps that bound the reference's, on random programs (``tests/programs.py``) and on every bundled
case. ``RULEVAL_FUZZ_LONG=1`` runs many more programs."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from programs import documented, programs
from validator.engine import reference as R
from validator.engine import backend as B
from validator.engine import memos
from validator.api import RunError, load_ruleset, ruleset_files
from validator.lib.runtime import ScriptedDice, SeededDice
from validator.tools.testing import _state_of, load_suite

LONG = bool(os.environ.get("RULEVAL_FUZZ_LONG"))
REPO = Path(__file__).resolve().parent.parent
CASES_DIR = REPO / "tests" / "cases"
SUITE = load_suite([str(CASES_DIR)])
_ROOT = Path(tempfile.mkdtemp(prefix="ruleval-differential-"))
(_ROOT / "ruleval.toml").write_text("")



def outcome(rs: Any, state: Any, options: dict[str, Any], engine: str) -> tuple[str, Any]:
    try:
        return "ok", rs.run(state, engine=engine, **options)
    except RunError as err:
        return "error", [(d.code, d.message, str(d.span), d.help, d.pointer) for d in err.diagnostics]


def steps(rs: Any, state: Any, options: dict[str, Any], engine: str) -> int | str:
    """The steps a run took (or the error it stopped at), on one engine, without the state check."""
    dice = ScriptedDice(options["dice"]) if "dice" in options else SeededDice(options.get("seed", 0))
    runner = rs.backend(typed=False) if engine == "backend" else None
    try:
        _, run = R.run_query(rs.program, state, options["query"], list(options.get("args") or []), dice,
                             options.get("budget", 5_000_000), engine=runner)
    except (R.EvalError, R.MissingInput) as err:
        return f"{type(err).__name__}: {getattr(err, 'code', '')} {getattr(err, 'span', '')}"
    return run.steps


def bounds(fast: int | str, ref: int | str) -> bool:
    """The backend's steps bound the reference's: it charges each stretch of code the most it may
    take, on entry (docs/architecture.md); a run it stops (E004, E005) is the reference's."""
    return fast >= ref if isinstance(fast, int) and isinstance(ref, int) else fast == ref


# Thousands of programs in the default run: 8 shards of 250 (each draws its own, the seed being
# random), so that the test workers share them; 20 000 with RULEVAL_FUZZ_LONG=1.
SHARDS = 8


@pytest.mark.parametrize("shard", range(SHARDS))
@settings(max_examples=2500 if LONG else 250, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
@given(program=programs())
def test_backend_equals_reference_on_random_programs(shard: int, program: tuple[str, dict[str, Any], dict[str, Any]]) -> None:
    text, state, options = program
    path = _ROOT / f"program{shard}.rules"
    path.write_text(text)
    rs = load_ruleset(path, use_cache=False)
    assert rs.ok, (text, [str(d) for d in rs.diagnostics if d.is_error])
    ref = outcome(rs, state, options, "reference")
    fast = outcome(rs, state, options, "backend")
    assert fast == ref, text
    if not options.get("exact"):
        assert bounds(steps(rs, state, options, "backend"), steps(rs, state, options, "reference")), text
    assert not given_up(rs)[1], text


def given_up(rs: Any) -> tuple[int, list[tuple[str, str]]]:
    """Every unit of the program written (those a run does not reach too): how many were written, and the
    ones given up (the backend refuses a unit only for code nested past Python's limits)."""
    backend = rs.backend(typed=False)
    backend.write_all()  # (its count is of the units written now: none when an earlier test of this process wrote them)
    fns = [backend.function(u) for u in rs.program.units.values() if u.kind != "cycle policy"]
    written = sum(not isinstance(f, (B._Stub, B._Refused)) for f in fns)
    return written, [(n, f.err.message) for n, f in backend.g.items() if isinstance(f, B._Refused)]


@pytest.mark.parametrize("shard", range(2))
@settings(max_examples=1000 if LONG else 100, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
@given(program=programs(), budgets=st.lists(st.integers(1, 400), min_size=1, max_size=3))
def test_a_warmed_backend_equals_the_reference_under_small_budgets(
        shard: int, program: tuple[str, dict[str, Any], dict[str, Any]], budgets: list[int]) -> None:
    """Issue 45: a backend keeps state-free values across runs; a run's outcome under a budget must
    not depend on what ran before it. The backend is warmed by a run with the default budget, then
    each small budget gives what the reference (which keeps nothing) gives, in steps that bound its own."""
    text, state, options = program
    if options.get("exact"):
        return
    path = _ROOT / f"warm{shard}.rules"
    path.write_text(text)
    rs = load_ruleset(path, use_cache=False)
    assert rs.ok, (text, [str(d) for d in rs.diagnostics if d.is_error])
    outcome(rs, state, options, "backend")  # warm: every state-free value it reads is kept
    full = steps(rs, state, options, "reference")
    for budget in budgets + ([full, full - 1] if isinstance(full, int) else []):
        small = {**options, "budget": max(budget, 1)}
        assert outcome(rs, state, small, "backend") == outcome(rs, state, small, "reference"), (text, budget)
        assert bounds(steps(rs, state, small, "backend"), steps(rs, state, small, "reference")), (text, budget)


STATE_FREE_COST = """def heavy = len(fold(range(300), [], fn(acc, i) => append(acc, i)))
def heavier = heavy + len(fold(range(300), [], fn(acc, i) => append(acc, i)))
def table(k: str) = heavier + len(k)
query main = table("a") + table("bc") + heavy
"""


@pytest.mark.parametrize("warm_budget", [None, 5_000_000])
@pytest.mark.parametrize("engine", ["backend", "reference"])
def test_a_run_costs_its_state_free_values_whatever_ran_before(engine: str, warm_budget: int | None) -> None:
    """The issue's case: `Ruleset.run(state, budget=...)` stopped with E004 on a cold backend but
    succeeded after a run with the default budget (a kept value carried only its own steps, and each
    state-free value had a budget of its own)."""
    path = _ROOT / "state_free_cost.rules"
    path.write_text(STATE_FREE_COST)
    rs = load_ruleset(path, use_cache=False)
    if warm_budget is not None:
        rs.run({}, engine=engine, budget=warm_budget)
    full = steps(rs, {}, {"query": "main"}, "reference")
    assert isinstance(full, int) and full > 600  # the state-free values' steps are the run's
    assert rs.run({}, engine=engine, budget=full) == 601 + 602 + 300
    with pytest.raises(RunError) as err:
        rs.run({}, engine=engine, budget=full - 1)
    assert [d.code for d in err.value.diagnostics] == ["E004"]
    with pytest.raises(RunError):
        rs.run({}, engine=engine, budget=1000)


HEAVY_CALLS = """def heavy(k: int) = len(fold(range(400), [], fn(acc, i) => append(acc, i))) + k
query one = heavy(1)
query again = heavy(1) + heavy(1)
query main = heavy(1) + heavy(2) + heavy(3) + heavy(4)
"""


@pytest.mark.parametrize("warm", [False, True])
@pytest.mark.parametrize("engine", ["backend", "reference"])
def test_calls_of_a_heavy_state_free_function_are_each_charged_to_the_run(engine: str, warm: bool) -> None:
    """The issue's "four calls of a 5M-step definition finish": each call with other plain arguments
    costs the run its total (before, each had a budget of its own and none was the run's); the same
    arguments again cost a memo hit's one step."""
    path = _ROOT / "heavy_calls.rules"
    path.write_text(HEAVY_CALLS)
    rs = load_ruleset(path, use_cache=False)
    if warm:
        rs.run({}, engine=engine, query="main")
    one = steps(rs, {}, {"query": "one"}, "reference")
    assert isinstance(one, int) and one > 400
    assert steps(rs, {}, {"query": "again"}, "reference") == one + 1
    full = steps(rs, {}, {"query": "main"}, "reference")
    assert isinstance(full, int) and full > 4 * (one - 1)  # (`one`: the query's own step and a call's)
    assert rs.run({}, engine=engine, query="main", budget=full) == 4 * 400 + 10
    for budget in (full - 1, 2 * one):
        with pytest.raises(RunError) as err:
            rs.run({}, engine=engine, query="main", budget=budget)
        assert [d.code for d in err.value.diagnostics] == ["E004"]
    assert rs.run({}, engine=engine, query="again", budget=one + 1) == 802


SHARED = """def heavy = len(fold(range(400), [], fn(acc, i) => append(acc, i)))
def a = heavy + 1
def b = heavy + 2
query qh = heavy
query qa = a
query qb = b
query both = a + b
"""
# forty diamonds in a row: each level reads the one below twice, through two values
DIAMONDS = "def v0 = len(fold(range(50), [], fn(acc, i) => append(acc, i)))\n" + "".join(
    f"def l{i} = v{i - 1} + 1\ndef r{i} = v{i - 1} - 1\ndef v{i} = (l{i} + r{i}) / 2\n" for i in range(1, 41)
) + "query main = v40\n"


@pytest.mark.parametrize("warm", [False, True])
@pytest.mark.parametrize("engine", ["backend", "reference"])
def test_a_run_pays_once_for_a_state_free_value_read_through_others(engine: str, warm: bool) -> None:
    """docs/language.md (Steps): a run pays once for each state-free value it reads, directly or
    through others. `heavy`, read by both `a` and `b`, is paid once in `both`: its steps and those of
    `qh` make the steps of `qa` and `qb` (up to the queries' own few steps), where paying it in each
    reader would count its 400 items twice; and forty diamonds in a row (2^40 paths to `v0`) cost a
    run each value once, far within the default budget: its own steps, and those of finding, in the
    run of its own of each of the 121 values, at most the 121 (``reference.pay``)."""
    path = _ROOT / "shared_cost.rules"
    path.write_text(SHARED)
    rs = load_ruleset(path, use_cache=False)
    if warm:
        rs.run({}, engine=engine, query="both")
    n = {q: steps(rs, {}, {"query": q}, engine) for q in ("qh", "qa", "qb", "both")}
    assert all(isinstance(v, int) for v in n.values()), n
    assert n["qh"] > 400
    assert abs(n["both"] + n["qh"] - n["qa"] - n["qb"]) <= 5, n
    path = _ROOT / "diamonds.rules"
    path.write_text(DIAMONDS)
    rs = load_ruleset(path, use_cache=False)
    if warm:
        rs.run({}, engine=engine)
    assert rs.run({}, engine=engine) == 50
    main = steps(rs, {}, {"query": "main"}, engine)
    assert isinstance(main, int) and main < 400 + 40 * 30 + 121 * 121, main


def _function_diamonds(n: int) -> str:
    """n diamonds of state-free functions of a text: each level calls the one below through two."""
    return ("def f0(s: str) = len(fold(range(50), [], fn(acc, i) => append(acc, i))) + len(s)\n" + "".join(
        f"def g{i}(s: str) = f{i - 1}(s) + 1\ndef h{i}(s: str) = f{i - 1}(s) - 1\ndef f{i}(s: str) = (g{i}(s) + h{i}(s)) / 2\n"
        for i in range(1, n + 1)) + f'query main = f{n}("a")\n')


@pytest.mark.parametrize("text", [DIAMONDS, _function_diamonds(40)], ids=["values", "functions"])
def test_a_chain_of_diamonds_stays_on_the_backend(text: str, monkeypatch: Any) -> None:
    """The backend charges a kept value the steps of all it read, directly or through others, each
    once (``backend._Kept``), not the sum over what each of its reads read: over forty diamonds in a
    row that sum is 2^40 times the first value's steps, past any budget, and every run would be
    made again by the reference. Cold and warmed, under twice the reference's steps, the backend
    makes the run itself (none made again) and counts no more than twice them; one step under
    them, the run is made again by the reference."""
    redone: list[Any] = []
    ours = R._engine_else_reference

    def counted(engine: Any, program: Any, go: Any, again: Any = None, bugs: Any = None) -> Any:
        def went(interp: Any) -> Any:
            if engine is not None and interp is not engine:  # (made again by the reference)
                redone.append(interp)
            return go(interp)
        return ours(engine, program, went, again, bugs)

    path = _ROOT / "diamond_chain.rules"
    path.write_text(text)
    ref = steps(load_ruleset(path, use_cache=False), {}, {"query": "main"}, "reference")
    assert isinstance(ref, int), ref
    monkeypatch.setattr(R, "_engine_else_reference", counted)
    rs = load_ruleset(path, use_cache=False)
    for _ in ("cold", "warmed"):
        ours_ = steps(rs, {}, {"query": "main", "budget": 2 * ref}, "backend")
        assert isinstance(ours_, int) and ref <= ours_ <= 2 * ref and not redone, (ours_, ref, redone)
        assert rs.run({}, engine="backend", query="main", budget=2 * ref) == rs.run({}, engine="reference")
    with pytest.raises(RunError):  # (and one past the budget is made again, seen here)
        rs.run({}, engine="backend", query="main", budget=ref - 1)
    assert redone


def _chain(n: int) -> str:
    """n state-free functions of a text, each reading the one before."""
    return ("def f0(s: str) = len(s)\n" + "".join(f"def f{i}(s: str) = f{i - 1}(s) + 1\n" for i in range(1, n))
            + f'query main = f{n - 1}("a")\n')


@pytest.mark.parametrize("engine", ["backend", "reference"])
def test_a_chain_of_state_free_values_costs_the_time_keeping_it_takes(engine: str) -> None:
    """The run of its own of each value of a chain finds, to pay them, all the values below it: kept
    from nothing, a chain of n takes a time of the order of n², and costs as many steps (about n²/2,
    ``reference.pay``), so that the budget bounds that time (before, it cost about 3n: a file of a
    few hundred such lines made each step of a run take a hundred times longer). The two engines
    count it alike."""
    costs = {}
    for n in (50, 100):
        path = _ROOT / f"chain{n}.rules"
        path.write_text(_chain(n))
        rs = load_ruleset(path, use_cache=False)
        assert rs.ok, [str(d) for d in rs.diagnostics]
        costs[n] = steps(rs, {}, {"query": "main"}, engine)
        assert costs[n] == steps(load_ruleset(path, use_cache=False), {}, {"query": "main"}, "reference")
        assert rs.run({}, engine=engine) == n
    assert isinstance(costs[50], int) and isinstance(costs[100], int)
    assert costs[50] > 50 * 49 // 2 and costs[100] > 100 * 99 // 2 and costs[100] > 3.5 * costs[50], costs


KEPT_LATER = """def w = len(fold(range(30), [], fn(acc, i) => append(acc, i)))
def g(s: str) = len(fold(range(7), [], fn(acc, i) => append(acc, i))) + len(s)
def kid(s: str) = s
def f(s: str) = len(s) + w
def h(s: str) = g(s) + g(s + s) + w
query warm = [kid("a"), f("a"), h("a"), f("b")]
query kid_a = kid("a")
query f_a = f("a")
query h_a = h("a")
query f_then_h = f("a") + h("a")
query fb_then_fa = f("b") + f("a")
"""


@pytest.mark.parametrize("later", ["kid_a", "f_a", "h_a", "f_then_h", "fb_then_fa"])
def test_a_kept_value_costs_a_later_runs_first_read_what_the_reference_charges(later: str) -> None:
    """A value kept by an earlier run (``backend._Kept``: read nothing, one value, or functions' values
    and a value) is charged at a later run's first read its charge and, once a run, its group's
    (``backend._pay``); where that bound is exact (nothing it read paid before in the run, or only
    its group, through another value of the same group) it is ``reference.pay``'s charge, step for
    step, as the run that computed it charged. A kept value's charge or size found wrongly fails here."""
    path = _ROOT / "kept_later.rules"
    path.write_text(KEPT_LATER)
    rs = load_ruleset(path, use_cache=False)
    cold = steps(rs, {}, {"query": later}, "backend")
    rs.run({}, query="warm")  # (its values kept for the program's life)
    assert steps(rs, {}, {"query": later}, "backend") == cold == steps(rs, {}, {"query": later}, "reference")


@st.composite
def shared_state_free(draw: Any) -> tuple[str, list[str], list[str]]:
    """A program of state-free definitions reading one another (values and functions of a text, each
    with a loop of its own, each reading up to three earlier ones: shared reads and diamonds), its
    queries (each reading some of them), and an order to warm a backend in."""
    n = draw(st.integers(2, 7))
    defs, calls = [], []
    for i in range(n):
        own = f"len(fold(range({draw(st.integers(0, 40))}), [], fn(acc, j) => append(acc, j)))"
        fn = draw(st.booleans())
        reads = [calls[r] if not fn or "(" not in calls[r] else calls[r].replace('"a"', "s").replace('"b"', "s + s")
                 for r in draw(st.lists(st.integers(0, i - 1), max_size=3))] if i else []
        body = " + ".join([own, *reads] + (["len(s)"] if fn else []))
        defs.append(f"def d{i}(s: str) = {body}" if fn else f"def d{i} = {body}")
        calls.append(f'd{i}({draw(st.sampled_from(["a", "b"]))!r})'.replace("'", '"') if fn else f"d{i}")
    queries = [f"q{k}" for k in range(3)]
    text = "\n".join(defs) + "\n" + "".join(
        f"query {q} = {' + '.join(draw(st.lists(st.sampled_from(calls), min_size=1, max_size=4)))}\n" for q in queries)
    return text, queries, draw(st.permutations(queries))


@settings(max_examples=300 if LONG else 40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=shared_state_free(), budgets=st.lists(st.integers(1, 300), max_size=2))
def test_a_warmed_backend_charges_its_state_free_values_as_a_cold_one(
        program: tuple[str, list[str], list[str]], budgets: list[int]) -> None:
    """Issue 45: the backend charges a kept value, at its first read in a run, a bound found when it
    was kept (``backend._Kept``: the value and all it read, directly or through others, its group of
    values once a run), not ``reference.pay``'s walk over what the run has paid. Whatever ran before,
    a query costs a warmed backend what it costs a cold one (whose values are all computed in the
    run), which bounds the reference's; under budgets at the reference's steps, one below them, and
    small ones, the two engines give the same outcome, and the backend's steps bound the
    reference's. A bound that charges less than the walk somewhere fails here."""
    text, queries, order = program
    path = _ROOT / "shared_state_free.rules"
    path.write_text(text)
    cold = {q: steps(load_ruleset(path, use_cache=False), {}, {"query": q}, "backend") for q in queries}
    rs = load_ruleset(path, use_cache=False)
    assert rs.ok, (text, [str(d) for d in rs.diagnostics if d.is_error])
    for q in order:
        outcome(rs, {}, {"query": q}, "backend")  # warm: its values are kept, in this order
    for q in queries:
        assert steps(rs, {}, {"query": q}, "backend") == cold[q], (text, q)
        ref = steps(rs, {}, {"query": q}, "reference")
        assert isinstance(ref, int) and bounds(cold[q], ref), (text, q)
        for budget in {ref, ref - 1, *budgets}:
            small = {"query": q, "budget": max(budget, 1)}
            assert outcome(rs, {}, small, "backend") == outcome(rs, {}, small, "reference"), (text, q, budget)
            assert bounds(steps(rs, {}, small, "backend"), steps(rs, {}, small, "reference")), (text, q, budget)


def _kept_bounds_hold(backend: Any) -> int:
    """Every value a backend keeps (``backend._Kept``, in its tables) and every group of them holds what
    ``reference.unpaid`` finds from nothing paid: the value's ``charge`` and its group's, the own
    steps of it and of all it read, directly or through others, and one for each (``size`` of
    them); a group's ``charge`` and ``below``, its members' walk. The number of values looked at."""
    kept = {id(k): k for table in backend.g.values() if type(table) is dict
            for k in table.values() if type(k) is B._Kept}
    for k in kept.values():
        steps, found = R.unpaid(set(), [k])
        group = k.group
        assert (k.charge + (group.charge if group is not None else 0), k.size) == (steps + found, found)
        assert k.own >= found - 1  # (a step for each value below it)
        if group is not None:
            below: set[R.Kept] = set()
            assert group.charge == sum(R.unpaid(below, [r for r in k.reads if r.whole])) and below == group.below
    return len(kept)


@settings(max_examples=100 if LONG else 20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=shared_state_free())
def test_every_value_a_warmed_backend_keeps_carries_the_walk_from_nothing_paid(
        program: tuple[str, list[str], list[str]]) -> None:
    """``backend._Kept`` finds a value's charge without ``reference.unpaid``'s walk where it read one
    value and no group (that walk finds the value read and all it read: that one's charge and its
    group's). Whatever it found, every kept value of a warmed backend carries the walk's figures."""
    text, _, order = program
    path = _ROOT / "kept_bounds.rules"
    path.write_text(text)
    rs = load_ruleset(path, use_cache=False)
    for q in order:
        outcome(rs, {}, {"query": q}, "backend")
    assert _kept_bounds_hold(rs.backend(typed=False))


_ARGUMENTS = ["s", "s + s", 's + "x"', '"k"']  # (a function's argument as another reads it: met before or new)


@st.composite
def many_new_arguments(draw: Any) -> tuple[str, list[str]]:
    """State-free functions of a text, each with a loop of its own and reading earlier ones (by its
    argument, the argument doubled or a constant: arguments met before and new ones) and perhaps a
    value without arguments, and queries each folding one of them over texts of its own (repeated
    and new): a function's call by a text its table does not hold (``backend._new``), many times a
    run."""
    n = draw(st.integers(1, 5))
    defs, names = ["def v = len(fold(range(5), [], fn(acc, j) => append(acc, j)))"], []
    for i in range(n):
        own = f"len(fold(range({draw(st.integers(0, 20))}), [], fn(acc, j) => append(acc, j)))"
        reads = [f"d{r}({draw(st.sampled_from(_ARGUMENTS))})"
                 for r in draw(st.lists(st.integers(0, i - 1), max_size=2))] if i else []
        body = " + ".join([own, *reads, *(["v"] if draw(st.booleans()) else []), "len(s)"])
        defs.append(f"def d{i}(s: str) = {body}")
        names.append(f"d{i}")
    texts = st.lists(st.sampled_from(["a", "b", "ab", "ba", "abc", "x", "k", ""]), min_size=1, max_size=8)
    queries = [f"q{k}" for k in range(3)]
    text = "\n".join(defs) + "\n" + "".join(
        f"query {q} = fold({draw(texts)!r}, 0, fn(acc, t) => acc + {draw(st.sampled_from(names))}(t))\n".replace("'", '"')
        for q in queries)
    return text, queries


@settings(max_examples=200 if LONG else 30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=many_new_arguments(), cap=st.sampled_from([100_000, 3, 0]), budgets=st.lists(st.integers(1, 400), max_size=3))
def test_state_free_functions_called_with_many_new_arguments_under_small_budgets(
        program: tuple[str, list[str]], cap: int, budgets: list[int]) -> None:
    """A state-free function called by texts its table does not hold yet (``backend._new``; with a table
    under its cap, full, or holding nothing, its values then kept for the run alone): whatever the
    queries run before met, each query gives the reference's outcome under budgets at the reference's
    steps, one below them and small ones, in steps that bound the reference's, costs a warmed backend
    what it costs a cold one (under the cap: past it, a value kept for a run alone is made again in
    each run, and a value kept for the program's life that read it in an earlier run counts that one
    apart, so a warmed backend may charge more, never less than the reference), and every value kept
    carries the walk from nothing paid."""
    text, queries = program
    path = _ROOT / "many_new_arguments.rules"
    path.write_text(text)
    saved = B._ALONE_CAP
    B._ALONE_CAP = cap
    try:
        cold = {q: steps(load_ruleset(path, use_cache=False), {}, {"query": q}, "backend") for q in queries}
        rs = load_ruleset(path, use_cache=False)
        assert rs.ok, (text, [str(d) for d in rs.diagnostics if d.is_error])
        for q in queries:
            ref = steps(rs, {}, {"query": q}, "reference")
            assert isinstance(ref, int) and bounds(cold[q], ref), (text, q)
            for budget in (ref, ref - 1, *budgets):  # (the earlier queries' values kept, this one's new)
                small = {"query": q, "budget": max(budget, 1)}
                assert outcome(rs, {}, small, "backend") == outcome(rs, {}, small, "reference"), (text, q, budget)
                assert bounds(steps(rs, {}, small, "backend"), steps(rs, {}, small, "reference")), (text, q, budget)
            warm = steps(rs, {}, {"query": q}, "backend")
            assert warm == cold[q] if cap == saved else bounds(warm, ref), (text, q)
        _kept_bounds_hold(rs.backend(typed=False))
    finally:
        B._ALONE_CAP = saved


def test_every_value_the_bundled_data_checks_keep_carries_the_walk_from_nothing_paid() -> None:
    """The same, over the values the bundled rulesets' data checks keep (the most a cold check keeps)."""
    files, _, _ = ruleset_files([REPO / "rulesets"])
    looked = 0
    for f in files:
        rs = load_ruleset(f, use_cache=False)
        check = rs.program.query(R.DATA_CHECK)
        if check is not None:  # (run here: ``data.query_findings`` keeps a run for the process)
            R.run_without_state(rs.program, check, 5_000_000, rs.backend(typed=False))
            looked += _kept_bounds_hold(rs.backend(typed=False))
    assert looked > 10_000


@pytest.mark.parametrize("case", SUITE.cases,
                         ids=[f"{Path(c.file).parent.name}/{Path(c.file).stem}::{c.id}" for c in SUITE.cases])
def test_backend_equals_reference_on_every_case(case: Any) -> None:
    data = case.data
    rs = load_ruleset(case.ruleset)
    assert rs.ok, rs.diagnostics
    state = _state_of(case)
    options = {"query": data.get("query", "main"), "args": data.get("args"), "seed": data.get("seed"),
               "dice": data.get("dice"), "exact": bool(data.get("exact") or data.get("probabilities"))}
    assert outcome(rs, state, options, "backend") == outcome(rs, state, options, "reference")


MEMO_FREE = """input xs: list[int] at "/xs" default [3, 3, 3, 2]
def f(x) = len([y for y in range(x)]) + len(xs)
def v = [f(x) for x in xs]
query main = v
"""


def test_a_memo_that_cannot_be_seen_is_left_out_and_a_run_past_the_budget_is_the_references() -> None:
    """`f` is called from one place, in a value computed once a run: the backend writes it there,
    without a memo, so it computes `f(3)` three times where the reference's memo answers twice. Its
    steps are then more than the reference's; under the reference's own count, the run it stops at the
    budget is made again by the reference: the same answer, and one step less is the same E004."""
    path = _ROOT / "memo_free.rules"
    path.write_text(MEMO_FREE)
    rs = load_ruleset(path, use_cache=False)
    assert rs.ok, [str(d) for d in rs.diagnostics]
    f = next(u for u in rs.program.units.values() if u.name == "f")
    assert rs.backend(typed=False).memos.memo_free(f) and "memos" not in "".join(rs.backend(typed=False).source_of(f))
    full = steps(rs, {}, {"query": "main"}, "reference")
    assert isinstance(full, int) and steps(rs, {}, {"query": "main"}, "backend") > full
    for budget in (full, full - 1, 5):
        options = {"query": "main", "budget": budget}
        assert outcome(rs, {}, options, "backend") == outcome(rs, {}, options, "reference"), budget
        assert steps(rs, {}, options, "backend") == steps(rs, {}, options, "reference"), budget
    assert outcome(rs, {}, {"budget": full}, "backend") == ("ok", [7, 7, 7, 6])
    assert outcome(rs, {}, {"budget": full - 1}, "backend")[1][0][0] == "E004"
    assert f.index not in rs.backend(typed=False).unit_names  # (no function of its own: written in `v`)


LIGHT = """input xs: list[int] at "/xs" default [3, 3, 1]
input ys: list[int] at "/ys" default [2, 3]
def g(x) = if x > 2 then x * 2 + len(xs) else h(x) - 1
def h(x) = x + len(ys)
def a = [g(x) for x in xs]
def b = [g(x) + h(x) for x in xs]
def looped(x) = len([y for y in range(x)])
def k(x) = x
def value_of(x) = sort_by([x, 1], k)
def down(n) = if n <= 0 then 0 else down(n - 1) + 1
query main = [a, b, [looped(x) for x in xs], [looped(x) for x in ys], value_of(2), down(3), down(2)]
"""


def test_a_light_function_named_in_many_places_is_left_without_its_memo_and_a_run_past_the_budget_is_the_references() -> None:
    """`g` and `h` are named in several places, so the memo would answer: the backend leaves it out
    all the same, as their code has no loop and calls only each other (``memos.Memos.light``), and
    computes them again where the reference's memo answers. Its steps are then more than the
    reference's; the runs it stops at the budget are made again by the reference: the same answers
    and errors, with the same steps. A function with a loop, one on a cycle and one named as a value
    keep their memo."""
    path = _ROOT / "light.rules"
    path.write_text(LIGHT)
    rs = load_ruleset(path, use_cache=False)
    assert rs.ok, [str(d) for d in rs.diagnostics]
    backend = rs.backend(typed=False)
    unit = {u.name: u for u in rs.program.units.values()}
    assert backend.memos.memo_free(unit["g"]) and backend.memos.memo_free(unit["h"])
    assert not any(backend.memos.once(unit[n]) for n in ("g", "h"))  # (named more than once: the rule before)
    assert not any(backend.memos.memo_free(unit[n]) for n in ("looped", "down", "k"))
    assert [n for n in ("g", "h", "looped", "down") if "memos" in "".join(backend.source_of(unit[n]))] == ["looped", "down"]
    full = steps(rs, {}, {"query": "main"}, "reference")
    assert isinstance(full, int) and steps(rs, {}, {"query": "main"}, "backend") > full
    for budget in (full, full - 1, full // 2, 5):
        for state in ({}, {"xs": [5, 5, 0], "ys": [1]}):
            options = {"query": "main", "budget": budget}
            assert outcome(rs, state, options, "backend") == outcome(rs, state, options, "reference"), budget
            assert steps(rs, state, options, "backend") == steps(rs, state, options, "reference"), budget


def test_light_functions_that_call_each_other_twice_grow_a_run_by_a_bounded_factor() -> None:
    """`f0(x) = f1(x) + f1(x)`, ... `f29(x) = x + len(xs)`: the reference computes each once, a backend without
    every memo would compute `f29` 2**29 times. A function is light only if it computes at most
    ``LIGHT`` nodes, counting those of the light functions it calls and not those of the ones that
    keep their memo: along the chain, every few functions keep theirs, and the backend's count stays
    a small multiple of the reference's."""
    path = _ROOT / "chain.rules"
    path.write_text("".join(f"def f{i}(x) = f{i + 1}(x) + f{i + 1}(x)\n" for i in range(29))
                    + "input xs: list[int] at \"/xs\" default [1]\ndef f29(x) = x + len(xs)\nquery main = f0(1)\n")
    rs = load_ruleset(path, use_cache=False)
    assert rs.ok, [str(d) for d in rs.diagnostics]
    backend = rs.backend(typed=False)
    chain = sorted((u for u in rs.program.units.values() if u.name[0] == "f"), key=lambda u: int(u.name[1:]))
    free = [backend.memos.memo_free(u) for u in chain]
    assert free[29] and 5 < free.count(False) < 25
    full = steps(rs, {}, {"query": "main"}, "reference")
    assert isinstance(full, int) and full < steps(rs, {}, {"query": "main"}, "backend") <= memos.LIGHT * full
    assert outcome(rs, {}, {"query": "main"}, "backend") == ("ok", 2 ** 30)


def test_code_shared_by_a_variant_is_light_or_not_by_what_its_names_mean_in_each_program() -> None:
    """A variant shares its base's code (``astcache``); whether a function is light also depends on what its
    names mean, which is the program's: `g`'s code is the same in both, light in the base, where `h` is small,
    not in the variant, whose `h` is light but too large to be computed again inside `g`. Asked in either
    order, the answers are the same, and each program's runs are the reference's."""
    terms = " + ".join(["x"] * ((memos.LIGHT - 2) // 2))  # (`h` of LIGHT - 3 nodes: `g` with it is past LIGHT)
    (_ROOT / "shared_base.rules").write_text(
        'input xs: list[int] at "/xs" default [3, 3, 1]\ndef h(x) = x + 1\ndef g(x) = h(x) * 2\n'
        "query main = [g(x) + g(x) for x in xs]\n")
    (_ROOT / "shared_variant.rules").write_text(f'extends "shared_base.rules"\noverride def h(x) = {terms}\n')
    answers = {}
    for order in (("shared_base", "shared_variant"), ("shared_variant", "shared_base"), ("shared_base", "shared_variant")):
        for name in order:
            rs = load_ruleset(_ROOT / f"{name}.rules", use_cache=False)
            assert rs.ok, [str(d) for d in rs.diagnostics]
            chosen = B.Backend(rs.program).memos
            unit = {u.name: u for u in rs.program.units.values()}
            found = (chosen.light(unit["h"]) is not None, chosen.light(unit["g"]) is not None, chosen.memo_free(unit["g"]))
            assert answers.setdefault(name, found) == found, (name, order)
            for budget in (None, 5):
                options = {"query": "main", **({} if budget is None else {"budget": budget})}
                assert outcome(rs, {}, options, "backend") == outcome(rs, {}, options, "reference"), (name, budget)
    assert answers == {"shared_base": (True, True, True), "shared_variant": (True, False, False)}


DECIDED = """input z: int at "/z" default 0
def mk(n) = {a: n + z}
decision d(x) cite "D" = e(x.a)
decision e(k) cite "D" = not d(mk(k))
cycle d cite "D" {
  otherwise => settle cycle as true cite "D"
}
cycle e cite "D" {
  otherwise => settle cycle as false cite "D"
}
query main = d(mk(1))
query later = [e(1), d(mk(1))]
"""


def test_a_decision_given_a_record_a_light_function_makes_is_the_references() -> None:
    """`mk(1)` twice is one record (the memo), so `d` of it, read again inside its own resolution, is
    a guess: a cycle of `d` and `e`, settled by `d`'s policy (true). Two records would make another
    `d` and a cycle settled by `e`'s (false). `mk` is light and its memo left out (no function that
    rolls sees the record): a decision given a record then sends the run to the reference
    (``memos.Memos.guards``), which answers as the memo does."""
    path = _ROOT / "decided.rules"
    path.write_text(DECIDED)
    rs = load_ruleset(path, use_cache=False)
    assert rs.ok, [str(d) for d in rs.diagnostics]
    for query in ("main", "later"):
        for state in ({}, {"z": 1}):
            options = {"query": query, "seed": 0}
            assert outcome(rs, state, options, "backend") == outcome(rs, state, options, "reference"), (query, state)
    assert outcome(rs, {}, {"query": "main"}, "reference") == ("ok", True)
    backend = rs.backend(typed=False)
    mk = next(u for u in rs.program.units.values() if u.name == "mk")
    assert backend.memos.memo_free(mk) and backend.memos.guards()


# (`opaque(...)`: a value the check does not know to be no collection, which it would refuse, C004)
FOLDED = ["[1, 2, 3]", "set([3, 1, 2])", "{\"b\" => 1, \"a\" => 2}", "opaque(\"abc\")", "[x * 2 for x in [1, 2, 3]]",
          "opaque(none)", "opaque(5)",
          "[1, none, 3]", "[[1], [2, 3]]"]


@pytest.mark.parametrize("items", FOLDED)
@pytest.mark.parametrize("budget", [2, 5, 9, 5_000])
def test_a_fold_is_the_builtins_on_both_engines(items: str, budget: int) -> None:
    """`fold(items, start, fn(acc, x) => ...)`: the same value, the same errors at the same places (a
    failure in the function it calls is the built-in's), steps that bound the reference's, whatever the
    items are (a set and a map in their order, a text, a generator)."""
    path = _ROOT / "folded.rules"
    path.write_text(f"def opaque(x) = x\nquery main = fold({items}, [], fn(acc, x) => append(acc, str(x) + str(len(acc))))\n")
    rs = load_ruleset(path, use_cache=False)
    assert rs.ok, [str(d) for d in rs.diagnostics]
    options = {"query": "main", "budget": budget}
    assert outcome(rs, {}, options, "backend") == outcome(rs, {}, options, "reference")
    assert bounds(steps(rs, {}, options, "backend"), steps(rs, {}, options, "reference"))


WALKED_ITEMS = ["[true, false, true]", "[true, true]", "[false, \"stop\", true]", "[1, 0, \"a\", none, [], \"stop\"]",
                "set([3, 1, 2])", "{\"b\" => true, \"a\" => false}", "\"abc\"", "none", "[1, 3, 5]"]
WALKED_ELEMS = ["x", "(if x == \"stop\" then x.a else x)", "(roll(1d3) > 1)", "(if x == 2 then roll(1d3) else x)",
                "(if x == 3 then x / 2 else x)"]


@pytest.mark.parametrize("name", ["any", "all", "count", "sum"])
@pytest.mark.parametrize("elem", WALKED_ELEMS)
@pytest.mark.parametrize("items", WALKED_ITEMS)
def test_a_builtin_given_a_comprehension_walks_it_as_the_reference_does(name: str, elem: str, items: str) -> None:
    """`any`, `all`, `count` and `sum` of a comprehension on the backend: the same items evaluated (a failing item or a die
    after the one it stops at is not), the same truth of an item, the same errors at the same places (an item's,
    the built-in's own on an item it refuses, the loop's), steps that bound the reference's, at every budget, with
    seeded and exact dice (a die after the call shows how many the walk rolled)."""
    path = _ROOT / "walked.rules"
    path.write_text(f"input items: any at \"/items\" default {items}\n"  # (of no kind the checker knows)
                    f"query main = [{name}({elem} for x in items if x != 0), roll(1d3)]\n")
    rs = load_ruleset(path, use_cache=False)
    if name == "sum" and "roll(1d3) >" in elem:  # (a sum of truth values: refused by the checker)
        assert [d.code for d in rs.diagnostics] == ["C004"]
        return
    assert rs.ok, [str(d) for d in rs.diagnostics]
    for options in [{"query": "main", "seed": 1, "budget": budget} for budget in (1, 2, 3, 4, 6, 9, 5_000)] + [{"exact": True}]:
        assert outcome(rs, {}, options, "backend") == outcome(rs, {}, options, "reference"), options
        if "budget" in options:
            assert bounds(steps(rs, {}, options, "backend"), steps(rs, {}, options, "reference")), options


LOOPED_ITEMS = ["[3, 1, 2, 3]", "set([3, 1, 2])", "{\"b\" => 1, \"a\" => 2}", "\"abc\"", "none", "[2, \"x\", none]",
                "[q * 2 - 3 for q in [1, 2, 3]]"]
LOOPED_BODIES = [
    "x",
    "(if x == 2 then x.a else x)",  # an error in the lambda's body at one item, located where it is written
    "(if x == 3 then len(x) else 1)",  # a built-in failing in it: its own error at its own call
    "[x, roll(1d3)]",  # a die in it, a key that is a collection (charged its walk)
    "(let h = fn(y) => [y, x]; h(1))",  # a lambda in it keeping the item of its loop
    "any(y == x for y in [3, 2, 9, 9])",  # a walk in it that stops early
    "[z for z in [x, x]]",
]
LOOPED_CALLS = {"fold": "fold({items}, [], fn(acc, x) => append(acc, [{body}, len(acc)]))",
                "scan": "scan({items}, 0, fn(acc, x) => (let h = fn(y) => acc; [h(0), {body}]))",
                "group_by": "group_by({items}, fn(x) => {body})", "index_by": "index_by({items}, fn(x) => {body})",
                "sorted": "sorted({items}, fn(x) => {body})", "sort_by": "sort_by({items}, fn(x) => {body})",
                "max_by": "max_by({items}, fn(x) => {body})", "min_by": "min_by({items}, fn(x) => {body}, 7)",
                # (a die given as an argument: forced, as any call forces its arguments)
                "min_by ": "min_by(if roll(1d2) == 1 then {items} else roll(1d9), fn(x) => {body}, [roll(1d5)])"}


@pytest.mark.parametrize("name", list(LOOPED_CALLS))
@pytest.mark.parametrize("body", LOOPED_BODIES)
@pytest.mark.parametrize("items", LOOPED_ITEMS)
def test_a_builtin_given_a_lambda_at_its_call_loops_as_the_reference_calls_it(name: str, body: str, items: str) -> None:
    """A built-in given a lambda written at its call is a loop of the generated code (``backend.looped``): the
    same value, the same errors at the same places (the body's own, a built-in's in it, the built-in's refusal
    of its items or keys), steps that bound the reference's at every budget through the loop, the same rolls
    in seeded and exact runs (a die after the call shows how many the loop rolled), and lambdas made in the
    body keeping the item they were made at."""
    path = _ROOT / "looped.rules"
    call = LOOPED_CALLS[name].format(items="items", body=body)
    path.write_text(f"input items: any at \"/items\" default {items}\n"  # (of no kind the checker knows)
                    f"query main = [{call}, roll(1d6)]\n")
    rs = load_ruleset(path, use_cache=False)
    assert rs.ok, [str(d) for d in rs.diagnostics]
    budgets = (1, 2, 3, 5, 8, 13, 21, 34, 5_000)
    for options in [{"query": "main", "seed": 3, "budget": budget} for budget in budgets] + [{"exact": True}]:
        assert outcome(rs, {}, options, "backend") == outcome(rs, {}, options, "reference"), options
        if "budget" in options:
            assert bounds(steps(rs, {}, options, "backend"), steps(rs, {}, options, "reference")), options
    source = "\n".join(rs.backend(typed=False).source_of(rs.program.units[(rs.program.entry.key, "main")]))
    assert source.count("def _l") == call.count("fn(") - 1, "the lambda given the built-in is no function made"


RECURSIVE_FOLDS = ["def walk(n) = fold(range(n), [n], fn(acc, i) => concat(acc, walk(i)))",
                   "def walk(n) = fold(range(n), set([]), fn(acc, i) => union(acc, if i == 2 then set([i]) else walk(i)))",
                   "def walk(n) = if n == 0 then 0 else 1 + count(walk(i) > 0 or i == 3 for i in range(n))",
                   "def walk(n) = group_by(range(n), fn(i) => if i == 0 then 0 else len(keys(walk(i))))"]


@pytest.mark.parametrize("definition", RECURSIVE_FOLDS)
@pytest.mark.parametrize("n", [3, 6])
def test_a_loop_of_a_recursive_definition_is_the_references_at_every_budget_and_depth(definition: str, n: int) -> None:
    """A recursive definition calling itself from a built-in's loop (as `route_seas_from` does from its `fold`):
    the same value, a budget or a depth limit reached at the same place as the reference's, steps that bound it."""
    path = _ROOT / "looped_deep.rules"
    path.write_text(f"{definition}\nquery main = walk({n})\n")
    rs = load_ruleset(path, use_cache=False)
    assert rs.ok, [str(d) for d in rs.diagnostics]
    for budget in (1, 4, 9, 17, 40, 90, 200, 500, 5_000_000):
        options = {"query": "main", "budget": budget}
        assert outcome(rs, {}, options, "backend") == outcome(rs, {}, options, "reference"), options
        assert bounds(steps(rs, {}, options, "backend"), steps(rs, {}, options, "reference")), options


TUPLE_KEYS = ['("a", "b")', '("a", 1)', '(1, 2, 3)', '("a", true)', '(("a", "b"), "c")', '(["a"], "b")', '("z", "q")']


@pytest.mark.parametrize("key", TUPLE_KEYS)
@pytest.mark.parametrize("coll", ['set([("a", "b"), ("a", 1), (1, 2, 3)])', '{("a", "b") => 1, (("a", "b"), "c") => 2}',
                                  '[("a", "b"), ("a", true)]', "none"])
@pytest.mark.parametrize("budget", [3, 6, 40, 5_000])
def test_a_tuple_looked_up_in_a_collection_costs_alike(key: str, coll: str, budget: int) -> None:
    """`(a, b) in keys` has a fast path in the backend (a key of texts and numbers in a set or map):
    the same answer and errors as the reference, whatever the key holds and the budget."""
    path = _ROOT / "tuple_in.rules"
    path.write_text(f"def keys = {coll}\nquery main = [{key} in keys, {key} not in keys, len([1, 2])]\n")
    rs = load_ruleset(path, use_cache=False)
    assert rs.ok, [str(d) for d in rs.diagnostics]
    options = {"query": "main", "budget": budget}
    assert outcome(rs, {}, {"budget": budget}, "backend") == outcome(rs, {}, {"budget": budget}, "reference")
    assert bounds(steps(rs, {}, options, "backend"), steps(rs, {}, options, "reference"))


MEMO_ARGS = ["1", "2 / 2", "4 / 2", "1 / 2", "true", "false", "0", "none", "\"1\"", "\"\"", "r", "{a: 1}", "[1]",
             "set([1])", "1180591620717411303424", "(1, 2)", "(r, 1)"]


@pytest.mark.parametrize("b", MEMO_ARGS)
@pytest.mark.parametrize("a", MEMO_ARGS)
def test_a_functions_memo_tells_apart_what_the_reference_tells_apart(a: str, b: str) -> None:
    """A function that rolls is computed once per memo key (``reference.freeze``): called with `a`, `b`
    and `a` again, the same rolls on both engines, so the same arguments share a key in generated code
    exactly when they do in the reference (a whole fraction is its integer; a truth value is no
    number; a record, collection or large number by itself; an equal record made elsewhere not)."""
    path = _ROOT / "memo_keys.rules"
    path.write_text(f"def f(x) = [roll(1d100), roll(1d100)]\ndef g(x, y) = [roll(1d100), roll(1d100)]\n"
                    f"query main = let r = {{a: 1}}; [f({a}), f({b}), f({a}), g({a}, {b}), g({b}, {a}), g({a}, {b})]\n")
    rs = load_ruleset(path, use_cache=False)
    assert rs.ok, [str(d) for d in rs.diagnostics]
    options = {"query": "main", "seed": 7}
    got = outcome(rs, {}, options, "backend")
    assert got == outcome(rs, {}, options, "reference")
    fresh = ("{a: 1}", "[1]", "set([1])", "(1, 2)", "(r, 1)")  # (made again where written: another identity)
    assert got[0] == "ok" and (a in fresh or got[1][0] == got[1][2]) and (a in fresh or b in fresh or got[1][3] == got[1][5])


def test_no_value_but_a_record_has_a_get() -> None:
    """Generated code reads a field as ``x.get(name)``, any other value going to the error of
    ``reference.field_of`` on its AttributeError: so no value of the language but a record (or map)
    may have a ``get``."""
    import types
    from fractions import Fraction

    from validator.engine import backend as B
    from validator.lib.builtins import BUILTINS, DiceSpec
    from validator.lib.runtime import RandomValue

    path = _ROOT / "functions.rules"
    path.write_text("def f(x) = x\nquery main = [f, fn(y) => y, len]\n")
    rs = load_ruleset(path, use_cache=False)
    (unit_value, lam, builtin), _ = R.run_query(rs.program, {}, "main", [], SeededDice(0), engine=rs.backend(typed=False))
    values = [
        "text", 1, True, None, Fraction(1, 2), 1.5, [1], (1, 2), frozenset([1]), {1}, DiceSpec(2, 6),
        RandomValue(None, {1: Fraction(1)}, 0, "1d6"), (x for x in []), types.FunctionType(compile("0", "", "eval"), {}),
        B._Forcing(lambda ctx: 0), R.UnitFunction(rs.program.query("main"), rs.backend(typed=False).interp),
        R.BuiltinFunction(BUILTINS["len"], None, None), unit_value, lam, builtin,
    ]
    assert [v for v in values if hasattr(v, "get")] == []
    assert hasattr({}, "get")


# Python refuses source past its own limits (20 nested loops, 100 nested blocks) where the language
# has none: the backend cannot write such a definition, and the run is the reference's.
UNWRITABLE = {
    "loops": "def many = [x0" + "".join(f" for x{i} in [1, 2]" for i in range(3)) +
             "".join(f" for y{i} in [1]" for i in range(22)) + " if roll(1d6) > 3]\n",
    "blocks": "def many = " + "if true then " * 110 + "[roll(1d6)]" + " else []" * 110 + "\n",
}
ROLLS = {"loops": 9, "blocks": 2}  # the dice a run of each rolls (a script gives no more: E014)


@pytest.mark.parametrize("shape", sorted(UNWRITABLE))
@pytest.mark.parametrize("options", [{"seed": 3}, {"dice": [6, 1, 5, 2, 4, 3, 6, 6, 6, 1, 1]}, {"exact": True}],
                         ids=["seeded", "scripted", "exact"])
def test_a_run_the_backend_cannot_write_is_the_references(shape: str, options: dict[str, Any]) -> None:
    """The query rolls a die first (so a run made again from the start must roll the same dice), then
    reaches a definition the backend cannot write: the answer is the reference's, not an error."""
    from validator.engine import backend as B
    from validator.lib.runtime import Unwritable

    if "dice" in options:
        options = {"dice": options["dice"][:ROLLS[shape]]}
    path = _ROOT / f"unwritable_{shape}.rules"
    path.write_text(UNWRITABLE[shape] + "query main = [roll(1d6), many, len(many)]\n")
    rs = load_ruleset(path, use_cache=False)
    assert rs.ok, [str(d) for d in rs.diagnostics]
    with pytest.raises(Unwritable):  # what the generated code alone says
        B.Backend(rs.program).function(rs.program.query("main"))(R.Run({}, SeededDice(0), 10**6))
    fast = outcome(rs, {}, options, "backend")
    assert fast[0] == "ok", fast
    assert fast == outcome(rs, {}, options, "reference")
    assert fast == outcome(rs, {}, options, "backend")  # (and again: the unit is refused at once now)


# Whole games reach what single-phase cases do not (civil disorder, retreats after a convoyed attack,
# builds on a variant map, the game's end, the random-orders generator): each phase of a game the
# backend plays is played again by the reference, every query compared, steps bounded.
GAME_RULESETS = ["standard.rules", "ancmed.rules", "modern.rules"]


@pytest.mark.parametrize("name", GAME_RULESETS)
def test_a_whole_game_is_the_same_on_both_engines(name: str) -> None:
    rs = load_ruleset(Path(__file__).resolve().parent.parent / "rulesets" / "diplomacy" / name)
    assert rs.ok, rs.diagnostics

    def both(state: Any, query: str, args: list[Any] | None = None) -> Any:
        options = {"query": query, "args": args}
        fast = outcome(rs, state, options, "backend")
        assert fast == outcome(rs, state, options, "reference"), (name, query, state.get("phase"))
        assert bounds(steps(rs, state, options, "backend"), steps(rs, state, options, "reference")), \
            (name, query, state.get("phase"))
        assert fast[0] == "ok", fast
        return fast[1]

    state = both({"phase": {"season": "spring", "year": 1, "type": "movement"}, "units": [], "orders": []}, "start_state")
    kinds = set()
    for i in range(9):  # three game-years at most: movement, retreat and adjustment phases
        orders = both(state, "random_orders", [i])
        played = {**state, "orders": orders}
        kinds.add(played["phase"]["type"])
        assert both(played, "validate_state") == []
        step = both(played, "advance")
        if step["end"] is not None:
            break
        state = step["next"]
    assert {"movement", "adjustment"} <= kinds, kinds


@pytest.mark.parametrize("path", sorted((REPO / "rulesets").rglob("*.rules")), ids=lambda p: p.stem)
def test_every_unit_of_every_bundled_ruleset_is_written(path: Path) -> None:
    """The backend gives none of the bundled rulesets' units up to the reference (``Unwritable``): such a
    unit runs right, but slowly, and the reason (a compile error of generated code: ``loud_writing``) is a bug."""
    rs = load_ruleset(path)
    assert rs.ok, [str(d) for d in rs.diagnostics if d.is_error]
    written, refused = given_up(rs)
    assert written > 0 and not refused, refused


@pytest.mark.parametrize("shape", sorted(UNWRITABLE))
def test_writing_every_definition_up_front_refuses_what_cannot_be_written(shape: str) -> None:
    """``Backend.write_all`` (bench/full_games.py writes every definition before it measures) meets a
    definition the backend cannot write as a first call would: refused, the run the reference's."""
    path = _ROOT / f"unwritable_all_{shape}.rules"
    path.write_text(UNWRITABLE[shape] + "query main = [roll(1d6), many, len(many)]\n")
    rs = load_ruleset(path, use_cache=False)
    assert rs.ok, [str(d) for d in rs.diagnostics]
    assert rs.backend(typed=False).write_all() > 0
    assert rs.backend(typed=False).write_all() == 0  # nothing left to write
    fast = outcome(rs, {}, {"seed": 3}, "backend")
    assert fast[0] == "ok", fast
    assert fast == outcome(rs, {}, {"seed": 3}, "reference")


def test_a_game_plays_alike_with_its_code_written_up_front_or_at_first_calls() -> None:
    """The same phases, results and steps whether each definition is written at its first call or all
    of them before the first run (``Backend.write_all``)."""
    path = Path(__file__).resolve().parent.parent / "rulesets" / "diplomacy" / "standard.rules"
    lazy, eager = load_ruleset(path, use_cache=False), load_ruleset(path, use_cache=False)
    assert eager.backend(typed=True).write_all() > 100
    state = lazy.run({"phase": {"season": "spring", "year": 1, "type": "movement"}, "units": [], "orders": []},
                     "start_state")
    for i in range(10):
        played = {**state, "orders": lazy.run(state, "random_orders", [i])}
        options = {"query": "advance"}
        step = outcome(lazy, played, options, "backend")
        assert step == outcome(eager, played, options, "backend"), played["phase"]
        assert steps(lazy, played, options, "backend") == steps(eager, played, options, "backend")
        if step[1]["end"] is not None:
            break
        state = step[1]["next"]


def test_a_set_a_comprehension_walks_stays_a_set_in_its_body(tmp_path: Path) -> None:
    """A set is walked in the order of values (a sorted copy): the name that holds it still holds the
    set, so that `x in fs` in the loop is a set's test on both engines."""
    (tmp_path / "ruleval.toml").write_text("")
    path = tmp_path / "walk.rules"
    path.write_text('ruleset t.walk "walk"\ndef f(fs) = [x for x in fs if x in fs and any(y in fs for y in fs)]\n'
                    'query main = f({"c", "a", "b"})\n')
    rs = load_ruleset(path, use_cache=False)
    options: dict[str, Any] = {"query": "main"}
    assert outcome(rs, {}, options, "backend") == outcome(rs, {}, options, "reference") == ("ok", ["a", "b", "c"])
    assert bounds(steps(rs, {}, options, "backend"), steps(rs, {}, options, "reference"))


@settings(max_examples=1000 if LONG else 120, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
@given(case=documented())
def test_each_engine_gives_what_the_docs_say(case: tuple[str, Any, list[int]]) -> None:
    """Not the engines against each other but each against docs/language.md: the expected value is
    computed by ``programs.documented`` from the docs alone (dice by brute force over every face), so
    a misreading both engines share fails here."""
    import json
    from fractions import Fraction

    text, want, dice = case
    if want is None:  # (too many dice to enumerate by brute force)
        return
    path = _ROOT / "documented.rules"
    path.write_text(f'ruleset t.docs "docs"\nquery main = {text}\n')
    rs = load_ruleset(path, use_cache=False)
    assert rs.ok, (text, [str(d) for d in rs.diagnostics if d.is_error])
    for engine in ("reference", "backend"):
        if not dice:
            assert rs.run({}, engine=engine) == want, (engine, text)
            continue
        out = rs.run({}, exact=True, engine=engine)
        got = {json.dumps(o["result"], sort_keys=True): Fraction(o["probability"]) for o in out["outcomes"]}
        assert got == want, (engine, text)


@pytest.mark.parametrize("call", ["sort_by(xs, fn(q) => 0)", "sorted(xs, fn(q) => \"k\")", "group_by(xs, fn(q) => 1)",
                                  "index_by(xs, fn(q) => none)", "sort_by(xs, fn(q) => [1, 2])"])
def test_a_key_written_as_a_literal_is_a_loop_of_the_generated_code(call: str) -> None:
    """A key function whose body is a literal: the loop the backend writes charges the key where the
    built-in would, and writes no assignment to the literal (which Python refuses to compile: the
    backend gave up the unit, E005, and a run went to the reference)."""
    path = _ROOT / "literal_key.rules"
    path.write_text(f'input xs: any at "/xs" default [3, 1, 2]\nquery main = {call}\n')
    rs = load_ruleset(path, use_cache=False)
    assert rs.ok, [str(d) for d in rs.diagnostics]
    unit = rs.program.query("main")
    for xs in ([], [3, 1, 2]):
        runs = [R.Run({"xs": xs}, SeededDice(0), 10**6) for _ in range(2)]
        values = [interp.run_query(run, unit, []) for interp, run in zip((R.Interpreter(rs.program),
                                                                        rs.backend(typed=False)), runs)]
        assert values[0] == values[1] and runs[1].steps >= runs[0].steps, (values, [r.steps for r in runs])
