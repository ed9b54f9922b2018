"""The reference graph's cycle finder (``program._on_cycles``: which definitions may recur) and its
readers (``program._readers_of``: what reads decisions, what is not state-free) against their
definitions, on random graphs: a node lies on a cycle exactly when it reaches itself; it reads a
seed when it is one or reaches one."""

from __future__ import annotations

import random
from typing import Any

from validator.lang.program import _on_cycles, _readers_of


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
