"""Here I Stand: two answers to one question agree.

`interceptors` says which formations may roll an interception of the move, in the order they roll;
`main` rolls them (HIS-I1, HIS-IP1). Over generated states (the ruleset's `generate(seed)`) and
perturbations of the bundled example and case states, the formations `interceptors` lists are
exactly those that roll in some branch of `main --exact`, every branch rolls a subsequence of that
list (impulse order, HIS-I1), and a declaration `main` refuses is refused in every branch (a
refusal judges the input, not the dice). Every exact distribution sums to 1, and seeded sampling
lands within a tolerance computed from the number of samples.

(test_his.py compares sampling with exact on its two fixed states with a fixed tolerance; here the
states are generated, and the tolerance follows from the sample size.)"""

from __future__ import annotations

import copy
import json
import math
import random
from fractions import Fraction
from pathlib import Path

import pytest

import validator
from validator.api import RunError
from validator.tools.errata import generator_state
from validator.tools.testing import load_suite

ROOT = Path(__file__).resolve().parent.parent
HIS = ROOT / "rulesets" / "his"
RULESETS = {p.name: validator.load_ruleset(p) for p in (HIS / "his.rules", HIS / "his_threshold8.rules")}
RS = RULESETS["his.rules"]


def generated(seed: int) -> dict:
    return RS.run(generator_state(RS), query="generate", args=[seed], seed=seed, validate=False)


def case_states() -> list[tuple[str, Path, dict]]:
    cases = load_suite([str(ROOT / "tests" / "cases" / "his")]).cases
    found = [(c.id, Path(c.ruleset), c.data["state"]) for c in cases
             if isinstance(c.data.get("state"), dict) and not c.data.get("expect_error")]
    for path in sorted((HIS / "examples").glob("*.json")):
        found.append((path.stem, HIS / "his.rules", json.loads(path.read_text(encoding="utf-8"))))
    return found


def perturbed(name: str, state: dict) -> list[tuple[str, dict]]:
    """The state, and variants that change who may intercept: without declared decisions (the default
    policy), with an enemy unit of an interceptor's power standing in the destination (HIS-I8, HIS-I10),
    with the leaders' battle ratings changed, with the move made for an ordinary reason."""
    rng = random.Random(name)
    out = [(name, state)]
    if "decisions" in state:
        out.append((name + "+no decisions", {k: v for k, v in state.items() if k != "decisions"}))
    action = state.get("action") or {}
    mover = action.get("power")
    others = [u for u in state.get("units", []) if u.get("power") != mover and u.get("space") != action.get("to")]
    if others and action.get("to"):
        s = copy.deepcopy(state)
        s.pop("decisions", None)
        pick = rng.choice(others)
        s["units"] = s["units"] + [{"id": "extra_unit", "power": pick["power"], "space": action["to"], "type": "regular"}]
        out.append((name + "+a unit in the destination", s))
    if state.get("leaders"):
        s = copy.deepcopy(state)
        for leader in s["leaders"]:
            if isinstance(leader.get("battle"), int):
                leader["battle"] = rng.randrange(4)
        out.append((name + "+battle ratings", s))
    if action.get("reason") is not None:
        s = copy.deepcopy(state)
        del s["action"]["reason"]
        out.append((name + "+no reason", s))
    return out


def outcome_key(result: dict) -> str:
    """How the move ended (a seeded run's result also carries its events; an exact outcome, beside it)."""
    return json.dumps({k: v for k, v in result.items() if k != "events"}, sort_keys=True)


def rolled(events: list) -> list[tuple]:
    """The interception attempts a branch of `main` rolled, as (power, from, units, leaders)."""
    return [(e["power"], e["from"], tuple(e["units"]), tuple(e["leaders"])) for e in events
            if e.get("event") == "interception attempted"]


def is_subsequence(xs: list, ys: list) -> bool:
    it = iter(ys)
    return all(any(x == y for y in it) for x in xs)


def check_agreement(rs, name: str, state: dict) -> str:
    """What was checked ("" when the state is refused by the schema or the state check)."""
    try:
        listed = rs.run(state, query="interceptors")
        out = rs.run(state, exact=True)
    except RunError as exc:
        if exc.kind == "state":
            return ""
        raise
    assert Fraction(out["total"]) == 1, name
    assert sum(Fraction(o["probability"]) for o in out["outcomes"]) == 1, name
    want = [(a["power"], a["from"], tuple(a["units"]), tuple(a["leaders"])) for a in listed]
    assert len(set(want)) == len(want), (name, want)
    refused = [o for o in out["outcomes"] if o["result"]["status"] == "rejected" and o["result"].get("step") == "interception"]
    if refused:
        # a declared interception the rules refuse is refused before any die is rolled
        assert len(out["outcomes"]) == 1 and not rolled(refused[0]["events"]), \
            (name, [rolled(o["events"]) for o in out["outcomes"]])
        return "refused"
    seen: set[tuple] = set()
    for o in out["outcomes"]:
        made = rolled(o["events"])
        assert is_subsequence(made, want), (name, "rolled", made, "listed", want)
        seen |= set(made)
    assert seen == set(want), (name, "listed but never rolled", [w for w in want if w not in seen],
                               "rolled but not listed", sorted(seen - set(want)))
    sides = {p: (v.get("major") if v.get("kind") == "minor" and v.get("major") else p)
             for p, v in (state.get("powers") or {}).items()}
    order = ["ottoman", "hapsburg", "england", "france", "papacy", "protestant"]  # HIS-I1, the ruleset's default order
    ranks = [order.index(sides.get(p, p)) for p, *_ in want if sides.get(p, p) in order]
    assert ranks == sorted(ranks), (name, "not in impulse order", want)
    if want and not (state.get("decisions") or {}).get("intercept"):
        check_declared(rs, name, state, listed, out)
    return "agreed" if want else "nobody"


def distribution(out: dict) -> dict[str, Fraction]:
    dist: dict[str, Fraction] = {}
    for o in out["outcomes"]:
        key = outcome_key(o["result"])
        dist[key] = dist.get(key, Fraction(0)) + Fraction(o["probability"])
    return dist


def check_declared(rs, name: str, state: dict, listed: list, out: dict) -> None:
    """Declaring, as the intercepting players, exactly the attempts `interceptors` lists changes nothing
    of the move's distribution; declaring one more that the rules refuse (the mover's own formation:
    HIS-I4) refuses the move before any die, whatever its place in the list."""
    declared = {**state, "decisions": {**(state.get("decisions") or {}), "intercept": listed}}
    assert distribution(rs.run(declared, exact=True)) == distribution(out), (name, "declared as listed")
    action = state["action"]
    own = {"power": action["power"], "from": action["from"], "units": action.get("units", []),
           "leaders": action.get("leaders", [])}
    refused = {**declared, "decisions": {**declared["decisions"], "intercept": listed + [own]}}
    again = rs.run(refused, exact=True)["outcomes"]
    assert len(again) == 1 and again[0]["result"]["status"] == "rejected" and not rolled(again[0]["events"]), \
        (name, "one refused attempt declared last", [o["result"]["status"] for o in again])


def test_interceptors_agree_with_main_on_generated_states() -> None:
    kinds: dict[str, int] = {}
    for seed in range(150):
        kind = check_agreement(RS, f"generate({seed})", generated(seed))
        kinds[kind] = kinds.get(kind, 0) + 1
    assert kinds.get("agreed", 0) >= 50 and kinds.get("nobody", 0) >= 10, kinds  # the generator reaches both


@pytest.mark.parametrize("name,path,state", case_states(), ids=[n for n, _, _ in case_states()])
def test_interceptors_agree_with_main_on_perturbed_case_states(name: str, path: Path, state: dict) -> None:
    rs = RULESETS.get(path.name) or validator.load_ruleset(path)
    for variant, s in perturbed(name, state):
        check_agreement(rs, variant, s)


def test_seeded_sampling_matches_exact_on_generated_states() -> None:
    """For each outcome of probability p, n seeded runs give a frequency within z * sqrt(p (1 - p) / n)
    of p, z chosen so that all comparisons together wrongly fail with probability below 1 in 10 000
    (Bonferroni over the outcomes compared, normal approximation, plus a continuity margin of 1/n);
    no seeded run gives an outcome exact mode does not list."""
    n = 300
    states = [s for s in (generated(seed) for seed in range(60)) if 3 <= len(RS.run(s, exact=True)["outcomes"]) <= 40][:6]
    assert len(states) == 6
    exacts = [distribution(RS.run(state, exact=True)) for state in states]
    comparisons = sum(len(d) for d in exacts)
    alpha = 1e-4 / comparisons
    z = math.sqrt(2) * _erfinv(1 - alpha)  # two-sided
    for i, (state, dist) in enumerate(zip(states, exacts)):
        counts: dict[str, int] = {}
        for seed in range(n):
            key = outcome_key(RS.run(state, seed=seed * 7919 + i))
            counts[key] = counts.get(key, 0) + 1
        assert set(counts) <= set(dist), (i, sorted(set(counts) - set(dist))[:1])
        for key, p in dist.items():
            tol = z * math.sqrt(float(p) * (1 - float(p)) / n) + 1 / n
            assert abs(counts.get(key, 0) / n - float(p)) <= tol, (i, key, counts.get(key, 0) / n, float(p), tol)


def _erfinv(y: float) -> float:
    """The inverse of math.erf, by bisection (enough for a tolerance)."""
    lo, hi = 0.0, 10.0
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if math.erf(mid) < y else (lo, mid)
    return (lo + hi) / 2
