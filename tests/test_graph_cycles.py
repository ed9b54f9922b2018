"""The reference graph's cycle finder (``program._on_cycles``: which definitions may recur) and its
readers (``program._readers_of``: what reads decisions, what is not state-free) against their
definitions, on random graphs: a node lies on a cycle exactly when it reaches itself; it reads a
seed when it is one or reaches one. The readers are also held to the fixpoint they were first defined
by (every definition again until nothing changes), on random graphs and on every bundled ruleset's
graph, and found on a long chain in one pass."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from validator import load_ruleset
from validator.lang.program import DEFS, _on_cycles, _readers_of

ROOT = Path(__file__).resolve().parent.parent


def _reaches_itself(refs: dict[Any, set[Any]], start: Any) -> bool:
    seen: set[Any] = set()
    todo = [c for c in refs[start] if c in refs]
    while todo:
        k = todo.pop()
        if k == start:
            return True
        if k not in seen:
            seen.add(k)
            todo.extend(c for c in refs[k] if c in refs)
    return False


def test_the_nodes_on_cycles_are_those_that_reach_themselves() -> None:
    rnd = random.Random(46)
    for _ in range(2000):
        keys = [("m", str(i)) for i in range(rnd.randint(0, 14))]
        # edges to nodes outside the graph (built-ins, another module's names) are left out
        refs = {k: {rnd.choice([*keys, ("other", "x")]) for _ in range(rnd.randint(0, 3))} for k in keys}
        assert _on_cycles(refs) == {k for k in refs if _reaches_itself(refs, k)}, refs


def test_a_long_chain_closed_into_a_ring_is_found_without_recursion() -> None:
    n = 50_000
    chain = {i: {i + 1} for i in range(n)}
    assert _on_cycles(chain) == set()
    chain[n - 1] = {0}
    assert _on_cycles(chain) == set(range(n))


def test_the_readers_of_seeds_are_the_definitions_that_reach_one() -> None:
    rnd = random.Random(4646)
    for _ in range(2000):
        keys = [("m", str(i)) for i in range(rnd.randint(0, 14))]
        refs = {k: {rnd.choice([*keys, ("other", "x")]) for _ in range(rnd.randint(0, 3))} for k in keys}
        seeds = {rnd.choice([*keys, ("other", "x")]) for _ in range(rnd.randint(0, 3))}

        def reaches(start: Any, seeds: set[Any] = seeds, refs: dict[Any, set[Any]] = refs) -> bool:
            seen, todo = {start}, [start]
            while todo:
                k = todo.pop()
                if k in seeds:
                    return True
                for c in refs.get(k, ()):
                    if c not in seen:
                        seen.add(c)
                        todo.append(c)
            return False

        assert _readers_of(seeds, refs) == seeds | {k for k in refs if reaches(k)}, (seeds, refs)


def _readers_by_fixpoint(seeds: set[Any], refs: dict[Any, set[Any]]) -> set[Any]:
    """The readers' first definition: every definition again, until a pass adds none."""
    found = set(seeds)
    changed = True
    while changed:
        changed = False
        for k, deps in refs.items():
            if k not in found and deps & found:
                found.add(k)
                changed = True
    return found


def test_the_readers_are_the_fixpoints_set_on_random_graphs_with_cycles() -> None:
    rnd = random.Random(4647)
    for _ in range(2000):
        keys = [("m", str(i)) for i in range(rnd.randint(0, 20))]
        refs = {k: {rnd.choice([*keys, ("other", "x")]) for _ in range(rnd.randint(0, 4))} for k in keys}
        for a, b in zip(keys, keys[1:]):  # (a ring, read backwards, through some of the nodes)
            if rnd.random() < 0.3:
                refs[b].add(a)
        seeds = {rnd.choice([*keys, ("other", "x")]) for _ in range(rnd.randint(0, 3))}
        assert _readers_of(seeds, refs) == _readers_by_fixpoint(seeds, refs), (seeds, refs)


@pytest.mark.parametrize("path", sorted((ROOT / "rulesets").rglob("*.rules")), ids=lambda p: p.name)
def test_the_readers_are_the_fixpoints_set_on_each_bundled_ruleset(path: Path) -> None:
    program = load_ruleset(path, use_cache=False, check_cache=False).program
    units, refs = program.units, program.refs
    decisions = {k for k, u in units.items() if u.kind == "decision"}
    stateful = {k for k, u in units.items() if u.kind not in (*DEFS, "const", "table") or u.rolls or u.recursive}
    for seeds in (decisions, stateful, set(units)):
        assert _readers_of(seeds, refs) == _readers_by_fixpoint(seeds, refs)
    # and what analyse marked with them
    assert {k for k, u in units.items() if u.uses_decisions} == _readers_by_fixpoint(decisions, refs) & set(units)
    assert {k for k, u in units.items() if not u.state_free} == _readers_by_fixpoint(stateful, refs) & set(units)


def test_the_readers_of_a_long_chain_read_backwards_are_found_in_one_pass() -> None:
    # (each definition reads the one made after it: the fixpoint would add one a pass, n passes of n)
    n = 50_000
    chain = {i: {i + 1} for i in range(n)}
    assert _readers_of({n}, chain) == set(range(n + 1))
    assert _readers_of({n // 2}, chain) == set(range(n // 2 + 1))
