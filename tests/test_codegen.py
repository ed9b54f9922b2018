"""The generated tier (validator/codegen.py) against the closures it replaces: the same values, the
same diagnostics, on every bundled case and on generated Diplomacy turns; and the generated source
holds nothing of the ruleset but what the generator wrote (names it made, no ruleset text)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from validator import load_ruleset
from validator.api import RunError, Ruleset
from validator.codegen import _HELPERS, Generator, Unsupported, pin_closures, tier_up
from validator.testing import _state_of, load_suite

ROOT = Path(__file__).resolve().parent.parent
SUITE = load_suite([str(ROOT / "tests" / "cases")])


def pair(path: str | Path) -> tuple[Ruleset, Ruleset]:
    """Two separately loaded copies of a ruleset: one kept on closures, one generated from the start."""
    slow = load_ruleset(str(path), use_cache=False)
    fast = load_ruleset(str(path), use_cache=False)
    pin_closures(slow.program)
    if fast.ok:
        tier_up(fast.program)
    return slow, fast


def outcome(rs: Ruleset, state: Any, **kw: Any) -> Any:
    """A run's JSON result, or its diagnostics (code, message, location) when it fails."""
    try:
        return {"result": rs.run(state, **kw)}
    except RunError as exc:
        return {"error": [(d.code, d.message, str(d.span), d.pointer) for d in exc.diagnostics]}


def both_tiers(path: Path, text: str) -> tuple[Ruleset, Ruleset, Any]:
    """A ruleset written to ``path`` on both tiers (``pair``), with the outcome of `query main` on
    an empty state, the same on both."""
    path.write_text(text)
    slow, fast = pair(path)
    got = outcome(fast, {})
    assert got == outcome(slow, {}), got
    return slow, fast, got


def agreed(path: Path, text: str, **kw: Any) -> Any:
    """The outcome of `query main` of a ruleset written to ``path``, the same on both tiers."""
    path.write_text(text)
    slow, fast = pair(path)
    assert slow.ok, [d.message for d in slow.diagnostics]
    got = outcome(fast, {}, **kw)
    assert got == outcome(slow, {}, **kw)
    return got


_PAIRS: dict[str, tuple[Ruleset, Ruleset]] = {}


def cached_pair(path: str) -> tuple[Ruleset, Ruleset]:
    if path not in _PAIRS:
        _PAIRS[path] = pair(path)
    return _PAIRS[path]


def budgets_agree(slow: Ruleset, fast: Ruleset, state: Any, high: int = 100_000, same_place: bool = True,
                  **kw: Any) -> tuple[int, int]:
    """The largest budget the closures run out at and the smallest they finish in (found by halving
    below ``high``), at both of which the generated ruleset gives the closures' outcome. Not
    ``same_place``: an overrun may be located apart (a generated run that runs out is run again on
    its ruleset's closures, whose values kept for the program's life are their own)."""
    low = 1
    assert "result" in outcome(slow, state, budget=high, **kw)
    while high - low > 1:
        mid = (low + high) // 2
        if "result" in outcome(slow, state, budget=mid, **kw):
            high = mid
        else:
            low = mid
    for budget in (low, high):
        got, want = outcome(fast, state, budget=budget, **kw), outcome(slow, state, budget=budget, **kw)
        if not same_place and "error" in want:
            got, want = [d[0] for d in got.get("error", [])], [d[0] for d in want["error"]]
        assert got == want, budget
    return low, high


def on_closures_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                      text: str) -> tuple[Ruleset, Ruleset, Any, dict[str, Any]]:
    """A ruleset's two copies, one kept on closures; the other has run `main` once on closures (its
    functions counted their memo's answers) and is not generated yet. With that first outcome, the
    same on both, and the second copy's units by name."""
    from validator import codegen

    monkeypatch.delenv("RULEVAL_CODEGEN", raising=False)
    monkeypatch.setattr(codegen, "HOT_SECONDS", 1e9)
    path = tmp_path / "main.rules"
    path.write_text(text)
    slow, fast = load_ruleset(str(path), use_cache=False), load_ruleset(str(path), use_cache=False)
    pin_closures(slow.program)
    first = outcome(fast, {})
    assert first == outcome(slow, {}) and fast.program.generated is None
    return slow, fast, first, {k[1]: u for k, u in fast.program.units.items()}


def test_suite_has_cases() -> None:
    assert len(SUITE.cases) > 200 and not SUITE.diagnostics


@pytest.mark.parametrize("case", SUITE.cases,
                         ids=[f"{Path(c.file).parent.name}/{Path(c.file).stem}::{c.id}" for c in SUITE.cases])
def test_case_agrees_on_both_tiers(case) -> None:
    slow, fast = cached_pair(case.ruleset)
    if not slow.ok:
        assert not fast.ok
        return
    data = case.data
    kw = dict(query=data.get("query", "main"), args=data.get("args"), seed=data.get("seed"), dice=data.get("dice"),
              exact=bool(data.get("exact") or data.get("probabilities")))
    state = _state_of(case)
    assert outcome(fast, state, **kw) == outcome(slow, state, **kw)
    # the run did run generated code, and the generator took every unit it met
    assert fast.program.generated is not None and fast.program.generated["generated"]
    assert not fast.program.generated["kept"], fast.program.generated["kept"]
    # explanations (traced runs) hand over to the closures, also from a generated ruleset
    if not kw["exact"]:
        assert outcome(fast, state, explain=True, **kw) == outcome(slow, state, explain=True, **kw)


def test_generated_diplomacy_turns_agree() -> None:
    slow, fast = pair(ROOT / "rulesets" / "diplomacy" / "standard.rules")
    for seed in range(40):
        state = slow.run({}, query="generate", args=[seed], validate=False)
        assert fast.run({}, query="generate", args=[seed], validate=False) == state
        assert outcome(fast, state) == outcome(slow, state), seed
    # only what the runs called was generated, and nothing was left on closures
    record = fast.program.generated
    assert record is not None and not record["kept"]
    assert "move_ok" in record["generated"] and "adjustment_result" not in record["generated"]


def _budget_cases() -> list[Any]:
    """A generated Diplomacy turn, and a case of each other bundled family (one with scripted dice)."""
    picks: list[Any] = [("diplomacy/standard.rules", None)]
    for name, dice in (("jomini/re.rules", False), ("jomini/am.rules", False), ("his/his.rules", True)):
        picks.append((name, next(c for c in SUITE.cases if c.ruleset.endswith(name) and bool(c.data.get("dice")) == dice
                                 and "query" not in c.data and not c.data.get("exact"))))
    return picks


@pytest.mark.parametrize("ruleset, case", _budget_cases(), ids=[name for name, _ in _budget_cases()])
def test_a_budget_stops_both_tiers_at_the_same_step(ruleset: str, case: Any) -> None:
    """Generated code may charge more steps than the closures (a stretch's steps at its start, a branch
    not taken included), never fewer: at the smallest budget the closures finish in, and one step
    below it, both tiers give the same outcome (a run of generated code that runs out is run again on
    closures)."""
    slow, fast = pair(ROOT / "rulesets" / ruleset)
    if case is None:
        state, kw = slow.run({}, query="generate", args=[7], validate=False), {}
    else:
        state, kw = _state_of(case), {"dice": case.data.get("dice"), "seed": case.data.get("seed")}
    low, high = budgets_agree(slow, fast, state, 5_000_000, **kw)
    assert "error" in outcome(fast, state, budget=low, **kw) and "result" in outcome(fast, state, budget=high, **kw)
    assert fast.program.generated is not None and fast.program.generated["generated"]


def test_a_functions_call_step_is_charged_by_every_way_it_is_called(tmp_path: Path) -> None:
    """A generated function leaves its call's step to its caller: generated code charges it with its
    own steps, and the function's ``fn`` charges it when the function is called as a value (given to
    a built-in, kept in a record and called). At the closures' smallest sufficient budget and one
    step below it, both tiers give the same outcome: generated code never charges fewer steps."""
    (tmp_path / "main.rules").write_text(
        "def inc(x) = x + 1\n"
        "def twice(f, x) = f(f(x))\n"
        "def key(x) = 0 - x\n"
        "def fs = {up: inc}\n"
        "def pick(x) = if x > 2 then inc(x) elif x > 1 then inc(inc(x)) else x\n"
        "query main = [twice(inc, 1), sorted([3, 1, 2], key), fs.up(5), [pick(x) for x in [1, 2, 3]],\n"
        "  sum(twice(inc, x) for x in [1, 2, 3, 4, 5, 6, 7, 8])]\n")
    slow, fast = pair(tmp_path / "main.rules")
    assert outcome(slow, {}) == outcome(fast, {}) == {"result": [3, [3, 2, 1], 6, [1, 4, 4], 52]}
    budgets_agree(slow, fast, {})


def test_a_value_kept_from_an_earlier_run_charges_its_steps(tmp_path: Path) -> None:
    """A state-free function's value, kept from an earlier run, charges the steps computing it took
    when a later run calls it again (closures: at its first call in the run; generated code: at every
    call, unchecked there, as the hit does no work). Where those steps pass the later run's budget,
    both tiers stop with E004, also when nothing after the call loops or recurs. (Located apart: a run
    of generated code that runs out is run again on its ruleset's closures, which keep values of their
    own and so compute this one again, running out inside its loop.)"""
    (tmp_path / "main.rules").write_text(
        "def slow_sum(n) = sum([x * x for x in range(n)])\n"
        "query main = slow_sum(300) + slow_sum(300)\n")
    slow, fast = pair(tmp_path / "main.rules")
    for rs in (slow, fast):
        assert outcome(rs, {}) == {"result": 2 * sum(x * x for x in range(300))}  # kept for the next runs
    for rs in (slow, fast):
        assert [d[0] for d in outcome(rs, {}, budget=100)["error"]] == ["E004"]
    assert "result" in outcome(fast, {}, budget=10_000)


@pytest.mark.parametrize("case_id", ["6.C.1", "6.F.14", "6.F.16"])  # a rotation, two convoy paradoxes
def test_decisions_resolve_in_generated_code(case_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """In a program with no dice, generated code resolves a decision itself (``Generator.resolver``)
    and hands over to the decision's ``resume`` only when the body's first value read a guess (a
    cycle, a paradox): the same outcome as on closures. The resolution's source holds only names the
    generator made and fixed ones, and no text."""
    from validator import codegen

    case = next(c for c in SUITE.cases if c.id == case_id)
    slow, fast = pair(case.ruleset)
    resumed: list[Any] = []
    for unit in fast.program.units.values():
        if unit.resume is not None:
            def counted(*args: Any, _resume: Any = unit.resume) -> Any:
                resumed.append(args[1])
                return _resume(*args)
            monkeypatch.setattr(unit, "resume", counted)
    state = _state_of(case)
    assert outcome(fast, state) == outcome(slow, state)
    assert resumed, "no decision of this case read a guess"
    gen = codegen.Generator(fast.program)
    for unit in fast.program.units.values():
        if unit.resume is None:
            continue
        source = gen.resolver_source(unit, gen.fresh("r"))
        assert '"' not in source and "'" not in source and "\\" not in source
        for ident in set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", source)):
            assert re.fullmatch(r"_[a-z]{1,2}\d+", ident) or ident in _HELPERS or ident in {
                "def", "ctx", "dkey", "if", "in", "return", "guesses", "deplist", "dguesses", "ddeps", "dold",
                "decisions", "dstate", "dvalue", "False", "resolving", "try", "dfirst", "finally", "get"}, ident


def test_a_run_on_closures_only_never_enters_generated_code() -> None:
    """A traced run (and a run again after an overrun) is on closures only: once a unit is generated,
    its `fn` sends such a run to the closure, so no generated function runs, not even its first line."""
    import sys

    slow, fast = pair(ROOT / "rulesets" / "diplomacy" / "standard.rules")
    state = slow.run({}, query="generate", args=[3], validate=False)
    fast.run(state)  # every unit the turn needs is now generated
    assert len(fast.program.generated["generated"]) > 40
    entered: list[str] = []

    def watch(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename.startswith("<ruleval"):
            entered.append(frame.f_code.co_filename)

    sys.setprofile(watch)
    try:
        traced = fast.run(state, explain=True, validate=False)  # (the state check is not traced)
    finally:
        sys.setprofile(None)
    assert not entered, sorted(set(entered))[:5]
    assert traced == slow.run(state, explain=True, validate=False)
    sys.setprofile(watch)
    try:
        fast.run(state, validate=False)
    finally:
        sys.setprofile(None)
    assert entered  # (the watch does see generated code when a run uses it)


def test_functions_whose_memo_never_served_run_without_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tiered up after runs on closures, a function whose calls there never found their value in the
    memo is generated without one; the results stay those of the closures."""
    from validator import codegen

    monkeypatch.delenv("RULEVAL_CODEGEN", raising=False)
    monkeypatch.setattr(codegen, "HOT_SECONDS", 1e9)  # on closures until tier_up below
    path = ROOT / "rulesets" / "diplomacy" / "standard.rules"
    slow = load_ruleset(str(path), use_cache=False)
    pin_closures(slow.program)
    fast = load_ruleset(str(path), use_cache=False)
    states = [slow.run({}, query="generate", args=[seed], validate=False) for seed in range(60)]
    for state in states[:30]:
        assert outcome(fast, state) == outcome(slow, state)
    assert fast.program.generated is None
    tier_up(fast.program)
    for state in states[30:]:
        assert outcome(fast, state) == outcome(slow, state)
    record = fast.program.generated
    by_name = {k[1]: u for k, u in fast.program.units.items()}
    assert record["unmemoized"] and all(by_name[n].memo_stats[1] == 0 for n in record["unmemoized"])  # type: ignore[index]
    # (these are each called from one place: written there, never generated on their own)
    assert "check_movement" in record["inlined"] and "order_result" in record["inlined"]
    assert not {"check_movement", "order_result", "goes_by_sea"} & set(record["unmemoized"])
    assert "dislodged" not in record["unmemoized"] and "read_loc" not in record["unmemoized"]
    # never served from the memo on closures and it may call itself (through the decisions), but only
    # the decision `dec` calls it: each call comes from evaluating one decision, which is kept
    move_ok = next(u for k, u in fast.program.units.items() if k[1] == "move_ok")
    assert move_ok.memo_stats is not None and move_ok.memo_stats[1] == 0
    assert move_ok.recursive and "move_ok" in record["inlined"]  # (into the decision's body, its one call)


def test_a_function_that_may_call_itself_keeps_its_memo_unless_only_decisions_call_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both functions below call themselves (through the decision `ok`, or directly) and never find a
    value in their memo on closures; `inner` is called by the decision alone (whose values are kept
    once resolved), `walk` by itself and the query, where a state not seen could call it over and
    over: only `inner` is generated without its memo. The results are the closures'."""
    slow, fast, first, units = on_closures_first(
        tmp_path, monkeypatch,
        'decision ok(x) cite "R1" = inner(x)\n'
        # (the lambda keeps it from being written into `ok`'s body)
        "def inner(x) = let pos = fn(y) => y > 0; x > 1 and (x > 5 or ok(x + 3)) and pos(x)\n"
        "def walk(r) = if r.n == 0 then 0 else (if ok(r.n) then 1 else 0) + walk({n: r.n - 1})\n"
        "query main = [walk({n: 60}), walk({n: 10})]\n")
    assert units["inner"].recursive and units["walk"].recursive
    assert units["inner"].memo_stats[0] >= 50 and units["inner"].memo_stats[1] == 0  # type: ignore[index]
    assert units["walk"].memo_stats[0] >= 50 and units["walk"].memo_stats[1] == 0  # type: ignore[index]
    record = tier_up(fast.program)
    assert outcome(fast, {}) == first
    assert "inner" in record["unmemoized"] and "walk" not in record["unmemoized"]


def test_a_function_whose_memo_never_answered_is_written_at_its_calls(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sources: list[str]) -> None:
    """`rec` is called once per item (its memo never answers on closures) and calls `place`, whose
    memo does: generated without its memo, `rec` is written at its call, still calling `place`; the
    values, and the outcome at the closures' smallest sufficient budget and one step below, are the
    closures'."""
    slow, fast, first, units = on_closures_first(
        tmp_path, monkeypatch,
        'def place(t) = [upper(x) for x in [t]][0]\n'
        "def rec(i, t) = let p = place(t); {i: i, at: p, again: place(t)}\n"
        'query main = [rec(i, if i % 2 == 0 then "a" else "b") for i in range(60)]\n')
    assert first["result"][3] == {"i": 3, "at": "B", "again": "B"}
    assert units["rec"].memo_stats[0] >= 50 and units["rec"].memo_stats[1] == 0  # type: ignore[index]
    assert units["place"].memo_stats[1] > 0  # type: ignore[index]
    tier_up(fast.program)
    assert outcome(fast, {}) == first
    main = next(src for src in sources if "'range'" in src)  # the query's
    assert "'again'" in main, main  # rec's record, built in the query's loop
    budgets_agree(slow, fast, {})


def test_a_function_named_in_one_place_is_written_there(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sources: list[str]) -> None:
    """Functions whose memo never answered on closures, each too large or too loopy to be written at
    every call: `row`, called from one place only, is written there (the generator `count` consumes
    is written as a loop); `twice`, called from two, and `keyed`, whose body holds a lambda, are not.
    The values, and the outcome at the closures' smallest sufficient budget and one step below, are
    the closures'."""
    body = "let xs = [x * i for x in range(4) if x != 2]; {i: i, sum: sum(xs), n: count(x > 3 for x in xs)}"
    slow, fast, first, units = on_closures_first(
        tmp_path, monkeypatch,
        f"def row(i) = {body}\n"
        f"def twice(i) = {body}\n"
        "def keyed(i) = sorted([i, 1, 2], fn(x) => 0 - x)\n"
        "query main = [[row(i), twice(i), twice(i + 100), keyed(i)] for i in range(60)]\n")
    assert first["result"][5][0] == {"i": 5, "sum": 20, "n": 2}
    for name in ("row", "twice", "keyed"):
        assert units[name].memo_stats[0] >= 50 and units[name].memo_stats[1] == 0  # type: ignore[index]
    record = tier_up(fast.program)
    assert outcome(fast, {}) == first
    assert "row" in record["inlined"] and "twice" not in record["inlined"] and "keyed" not in record["inlined"]
    main = next(src for src in sources if "'range'" in src)  # the query's
    assert "'sum'" in main and "'n'" in main, main  # row's record, built in the query's loop
    budgets_agree(slow, fast, {})


def test_functions_named_once_nest_at_their_calls_without_counting_toward_the_depth(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`d1` .. `d4`, each named in one place, are written each into its caller and `leaf` (small,
    named in two places) into `d4`: four levels deep, which functions whose code is repeated at each
    call may not reach. The values and budgets are the closures'."""
    slow, fast, first, _ = on_closures_first(
        tmp_path, monkeypatch,
        "def leaf(x) = x + 1\n"
        "def d4(i) = [leaf(i) + y for y in range(2)]\n"
        "def d3(i) = [d4(i), len([y for y in range(i % 3)])]\n"
        "def d2(i) = {v: d3(i), w: [z * i for z in range(2)]}\n"
        "def d1(i) = [d2(i) for _ in range(1)][0]\n"
        "query main = [d1(i) for i in range(60)] + [leaf(1)]\n")
    assert first["result"][4] == {"v": [[5, 6], 1], "w": [0, 4]}
    record = tier_up(fast.program)
    assert outcome(fast, {}) == first
    assert {"d1", "d2", "d3", "d4", "leaf"} <= set(record["inlined"]), record
    budgets_agree(slow, fast, {})


def test_an_error_in_a_function_written_at_its_one_call_is_located_in_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`row`, named in one place and written there, fails at its 56th call: the error is the closures',
    located in `row`'s body."""
    slow, fast, first, _ = on_closures_first(
        tmp_path, monkeypatch,
        "def row(i) = let xs = [x * i for x in range(3)]; {i: i, q: 100 / (i - 55), xs: xs}\n"
        "query main = [row(i) for i in range(60)]\n")
    (code, _, where, _), = first["error"]
    assert code == "E003" and where.endswith("main.rules:1:60"), first  # the division, in `row`
    record = tier_up(fast.program)
    assert outcome(fast, {}) == first
    assert "row" in record["inlined"]


def test_tiering_follows_time_spent_on_closures(monkeypatch: pytest.MonkeyPatch) -> None:
    from validator import codegen

    monkeypatch.delenv("RULEVAL_CODEGEN", raising=False)
    monkeypatch.setattr(codegen, "HOT_SECONDS", 1e-9)  # hot after one run
    rs = load_ruleset(str(ROOT / "rulesets" / "diplomacy" / "standard.rules"), use_cache=False)
    state = rs.run({}, query="generate", args=[3], validate=False)  # the first run, on closures
    assert rs.program.generated is None and rs.program.run_seconds > 0
    first = rs.run(state)
    assert rs.program.generated is not None and rs.program.generated["generated"]
    assert rs.run(state) == first
    monkeypatch.setattr(codegen, "HOT_SECONDS", 1e9)  # never hot
    cold = load_ruleset(str(ROOT / "rulesets" / "diplomacy" / "standard.rules"), use_cache=False)
    for _ in range(3):
        assert cold.run(state) == first
    assert cold.program.generated is None
    monkeypatch.setattr(codegen, "HOT_SECONDS", 1e-9)
    monkeypatch.setenv("RULEVAL_CODEGEN", "off")
    for _ in range(3):
        assert cold.run(state) == first
    assert cold.program.generated is None
    monkeypatch.setenv("RULEVAL_CODEGEN", "always")
    fresh = load_ruleset(str(ROOT / "rulesets" / "diplomacy" / "standard.rules"), use_cache=False)
    assert fresh.run(state) == first and fresh.program.generated is not None


# ---------------------------------------------------------------- errors at the same places


ERRORS = {
    "runaway recursion": "def f(n) = f(n + 1)\nquery main = f(0)\n",
    "budget": "query main = len([x for x in range(4000000) for y in range(3)])\n",
    # out of steps in calls, not in a loop: generated code finds it where a function returns, and the run
    # is done again on closures, which report it at the call that ran out
    # (a new record each call: no memo hit)
    "budget in calls": "def leaf(r) = r.n - 1\n"
                       "def f(r) = if r.n == 0 then 1 else f({n: leaf(r)}) + f({n: leaf(r)})\n"
                       "query main = f({n: 40})\n",
    # out of steps in calls of functions that neither loop nor recur: generated code checks the budget
    # in loops and recursive calls only, and where the run leaves it (2^18 calls, a new record each)
    "budget in plain calls": "def f0(r) = r.n\n" + "".join(
        f"def f{i}(r) = f{i - 1}({{n: r.n}}) + f{i - 1}({{n: r.n + 1}})\n" for i in range(1, 19))
        + "query main = f18({n: 0})\n",
    "field of none": "def r(x) = x.name\nquery main = r(none)\n",
    "bad index": "def xs = [1, 2]\nquery main = xs[5]\n",
    "text plus number": 'def a(x) = "a" + x\nquery main = a(1)\n',
    "division by zero": "def d(x) = 1 / x\nquery main = d(0)\n",
    "compare": 'def c(x) = x < "b"\nquery main = c(1)\n',
    "in none": "def m(x) = 1 in x\nquery main = [m(none), m([1])]\n",
    "not a function": "def g(h) = h(1)\nquery main = g(3)\n",
    "lambda arity": "query main = fold([1], 0, fn(a) => a)\n",
    "builtin error": 'def k(x) = keys(x)\nquery main = k("text")\n',
    "unhashable set": "def s(x) = {x}\nquery main = s({a: 1})\n",
    "unpack": "query main = [a for a, b in [1, 2]]\n",
    "with": "def w(x) = x with {a: 1}\nquery main = w(3)\n",
    # the base is checked before the new values are computed: its error, not the division's
    "with before its values": "def w(x, y) = x with {a: 1 / y}\nquery main = w(3, 0)\n",
    "replace on a number": 'def r(x) = replace(x, "a", "b")\nquery main = [r("aa"), r(5)]\n',
    # (a value whose body is a map comprehension is read as a dict without testing its type)
    "key of a map value": 'def m = {k => 1 for k in ["a"]}\nquery main = [m["a"], m["b"], m[{a: 1}]]\n',
    "depends on itself": "def a = b\ndef b = a\nquery main = a\n",
    # merge of a record literal with what is no map: the built-in's error; the literal's values first
    "merge a record into a number": "def m(x) = merge({a: 1}, x)\nquery main = m(3)\n",
    "merge: the record's values first": "def m(x, y) = merge({a: 1 / y}, x.b)\nquery main = m(3, 0)\n",
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_agree(name: str, tmp_path: Path) -> None:
    path = tmp_path / "main.rules"
    path.write_text(ERRORS[name])
    slow, fast = pair(path)
    assert slow.ok, [d.message for d in slow.diagnostics]
    got = outcome(fast, {}, budget=200_000)
    assert got == outcome(slow, {}, budget=200_000)
    assert "error" in got or name == "in none"


@pytest.fixture
def sources(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The source of each unit generated while the test runs, in the order written (and of each
    decision's resolution written with its body in it)."""
    from validator import codegen

    written: list[str] = []
    original = codegen.Generator.unit_source

    def keep(self: Any, unit: Any, slow: str) -> tuple[str, str]:
        name, source = original(self, unit, slow)
        written.append(source)
        return name, source

    monkeypatch.setattr(codegen.Generator, "unit_source", keep)
    resolution = codegen.Generator.resolution_source

    def keep_resolution(self: Any, unit: Any) -> tuple[str, str]:  # (a decision's, its body in it)
        name, source = resolution(self, unit)
        written.append(source)
        return name, source

    monkeypatch.setattr(codegen.Generator, "resolution_source", keep_resolution)
    return written


def test_values_are_read_again_where_a_read_may_not_have_run(tmp_path: Path) -> None:
    """A value read on one path only (a branch, a loop, a lambda, the right of `??` or `and`) is read
    again on the others: each path gives the closures' answer, none meets an unset local."""
    got = agreed(
        tmp_path / "main.rules",
        "def v = [1, 2, 3]\n"
        "def w = {a: 1}\n"
        "def f(x) = if x > 1 then len(v) + w.a elif x == 0 then len(v) else len([y for y in v if y > w.a]) + len(v)\n"
        "def g(x) = (x > 0 and len(v) > 0) or len(v) == 3 or w.a == 1\n"
        "def h(x) = sorted(x, fn(y) => len(v) - y + w.a)\n"
        "def k(x) = (x ?? len(v)) + len(v)\n"
        "def m(x) = [len(v) + z for z in x] + [w.a for z in x if len(v) > z]\n"
        "def n(x) = if any(len(v) > z for z in x) then len(v) else first(z + w.a for z in x)\n"
        # fields and entries of locals are read once on a path too: the first test of a conditional
        # (or operand of `and`) always runs, a later one only on its own path
        "def p(r) = (if r.a > 1 then r.b else 0) + r.a\n"
        'def q(m, k) = (if k == "z" then 0 elif m[k] > 1 then m[k] else 5) + (m[k] ?? 100)\n'
        'def s(m, k) = [k != "z" and m[k] > 0, m[k] ?? -1, (k == "z" or m[k] > 5) and m[k] != none]\n'
        'query main = [f(0), f(1), f(2), g(0), g(1), h([1, 2]), h({3, 1}), k(none), k(5), m([]), m([1, 5]),\n'
        '  n([]), n([9]), n([1]), p({a: 2, b: 7}), p({a: 0, b: 7}), q({y: 3}, "y"), q({y: 3}, "z"), q({y: 0}, "y"),\n'
        '  s({y: 3}, "y"), s({y: 3}, "z"), s({y: 9}, "y")]\n')
    assert "result" in got, got


def test_sibling_branches_share_the_locals_of_their_reads(tmp_path: Path, sources: list[str]) -> None:
    """The locals holding what a branch read are free again once it ends: the next branch takes the
    same names, so a generated function has fewer locals to set up and clear. Not where a nested
    function may read one of them later: a lambda made in a branch and called after the reads that
    follow it still sees its own values."""
    rec = "def rec(k) = {k: k, a: 1, b: 10, c: 100, d: 1000, e: 10000, f: 5, g: 6, h: 7, i: 8}\n"
    got = agreed(
        tmp_path / "main.rules",
        "def f(r) = if r.k == 1 then r.a + r.b + r.c elif r.k == 2 then r.d + r.e + r.f else r.g + r.h + r.i\n"
        + rec + "def recs = [rec(1), rec(2), rec(3)]\nquery main = [f(r) for r in recs]\n")
    assert got == {"result": [111, 11005, 21]}, got
    f_src = next(src for src in sources if "'i'" in src)
    reads = set(re.findall(r"\b_v\d+\b", f_src))
    assert 1 < len(reads) <= 5, f_src  # `recs`, `r.k`, then three in each branch: eleven reads, five names
    got = agreed(
        tmp_path / "main.rules",
        "def g(r) = let h = (if r.k == 1 then (let b = r.b + 1; fn(x) => x + b + r.b) else fn(x) => x);\n"
        "  [r.c + r.d + r.e, h(1), r.a]\n"
        + rec + "def recs = [rec(1), rec(2)]\nquery main = [g(r) for r in recs]\n")
    assert got == {"result": [[11100, 22, 1], [11100, 1, 1]]}, got


def test_a_loop_reads_a_value_once_for_all_its_items(tmp_path: Path, sources: list[str]) -> None:
    """A value that is the same all run long, read in a loop's body, is read at the first item that
    reads it and kept for the items after (in a local set to the pending marker before the loop):
    also where only some items read it (a branch, a filter), in nested loops, and not across into a
    lambda or generator made in the body, which read for themselves (such a lambda may be called
    after its loop ran again with no item). Each gives the closures' value."""
    got = agreed(
        tmp_path / "main.rules",
        "def big = {a: 10, b: 20}\n"
        "def xs = [1, 2, 3, 4]\n"
        "def f(ys) = [if y > 2 then y + big.a else y for y in ys]\n"
        "def g(ys) = [y + big.b for y in ys if y % 2 == 0 and len(xs) > y]\n"
        "def h(ys) = [[y * z + big.a for z in xs if z < y] for y in ys]\n"
        "def k(ys) = [sorted(xs, fn(z) => big.a - z + y)[0] + sum(z + big.b for z in xs) for y in ys]\n"
        "def m(ys) = count(y > big.a for y in ys) + len([1 for y in ys if any(z == y for z in xs)])\n"
        "def n(ys) = [(let p = fn(z) => z + big.b; p(y)) + max(z + big.a for z in xs) for y in ys]\n"
        # lambdas made in an inner loop, called after it ran again with no item
        "def some(a) = if a == 1 then [1] else []\n"
        "def fs = [[(let c = big.a; fn(x) => x + big.a + c) for b in some(a)] for a in [1, 2]]\n"
        "query main = [f([1, 3, 5]), f([]), g([1, 2, 4, 6]), h([1, 3]), k([0, 1]), m([5, 11, 30]), n([1, 2]),\n"
        "  [p(1) for ps in fs for p in ps]]\n")
    assert got == {"result": [[1, 13, 15], [], [22], [[], [13, 16]], [94, 94], 2, [35, 36], [21]]}, got
    # (before a loop: `_h1 = _PENDING`; at a read in its body: `if _h1 is _PENDING:` then the read)
    assert any(re.search(r"_h\d+ = _PENDING", src) and re.search(r"if _h\d+ is _PENDING:", src) for src in sources)


def test_values_the_same_all_run_long_are_kept_in_slots_of_the_context(tmp_path: Path, sources: list[str]) -> None:
    """Generated code reads a value that reads no decision (and no die is in the program) from its
    slot in ``Context.vals`` once the run has read it (a list index, not a memo lookup); the first
    read in a run takes it from the memo or computes it. Every context has a slot for each such
    value of the largest generated program. A program that rolls dice reads its values from the
    memo as before (one that rested on a die is read again)."""
    from validator.runtime import PENDING, Context

    got = agreed(
        tmp_path / "main.rules",
        "def base = [3, 1, 2]\n"
        "def total = sum(x for x in base)\n"
        "def f(x) = x + total + len(base)\n"
        "query main = [f(1), f(2), total, sorted(base, fn(x) => x + total)]\n")
    assert got == {"result": [10, 11, 6, [1, 2, 3]]}, got
    assert any("ctx.vals[" in src for src in sources)
    slots = [int(n) for src in sources for n in re.findall(r"ctx\.vals\[(\d+)\]", src)]
    assert max(slots) < Context.value_slots
    ctx = Context({}, None)  # type: ignore[arg-type]
    assert len(ctx.vals) == Context.value_slots and all(v is PENDING for v in ctx.vals)
    sources.clear()
    got = agreed(
        tmp_path / "main.rules",
        "def r = roll(1d6)\n"
        "def f(x) = x + r\n"
        "query main = [f(1) - f(0), r >= 1 and r <= 6]\n", seed=3)
    assert got == {"result": [1, True]}, got
    assert sources and not any("ctx.vals[" in src for src in sources)


def test_a_value_that_reads_decisions_is_read_once_per_loop_outside_resolutions(tmp_path: Path,
                                                                                sources: list[str]) -> None:
    """`good` reads decisions (one of them settled as a paradox): a loop's body that reads it keeps it
    for the loop's later items when it was read while no decision was being resolved (the query's
    loop), not otherwise (the loop in `inner`'s body, evaluated as that decision is resolved). The
    closures' values, and their outcome at their smallest sufficient budget and one step below."""
    slow, fast, got = both_tiers(
        tmp_path / "main.rules",
        'decision ok(x) cite "R1" = if x % 3 == 0 then not ok(x) else x > 2\n'
        'cycle ok cite "R1" { otherwise => settle cycle as true }\n'
        "def good = [x for x in range(8) if ok(x)]\n"
        'decision inner(k) cite "R2" = count(true for i in range(4) if (i + k) in good) > 2\n'
        "query main = [[i for i in range(10) if i in good], [inner(k) for k in range(6)], good]\n")
    assert got == {"result": [[0, 3, 4, 5, 6, 7], [False, False, True, True, True, True], [0, 3, 4, 5, 6, 7]]}, got
    kept = [src for src in sources if "if not ctx.resolving:" in src]
    assert len(kept) == 2, sources  # the query's loop and inner's
    budgets_agree(slow, fast, {})


def test_a_decisions_resolution_is_written_with_its_body_in_it(tmp_path: Path, sources: list[str]) -> None:
    """A decision read by generated code is resolved by a function with the decision's body written
    in it (no call of the body's function), which hands over to the closures for a second guess and
    a cycle (`odd`'s paradox) and at the depth limit (`up`'s chain of 300, E005 where the closures
    report it). The closures' values, and their outcome at their smallest sufficient budget and one
    step below."""
    slow, fast, got = both_tiers(
        tmp_path / "main.rules",
        'decision up(n) cite "R1" = if n <= 0 then true else up(n - 1) and n > -7\n'
        'decision odd(x) cite "R2" = if x == 3 then not odd(x) else x % 2 == 1\n'
        'cycle odd cite "R2" { otherwise => settle cycle as false }\n'
        "query main = [up(5), [odd(x) for x in range(5)]]\n"
        "query deep = up(300)\n")
    assert got == {"result": [True, [False, True, False, False, False]]}, got
    resolutions = [src for src in sources if "(ctx, dkey, " in src]
    assert len(resolutions) == 2 and all("(-7)" in src or "(3)" in src for src in resolutions), resolutions
    budgets_agree(slow, fast, {})
    deep = outcome(fast, {}, query="deep")
    assert deep == outcome(slow, {}, query="deep") and deep["error"][0][0] == "E005", deep


def test_a_let_of_a_parameter_or_a_constant_reads_it_in_place(tmp_path: Path, sources: list[str]) -> None:
    """`let` gives a name to a parameter, a constant or a value read once (no copy into a local of its
    own), and to a computed value through a local; lets in loops, branches and lambdas give the
    closures' values."""
    slow, fast, got = both_tiers(
        tmp_path / "main.rules",
        "def base = [1, 2]\n"
        "def f(p, xs) = let a = p; let b = 3; let c = [x * a for x in xs]; let s = base;\n"
        "  [(let d = a; d + b + y) for y in c] + [(let e = if y > 1 then y * 2 else a + 1; e * 10) for y in xs]\n"
        "  + [(let g = fn(z) => z + a + b; g(1))] + s\n"
        "query main = [f(2, [1, 2, 3]), f(5, [])]\n")
    assert got == {"result": [[7, 9, 11, 30, 40, 60, 6, 1, 2], [9, 1, 2]]}, got
    f = next(src for src in sources if "(ctx, _l" in src and "def _u" in src and "* 10" not in src and "(10)" in src)
    assert not re.search(r"^\s*_l\d+ = (_l\d+|\(3\))$", f, re.M), f  # (no copy of the parameter or of 3)
    budgets_agree(slow, fast, {})


def test_a_branch_value_is_set_where_it_is_computed(tmp_path: Path, sources: list[str]) -> None:
    """A conditional's branch (or a let's value) computed into a temporary made for it (the value of a
    call, an entry read with its fallback) is computed into the conditional's (the let's) own local:
    no line copies a temporary into another. The closures' values, and their outcome at their
    smallest sufficient budget and one step below."""
    slow, fast, got = both_tiers(
        tmp_path / "main.rules",
        'input n: int at "/n" default 1\n'
        "def f(x) = [y * x * n for y in [1, 2]]\n"
        "def g(x) = [y + x * n for y in [1, 2]]\n"
        "def tab = {k => k * 2 for k in range(n * 20)}\n"
        "def h(x) = let v = (if x > 2 then f(x) elif x > 1 then g(x) else [len(f(x))]); let w = tab[x + 1];\n"
        "  [v, if x > 0 then g(x) else f(x), if x > 1 then tab[x] else tab[x + 10], w]\n"
        "query main = [h(3), h(2), h(1), h(0)]\n")
    assert got == {"result": [[[3, 6], [4, 5], 6, 8], [[3, 4], [3, 4], 4, 6], [[2], [2, 3], 22, 4],
                              [[2], [0, 0], 20, 2]]}, got
    h = next(src for src in sources if "> (2)" in src)
    assert not re.search(r"^\s*_[tl]\d+ = _t\d+$", h, re.M), h
    budgets_agree(slow, fast, {})


def test_a_sort_key_that_counts_with_a_generator_is_written_in_place(tmp_path: Path, sources: list[str]) -> None:
    """`sorted`/`group_by` with a lambda are written in place when the lambda makes no function: a
    generator that `count` or `any` consumes is a loop, so it qualifies. The closures' values."""
    got = agreed(
        tmp_path / "main.rules",
        "def xs = [3, 1, 2, 5]\n"
        "query main = [sorted(xs, fn(x) => count(y > x for y in xs)),\n"
        '  group_by(xs, fn(x) => if any(y == x + 1 for y in xs) then "next" else "top")]\n')
    assert got == {"result": [[5, 3, 2, 1], {"top": [3, 5], "next": [1, 2]}]}, got
    main = next(src for src in sources if "_sorted_by_keys" in src)
    assert "setdefault" in main, main  # (group_by's loop, in place too)


def test_merging_a_record_literal_agrees(tmp_path: Path) -> None:
    """`merge({...}, m)` is written as one record (the literal's fields, then m's, which win); its
    fields keep the order `merge` gives them, whether or not m is known to be a map."""
    got = agreed(
        tmp_path / "main.rules",
        "def m(x) = merge({a: 1, b: 2, z: x}, x)\n"
        "def known = {k => 0 for k in [\"b\", \"c\"]}\n"
        'query main = [keys(m({b: 3, c: 4})), m({b: 3, c: 4}), keys(m({})), merge({a: 1, c: 1}, known),\n'
        '  keys(merge({c: 1, a: 1}, known)), merge({a: len(known)}, {a: none})]\n')
    assert got == {"result": [["a", "b", "z", "c"], {"a": 1, "b": 3, "z": {"b": 3, "c": 4}, "c": 4}, ["a", "b", "z"],
                              {"a": 1, "c": 0, "b": 0}, ["c", "a", "b"], {"a": None}]}, got


@pytest.mark.parametrize("cap", [0, 1, 2, 1000])
def test_a_full_life_store_leaves_values_to_the_runs_memo(cap: int, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A state-free function keeps what it computes for primitive arguments for the ruleset's life,
    where every later call finds it, so the run's memo is not asked; once that store is full, the
    run's memo keeps (and answers) the rest. Either way each call gives the closures' value, of one
    argument or two, a text or another primitive. A function that reads the state (`h`, `r`) has
    only the run's memo: its texts, nones, numbers, truth values and records are told apart there
    too (`1` and `true` are equal keys; a record is known by its id)."""
    from validator import codegen, compile_defs

    monkeypatch.setattr(codegen, "_LIFE_CAP", cap)
    monkeypatch.setattr(compile_defs, "_LIFE_CAP", cap)
    got = agreed(
        tmp_path / "main.rules",
        'input n: int at "/n" default 7\n'
        # (each body loops, so that it is called, not written inline at the call)
        'def f(x) = [if y == none then "-" else str(y) + "!" for y in [x]][0]\n'
        'def g(a, b) = [str(a) + "/" + str(y) for y in [b]][0]\n'
        'def h(a, b) = [[str(a), a == "1", a == none, str(y), y == "1", y == none, n] for y in [b]][0]\n'
        'def r(a) = [[a == none, a == "none", a == {x: 1}, n] for y in [a]][0]\n'
        'query main = [f(x) for x in ["a", "b", "a", 1, true, 1, none, "c", "b", 2, 2]] +\n'
        '  [g(a, b) for a in ["a", 1, "a"] for b in [true, "b", true]] +\n'
        '  [h(a, b) for a in ["1", 1, none, "1", true, "none"] for b in ["1", 1, "none", none, "1", true]] +\n'
        '  [r(a) for a in [none, "none", none, {x: 1}, {x: 2}, {x: 1}, 1, true]]\n')

    def shown(x: Any) -> str:  # (the language's `str`)
        return "none" if x is None else str(x).lower()

    # h's and r's arguments as they are: "1" and 1, true and 1, none and "none", records, told apart
    h_rows = [[shown(a), a == "1", a is None, shown(b), b == "1", b is None, 7]
              for a in ["1", 1, None, "1", True, "none"] for b in ["1", 1, "none", None, "1", True]]
    h_rows += [[a is None, a == "none", a == {"x": 1}, 7] for a in [None, "none", None, {"x": 1}, {"x": 2}, {"x": 1}, 1, True]]
    assert got == {"result": ["a!", "b!", "a!", "1!", "true!", "1!", "-", "c!", "b!", "2!", "2!",
                              "a/true", "a/b", "a/true", "1/true", "1/b", "1/true", "a/true", "a/b", "a/true",
                              *h_rows]}, got


def test_the_runs_memo_serves_every_value_of_texts_none_included(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A function of the state (no life store) memoized in the run: of texts and none its value is
    kept alone, none as any other, so that a second call with the same arguments is served by the
    memo, not computed again: the generated run takes the closures' steps (an overrun would not
    show in the outcome, as a generated run that runs out is run again on closures), and gives the
    closures' values and outcome at their smallest sufficient budget and one step below."""
    from validator import runtime

    contexts: list[Any] = []
    made = runtime.Context.__init__

    def watched(self: Any, *args: Any, **kw: Any) -> None:
        made(self, *args, **kw)
        contexts.append(self)

    monkeypatch.setattr(runtime.Context, "__init__", watched)
    slow, fast, got = both_tiers(
        tmp_path / "main.rules",
        'input n: int at "/n" default 7\n'
        # (a loop in each body: called, not written inline)
        'def f(t) = [if t == "x" or t == none then none else t + str(n) for y in [t]][0]\n'
        'def g(a, b) = [if a == b then none else [a, b, n] for y in [a]][0]\n'
        'query main = [f(t) for t in ["x", "a", "x", none, "a", none, "x"]] +\n'
        '  [g(a, b) for a in ["x", none, "x"] for b in ["x", none, 1, "x"]]\n')
    assert got["result"][:7] == [None, "a7", None, None, "a7", None, None], got
    assert len(contexts) == 2 and contexts[0].steps == contexts[1].steps  # (one run each: generated, closures)
    low, high = budgets_agree(slow, fast, {})
    assert "result" in outcome(fast, {}, budget=high) and "error" in outcome(fast, {}, budget=low)


def test_a_kept_result_is_looked_up_where_the_function_is_called(tmp_path: Path, sources: list[str]) -> None:
    """A state-free function of texts keeps its results for the program's life: a generated caller
    asks that store itself and calls the function only when it holds nothing (a call less). The same
    values, run after run, and the closures' outcome at their smallest sufficient budget and one step
    below (the store keeps the steps to charge with each result, its function's entry included)."""
    (tmp_path / "main.rules").write_text(
        # (a loop in each body: called, not written inline; `norm` calls `low` outside its loop, a step
        # its entry charges; each text is asked once a run, so no later call's charge covers it)
        'def low(t) = [lower(x) for x in [t]][0]\n'
        'def norm(t) = low(t) + [x for x in ["."]][0]\n'
        'def pair(a, b) = [norm(a) + y for y in [b]][0]\n'
        'query main = [norm("A"), norm("b"), pair("C", "x")]\n')
    slow, fast = pair(tmp_path / "main.rules")
    for _ in range(3):  # (the first run fills the stores)
        assert outcome(fast, {}) == outcome(slow, {}) == {"result": ["a.", "b.", "c.x"]}
    main = next(src for src in sources if "'x'" in src and "for " not in src)
    assert main.count("kept = _k") == 3, main  # norm's store (twice) and pair's, asked in the query
    low, high = budgets_agree(slow, fast, {}, same_place=False)
    assert "result" in outcome(fast, {}, budget=high) and "error" in outcome(fast, {}, budget=low)


def test_with_keeps_the_place_of_an_entry_it_sets_again(tmp_path: Path) -> None:
    """`r with {...}` is a copy of r with the entries set: one r has keeps its place (and takes the new
    value), a new one comes after r's, in the order written; r itself is unchanged."""
    got = agreed(
        tmp_path / "main.rules",
        "def r(x) = {a: x, b: 2}\n"
        "def w(x) = let s = r(x); let t = s with {c: 3, a: 4, d: s.a}; [keys(t), t, s]\n"
        "query main = [w(1), w(none)]\n")
    assert got == {"result": [[["a", "b", "c", "d"], {"a": 4, "b": 2, "c": 3, "d": 1}, {"a": 1, "b": 2}],
                              [["a", "b", "c", "d"], {"a": 4, "b": 2, "c": 3, "d": None}, {"a": None, "b": 2}]]}, got


def test_a_constant_argument_of_a_built_in_is_not_tested(tmp_path: Path, sources: list[str]) -> None:
    """A built-in written inline tests only the arguments not known to pass: a constant separator or
    replacement text is not tested, the text it works on still is (and a number there is the closures'
    located error)."""
    # (a loop in the body: the function is called, not written inline with its constant arguments)
    text = ('def words(t) = [split(replace(x, "(", "/"), " ") for x in [t]][0]\n'
            'query main = [words("a (b c"), words(""), words("x")]\n')
    got = agreed(tmp_path / "main.rules", text)
    assert got == {"result": [["a", "/b", "c"], [""], ["x"]]}, got
    words = next(src for src in sources if ".split(" in src)
    assert "_type(_k" not in words, words  # no constant tested
    # the text is, before replace (split's text is replace's result, a text: not tested either)
    assert re.search(r"if _type\(_l\d+\) is _str:\n\s+_v\d+ = _l\d+\.replace\(", words), words
    err = agreed(tmp_path / "main.rules", 'def words(t) = [split(x, " ") for x in [t]][0]\nquery main = words(3)\n')
    assert "error" in err and err["error"][0][0].startswith("E"), err


def test_known_shapes_agree_and_drop_their_type_tests(tmp_path: Path, sources: list[str]) -> None:
    """What a built-in returns (a list from `split`, a map from `group_by`, a text from `trim`...) is
    known where a `let` holds it: indexing, `len`, map loops and text built-ins on it are written
    without a test of its type. They give the closures' values and errors (past the end of a list,
    a negative index, a key missing from a map, an if whose branches differ)."""
    got = agreed(
        tmp_path / "main.rules",
        'def words(t) = let w = split(t, " "); [len(w), w[0], w[-1], w[2], lower(trim(w[0]))]\n'
        "def groups(xs) = let g = group_by(xs, fn(x) => x % 3); [k + len(v) for k, v in g]\n"
        'def maps(m) = let p = put(merge(m, {b: 2}), "c", 3); [has(p, "a"), len(keys(p)), p["d"]]\n'
        "def mixed(x) = let v = if x > 0 then [1, 2] else {a: 1}; len(v)\n"
        'query main = [words("  Ab cd"), words("x y z"), groups([1, 2, 3, 4]), maps({a: 1}), mixed(1), mixed(0)]\n')
    # ("  Ab cd" splits into "", "", "Ab", "cd"; 1..4 by remainder: {1: [1, 4], 2: [2], 0: [3]})
    assert got == {"result": [[4, "", "cd", "Ab", ""], [3, "x", "z", "z", "x"], [3, 3, 1],
                              [True, 3, None], 2, 1]}, got
    words = next(src for src in sources if ".split(" in src)
    assert "is _list:" not in words and "_len(" in words  # the list's type is not tested again
    # past the end of a known list: the closures' located error
    err = agreed(tmp_path / "main.rules", 'def words(t) = let w = split(t, " "); w[3]\nquery main = words("a b")\n')
    assert "error" in err and err["error"][0][0].startswith("E"), err


# ---------------------------------------------------------------- injection


NASTY = ['"', "'", '"""', "'''", "\\", "\n", "\r\n", "\x00", "{}", "{0}", "%s", "${x}", "\u2028",
         '"); import os; os.system("touch pwned"); ("', "__import__('os').system('touch pwned')",
         "ctx.budget = 10**12", "\\n    raise SystemExit", "# comment", "_t1", "_k2", "_u3"]


def nasty_ruleset() -> str:
    texts = ", ".join(json.dumps(t) for t in NASTY)
    # names the generated wrappers use for their own locals, as the ruleset's names
    return (
        f"def texts = [{texts}]\n"
        "def mkey(hit) = {kept: hit, rolls: hit + \"!\", ctx: len(hit)}\n"
        "def steps(guesses, args) = if guesses == args then guesses else args\n"
        "def err(f) = f.kept\n"
        "query main = [{text: t, rec: mkey(t), same: steps(t, t), field: err(mkey(t)),\n"
        "  keyed: {t => t + t}, grouped: group_by([t, t], fn(x) => x), sorted: sorted([t, \"a\"], fn(x) => x),\n"
        "  first: first(x for x in [t] if x == t), size: count(x == t for x in texts)} for t in texts]\n")


def test_ruleset_text_never_reaches_the_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "main.rules"
    path.write_text(nasty_ruleset(), encoding="utf-8")
    slow, fast = pair(path)
    assert slow.ok, [d.message for d in slow.diagnostics]
    got = outcome(fast, {})
    assert got == outcome(slow, {})
    assert [row["text"] for row in got["result"]] == NASTY
    assert not (tmp_path / "pwned").exists()
    # every identifier in the generated source is one the generator made or a fixed wrapper name
    gen = Generator(fast.program)
    wrapper_names = {"ctx", "f", "args", "err", "mkey", "hit", "held", "kept", "rolls", "guesses", "steps", "memo", "vals",
                     "dkey", "dfirst", "dguesses", "ddeps", "dold",
                     "trace", "slow", "depth", "depth_limit", "budget", "over_budget", "tainted", "resolving", "rkeys",
                     "dstate", "dvalue", "get", "append", "add", "setdefault", "split", "lower", "upper", "strip",
                     "items", "def", "if", "else", "elif", "not", "and", "or", "is", "in", "return", "raise",
                     "from", "None", "True", "False", "try", "except", "finally", "for", "yield", "break",
                     "continue", "pass", "del", "as"}
    written: list[str] = []
    for unit in fast.program.units.values():
        if unit.decl.__class__.__name__ not in ("DefDecl", "QueryDecl", "ConstDecl"):
            continue
        _, source = gen.unit_source(unit, gen.const(object()))
        for text in NASTY:
            if len(text) > 2 and not re.fullmatch(r"_[a-z]\d", text):
                assert text not in source
        # the only text literals are short identifiers between single quotes (field names, `'move'`)
        assert '"' not in source and "\\" not in source
        literals = re.findall(r"'[^']*'", source)
        assert all(re.fullmatch(r"'[A-Za-z_][A-Za-z0-9_]{0,39}'", t) for t in literals), literals
        assert "'" not in re.sub(r"'[A-Za-z_][A-Za-z0-9_]*'", "", source)
        written.append(source)
        source = re.sub(r"'[A-Za-z_][A-Za-z0-9_]*'", "", source)
        for ident in set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", source)):
            assert re.fullmatch(r"_[a-z]{1,2}\d+", ident) or ident in _HELPERS or ident in wrapper_names, ident
    assert "'kept'" in "".join(written)  # (a field of the ruleset's own records: the literals are in use)


def test_a_unit_past_pythons_limits_keeps_its_closure(tmp_path: Path) -> None:
    """A conditional of 150 branches whose tests each need statements (a call) nests deeper than
    Python's indentation limit once written out: that unit stays on its closure (and says why), the
    others are generated, the answers agree. (Tests that need none are a flat `elif` chain.)"""
    branches = "".join(f" elif x == len(range({i})) then {i * 2}" for i in range(1, 150))
    path = tmp_path / "main.rules"
    path.write_text(f"def big(x) = if x == 0 then 0{branches} else -1\n"
                    "def small(x) = x + 1\n"
                    "query main = [big(0), big(77), big(149), big(500), small(1)]\n")
    slow, fast = pair(path)
    assert slow.ok, [d.message for d in slow.diagnostics]
    got = outcome(fast, {})
    assert got == outcome(slow, {}) == {"result": [0, 154, 298, -1, 2]}
    record = fast.program.generated
    assert "big" in record["kept"] and "main" in record["generated"]


def test_long_chains_of_simple_tests_are_generated(tmp_path: Path) -> None:
    branches = "".join(f" elif x == {i} then {i * 2}" for i in range(1, 300))
    path = tmp_path / "main.rules"
    path.write_text(f"def big(x) = if x == 0 then 0{branches} else -1\nquery main = [big(0), big(77), big(299), big(500)]\n")
    slow, fast = pair(path)
    assert outcome(fast, {}) == outcome(slow, {}) == {"result": [0, 154, 598, -1]}
    assert "big" in fast.program.generated["generated"] and not fast.program.generated["kept"]


@pytest.mark.parametrize("error", [Unsupported("test"), KeyError("a fault of the generator")])
def test_unsupported_unit_keeps_its_closure(error: Exception, monkeypatch: pytest.MonkeyPatch) -> None:
    """A unit the generator cannot write (or fails on: a fault of codegen itself must cost the unit
    its speed, never the run) keeps its closure, and says why."""
    def refuse(self: Generator, e: Any, env: Any, w: Any) -> str:
        raise error

    monkeypatch.setattr(Generator, "x_With", refuse)
    slow, fast = pair(ROOT / "rulesets" / "diplomacy" / "standard.rules")
    state = slow.run({}, query="generate", args=[5], validate=False)
    assert outcome(fast, state) == outcome(slow, state)
    assert type(error).__name__ in fast.program.generated["kept"]["eff"]


def test_depth_counts_only_calls_that_can_recur(tmp_path: Path) -> None:
    """A chain of 200 distinct functions nests deeper than the limit (150) but cannot run away: it
    runs. A function calling itself 200 deep stops at the limit with E005. Both tiers agree."""
    chain = "".join(f"def f{i}(x) = f{i + 1}(x) + 1\n" for i in range(200)) + "def f200(x) = x\n"
    path = tmp_path / "chain.rules"
    path.write_text(chain + "def down(n) = if n == 0 then 0 else down(n - 1) + 1\n"
                    "query main = f0(0)\nquery deep(n) = down(n)\n")
    slow, fast = pair(path)
    assert slow.ok, [d.message for d in slow.diagnostics]
    for rs in (slow, fast):
        assert outcome(rs, {}) == {"result": 200}
        assert outcome(rs, {}, query="deep", args=[100]) == {"result": 100}
    # the same after the run to 100: results kept from earlier runs never shorten a recursion (a
    # function that can reach a recursive one is not kept across runs), so no run depends on others
    deep = outcome(fast, {}, query="deep", args=[200])
    assert deep == outcome(slow, {}, query="deep", args=[200])
    assert deep["error"][0][0] == "E005" and "chain.rules:202:" in deep["error"][0][2]


def test_a_chain_of_decisions_counts_one_call_per_decision(tmp_path: Path) -> None:
    """Each decision of a chain waits for the next one, through two functions. The functions lie on
    the chain's cycle only through the decision, so only the decision's calls count toward the limit
    (150): a chain of 140 resolves (counting every call, it would stop near 50), one of 200 stops
    with E005 at the decision. A cycle of functions with no decision still counts each call. Both
    tiers agree."""
    path = tmp_path / "chain.rules"
    path.write_text('decision ok(n, end) cite "R1" = n >= end or later(n, end)\n'
                    "def later(n, end) = step(n + 1, end)\n"
                    "def step(n, end) = ok(n, end)\n"
                    "def ping(n) = if n == 0 then 0 else pong(n - 1) + 1\n"
                    "def pong(n) = ping(n)\n"
                    "query main(end) = ok(0, end)\nquery bounce(n) = ping(n)\n")
    slow, fast = pair(path)
    assert slow.ok, [d.message for d in slow.diagnostics]
    counted = {name for (_, name), unit in slow.program.units.items() if unit.counted}
    assert counted == {"ok", "ping", "pong"}
    for rs in (slow, fast):
        assert outcome(rs, {}, query="main", args=[140]) == {"result": True}
        assert outcome(rs, {}, query="bounce", args=[70]) == {"result": 70}
    for query, arg, line in (("main", 200, 1), ("bounce", 80, 4)):
        deep = outcome(fast, {}, query=query, args=[arg])
        assert deep == outcome(slow, {}, query=query, args=[arg])
        assert deep["error"][0][0] == "E005" and f"chain.rules:{line}:" in deep["error"][0][2], deep
    with pytest.raises(RunError) as exc:  # the help says what a decision's E005 means
        fast.run({}, query="main", args=[200])
    assert exc.value.diagnostics[0].help == ("each `ok` decision waits for another: a chain longer than the limit, "
                                             "or one without end")


def test_a_data_field_left_out_reads_as_none_before_a_default(tmp_path: Path) -> None:
    """`map.aliases ?? {}`: a data file may leave out a field the ruleset gives a default for (a new
    map need not list what it has none of); the same field without `??` is still a typo (C012)."""
    (tmp_path / "map.yaml").write_text("provinces: [a, b]\n")
    got = agreed(tmp_path / "main.rules", 'import "map.yaml" as map\n'
                 "query main = [map.aliases ?? {}, map.provinces ?? [], len(map.extra ?? [1, 2])]\n")
    assert got == {"result": [{}, ["a", "b"], 2]}
    (tmp_path / "bad.rules").write_text('import "map.yaml" as map\nquery main = map.aliases\n')
    bad = load_ruleset(str(tmp_path / "bad.rules"), use_cache=False)
    assert [(d.code, d.message) for d in bad.diagnostics] == [("C012", "data `map` has no field `aliases`")]


def test_sorting_by_keys_agrees_on_every_mix_of_key_types(tmp_path: Path) -> None:
    """Generated `sorted`/`sort_by` with a lambda compare keys all texts or all integers as they are,
    and any other mix in the language's order; stable on ties. The closures' answer every time."""
    got = agreed(
        tmp_path / "main.rules",
        'def texts = [{k: "b", n: 1}, {k: "a", n: 2}, {k: "b", n: 3}, {k: "", n: 4}]\n'
        "def ints = [{k: 3, n: 1}, {k: -1, n: 2}, {k: 3, n: 3}]\n"
        'def mixed = [{k: "a", n: 1}, {k: 2, n: 2}, {k: none, n: 3}, {k: true, n: 4}, {k: [1, "x"], n: 5},\n'
        '  {k: 1, n: 6}, {k: false, n: 7}, {k: [1], n: 8}, {k: {z: 1}, n: 9}]\n'
        "def by(xs) = [x.n for x in sorted(xs, fn(x) => x.k)]\n"
        "query main = [by(texts), by(ints), by(mixed), by([]), [x.n for x in sort_by(mixed, fn(x) => x.k)]]\n")
    assert got["result"][:2] == [[4, 2, 1, 3], [2, 1, 3]]
