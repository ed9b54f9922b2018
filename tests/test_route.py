"""The route study's prototype (bench/route/typed_turn.py, issue 46 item 5) adjudicates as the engine does.

The prototype is hand-derived Python mirroring code generated from the typed standard ruleset; its
speed figures (``python -m bench.route``) mean something only if it gives the engine's results. Here
it is held to ruleval's engine on seeded turns of the throughput bench and on every DATC movement case
it can read (a turn it cannot read it refuses with None: none of the bench's turns may be refused).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.peers.dip_positions import random_turns  # noqa: E402
from bench.route.__main__ import same_results  # noqa: E402
from bench.route.typed_turn import Board, adjudicate  # noqa: E402
from validator import load_ruleset  # noqa: E402


@pytest.fixture(scope="module")
def engine() -> Any:
    rs = load_ruleset(ROOT / "rulesets" / "diplomacy" / "standard.rules")
    assert rs.ok
    return rs


@pytest.fixture(scope="module")
def board() -> Board:
    return Board()


def _movement_cases() -> list[tuple[str, dict[str, Any]]]:
    cases = []
    for path in sorted((ROOT / "tests" / "cases" / "diplomacy" / "datc").glob("*.yaml")):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        if not str(doc.get("ruleset", "")).endswith("diplomacy/standard.rules"):
            continue
        for case in doc["cases"]:
            st = case["state"]
            if (st.get("phase") or {}).get("type", "movement") == "movement" and "ruleset" not in case:
                cases.append((str(case["id"]), st))
    return cases


def test_the_prototype_gives_the_engines_results_on_the_bench_turns(engine: Any, board: Board) -> None:
    turns = random_turns(0, 40, 34) + random_turns(10_000, 10, 34)  # the bench's measured and warm-up turns
    for i, st in enumerate(turns):
        got = adjudicate(board, st)
        assert got is not None, f"turn {i}: the prototype refused a bench turn"
        assert same_results(engine.run(st), got), f"turn {i}"


def test_the_prototype_gives_the_engines_results_on_the_datc_movement_cases(engine: Any, board: Board) -> None:
    cases = _movement_cases()
    taken = []
    for cid, st in cases:
        got = adjudicate(board, st)
        if got is None:
            continue
        taken.append(cid)
        assert same_results(engine.run(st), got), f"DATC {cid}"
    # (it reads the canonical notation only; the DATC's cases are written in it)
    assert len(taken) >= 0.9 * len(cases) and len(cases) > 100, (len(taken), len(cases))


def test_the_comparison_sees_a_difference(engine: Any, board: Board) -> None:
    """`same_results` is no check that cannot fail: a changed status or a unit moved elsewhere is seen."""
    st = random_turns(3, 1, 34)[0]
    want = engine.run(st)
    got = adjudicate(board, st)
    assert got is not None and same_results(want, got)
    flipped = {**got, "orders": [{**o, "status": "invalid" if o["status"] != "invalid" else "fails"} if i == 0 else o
                                 for i, o in enumerate(got["orders"])]}
    assert not same_results(want, flipped)
    assert not same_results(want, {**got, "units": got["units"][1:]})
    assert not same_results(want, None)


def test_an_order_it_cannot_read_makes_it_refuse_the_turn(board: Board) -> None:
    st = random_turns(4, 1, 34)[0]
    first = st["orders"][0]
    # a province by its name, which the ruleset reads and the prototype does not: refused, not guessed
    odd = {**st, "orders": [{**first, "order": first["order"].replace(first["order"].split()[1], "Somewhere", 1)},
                            *st["orders"][1:]]}
    assert adjudicate(board, odd) is None
