"""Invariants of the bundled rulesets, checked on hypothesis-generated inputs (issue 7).

Diplomacy: order-listing independence, one unit per province, every unit accounted for once
(positions from `bench.peers.dip_positions.random_turn`). Jomini: deterministic validation and one
unit per hex after random move paths. HIS: exact probabilities sum to exactly 1, seeded runs are
byte-identical. CLI: `ruleval run --seed 7` twice gives byte-identical output.

Bounded (derandomized, few examples) so the file runs in well under a minute;
RULEVAL_FUZZ_LONG=1 runs many more examples.
"""

from __future__ import annotations

import copy
import io
import json
import sys
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `bench` is a top-level package of the checkout, not installed
    sys.path.insert(0, str(ROOT))

import validator  # noqa: E402
from fuzzing import bounded  # noqa: E402
from bench.peers.dip_positions import random_turn  # noqa: E402
from validator.api import RunError  # noqa: E402
from validator.lib.builtins import _distance, _hex_grid, _hex_neighbours, _reachable, _walk_cost  # noqa: E402
from validator.lib.values import Map, tree_size  # noqa: E402
from validator.tools.cli import main  # noqa: E402
from validator.tools.testing import load_suite  # noqa: E402

limited = bounded


TRIED: Counter[str] = Counter()


@pytest.fixture(scope="module", autouse=True)
def report_count():
    yield
    print("\nproperties: " + ", ".join(f"{n} {k}" for k, n in sorted(TRIED.items())) + " tried")


def dumps(x: object) -> str:
    return json.dumps(x, sort_keys=True, ensure_ascii=False)


# ---------------------------------------------------------------- Diplomacy

DIP_RULES = ROOT / "rulesets" / "diplomacy" / "standard.rules"


DIP = validator.load_ruleset(str(DIP_RULES))


def test_the_diplomacy_ruleset_loads() -> None:
    assert DIP.ok, [f"{d.span}: {d.code} {d.message}" for d in DIP.diagnostics if d.is_error]


def province(loc: str) -> str:
    return loc.split("/", 1)[0]


@st.composite
def dip_positions(draw: st.DrawFn) -> dict:
    seed = draw(st.integers(0, 2**31 - 1))
    n = draw(st.integers(2, 34))
    return random_turn(seed, n_units=n)


def statuses(result: dict) -> list[tuple[str, str, str]]:
    return sorted((o["power"], o["order"], o["status"]) for o in result["orders"])


def assert_same_outcome(other: dict, base: dict, state: dict) -> None:
    """Same status for every order, same units after, same dislodged units (in any order)."""
    assert statuses(other) == statuses(base), dumps(state)
    assert other["units"] == base["units"], dumps(state)
    assert sorted(map(dumps, other["dislodged"])) == sorted(map(dumps, base["dislodged"])), dumps(state)


@limited(40)
@given(dip_positions(), st.randoms(use_true_random=False))
def test_dip_order_listing_does_not_matter(state: dict, rnd) -> None:
    TRIED["diplomacy positions"] += 1
    base = DIP.run(state)
    shuffled = copy.deepcopy(state)
    rnd.shuffle(shuffled["orders"])
    assume(shuffled["orders"] != state["orders"])
    assert_same_outcome(DIP.run(shuffled), base, state)


@limited(15)
@given(dip_positions(), st.randoms(use_true_random=False))
def test_dip_unit_listing_does_not_matter(state: dict, rnd) -> None:
    TRIED["diplomacy positions"] += 1
    base = DIP.run(state)
    shuffled = copy.deepcopy(state)
    rnd.shuffle(shuffled["units"])
    assert_same_outcome(DIP.run(shuffled), base, state)


@limited(60)
@given(dip_positions())
def test_dip_one_unit_per_province_and_every_unit_accounted_for(state: dict) -> None:
    TRIED["diplomacy positions"] += 1
    out = DIP.run(state)
    provs = Counter(province(u["location"]) for u in out["units"])
    assert [p for p, n in provs.items() if n > 1] == [], dumps(state)
    kinds = lambda us: Counter((u["power"], u["type"]) for u in us)  # noqa: E731
    after = out["units"] + out["dislodged"] + out["destroyed"]
    assert len(after) == len(state["units"]), dumps(state)
    assert kinds(after) == kinds(state["units"]), dumps(state)
    # a dislodged unit is reported where it stood, and is no longer on the board
    before = {province(u["location"]) for u in state["units"]}
    assert all(province(d["location"]) in before for d in out["dislodged"]), dumps(state)


# ---------------------------------------------------------------- Jomini

JOM_RULES = {"re": ROOT / "rulesets" / "jomini" / "re.rules", "am": ROOT / "rulesets" / "jomini" / "am.rules"}
JOM = {k: validator.load_ruleset(str(p)) for k, p in JOM_RULES.items()}
JOM_FRESH = {k: validator.load_ruleset(str(p)) for k, p in JOM_RULES.items()}


def _jomini_states() -> list[tuple[str, str, dict]]:
    small = json.loads((ROOT / "rulesets" / "jomini" / "examples" / "small.json").read_text())
    out = [("re", "small.json", small), ("am", "small.json", small)]
    for case in load_suite([str(ROOT / "tests" / "cases" / "jomini")]).cases:
        state = case.data.get("state")
        if not isinstance(state, dict) or "board" not in state or case.data.get("expect_error"):
            continue
        out.append(("am" if case.ruleset.endswith("am.rules") else "re", case.id, json.loads(json.dumps(state))))
    return out


JOM_STATES = _jomini_states()


def holds_hex(u: dict) -> bool:
    """Units that hold their hex (JOM-O1): all but characters attached to a unit (`flags.lone: false`)."""
    if u.get("hex") is None:
        return False
    return u.get("type") != "officer" or (u.get("flags") or {}).get("lone", True)


def one_per_hex(units: list[dict]) -> bool:
    c = Counter(u["hex"] for u in units if holds_hex(u))
    return all(n == 1 for n in c.values())


@st.composite
def jomini_runs(draw: st.DrawFn) -> tuple[str, str, dict]:
    which, name, state = draw(st.sampled_from(JOM_STATES))
    state = copy.deepcopy(state)
    board = state["board"]
    layout = board.get("layout", "odd-q")
    cols, rows = board.get("cols", 6), board.get("rows", 5)
    on_board = lambda h: 1 <= int(h[:2]) <= cols and 1 <= int(h[2:]) <= rows  # noqa: E731
    units = [u for u in state["units"] if u.get("hex")]
    assume(units)
    moves = []
    for _ in range(draw(st.integers(1, 4))):
        u = draw(st.sampled_from(units))
        path = [u["hex"]]
        for _ in range(draw(st.integers(0, 5))):
            nxt = [h for h in _hex_neighbours(path[-1], layout) if on_board(h)]
            if not nxt:
                break
            path.append(draw(st.sampled_from(sorted(nxt))))
        move = {"unit": u["id"], "path": path, "combat": draw(st.booleans())}
        if draw(st.integers(0, 9)) == 0:
            move["exit"] = True
        moves.append(move)
    state["moves"] = moves
    return which, name, state


def run_or_none(rs, state: dict, **kw):
    """The run's result, or None for a generated state the schema refuses (no property failure)."""
    try:
        return rs.run(state, **kw)
    except RunError as exc:
        if exc.kind == "state":
            return None
        raise


def run_jomini(rs, state: dict) -> str | None:
    out = run_or_none(rs, state)
    return None if out is None else json.dumps(out, ensure_ascii=False)


@limited(60)
@given(jomini_runs())
def test_jomini_validation_is_deterministic_and_one_unit_per_hex(run: tuple[str, str, dict]) -> None:
    which, name, state = run
    assume(one_per_hex(state["units"]))
    first = run_jomini(JOM[which], state)
    assume(first is not None)
    TRIED["jomini move sequences"] += 1
    assert run_jomini(JOM[which], copy.deepcopy(state)) == first, (which, name, dumps(state))
    assert run_jomini(JOM_FRESH[which], copy.deepcopy(state)) == first, (which, name, dumps(state))
    units = json.loads(first)["units"]
    assert one_per_hex(units), (which, name, dumps(state))
    assert sorted(u["id"] for u in units) == sorted(u["id"] for u in state["units"]), (which, name)


# ---------------------------------------------------------------- Here I Stand

HIS_CASES = [c for c in load_suite([str(ROOT / "tests" / "cases" / "his")]).cases
             if isinstance(c.data.get("state"), dict) and not c.data.get("expect_error")]
HIS = {}


def his_rules(path: str):
    if path not in HIS:
        HIS[path] = validator.load_ruleset(path)
    return HIS[path]


@st.composite
def his_runs(draw: st.DrawFn) -> tuple[str, str, dict]:
    case = draw(st.sampled_from(HIS_CASES))
    state = json.loads(json.dumps(case.data["state"]))
    for leader in state.get("leaders", []):  # vary what the dice are compared with
        if isinstance(leader.get("battle"), int) and draw(st.booleans()):
            leader["battle"] = draw(st.integers(0, 3))
    if state.get("wars") and draw(st.booleans()):
        state["wars"] = draw(st.permutations(state["wars"]))
    return case.ruleset, case.id, state


def run_his(path: str, state: dict, **kw) -> dict | None:
    return run_or_none(his_rules(path), state, **kw)


@limited(40)
@given(his_runs())
def test_his_exact_probabilities_sum_to_one(run: tuple[str, str, dict]) -> None:
    path, name, state = run
    out = run_his(path, state, exact=True)
    assume(out is not None)
    TRIED["his exact runs"] += 1
    total = sum((Fraction(o["probability"]) for o in out["outcomes"]), Fraction(0))
    assert total == 1, (name, dumps(state), [o["probability"] for o in out["outcomes"]])
    assert Fraction(out["total"]) == 1, (name, out["total"])
    assert all(Fraction(o["probability"]) > 0 for o in out["outcomes"]), name


@limited(40)
@given(his_runs(), st.integers(0, 2**63 - 1))
def test_his_same_seed_same_bytes(run: tuple[str, str, dict], seed: int) -> None:
    path, name, state = run
    first = run_his(path, state, seed=seed)
    assume(first is not None)
    TRIED["his seeded runs"] += 1
    again = run_his(path, copy.deepcopy(state), seed=seed)
    fresh = validator.load_ruleset(path).run(copy.deepcopy(state), seed=seed) if TRIED["his seeded runs"] % 8 == 1 else again
    assert dumps(again) == dumps(first), (name, seed)
    assert dumps(fresh) == dumps(first), (name, seed)


# ---------------------------------------------------------------- CLI, same seed, same bytes

def _cli_inputs() -> list[tuple[str, object]]:
    his = next(c for c in HIS_CASES if c.id == "suleiman_to_mohacs")
    movement_1901 = ROOT / "rulesets/diplomacy/examples/movement_1901.json"
    return [
        ("rulesets/diplomacy/standard.rules", json.loads(movement_1901.read_text())),
        ("rulesets/diplomacy/standard.rules", random_turn(7)),
        ("rulesets/jomini/re.rules", json.loads((ROOT / "rulesets/jomini/examples/small.json").read_text())),
        ("rulesets/jomini/am.rules", json.loads((ROOT / "rulesets/jomini/examples/small.json").read_text())),
        (str(Path(his.ruleset).resolve().relative_to(ROOT)), his.data["state"]),
    ]


@pytest.mark.parametrize("rules,state", _cli_inputs(), ids=["dip-1901", "dip-random7", "jomini-re", "jomini-am", "his"])
@pytest.mark.parametrize("extra", [[], ["--explain"]], ids=["plain", "explain"])
def test_cli_same_seed_same_bytes(rules: str, state: object, extra: list[str], tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state))
    outs = []
    for _ in range(2):
        out, err = io.StringIO(), io.StringIO()
        code = main(["run", "--format", "json", str(ROOT / rules), "--state", str(path), "--seed", "7", *extra],
                    stdout=out, stderr=err)
        assert code == 0, err.getvalue()
        outs.append(out.getvalue())
    TRIED["cli runs"] += 2
    assert outs[0] == outs[1]
    json.loads(outs[0])


class _Budget:
    steps, budget = 0, 10**9


@limited(200)
@given(st.one_of(st.tuples(), st.lists(st.one_of(st.text(max_size=3), st.integers(), st.none(), st.booleans(),
                                                 st.fractions(), st.lists(st.integers(), max_size=2).map(tuple)),
                                       max_size=5).map(tuple)))
def test_a_tuple_is_charged_its_tree_size(v: tuple) -> None:
    """`_walk_cost` counts a tuple of texts and numbers itself; the count is `tree_size`'s."""
    ctx = _Budget()
    _walk_cost(ctx, v, "test")
    assert ctx.steps == tree_size(v, 10**9)


@limited(200)
@given(st.sampled_from(["odd-q", "even-q", "odd-r", "even-r"]), st.sampled_from([0, 1]),
       st.one_of(st.integers(1, 9), st.sampled_from([98, 99])), st.one_of(st.integers(1, 9), st.sampled_from([98, 99])))
def test_hex_grid_lists_each_hexs_neighbours_on_the_board(layout: str, first: int, cols: int, rows: int) -> None:
    """`hex_grid` (built a column at a time from slices) against `hex_neighbours` of each label, kept in
    their order when they lie on the board; the labels column by column."""
    want = {}
    for c in range(first, cols + first):
        for r in range(first, rows + first):
            label = f"{c:02d}{r:02d}"
            want[label] = [n for n in _hex_neighbours(label, layout)
                           if first <= int(n[:2]) < cols + first and first <= int(n[2:]) < rows + first]
    got = _hex_grid(cols, rows, layout, first)
    assert list(got) == list(want) and got == Map(want)  # (a map, docs/language.md "Records and maps")


@limited(300)
@given(st.dictionaries(st.integers(0, 9), st.dictionaries(st.integers(0, 9), st.one_of(st.none(), st.integers(0, 4)),
                                                          max_size=4), max_size=10),
       st.integers(0, 9), st.integers(0, 12), st.sets(st.integers(0, 9), max_size=3))
def test_reachable_gives_each_node_its_least_cost_within_the_budget(edges: dict, start: int, budget: int,
                                                                   walls: set) -> None:
    """`reachable` with a cost function (`none`: cannot enter) and `can_pass`, against the least cost of
    every node found by relaxing every edge until nothing changes: the search that asks no cost of
    entering a node already settled (costs are never below 0) gives the same map."""
    graph = {a: list(row) for a, row in edges.items()}
    want = {start: 0}
    changed = True
    while changed:
        changed = False
        for a, row in edges.items():
            if a not in want or (a != start and a in walls):
                continue
            for b, c in row.items():
                if c is not None and want[a] + c <= budget and want[a] + c < want.get(b, budget + 1):
                    want[b] = want[a] + c
                    changed = True
    asked: list[tuple[int, int]] = []

    def cost(ctx: object, a: int, b: int) -> int | None:
        asked.append((a, b))
        return edges[a][b]  # type: ignore[no-any-return]

    assert _reachable(_Budget(), graph, start, budget, cost, lambda ctx, n: n not in walls) == Map(want)  # (a map)
    assert len(asked) == len(set(asked))  # each edge asked once at most


def test_reachable_asks_no_cost_that_could_not_lower_a_node() -> None:
    """From b (cost 1), entering c, already reached at 1, is not asked: no cost below 0 could make it
    cheaper (it was asked until 2026-12-02: about a sixth of the costs asked in bench/jomini_reach)."""
    asked: list[tuple[str, str]] = []

    def cost(ctx: object, a: str, b: str) -> int:
        asked.append((a, b))
        return 1

    assert _reachable(_Budget(), {"a": ["b", "c"], "b": ["c"], "c": []}, "a", 5, cost) == Map({"a": 0, "b": 1, "c": 1})
    assert asked == [("a", "b"), ("a", "c")]


@limited(300)
@given(st.dictionaries(st.integers(0, 11), st.lists(st.integers(0, 11), max_size=4), max_size=12),
       st.integers(0, 11), st.sets(st.integers(0, 11), max_size=4))
def test_distance_is_the_least_cost_reachable_gives_a_target(graph: dict, start: int, targets: set) -> None:
    """`distance` (the fewest steps to the nearest target, stopping there) against `reachable` with
    every entry costing 1, which walks the whole graph: the same number, or none for neither."""
    costs = {n: 1 for n in set(graph) | {m for ms in graph.values() for m in ms} | {start}}
    reached = _reachable(_Budget(), graph, start, 10**6, costs)
    found = [reached[t] for t in targets if t in reached]
    assert _distance(_Budget(), graph, start, targets) == (min(found) if found else None)
    assert _distance(_Budget(), graph, start, sorted(targets)) == (min(found) if found else None)
