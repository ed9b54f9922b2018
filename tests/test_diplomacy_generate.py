"""The Diplomacy generator (``query generate(seed)`` of rulesets/diplomacy/standard.rules) and the
``ruleval diff`` example of docs/errata.md (standard rules vs the DATC 4.A.2 "all hold" option)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from validator.api import load_ruleset
from validator.tools.errata import generator_state

ROOT = Path(__file__).resolve().parent.parent
DIP = ROOT / "rulesets" / "diplomacy"
SEEDS = range(50)


def generated(rs: Any, seed: int) -> Any:
    return rs.run(generator_state(rs), query="generate", args=[seed], seed=seed, validate=False)


@pytest.mark.parametrize("name", ["standard.rules", "teaching.rules"])
def test_generated_states_are_valid_and_adjudicate(name: str) -> None:
    rs = load_ruleset(DIP / name)
    assert "generate" in rs.queries()
    kinds: set[str] = set()
    phases: dict[str, set[str]] = {}
    reasons: list[str] = []  # of refused and failed orders outside movement phases
    for seed in SEEDS:
        state = generated(rs, seed)
        assert state == generated(rs, seed)  # deterministic per seed
        # schema + validate_state (run raises RunError on an invalid state), then the adjudication
        result = rs.run(state, seed=seed)
        phases.setdefault(state["phase"]["type"], set()).update(o["status"] for o in result["orders"])
        units = state["units"]
        assert len({u["location"].split("/")[0] for u in units}) == len(units)
        if state["phase"]["type"] != "movement":
            reasons += [o["reason"] for o in result["orders"] if o["reason"]]
            continue
        # one order per unit, now and then one more for one unit (DATC 4.D.3)
        ordered = [" ".join(o["order"].split()[:2]) for o in state["orders"]]
        assert sorted(set(ordered)) == sorted(f"{u['type'][0].upper()} {u['location'].upper()}" for u in units)
        assert len(ordered) - len(units) in (0, 1), ordered
        if len(ordered) > len(units):
            kinds.add("twice")
        assert len({o["power"] for o in state["orders"]}) >= 2 or len(units) < 2
        if name == "standard.rules":
            assert 6 <= len(units) <= 20
        for o in result["orders"]:
            assert o["status"] != "invalid", (seed, o)  # every generated order is legal
            text = o["order"]
            kinds.add("convoy" if " C " in text else "via" if text.endswith(" VIA") else
                      "support move" if " S " in text and " - " in text else "support hold" if " S " in text else
                      "move" if " - " in text else "hold")
    assert kinds == {"convoy", "via", "support move", "support hold", "move", "hold", "twice"}, kinds
    # every phase type, with orders carried out and orders refused in retreats and adjustments
    assert set(phases) == {"movement", "retreat", "adjustment"}
    assert {"succeeds", "invalid"} <= phases["retreat"] and "succeeds" in phases["adjustment"]
    if name == "standard.rules":
        assert "invalid" in phases["adjustment"]
        # what an errata to retreats or builds would change: two retreats to one place, a unit given
        # two retreat orders, a build in an owned centre that is not a home centre
        assert any(r.startswith("bounce with ") for r in reasons), reasons
        assert any("given different orders" in r for r in reasons), reasons
        assert any("is not a home centre of" in r for r in reasons), reasons


def test_seeds_give_different_states() -> None:
    rs = load_ruleset(DIP / "standard.rules")
    states = [json.dumps(generated(rs, seed), sort_keys=True) for seed in range(20)]
    assert len(set(states)) == 20


def diff(*argv: str) -> tuple[int, dict[str, Any], list[Any]]:
    """`ruleval diff standard all_hold ... --format json`: the exit code, the report, the minimal states."""
    from validator.tools.cli import main

    out, err = io.StringIO(), io.StringIO()
    code = main(["diff", str(DIP / "standard.rules"), str(DIP / "all_hold.rules"), *argv, "--format", "json"],
                stdout=out, stderr=err)
    assert "Traceback" not in out.getvalue() + err.getvalue()
    report = json.loads(out.getvalue())
    return code, report, [d["minimal"] for d in report["differences"]]


def test_errata_diplomacy_all_hold() -> None:
    code, report, minimal = diff("--cases", str(ROOT / "tests" / "cases" / "diplomacy" / "datc" / "6_F.yaml"),
                               "--generate", "20")
    assert code == 1
    assert report["tried"] == 45 and report["differences"], report["tried"]  # 25 cases of 6.F + 20 generated
    assert any(d["state"].endswith("6_F.yaml#6.F.14") for d in report["differences"]) and minimal
    for st in minimal:  # convoy paradoxes: convoyed armies and fleets attacking their convoys
        assert any(" C " in o["order"] for o in st["orders"]) and len(st["units"]) <= 9, st
    news = [c["new"] for d in report["differences"] for c in d["changed"]]
    assert "convoyed A BRE did not arrive" in news  # all hold: the convoy fails, and the attack on it too




# errata the generator must not call equivalent: each changes what only retreat, adjustment or
# doubly-ordered states show (the generator once made none of them, and `diff` said "equivalent")
ERRATA = {
    "build anywhere": None,  # the bundled variant
    "first retreat wins": '''override rule retreat_moves(e) cite "DIP-R1" =
  e != none and e.kind == "retreat" and retreat_targets[prov(e.to)][0].p == e.p
''',
    "first order counts": '''override rule several_orders(p, vs) cite "DATC-4.D.3" = vs[0].ord
''',
}


@pytest.mark.parametrize("name", list(ERRATA))
def test_generated_states_tell_retreat_build_and_double_order_errata_apart(name: str, tmp_path: Path) -> None:
    from validator.tools.cli import main

    body = ERRATA[name]
    if body is None:
        new = DIP / "build_anywhere.rules"
    else:
        new = tmp_path / "errata.rules"
        new.write_text(f'ruleset t.errata "{name}"\nextends "bundled:diplomacy/standard.rules"\n\n{body}', encoding="utf-8")
    for old_new in ((DIP / "standard.rules", new), (new, DIP / "standard.rules")):
        out, err = io.StringIO(), io.StringIO()
        code = main(["diff", *map(str, old_new), "--generate", "100", "--shrink", "0", "--format", "json"],
                    stdout=out, stderr=err)
        assert code == 1, (name, err.getvalue())
        assert json.loads(out.getvalue())["differences"]


def test_games_take_orders_from_both_rulesets_in_turn() -> None:
    """Standard rules as NEW, build-anywhere as OLD: NEW's random orders build only in home centres,
    so game 0 agrees; game 1 plays OLD's orders, which build elsewhere, and NEW refuses the build."""
    from validator.tools.cli import main

    out, err = io.StringIO(), io.StringIO()
    code = main(["diff", str(DIP / "build_anywhere.rules"), str(DIP / "standard.rules"), "--games", "2", "--phases", "8",
                 "--start", str(ROOT / "docs" / "examples" / "game" / "start.json"), "--shrink", "0", "--format", "json"],
                stdout=out, stderr=err)
    report = json.loads(out.getvalue())
    assert code == 1 and report["games"] == 2, err.getvalue()
    [found] = report["differences"]
    assert found["state"].startswith("game 1 ")
    # the seed the phase was run with runs the minimal state again, to the same verdict
    rs = load_ruleset(DIP / "standard.rules")
    again = rs.run(found["minimal"], query="advance", seed=found["seed"])
    assert again["result"] == found["new"]["result"]
    assert any(c["pointer"].endswith("/reason") and "is not a home centre of" in (c["new"] or "") for c in found["changed"])


def test_generated_states_hold_supported_head_to_heads(tmp_path: Path) -> None:
    """An errata where a head-to-head ignores the defender's supports changes who moves only in a
    supported head-to-head, which random moves made once in a thousand states: the generator makes
    head-to-heads on purpose (and backs them), so 200 states show an order's status change, not only
    reasons reworded."""
    from validator.tools.cli import main

    errata = tmp_path / "h2h.rules"
    errata.write_text('ruleset t.h2h "head-to-head without the defender\'s supports"\n'
                      'extends "bundled:diplomacy/standard.rules"\n\noverride rule defend(t) cite "DIP-S4" = 1\n',
                      encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    code = main(["diff", str(DIP / "standard.rules"), str(errata), "--generate", "200", "--shrink", "0", "--format", "json"],
                stdout=out, stderr=err)
    assert code == 1, err.getvalue()
    moved = [d for d in json.loads(out.getvalue())["differences"] if any(c["pointer"].endswith("/status") for c in d["changed"])]
    assert moved, "no generated state where the errata changes an order's status"


def test_random_orders_are_legal_on_a_map_with_a_convoyable_island() -> None:
    """`random_orders` offered a fleet-held convoyable island (ancmed's Baleares) as a convoy destination:
    `A TAR - BAL VIA`, refused by the order check (no convoy can carry an army into the fleet's own
    province), in ancmed's game of seed 1 at S33M. Its convoy destinations now pass the order check's own
    test (`convoy_possible`)."""
    from validator.api import play

    rs = load_ruleset(ROOT / "rulesets" / "diplomacy" / "ancmed.rules")
    start = rs.run({"units": []}, "start_state", validate=False)
    steps = list(play(rs, start, [], until="S34M", random_orders=1))
    assert steps[-1].next_phase == "S34M"
    assert [(s.phase, o["order"]) for s in steps for o in s.result["orders"] if o["status"] == "invalid"] == []
