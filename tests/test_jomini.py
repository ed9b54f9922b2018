"""The Jomini rulesets through the command line: `run --query reach`, `run --svg` and `render`."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RE = str(ROOT / "rulesets/jomini/re.rules")
AM = str(ROOT / "rulesets/jomini/am.rules")
STATE = str(ROOT / "rulesets/jomini/examples/small.json")
SVG = "{http://www.w3.org/2000/svg}"


def _svg(path: Path) -> ET.Element:
    root = ET.parse(path).getroot()  # well-formed XML or this raises
    assert root.tag == f"{SVG}svg"
    return root


@pytest.mark.parametrize("ruleset", [RE, AM])
def test_check_is_clean(cli, ruleset: str) -> None:
    r = cli("check", "--deny-warnings", ruleset)
    assert r.code == 0, r.err


@pytest.mark.parametrize("ruleset", [RE, AM])
def test_reach_query(cli, ruleset: str) -> None:
    r = cli("run", "--format", "json", ruleset, "--state", STATE, "--query", "reach", "--arg", "M")
    assert r.code == 0, r.err
    out = json.loads(r.out)
    assert out["allowance"] == {"fight": 1, "calm": 2, "road": 3}
    assert out["hexes"]["0402"] == {"cost": 3, "fight": False, "road_march": True}
    assert out["hexes"]["0202"]["fight"] is True


def test_main_query(cli) -> None:
    r = cli("run", "--format", "json", RE, "--state", STATE)
    assert r.code == 0, r.err
    moves = json.loads(r.out)["moves"]
    assert [m["status"] for m in moves] == ["ok", "illegal"]
    assert moves[1]["clause"] == "JOM-T1" and moves[1]["step"] == 3  # marsh 3 + clear 1 + clear 1 > 4


def test_render_command_with_reach(cli, tmp_path: Path) -> None:
    out = tmp_path / "board.svg"
    r = cli("render", RE, "--state", STATE, "--unit", "M", "-o", str(out))
    assert r.code == 0, r.err
    root = _svg(out)
    labels = {p.get("data-label") for p in root.iter(f"{SVG}polygon")}
    assert len(labels) == 30 and {"0101", "0605", "0303"} <= labels
    woods = next(p for p in root.iter(f"{SVG}polygon") if p.get("data-label") == "0303")
    assert woods.get("fill") == "#8fbf7f"
    assert len(list(root.iter(f"{SVG}circle"))) >= 5  # reach marks (and the failure mark)
    assert {t.text for t in root.iter(f"{SVG}text")} >= {"M", "C", "G", "E"}


def _hex_centres(root: ET.Element) -> dict[str, tuple[float, float]]:
    out = {}
    for p in root.iter(f"{SVG}polygon"):
        if p.get("class") == "hex":
            pts = [tuple(float(v) for v in xy.split(",")) for xy in (p.get("points") or "").split()]
            out[p.get("data-label") or ""] = (sum(x for x, _ in pts) / 6, sum(y for _, y in pts) / 6)
    return out


@pytest.mark.parametrize("ruleset", [RE, AM])
def test_render_draws_the_ways_off_the_table(cli, ruleset: str, tmp_path: Path) -> None:
    """The hexes a unit may leave the table by were not drawn. `render` draws the scenario's exits
    (JOM-X1), and with `--unit` those `reach` gives the unit, each with its cost (in AM a lone
    character's edge hexes, JOM-X3): each on the sides of its hex that face off the table, with an
    arrow out beyond every hex."""
    import math

    state = json.loads(Path(STATE).read_text())
    state["units"] = [{"id": "M", "side": "blue", "type": "infantry", "class": "medium", "hex": "0501",
                       "flags": {"activated": True}},
                      {"id": "O", "side": "blue", "type": "officer", "hex": "0202", "flags": {"activated": True}}]
    state["moves"] = []
    (tmp_path / "s.json").write_text(json.dumps(state))
    scenario = set(state["board"]["exits"]["voluntary"])
    for unit in (None, "M", "O"):
        out = tmp_path / f"{unit}.svg"
        r = cli("render", ruleset, "--state", str(tmp_path / "s.json"), *(["--unit", unit] if unit else []), "-o", str(out))
        assert r.code == 0, r.err
        reach = {}
        if unit:
            q = cli("run", "--format", "json", ruleset, "--state", str(tmp_path / "s.json"), "--query", "reach", "--arg", unit)
            reach = json.loads(q.out)["exits"]
        root = _svg(out)
        centres = _hex_centres(root)
        drawn = {g.get("data-label"): g for g in root.iter(f"{SVG}g") if g.get("class") == "exit"}
        assert set(drawn) == scenario | set(reach), unit
        for label, g in drawn.items():
            texts = [t.text for t in g.iter(f"{SVG}text")]
            assert texts == ([str(reach[label]["cost"])] if label in reach else []), label
            c = centres[label]
            outer = []  # the hex's sides with no hex beyond
            for ln in g.iter(f"{SVG}line"):
                if ln.get("class") == "way-out":
                    tip = (float(ln.get("x2") or 0), float(ln.get("y2") or 0))
                    assert all(math.dist(tip, d) > 30 * math.sqrt(3) / 2 for d in centres.values()), label
                    continue
                a = (float(ln.get("x1") or 0), float(ln.get("y1") or 0))
                b = (float(ln.get("x2") or 0), float(ln.get("y2") or 0))
                assert math.dist(a, c) == pytest.approx(30, abs=0.2) and math.dist(b, c) == pytest.approx(30, abs=0.2)
                beyond = (a[0] + b[0] - c[0], a[1] + b[1] - c[1])
                assert all(math.dist(beyond, d) > 1 for d in centres.values()), label
                outer.append(beyond)
            want = sum(1 for k in range(6) for beyond in [(c[0] + 30 * math.sqrt(3) * math.cos(math.radians(30 + 60 * k)),
                                                            c[1] + 30 * math.sqrt(3) * math.sin(math.radians(30 + 60 * k)))]
                       if all(math.dist(beyond, d) > 1 for d in centres.values()))
            assert len(outer) == want > 0, label
            assert sum(1 for ln in g.iter(f"{SVG}line") if ln.get("class") == "way-out") == 1


@pytest.mark.parametrize("layout", ["odd-q", "even-q", "odd-r", "even-r"])
def test_an_exit_inside_the_drawn_hexes_is_outlined_and_one_on_the_edge_points_out(layout: str) -> None:
    """A drawing's `exits` in every layout: an exit hex with no side off the drawn hexes (none to
    point out across) is a dashed outline inside it, with its text; one on a corner of the table has
    its outer sides drawn and one arrow pointing away from the table."""
    import math

    from validator.tools.render import to_svg

    hexes = [{"label": f"{c:02d}{r:02d}"} for c in range(1, 4) for r in range(1, 4)]
    root = ET.fromstring(to_svg({"layout": layout, "hexes": hexes,
                                 "exits": [{"label": "0202", "text": "in"}, {"label": "0101", "stroke": "#123456"}]}))
    groups = {g.get("data-label"): g for g in root.iter(f"{SVG}g") if g.get("class") == "exit"}
    inner, corner = groups["0202"], groups["0101"]
    assert [p.get("stroke-dasharray") for p in inner.iter(f"{SVG}polygon")] == ["5 3"]
    assert [t.text for t in inner.iter(f"{SVG}text")] == ["in"] and not list(inner.iter(f"{SVG}line"))
    centres = _hex_centres(root)
    arrows = [ln for ln in corner.iter(f"{SVG}line") if ln.get("class") == "way-out"]
    assert len(arrows) == 1 and len(list(corner.iter(f"{SVG}line"))) >= 3
    tip = (float(arrows[0].get("x2") or 0), float(arrows[0].get("y2") or 0))
    middle = (sum(x for x, _ in centres.values()) / 9, sum(y for _, y in centres.values()) / 9)
    assert math.dist(tip, middle) > math.dist(centres["0101"], middle) + 20
    box = [float(v) for v in (root.get("viewBox") or "").split()]
    assert box[0] < tip[0] < box[0] + box[2] and box[1] < tip[1] < box[1] + box[3]


def test_run_with_svg_draws_the_moves(cli, tmp_path: Path) -> None:
    out = tmp_path / "moves.svg"
    r = cli("run", "--format", "json", AM, "--state", STATE, "--svg", str(out))
    assert r.code == 0, r.err
    root = _svg(out)
    strokes = [p.get("stroke") for p in root.iter(f"{SVG}polyline")]
    assert strokes == ["#1a1a1a", "#e00000"]  # the legal move, then the illegal one in red


def test_render_without_a_render_query(cli, tmp_path: Path) -> None:
    bare = tmp_path / "bare.rules"
    bare.write_text('query main = 1\n', encoding="utf-8")
    state = tmp_path / "s.json"
    state.write_text("{}", encoding="utf-8")
    r = cli("render", str(bare), "--state", str(state), "-o", str(tmp_path / "x.svg"))
    assert r.code == 1
    assert "E008" in r.err and "render" in r.err
    assert not (tmp_path / "x.svg").exists()


def test_render_usage_errors(cli, tmp_path: Path) -> None:
    assert cli("render", RE, "--state", str(tmp_path / "none.json"), "-o", str(tmp_path / "x.svg")).code == 2
    assert cli("render", RE, "--state", STATE).code == 2  # -o is required


def test_a_variant_of_the_move_cost_rule_changes_every_query_that_reads_it(tmp_path: Path) -> None:
    """Issue 21: re.rules computed move costs twice (the rule, and a speed copy that `reach` read), so a
    variant overriding the rule got `main` and `reach` disagreeing. One rule now: both follow it."""
    import shutil

    from validator import load_ruleset

    shutil.copytree(ROOT / "rulesets/jomini", tmp_path / "rulesets/jomini")
    shutil.copytree(ROOT / "schemas", tmp_path / "schemas")
    (tmp_path / "ruleval.toml").write_text("")
    tmp_path = tmp_path / "rulesets/jomini"
    (tmp_path / "dear.rules").write_text(
        'extends "re.rules"\n'
        'override rule enter_cost(a, b) cite "JOM-T1", "JOM-T3" = let c = base(a, b); if c == none then none else c + 1\n')
    base, dear = load_ruleset(tmp_path / "re.rules"), load_ruleset(tmp_path / "dear.rules")
    assert base.ok and dear.ok, [str(d) for d in base.diagnostics + dear.diagnostics]
    state = json.loads(Path(STATE).read_text())
    cheap, costly = base.run(state, query="reach", args=["C"]), dear.run(state, query="reach", args=["C"])
    # every hex the dearer rule still reaches costs more than before, and some are no longer reached
    assert set(costly["hexes"]) < set(cheap["hexes"])
    assert all(costly["hexes"][h]["cost"] > cheap["hexes"][h]["cost"] for h in costly["hexes"]), (cheap, costly)
    edges = dear.run(state, query="costs")["edges"]
    base_edges = base.run(state, query="costs")["edges"]
    assert all(edges[a][b] == base_edges[a][b] + 1 for a in edges for b in edges[a])
    # and `main` agrees with `reach`: a one-hex move to a hex reach says costs more than the allowance fails
    far = [h for h, v in cheap["hexes"].items() if h not in costly["hexes"] and h in base_edges[state["units"][1]["hex"]]]
    if far:
        st = dict(state, moves=[{"unit": "C", "path": [state["units"][1]["hex"], far[0]]}])
        assert base.run(st)["moves"][0]["status"] == "ok"


def _diagnostics(cli, tmp_path: Path, ruleset: str, state: dict) -> list[dict]:
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state), encoding="utf-8")
    r = cli("run", "--format", "json", ruleset, "--state", str(path))
    assert r.code == 3, (r.code, r.out[:500], r.err)
    return json.loads(r.out)


@pytest.mark.parametrize("ruleset", [RE, AM])
def test_road_terrain_is_refused_with_a_pointer_and_a_hint(cli, tmp_path: Path, ruleset: str) -> None:
    """Issue 25: `terrain: road` validated and meant nothing (roads are links between hexes); it is
    refused at its JSON pointer, with a word about where roads go, and so is a terrain the table
    does not know (it used to make the hex impassable without a word)."""
    state = json.loads(Path(STATE).read_text())
    state["board"]["hexes"] = {"0102": {"terrain": "road"}, "0202": {"terrain": "forest"}, "0303": {"terrain": "Woods"}}
    diags = _diagnostics(cli, tmp_path, ruleset, state)
    by_pointer = {d["pointer"]: d for d in diags}
    assert set(by_pointer) == {"/board/hexes/0102/terrain", "/board/hexes/0202/terrain", "/board/hexes/0303/terrain"}
    assert all(d["code"] == "S002" for d in diags)
    assert "/board/roads" in by_pointer["/board/hexes/0102/terrain"]["message"]
    assert "`forest`" in by_pointer["/board/hexes/0202/terrain"]["message"]
    assert "did you mean `woods`" in by_pointer["/board/hexes/0303/terrain"]["message"]


@pytest.mark.parametrize("ruleset", [RE, AM])
def test_unit_kinds_the_tables_do_not_know_are_refused_with_a_hint(cli, tmp_path: Path, ruleset: str) -> None:
    """Issue 25: the schema took any type and class, so `type: character` validated and then failed
    with "the allowance table has no light character". A kind the tables do not know is now refused
    at validation, at its JSON pointer, with a hint; characters need no class."""
    state = json.loads(Path(STATE).read_text())
    state["units"] = [
        {"id": "A", "side": "blue", "type": "Infantry", "class": "light", "hex": "0101"},
        {"id": "B", "side": "blue", "type": "cavalry", "class": "Heavy", "hex": "0102"},
        {"id": "C", "side": "blue", "type": "cavalry", "class": "medium", "hex": "0103"},
        {"id": "D", "side": "blue", "type": "general", "class": "light", "hex": "0104"},
        {"id": "E", "side": "blue", "type": "infantry", "hex": "0105"},
        {"id": "F", "side": "blue", "type": "character", "hex": "0201"},       # known: no problem
        {"id": "G", "side": "blue", "type": "officer", "class": "heavy", "hex": "0202"},  # a class it ignores
    ]
    state["moves"] = []
    diags = {d["pointer"]: d["message"] for d in _diagnostics(cli, tmp_path, ruleset, state)}
    assert set(diags) == {"/units/0/type", "/units/1/class", "/units/2", "/units/3/type", "/units/4"}, diags
    assert "did you mean `infantry`" in diags["/units/0/type"]
    assert "did you mean `heavy`" in diags["/units/1/class"]
    assert "no `medium` `cavalry`" in diags["/units/2"]
    assert "`character`" in diags["/units/3/type"] and "`officer`" in diags["/units/3/type"]
    assert "class" in diags["/units/4"]


@pytest.mark.parametrize("ruleset", [RE, AM])
def test_a_misspelt_type_or_class_is_told_at_its_field_with_a_did_you_mean(cli, tmp_path: Path, ruleset: str) -> None:
    """A user's `cavlry` was told at the unit (`/units/1`: "the allowance table has no `light` `cavlry`"):
    a type no row of the table has, or a class no column has, is told at that field, with the name
    it likely meant."""
    state = json.loads(Path(STATE).read_text())
    state["units"] = [
        {"id": "A", "side": "blue", "type": "infantry", "class": "light", "hex": "0101"},
        {"id": "B", "side": "blue", "type": "cavlry", "class": "light", "hex": "0102"},
        {"id": "C", "side": "blue", "type": "cavalry", "class": "ligth", "hex": "0103"},
        {"id": "D", "side": "blue", "type": "Horse_Artilery", "class": "light", "hex": "0104"},
    ]
    state["moves"] = []
    diags = {d["pointer"]: d["message"] for d in _diagnostics(cli, tmp_path, ruleset, state)}
    assert diags == {"/units/1/type": "unknown unit type `cavlry`; did you mean `cavalry`?",
                     "/units/2/class": "unknown class `ligth`; did you mean `light`?",
                     "/units/3/type": "unknown unit type `Horse_Artilery`; did you mean `horse_artillery`?"}, diags


def test_the_names_a_misspelt_kind_is_matched_with_are_the_tables_rows_and_columns(tmp_path: Path) -> None:
    """The names a did-you-mean offers are read from the allowance table (`rows`, `columns`) and
    `same_row`, not copied: a row and a column a variant's cell adds are offered too."""
    rs = _variant(tmp_path, "wagons.rules", 'extends "re.rules"\n'
                  'override allowance["war_wagons", "ironclad"] cite "JOM-A1" = move(1, 1)\n')
    state = json.loads(Path(STATE).read_text())
    state["units"] = [
        {"id": "A", "side": "blue", "type": "war_wagon", "class": "ironclad", "hex": "0101"},
        {"id": "B", "side": "blue", "type": "war_wagons", "class": "ironclda", "hex": "0102"},
        {"id": "C", "side": "blue", "type": "lancres", "class": "light", "hex": "0103"},
        {"id": "D", "side": "blue", "type": "war_wagons", "class": "ironclad", "hex": "0104"},  # known: no problem
    ]
    state["moves"] = []
    diags = {d.pointer: d.message for d in rs.state_errors(state)}
    assert diags == {"/units/0/type": "unknown unit type `war_wagon`; did you mean `war_wagons`?",
                     "/units/1/class": "unknown class `ironclda`; did you mean `ironclad`?",
                     "/units/2/type": "unknown unit type `lancres`; did you mean `lancers`?"}, diags


def _variant(tmp_path: Path, name: str, text: str):
    """A variant of the Jomini rulesets written beside them (in a copy: paths stay inside the root)."""
    import shutil

    from validator import load_ruleset

    shutil.copytree(ROOT / "rulesets/jomini", tmp_path / "rulesets/jomini")
    shutil.copytree(ROOT / "schemas", tmp_path / "schemas")
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "rulesets/jomini" / name).write_text(text)
    rs = load_ruleset(tmp_path / "rulesets/jomini" / name)
    assert rs.ok, [str(d) for d in rs.diagnostics]
    return rs


def test_an_errata_with_zones_of_control_is_one_override(tmp_path: Path) -> None:
    """Issue 25: JOM-Z1 (no zones of control) was a cost added to every hex entered, so an errata
    setting it to 1 made every step dearer. It is now a cost for entering a hex next to an enemy,
    0 in the rules: `override const zoc_cost = 1` makes only those steps cost more."""
    from validator import load_ruleset

    base = load_ruleset(RE)
    zoc = _variant(tmp_path, "zoc.rules", 'extends "re.rules"\noverride const zoc_cost: int cite "JOM-Z1" = 1\n')
    unit = lambda i, side, t, c, h, on=True: {"id": i, "side": side, "type": t, "class": c, "hex": h,  # noqa: E731
                                              "flags": {"activated": on}}
    state = {"board": {"cols": 8, "rows": 6},
             "units": [unit("C", "blue", "cavalry", "light", "0101"), unit("E", "red", "infantry", "heavy", "0303", False),
                       unit("D", "blue", "cavalry", "light", "0705"), unit("F", "blue", "infantry", "light", "0606", False),
                       unit("R", "blue", "cavalry", "light", "0204")],
             "moves": [{"unit": "C", "path": ["0101", "0201", "0202", "0302", "0402"], "combat": False},
                       {"unit": "D", "path": ["0705", "0605", "0505"], "combat": False}]}
    before, after = base.run(state)["moves"], zoc.run(state)["moves"]
    # C passes one hex next to the enemy (0302): 4 hexes of 4 before, 5 of 4 with zones of control
    assert (before[0]["status"], before[0]["cost"]) == ("ok", 4)
    assert (after[0]["status"], after[0]["clause"], after[0]["step"]) == ("illegal", "JOM-Z1", 4)
    # D passes next to a friend only: nothing changes
    assert before[1] == after[1] and before[1]["status"] == "ok" and before[1]["cost"] == 2
    # where R can go: a first step costs one more exactly when it enters a hex next to the enemy
    edges = base.run(state, query="costs")["edges"]
    zone = set(edges["0303"])
    near, far = base.run(state, query="reach", args=["R"])["hexes"], zoc.run(state, query="reach", args=["R"])["hexes"]
    first = [h for h in edges["0204"] if h in near]
    assert first and any(h in zone for h in first) and any(h not in zone for h in first)
    for h in first:
        assert far[h]["cost"] == near[h]["cost"] + (1 if h in zone else 0), (h, near[h], far[h])


def test_an_errata_where_units_stop_next_to_an_enemy_is_one_override(tmp_path: Path) -> None:
    """Issue 25: zones of control that stop a unit (JOM-Z1 read the other way) are one override too:
    a move may end next to an enemy but not go on from there, and `reach` stops there as well."""
    from validator import load_ruleset

    base = load_ruleset(RE)
    stops = _variant(tmp_path, "stops.rules", 'extends "re.rules"\noverride const zoc_stops: bool cite "JOM-Z1" = true\n')
    unit = lambda i, side, h, on=True: {"id": i, "side": side, "type": "cavalry", "class": "light", "hex": h,  # noqa: E731
                                        "flags": {"activated": on}}
    state = {"board": {"cols": 8, "rows": 6},
             "units": [unit("C", "blue", "0101"), unit("E", "red", "0303", False), unit("D", "blue", "0705"),
                       unit("G", "blue", "0403")],
             "moves": [{"unit": "C", "path": ["0101", "0201", "0202", "0302", "0402"], "combat": False},
                       {"unit": "D", "path": ["0705", "0605", "0505"], "combat": False},
                       {"unit": "G", "path": ["0403", "0503"], "combat": False}]}
    zone = set(base.run(state, query="costs")["edges"]["0303"])
    assert "0302" in zone and "0402" not in zone and "0403" in zone and "0503" not in zone
    before, after = base.run(state)["moves"], stops.run(state)["moves"]
    assert [m["status"] for m in before] == ["ok", "ok", "ok"]
    # C enters 0302, next to E, and goes on: stopped there, at step 3 of its path
    assert (after[0]["status"], after[0]["clause"], after[0]["step"]) == ("illegal", "JOM-Z1", 3)
    assert "0302" in after[0]["reason"]
    # D never comes near E; G starts next to E and leaves: both as before
    assert after[1] == before[1] and after[2] == before[2]
    # ending in the zone is allowed
    state["moves"] = [{"unit": "C", "path": ["0101", "0201", "0202", "0302"], "combat": False}]
    assert stops.run(state)["moves"][0]["status"] == "ok"
    # reach: zone hexes are still reached, but nothing beyond them through them
    near, far = base.run(state, query="reach", args=["C"])["hexes"], stops.run(state, query="reach", args=["C"])["hexes"]
    edges = base.run(state, query="costs")["edges"]
    assert set(far) <= set(near) and "0302" in far and "0304" in near and "0304" not in far
    for h in far:  # each hex is reached from the start or from a reached hex outside the zone
        assert any(h in edges[p] for p in [*[q for q in far if q not in zone], "0101"]), h


# ---------------------------------------------------------------- found by an audit against the seeds

def _unit(uid: str, hex_: str | None, flags: dict | None = None, kind: tuple[str, str] = ("infantry", "light")) -> dict:
    return {"id": uid, "side": "blue", "type": kind[0], "class": kind[1], "hex": hex_,
            "flags": {"activated": True, **(flags or {})}}


def test_a_pre_played_unit_goes_nowhere_but_may_fight_in_place() -> None:
    """JOM-A2 (AM): « ne pourra pas faire mouvement ... pourra cependant combattre sur place ». `reach` listed
    its whole area, and a one-hex path with combat (staying to fight) was refused as a move."""
    from validator import load_ruleset

    am = load_ruleset(AM)
    state = {"board": {"cols": 4, "rows": 4}, "units": [_unit("X", "0102", {"pre_played": True})]}
    assert am.run(state, query="reach", args=["X"])["hexes"] == {}
    assert am.run({**state, "units": [_unit("X", "0102")]}, query="reach", args=["X"])["hexes"]  # (it had some)
    stay = am.run({**state, "moves": [{"unit": "X", "path": ["0102"], "combat": True}]})["moves"][0]
    assert stay["status"] == "ok" and stay["may_fight"] is True
    go = am.run({**state, "moves": [{"unit": "X", "path": ["0102", "0202"], "combat": True}]})["moves"][0]
    assert go["status"] == "illegal" and go["clause"] == "JOM-A2"


def test_a_character_back_on_the_table_goes_where_it_may() -> None:
    """JOM-X3 (AM): `exited` bars a lone character's return from off the table, not its moves once back on
    it; `reach` gave it nowhere to go while `main` let it move."""
    from validator import load_ruleset

    am = load_ruleset(AM)
    officer = {"id": "O", "side": "blue", "type": "officer", "hex": "0202", "flags": {"activated": True, "exited": True}}
    state = {"board": {"cols": 4, "rows": 4}, "units": [officer]}
    assert am.run({**state, "moves": [{"unit": "O", "path": ["0202", "0302"], "combat": False}]})["moves"][0]["status"] == "ok"
    assert "0302" in am.run(state, query="reach", args=["O"])["hexes"]
    off = {**state, "units": [{**officer, "hex": None}], "board": {"cols": 4, "rows": 4, "exits": {"reinforcement": ["0101"]}}}
    assert am.run(off, query="reach", args=["O"])["hexes"] == {}  # (off the table, it never returns)


@pytest.mark.parametrize("ruleset", [RE, AM])
@pytest.mark.parametrize("board, units, pointer, message", [
    ({"exits": {"voluntary": ["0101", "0202"]}}, [], "/board/exits/voluntary/1", "hex `0202` is not on the table's edge"),
    ({"exits": {"reinforcement": ["0909"]}}, [], "/board/exits/reinforcement/0", "hex `0909` is not on the board"),
    ({}, [_unit("A", "0202"), _unit("G", "0202", kind=("foot_artillery", "light"))], "/units/1/hex",
     "hex `0202` holds two units: A and G"),
    ({}, [_unit("A", "0202"), _unit("O", "0202", {"lone": True}, kind=("officer", "medium"))], "/units/1/hex",
     "hex `0202` holds two units: A and O (a character shares a hex only with a unit of its side, and is then not"
     " `lone: true`)"),
    ({}, [_unit("X", "0102"), _unit("X", "0303")], "/units/1/id", "a second unit `X`"),
    ({"roads": [["0102", "0202"], ["0202", "0302"], ["0302", "0402"], ["0302", "0303"], ["0303", "0304"]]}, [],
     "/board/roads/3", "road links with no road named meet at `0302`, from `0202`, `0303`, `0402`: which road goes on"
     " is not known (a road march follows one road); give each link its road's name as a third item, as"
     ' ["0302", "0303", "B"]'),
    ({"roads": [["0102", "0202", "A"], ["0202", "0302", "A"], ["0302", "0303"]]}, [], "/board/roads/2",
     "a road link with no road named meets road `A` at `0302`: which road goes on is not known (a road march"
     ' follows one road); give each link its road\'s name as a third item, as ["0302", "0303", "B"]'),
    ({}, [_unit("A", "0202"), _unit("O", "0303", {"lone": False}, kind=("officer", "medium"))], "/units/1/flags/lone",
     "character `O` is with a unit (`lone: false`) but no unit of side `blue` stands on `0303`"),
])
def test_a_board_the_rules_cannot_play_is_refused_where_it_is_wrong(ruleset: str, board: dict, units: list, pointer: str,
                                                                      message: str) -> None:
    """Scenario exits inside the table, two units on one hex (or a character said `lone: true` on a unit's
    hex), two units of one id, roads meeting where none is named (JOM-R1 follows one road): each gave an
    answer without a word (a unit leaving from the middle of the
    board; a move across infantry decided by whichever unit was listed last; a misleading error about the
    path's start). Each is now refused (S002) at its JSON pointer. (A hex side given a river and a bridge
    is no longer refused: it is crossed as the bridge, whatever the order, second_pass.yaml.)"""
    from validator import load_ruleset
    from validator.api import RunError

    rs = load_ruleset(ruleset)
    with pytest.raises(RunError) as exc:
        rs.run({"board": {"cols": 4, "rows": 4, **board}, "units": units})
    found = [(d.code, d.pointer, d.message) for d in exc.value.diagnostics]
    assert ("S002", pointer, message) in found, found


def test_a_board_of_100_columns_numbered_from_1_is_refused_at_its_columns(cli, tmp_path: Path) -> None:
    path = tmp_path / "wide.json"
    path.write_text(json.dumps({"board": {"cols": 100, "rows": 4}, "units": []}))
    r = cli("run", RE, "--state", str(path))
    assert r.code == 3 and f"{path}:1:20: error[S002]: expected at most 99, got 100" in r.err, r.err
    path.write_text(json.dumps({"board": {"cols": 100, "rows": 4, "first": 0}, "units": []}))
    assert cli("run", RE, "--state", str(path)).code == 0


def test_the_exits_of_the_reach_cases_are_the_whole_map() -> None:
    """`ruleval test` matches a case's result as a subset (a map by key): a hex of `exits` the case
    leaves out may be there. The Jomini reach cases give the whole map of a unit's ways off the table
    (JOM-X1, X3; tests/cases/jomini/reach.yaml, written from the text): here each is compared whole. An
    empty one is written `{exactly: {}}` (`exits: {}` would check nothing, and is refused: S007), and so
    is an empty `hexes` (a unit that may go nowhere)."""
    from validator.tools.testing import load_suite, run_case

    suite = load_suite([str(ROOT / "tests/cases/jomini")])
    compared = empty = nowhere = 0
    for case in suite.cases:
        want = case.data.get("expect", {})
        if case.data.get("query") != "reach":
            continue
        nowhere += want.get("hexes") == {"exactly": {}}
        if "exits" not in want:
            continue
        outcome = run_case(case)
        assert outcome.status == "passed", outcome.message
        exits = want["exits"].get("exactly", want["exits"])
        assert outcome.actual["exits"] == exits, case.id
        compared += 1
        empty += want["exits"] == {"exactly": {}}
    assert compared >= 10 and empty >= 4 and nowhere >= 2


@pytest.mark.parametrize("ruleset", [RE, AM])
def test_an_active_side_no_unit_has_is_refused_at_it(ruleset: str) -> None:
    """`active_side` names the side whose movement phase it is (JOM-A1); one misspelt would refuse every
    move without a word about why, so it is refused at its pointer, with the sides the units have."""
    from validator import load_ruleset
    from validator.api import RunError

    with pytest.raises(RunError) as exc:
        load_ruleset(ruleset).run({"board": {"cols": 4, "rows": 4}, "active_side": "Blue",
                                   "units": [_unit("A", "0202"), {**_unit("R", "0404"), "side": "red"}]})
    found = [(d.code, d.pointer, d.message) for d in exc.value.diagnostics]
    assert found == [("S002", "/active_side", "no unit is of side `Blue` (the units' sides: `blue`, `red`)")], found
