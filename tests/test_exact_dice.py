"""Exact dice are sound by construction (issue 21): for every operator and built-in that takes
values, the exact distribution of an expression over dice equals the one found by running it once
for every combination of faces (scripted dice). Random expressions over up to four three-sided
dice, on both engines. And exact enumeration's shortcuts change nothing: a roll forced at once is a
roll then forced, and enumerate_exact is every path run alone, from scratch."""

from __future__ import annotations

import itertools
import json
import math
import os
from collections import Counter
from fractions import Fraction
from pathlib import Path
from tempfile import mkdtemp
from typing import Any

import pytest

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from validator.api import RunError, load_ruleset
from programs import programs
from validator.engine.reference import Interpreter, Run, enumerate_exact, odds
from validator.lib.builtins import BUILTINS, DiceSpec, roll_looked_at
from validator.lib.runtime import CallError, EvalError, ExactDice, SeededDice, rolled
from validator.lib.values import too_large, written

LONG = bool(os.environ.get("RULEVAL_FUZZ_LONG"))
ROOT = Path(mkdtemp(prefix="ruleval-exact-"))
(ROOT / "ruleval.toml").write_text("")



INT_OPS = ["{a} + {b}", "{a} - {b}", "{a} * {b}", "{a} // 2", "{a} % 2", "-{a}", "abs({a} - {b})", "max([{a}, {b}])",
           "min([{a}, {b}], 0)", "sum([{a}, {b}])", "len([{a}, {b}])", "int(str({a}))", "({a} + 1)",
           "first(sorted([{a}, {b}]), 0)", "last(reverse([{a}, {b}]), 0)", "sorted([{a}, {b}, 2])[1]",
           "sort_by([{a}, {b}], fn(x) => -x)[0]", "len(set([{a}, {b}]))", "len(unique([{a}, {b}]))",
           "index_of([{a}, {b}], 2) ?? 9", "count(x > 1 for x in [{a}, {b}])", "(if {a} > {b} then {a} else {b})",
           "({a}, {b})[0]", "{{x => 1 for x in [{a}, {b}]}}[2] ?? 0", "fold([{a}, {b}], 0, fn(s, x) => s + x)",
           "len(str([{a}, {b}]))", "len(keys({{k => {b} for k in [{a}]}}))", "get({{1 => {a}}}, {b}, 5)"]
BOOL_OPS = ["{a} > {b}", "{a} == {b}", "{a} != 2", "{a} in [1, {b}]", "{a} >= 2 and {b} < 3", "not ({a} < 2)",
            "any(x == 3 for x in [{a}, {b}])", "all(x > 1 for x in [{a}, {b}])", "has({{{a} => 1}}, {b})"]


@st.composite
def dice_expressions(draw: Any) -> tuple[str, int]:
    dice = draw(st.integers(1, 4))
    # a plain die, or one whose three sides show other numbers (a number on two sides, a negative one)
    leaves = [draw(st.sampled_from(["roll(1d3)", "roll(dice(1, [0, 2, 2]))", "roll(dice(1, [-1, 0, 1]))"]))
              for _ in range(dice)]

    def expr(depth: int) -> str:
        if depth == 0 or draw(st.integers(0, 2)) == 0:
            return draw(st.sampled_from(leaves + ["1", "2"]))
        op = draw(st.sampled_from(INT_OPS))
        return op.format(a=expr(depth - 1), b=expr(depth - 1))

    body = expr(draw(st.integers(1, 3)))
    if draw(st.booleans()):
        body = draw(st.sampled_from(BOOL_OPS)).format(a=body, b=expr(1))
    return body, dice


def exact(rs: Any, engine: str) -> dict[str, Fraction]:
    out = rs.run({}, exact=True, engine=engine)
    return {str(o["result"]): Fraction(o["probability"]) for o in out["outcomes"]}


def brute_force(rs: Any, rolls: int) -> dict[str, Fraction]:
    counts: Counter[str] = Counter()
    for faces in itertools.product((1, 2, 3), repeat=rolls):
        counts[str(rs.run({}, dice=list(faces)))] += 1
    return {k: Fraction(v, 3 ** rolls) for k, v in counts.items()}


# Brute force runs the expression once per combination of faces, 3 ** rolls times: past 7 rolls
# (2,187 runs) an expression is left out, or one unlucky draw of 16 rolls takes an hour.
MAX_ROLLS = 7


@settings(max_examples=600 if LONG else 80, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(dice_expressions())
def test_exact_equals_every_combination_of_faces(case: tuple[str, int]) -> None:
    body, _ = case
    rolls = body.count("roll(")
    assume(rolls <= MAX_ROLLS)
    path = ROOT / "dice.rules"
    path.write_text(f"query main = {body}\n")
    rs = load_ruleset(path, use_cache=False)
    assert rs.ok, [str(d) for d in rs.diagnostics]
    try:
        truth = brute_force(rs, rolls)
    except RunError:
        return  # (an error on some faces, division by zero say: the exact run reports it too)
    for engine in ("reference", "backend"):
        assert exact(rs, engine) == truth, (engine, body)


specs = st.builds(lambda n, sides, faces: DiceSpec(n, len(faces), tuple(faces)) if faces else DiceSpec(n, sides),
                  st.integers(0, 3), st.integers(2, 6),
                  st.one_of(st.none(), st.lists(st.integers(-2, 3), min_size=2, max_size=5)))


@settings(max_examples=300 if LONG else 60, deadline=None, derandomize=True, database=None)
@given(spec=specs, path=st.lists(st.integers(0, 20), max_size=3), seed=st.integers(0, 99))
def test_a_roll_looked_at_at_once_is_a_roll_then_forced(spec: DiceSpec, path: list[int], seed: int) -> None:
    """The backend's roll that is forced at once (``roll_looked_at``) makes no die: the same value,
    steps, dice denominator and forks (branches' counts, total) as ``roll`` then ``collapse``, for
    any dice and any path to follow, and the same number with seeded dice."""
    roll = BUILTINS["roll"].fn
    widths = len(rolled(spec).values)
    path = [c % widths for c in path]  # (a choice the fork has)

    def state(run: Run) -> tuple[Any, ...]:
        return run.steps, run.natural_den, run.met, list(run.replay)

    plain, fast = Run({}, ExactDice(), path=path), Run({}, ExactDice(), path=path)
    for _ in range(3):
        assert roll(plain, spec).collapse() == roll_looked_at(fast, spec)
    assert state(plain) == state(fast)
    plain, fast = Run({}, SeededDice(seed)), Run({}, SeededDice(seed))
    assert [roll(plain, spec) for _ in range(3)] == [roll_looked_at(fast, spec) for _ in range(3)]
    assert plain.steps == fast.steps


class _Recording(Run):
    """A run that records every fork it meets, along its path or past it: (choice, counts, total)."""

    def __init__(self, state: Any, budget: int, path: list[int]):
        super().__init__(state, ExactDice(), budget, path=path)
        self.forks: list[tuple[int, tuple[int, ...], int]] = []

    def fork(self, counts: Any, total: int) -> int:
        choice = super().fork(counts, total)
        self.forks.append((choice, tuple(counts), total))
        return choice


def plain_enumeration(interp: Any, unit: Any, state: Any, budget: int) -> Any:
    """The plain way ``enumerate_exact`` stands for: every path run from scratch in a run of its own, its
    probability the product of the weights of all the forks that run met, the next path read from
    them. What enumerate_exact keeps from path to path (the forks along the path and their weights, the
    dice, each dice's distribution) and the runs it makes cheaply must change nothing of this."""
    outcomes: dict[str, list[Any]] = {}
    path: list[int] = []
    paths = spent = 0
    while True:
        run = _Recording(state, budget - spent, path)
        try:
            value = written(interp.run_query(run, unit, []))
            events = written(run.events)
        except EvalError as err:
            return "error", err.code
        except ValueError as err:  # (a result that cannot be written)
            return "error", "E013" if too_large(err) else "E011"
        spent += run.steps
        p = Fraction(1)
        for choice, counts, total in run.forks:
            p *= Fraction(counts[choice], total)
        key = json.dumps(value, sort_keys=True) + repr(type(value))
        if key in outcomes:
            outcomes[key][1] += p
            outcomes[key][3] = math.lcm(outcomes[key][3], run.natural_den)
            if json.dumps(events) != json.dumps(outcomes[key][2]):  # what every path emitted, in order
                kept, rest = [], list(events)
                for e in outcomes[key][2]:
                    if json.dumps(e) in map(json.dumps, rest):
                        kept.append(e)
                        rest = rest[list(map(json.dumps, rest)).index(json.dumps(e)) + 1:]
                outcomes[key][2], outcomes[key][4] = kept, True
        else:
            outcomes[key] = [value, p, events, run.natural_den, False]
        paths += 1
        open_forks = [i for i, (choice, counts, _) in enumerate(run.forks) if choice + 1 < len(counts)]
        if not open_forks:
            break
        i = open_forks[-1]
        path = [choice for choice, _, _ in run.forks[:i]] + [run.forks[i][0] + 1]
    ranked = sorted(outcomes.values(), key=lambda o: (-o[1], json.dumps(o[0], sort_keys=True)))
    return paths, sum(o[1] for o in ranked), [(f"{p.numerator}/{p.denominator}", odds(p, natural), v, ev, differ)
                                             for v, p, ev, natural, differ in ranked]


def enumeration(interp: Any, unit: Any, state: Any, budget: int) -> Any:
    """enumerate_exact's answer, in the terms of ``plain_enumeration``."""
    try:
        out = enumerate_exact(interp.program, state, unit.name, [], budget, engine=interp)[0]
    except EvalError as err:
        return "error", err.code
    return out["paths"], Fraction(out["total"]), [(o["probability"], o["odds"], o["result"], o["events"],
                                                    o.get("events_differ", False)) for o in out["outcomes"]]


dice_programs = programs().filter(lambda p: "roll(" in p[0])


@settings(max_examples=200 if LONG else 40, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
@given(dice_programs)
def test_enumerate_exact_is_every_path_run_alone(program: tuple[str, dict[str, Any], dict[str, Any]]) -> None:
    """On random programs with dice (procedures, decisions, memoized functions, events, tiny
    budgets), on both engines: the same paths, probabilities, odds, results and events (those common
    to every path of an outcome, and whether they differed) as
    running every path from scratch, or the same error."""
    text, state, options = program
    path = ROOT / "program.rules"
    path.write_text(text)
    rs = load_ruleset(path, use_cache=False)
    assert rs.ok, [str(d) for d in rs.diagnostics]
    budget = options.get("budget", 5_000_000)
    for query in ("main", "run_proc", "both"):
        unit = rs.program.query(query)
        for interp in (Interpreter(rs.program), rs.backend(typed=False)):
            plain = plain_enumeration(interp, unit, state, budget)
            assert enumeration(interp, unit, state, budget) == plain, (query, text)


def test_a_roll_is_charged_before_its_distribution_is_worked_out() -> None:
    """A roll that costs more than the budget fails before the distribution of its sum is worked out
    (for 1000d1000, that would take hours), whether it is forced at once or not."""
    for roll in (BUILTINS["roll"].fn, roll_looked_at):
        spec = DiceSpec(30, 30)  # (cheap to work out, were it worked out)
        run = Run({}, ExactDice(), budget=spec.exact_cost - 1)
        try:
            roll(run, spec)
        except CallError:
            pass
        assert run.steps > run.budget
        assert spec.rolled is None  # (never worked out)


def test_an_outcome_of_several_paths_lists_the_events_they_all_emitted(tmp_path: Path) -> None:
    """Two paths (r = 1, r = 2) give one result: the outcome lists only what both emitted, and says
    their events differ; an outcome of paths that emitted the same events lists them all."""
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "main.rules").write_text('''ruleset t.events "events"
procedure go cite "T-1" {
  var n = 0
  step s cite "T-1" {
    emit "start" {}
    let r = roll(1d2)
    emit "rolled" {r: r}
    emit "end" {}
  }
}
query main = go()
''')
    rs = load_ruleset(tmp_path / "main.rules", use_cache=False)
    for engine in ("reference", "backend"):
        out = rs.run({}, exact=True, engine=engine)
        (only,) = out["outcomes"]
        assert only["probability"] == "1/1"
        assert [e["event"] for e in only["events"]] == ["start", "end"]
        assert only["events_differ"] is True
    # the same events on every path: all listed, and nothing said
    (tmp_path / "same.rules").write_text((tmp_path / "main.rules").read_text().replace(
        'emit "rolled" {r: r}', 'if r > 1 { emit "rolled" {} } else { emit "rolled" {} }'))
    out = load_ruleset(tmp_path / "same.rules", use_cache=False).run({}, exact=True)
    (only,) = out["outcomes"]
    assert out["paths"] == 2
    assert [e["event"] for e in only["events"]] == ["start", "rolled", "end"] and "events_differ" not in only


def test_a_script_with_dice_the_rules_do_not_roll_is_an_error(tmp_path: Path) -> None:
    """E014: a case scripting more dice than the rules roll is wrong, not passed."""
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "main.rules").write_text('ruleset t.script "script"\nquery main = roll(1d6)\n')
    rs = load_ruleset(tmp_path / "main.rules", use_cache=False)
    assert rs.run({}, dice=[4]) == 4
    for engine in ("reference", "backend"):
        try:
            rs.run({}, dice=[4, 5], engine=engine)
        except RunError as err:
            assert [d.code for d in err.diagnostics] == ["E014"]
        else:
            raise AssertionError("two dice scripted, one rolled: no error")


def test_a_case_scripting_dice_the_rules_do_not_roll_fails(tmp_path: Path, cli: Any) -> None:
    """`ruleval test`: a case whose `dice` script more faces than the rules roll fails with E014, though
    the value it expects is what the rolls that were made give; the same case scripting what is
    rolled passes."""
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "main.rules").write_text('ruleset t.script "script"\nquery main = roll(1d6)\n')
    (tmp_path / "cases.yaml").write_text("ruleset: main.rules\ncases:\n"
                                         "  - {id: extra, dice: [4, 5], expect: 4}\n"
                                         "  - {id: exact, dice: [4], expect: 4}\n")
    r = cli("test", str(tmp_path / "cases.yaml"))
    assert r.code == 1, r.out + r.err
    failed = [line for line in r.out.splitlines() if line.startswith(("FAILED", "ERROR"))]
    assert len(failed) == 1 and "extra" in failed[0], r.out
    assert "E014" in r.out and "1 passed" in r.out, r.out


def test_a_die_shown_is_a_text_in_every_mode_and_format(tmp_path: Path) -> None:
    """`shown(r)` gives one type whichever dice run: a text (the die's number with seeded or scripted
    dice, the values still possible in exact mode), in the result and the events, as text and JSON."""
    import io

    from validator.tools.cli import main

    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "main.rules").write_text('''ruleset t.shown "shown"
procedure go cite "T-1" {
  var low = false
  step s cite "T-1" {
    let r = roll(2d6)
    emit "rolled" {roll: shown(r), total: shown(r + 1), plain: shown([1, "a"])}
    low := r < 5
    emit "after" {roll: shown(r)}
  }
}
query main = go()
''')
    rules = str(tmp_path / "main.rules")
    seen: dict[str, list[Any]] = {}
    for mode in (["--seed", "3"], ["--dice", "3,4"], ["--exact"]):
        out, err = io.StringIO(), io.StringIO()
        assert main(["run", rules, *mode, "--format", "json"], stdout=out, stderr=err) == 0, err.getvalue()
        doc = json.loads(out.getvalue())
        events = [e for o in doc["outcomes"] for e in o["events"]] if "outcomes" in doc else doc["events"]
        seen[mode[0]] = [e[k] for e in events for k in ("roll", "total", "plain") if k in e]
    assert all(type(v) is str for vs in seen.values() for v in vs), seen
    assert seen["--dice"] == ["7", "8", '[1, "a"]', "7"]
    # exact: no fork at `shown`; the look `r < 5` splits the die, and each side shows what is left
    assert seen["--exact"] == ["2d6: 2..12", "2d6+1: 3..13", '[1, "a"]', "2d6: 5..12",
                               "2d6: 2..12", "2d6+1: 3..13", '[1, "a"]', "2d6: 2..4"]


@pytest.mark.parametrize("engine", ["reference", "backend"])
def test_exact_outcomes_are_results_the_language_tells_apart(tmp_path: Path, engine: str, cli: Any) -> None:
    """Issue 42: outcomes were merged by their JSON form, so a record and a map with the same entries
    (or a list and a tuple) became one outcome of the summed probability. Results are one outcome
    when `==` says they are equal, whatever order a map's entries were put in."""
    (tmp_path / "kinds.rules").write_text(
        'query records = if roll(1d2) == 1 then {a: 1} else {"a" => 1}\n'
        'query lists = if roll(1d2) == 1 then [1, 2] else (1, 2)\n'
        'query maps = if roll(1d2) == 1 then {"a" => 1, "b" => 2} else {"b" => 2, "a" => 1}\n')
    rs = load_ruleset(tmp_path / "kinds.rules", use_cache=False)
    for query, outcomes in (("records", 2), ("lists", 2), ("maps", 1)):
        out = rs.run({}, query=query, exact=True, engine=engine)
        assert out["paths"] == 2
        assert [o["probability"] for o in out["outcomes"]] == ["1/2"] * 2 if outcomes == 2 else ["1/1"], (query, out)
    shown = cli("run", str(tmp_path / "kinds.rules"), "--query", "records", "--exact")
    rows = [line.split("%", 1)[1].strip() for line in shown.out.splitlines() if "%  " in line and "odds" not in line]
    assert shown.code == 0 and len(rows) == 2 and rows[0] != rows[1], shown.out  # (the two told apart in text)
