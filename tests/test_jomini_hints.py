"""Jomini: what the state check tells of a name it does not know, and the bench's boards it checks.

A terrain or a mount the rules do not know is refused at its JSON pointer (S002) with the name it likely
meant, chosen as `ruleval check`'s own did-you-mean chooses (the built-in `closest`), from the names the
rules know: the terrain table's rows (`rows(terrain_cost)`, so a variant's added row is known too) and the
mounts the texts name (JOM-D1, D2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from validator.api import RunError, check_text, load_ruleset

ROOT = Path(__file__).resolve().parent.parent
JOMINI = ROOT / "rulesets" / "jomini"
RE = load_ruleset(JOMINI / "re.rules")
AM = load_ruleset(JOMINI / "am.rules")
SMALL = json.loads((JOMINI / "examples" / "small.json").read_text(encoding="utf-8"))


def said(rs, state: dict) -> dict[str, str]:
    """The state check's messages by JSON pointer (every one an S002)."""
    with pytest.raises(RunError) as caught:
        rs.run(state)
    diags = caught.value.diagnostics
    assert {d.code for d in diags} == {"S002"}, [(d.code, d.message) for d in diags]
    return {d.pointer: d.message for d in diags}


def with_terrain(state: dict, terrains: dict[str, str]) -> dict:
    board = {**state["board"], "hexes": {h: {"terrain": t} for h, t in terrains.items()}}
    return {**state, "board": board}


@pytest.mark.parametrize("rs", [RE, AM], ids=["re", "am"])
def test_a_misspelt_terrain_is_told_the_row_it_likely_meant(rs) -> None:
    got = said(rs, with_terrain(SMALL, {"0303": "wods", "0202": "Hils", "0404": "forest"}))
    assert "did you mean `woods`?" in got["/board/hexes/0303/terrain"]
    assert "did you mean `hills`?" in got["/board/hexes/0202/terrain"]
    # a name like none of them is told the table's rows, read from the table
    assert "(clear, woods, hills, marsh, village, impassable)" in got["/board/hexes/0404/terrain"]


def test_a_row_a_variant_adds_is_known_to_the_hint() -> None:
    variant = check_text(JOMINI / "zz_test_sand.rules",
                         'ruleset jomini.sand "sand"\nextends "re.rules"\noverride terrain_cost["sand"] cite "JOM-T3" = 2\n')
    assert variant.ok, variant.diagnostics
    got = said(variant, with_terrain(SMALL, {"0303": "snad"}))
    assert "did you mean `sand`?" in got["/board/hexes/0303/terrain"]


@pytest.mark.parametrize("rs", [RE, AM], ids=["re", "am"])
def test_a_misspelt_mount_is_told_the_mount_it_likely_meant(rs) -> None:
    units = [dict(u) for u in SMALL["units"]]
    units[0]["mount"], units[1]["mount"], units[2]["mount"] = "elefants", "Camel", "zebras"
    got = said(rs, {**SMALL, "units": units})
    assert "did you mean `elephants`?" in got["/units/0/mount"]
    assert "did you mean `camels`?" in got["/units/1/mount"]
    assert "did you mean" not in got["/units/2/mount"] and "camels, elephants, horses, wagons" in got["/units/2/mount"]


def test_a_bench_board_is_a_valid_state() -> None:
    """bench/jomini_reach.py's boards are states the rules accept: each random road is named, so roads
    crossing at a hex are not unnamed links meeting three at a hex (S002, JOM-R1)."""
    from bench.jomini_reach import make_state

    state = make_state(7, 24, 30)
    assert [(d.code, d.pointer, d.message) for d in RE.state_errors(state)] == []
    assert all(len(r) == 3 for r in state["board"]["roads"])


def test_the_bench_default_board_is_checked_within_the_default_budget():
    """The junction check reads each hex's road links from one grouping of the links: asking every road
    hex for its links walked all links once per hex, and the bench's 100x100 board (a valid state) ran
    past the default step budget (E004). A junction problem on that board is still told."""
    from bench.jomini_reach import make_state

    state = make_state(1, 100, 200)
    assert [(d.code, d.pointer) for d in RE.state_errors(state)] == []
    roads = state["board"]["roads"]
    state["board"]["roads"] = [list(r[:2]) for r in roads[:4]] + roads[4:]
    found = [(d.code, d.pointer) for d in RE.state_errors(state) if "no road named" in d.message]
    assert found and all(code == "S002" for code, _ in found)
