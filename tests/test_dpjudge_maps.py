"""Every map of the PyPI `diplomacy` package, imported (issue 22, item 4): the DPjudge-style `.map`
reader and converter (`bench/peers/dpjudge/`) against the package's own reading of the same files,
the committed conversions (`rulesets/diplomacy/maps/`) against a fresh conversion of the installed
package (so drift is caught), and each variant ruleset checked clean and starting where the package
starts a game."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from diplomacy.engine import map as peer_map

from bench.peers.dpjudge import import_map
from bench.peers.dpjudge.import_map import MAP_NAMES, converted, package_maps, power_id, ruleset_name
from bench.peers.dpjudge.mapfile import MapFileError, read_map
from validator import load_ruleset

ROOT = Path(__file__).resolve().parent.parent
DIP = ROOT / "rulesets" / "diplomacy"


def peer_map_of(name: str) -> peer_map.Map:
    # use_cache=False: no convoy paths (minutes for the large maps on a fresh machine)
    return peer_map.MAP_CACHE.get(name) or peer_map.Map(name, use_cache=False)


def peer_power(power: str) -> str:
    return power.upper().replace("_", "")


@pytest.mark.parametrize("name", MAP_NAMES)
def test_committed_conversion_is_current(name: str) -> None:
    map_text, rules_text = converted(name)
    assert (DIP / "maps" / f"{name}.yaml").read_text(encoding="utf-8") == map_text, \
        f"re-run `python -m bench.peers.dpjudge.import_map {name}`"
    assert (DIP / f"{ruleset_name(name)}.rules").read_text(encoding="utf-8") == rules_text


@pytest.mark.parametrize("name", MAP_NAMES)
def test_reading_agrees_with_the_package(name: str) -> None:
    """Powers, centres, homes, start units and owners, and every army and fleet move the package's
    `Map.abuts` allows, read from the converted map."""
    data = yaml.safe_load((DIP / "maps" / f"{name}.yaml").read_text(encoding="utf-8"))
    pm = peer_map_of(name)
    assert sorted(pm.powers) == sorted(peer_power(p) for p in data["powers"])
    provinces = data["provinces"]
    assert sorted(c.lower() for c in pm.scs) == sorted(p for p, v in provinces.items() if v.get("center"))
    for pw in data["powers"]:
        homes = sorted(p for p, v in provinces.items() if v.get("home") == pw)
        assert sorted(h.lower() for h in pm.homes[peer_power(pw)]) == homes, pw
        owned = sorted(c for c, o in data["start"]["supply_centers"].items() if o == pw)
        assert sorted(c.lower() for c in pm.centers[peer_power(pw)]) == owned, pw
    units = sorted((peer_power(u["power"]), ("A " if u["type"] == "army" else "F ") + u["location"].upper())
                   for u in data["start"]["units"])
    assert units == sorted((pw, u) for pw, us in pm.units.items() for u in us)
    assert data["start"]["year"] == int(pm.phase.split()[1])
    for p in provinces:
        moves = {q for q in provinces if pm.abuts("A", p.upper(), "-", q.upper())}
        assert moves == set(data["army"].get(p, [])), ("army", p)
    places = set(data["fleet"]) | set(provinces)
    for x in data["fleet"]:
        moves = {y for y in places if pm.abuts("F", x.upper(), "-", y.upper())}
        assert moves == set(data["fleet"][x]), ("fleet", x)
    assert all(pm.is_valid_unit("F " + x.upper()) for x in data["fleet"])


def test_the_variants_check_clean_and_formatted(cli) -> None:
    files = [str(DIP / f"{ruleset_name(n)}.rules") for n in MAP_NAMES]
    r = cli("check", "--deny-warnings", *files)
    assert r.code == 0, r.out + r.err
    assert f"checked {len(files)} rulesets: 0 errors, 0 warnings" in r.out + r.err
    r = cli("fmt", "--check", *files)
    assert r.code == 0, r.out + r.err


@pytest.mark.parametrize("name", ["ancmed", "modern", "known_world_901", "standard_age_of_empires"])
def test_the_start_state_is_the_packages(name: str) -> None:
    rs = load_ruleset(DIP / f"{ruleset_name(name)}.rules")
    start = rs.run({"phase": {"season": "spring", "year": 1, "type": "movement"}, "units": [], "orders": []},
                   "start_state")
    assert rs.state_schema_errors(start) == []
    pm = peer_map_of(name)
    assert start["phase"] == {"season": "spring", "year": int(pm.phase.split()[1]), "type": "movement"}
    units = sorted((peer_power(u["power"]), ("A " if u["type"] == "army" else "F ") + u["location"].upper())
                   for u in start["units"])
    assert units == sorted((pw, u) for pw, us in pm.units.items() for u in us)


def test_a_broken_map_file_is_located(tmp_path: Path) -> None:
    (tmp_path / "base.map").write_text("ENGLAND (ENGLISH) LON\nA LON\nLAND LON ABUTS\n", encoding="utf-8")
    (tmp_path / "twice.map").write_text("MAP base.map\n# again\nUSE base\n", encoding="utf-8")
    with pytest.raises(MapFileError, match=r"^twice\.map:3: `base\.map` is included twice"):
        read_map(tmp_path / "twice.map")
    (tmp_path / "abuts.map").write_text("LAND LON NEXT WAL\n", encoding="utf-8")
    with pytest.raises(MapFileError, match=r"^abuts\.map:1: expected ABUTS after `LON`, found `NEXT`"):
        read_map(tmp_path / "abuts.map")
    (tmp_path / "unit.map").write_text("A LON\n", encoding="utf-8")
    with pytest.raises(MapFileError, match=r"^unit\.map:1: a unit `A LON` outside a power's lines"):
        read_map(tmp_path / "unit.map")
    for line, message in (("BEGIN SPRING", "BEGIN gives the first phase as `BEGIN SPRING year MOVEMENT`"),
                          ("BEGIN WINTER 1900 ADJUSTMENT", "BEGIN gives the first phase"),
                          ("VICTORY three", "VICTORY gives the centres a solo win needs, as numbers")):
        (tmp_path / "head.map").write_text(f"# a header\n{line}\n", encoding="utf-8")
        with pytest.raises(MapFileError, match=rf"^head\.map:2: {message}"):
            read_map(tmp_path / "head.map")


BOARD = "LON = London\nPAR = Paris\nROM = Rome\nLAND LON ABUTS PAR\nLAND PAR ABUTS LON ROM\nLAND ROM ABUTS PAR\n"
POWERS = "ENGLAND (ENGLISH) LON\nA LON\n{after_england}FRANCE (FRENCH) PAR\nA PAR\nITALY (ITALIAN) ROM\nA ROM\n"


@pytest.mark.parametrize("after_england, after_all", [
    ("DUMMY\n", ""),                                  # on a power's lines: that power
    ("", "DUMMY ITALY england\n"),                    # powers named, in any case
    ("", "DUMMIES ALL\n"),
    ("DUMMY\n", "DUMMY ALL EXCEPT FRANCE\n"),          # ALL replaces what was marked before
    ("", "DUMMY ENGLAND FRANCE\nUNPLAYED FRANCE\n"),  # a power taken off the map is no longer marked
])
def test_dummy_marks_are_read_as_the_package_reads_them(tmp_path: Path, after_england: str, after_all: str) -> None:
    path = tmp_path / "marked.map"
    path.write_text(POWERS.format(after_england=after_england) + after_all + BOARD, encoding="utf-8")
    assert read_map(path).dummies == peer_map.Map(str(path), use_cache=False).dummies != []


def test_a_dummy_mark_that_marks_no_power_is_located(tmp_path: Path) -> None:
    for line in ("DUMMIES", "DUMMY ALL BUT FRANCE", "DUMMY ALL EXCEPT"):
        (tmp_path / "bad.map").write_text(POWERS.format(after_england="") + line + "\n" + BOARD, encoding="utf-8")
        with pytest.raises(MapFileError, match=r"^bad\.map:7: `" + line + "`"):
            read_map(tmp_path / "bad.map")
    (tmp_path / "bad.map").write_text("DUMMY\n" + POWERS.format(after_england="") + BOARD, encoding="utf-8")
    with pytest.raises(MapFileError, match=r"^bad\.map:1: `DUMMY` marks no power"):
        read_map(tmp_path / "bad.map")


@pytest.mark.parametrize("name", MAP_NAMES)
def test_the_powers_no_one_plays_are_the_packages(name: str) -> None:
    """A map's `dummies` are the powers its file marks DUMMY, as the package reads them (known_world_901:
    its neutral state), and a variant's `query unplayed` names them for `ruleval balance`."""
    data = yaml.safe_load((DIP / "maps" / f"{name}.yaml").read_text(encoding="utf-8"))
    assert [peer_power(p) for p in data.get("dummies", [])] == peer_map_of(name).dummies
    rs = load_ruleset(DIP / f"{ruleset_name(name)}.rules")
    assert rs.run({}, "unplayed", validate=False) == data.get("dummies", [])
    if name == "known_world_901":
        assert data["dummies"] == ["neutral_state"]


def test_the_importer_command_reports_stale_files(capsys) -> None:
    assert import_map.main(["--check", "pure"]) == 0
    assert import_map.main(["--check", "no_such_map"]) == 3
    assert "no map file `no_such_map.map`" in capsys.readouterr().err
    assert package_maps().is_dir() and power_id("NEAR-EAST") == "near_east"


# ---------------------------------------------------------------- the README's converted variant, played

README = (ROOT / "README.md").read_text(encoding="utf-8")
GAME = ROOT / "docs" / "examples" / "ancmed"
PLAY = ("ruleval play rulesets/diplomacy/ancmed.rules docs/examples/ancmed/start.json "
        "--orders docs/examples/ancmed/orders.yaml --format text")


def _readme_block_after(marker: str, lang: str = "") -> str:
    at = README.index(marker)
    start = README.index(f"```{lang}\n", at) + len(lang) + 4
    return README[start:README.index("```", start)]


def _play_output_shown() -> str:
    """The output shown under the README's `ruleval play` command on ancmed (its console block)."""
    opens = README.index("\n", README.index("$ " + PLAY)) + 1
    return README[opens:README.index("```", opens)]


def test_the_readme_game_starts_where_the_map_starts() -> None:
    import json

    rs = load_ruleset(DIP / "ancmed.rules")
    blank = {"phase": {"season": "spring", "year": 1, "type": "movement"}, "units": [], "orders": []}
    assert json.loads((GAME / "start.json").read_text(encoding="utf-8")) == rs.run(blank, "start_state")


def test_the_readme_shows_the_play_output(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    assert PLAY in README
    shown = _play_output_shown()
    r = cli(*PLAY.split()[1:])
    assert r.code == 0, r.err
    assert shown == r.out
    assert {line.split(":")[0][-1] for line in r.out.splitlines()[:-1]} == {"M", "R", "A"}


def test_the_readme_python_plays_the_same_game(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.chdir(ROOT)
    code = _readme_block_after("The same game in Python", "python")
    exec(compile(code, "README.md", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    played = [line.split(":")[0] for line in _play_output_shown().splitlines()[:-1]]
    assert [line.split()[0] for line in printed[:-1]] == played
    assert printed[-1].startswith("{") and "'rome'" in printed[-1]


def test_the_package_plays_the_readme_game_alike() -> None:
    """The orders of docs/examples/ancmed played by the `diplomacy` package end where ruleval ends."""
    from diplomacy import Game

    from bench.peers.dpjudge.full_games import peer_order, peer_power

    entries = yaml.safe_load((GAME / "orders.yaml").read_text(encoding="utf-8"))
    game = Game(map_name="ancmed")
    for e in entries:
        for power in {o["power"] for o in e["orders"]}:
            game.set_orders(peer_power(power), [peer_order(o["order"]) for o in e["orders"] if o["power"] == power])
        game.process()
    rs = load_ruleset(DIP / "ancmed.rules")
    from validator.api import Entry, play
    import json

    start = json.loads((GAME / "start.json").read_text(encoding="utf-8"))
    last = list(play(rs, start, [Entry(e["orders"], e["phase"]) for e in entries]))[-1].next
    assert game.get_current_phase() == "S0005M" and last["phase"]["year"] == 5
    assert sorted((peer_power(u["power"]), ("A " if u["type"] == "army" else "F ") + u["location"].upper())
                  for u in last["units"]) == sorted((p, u) for p, us in game.get_units().items() for u in us)
    assert {c: peer_power(p) for c, p in last["supply_centers"].items()} == \
        {c.lower(): p for p, cs in game.get_centers().items() for c in cs}


# ---------------------------------------------------------------- the boards' outlines (issue 44)

OUTLINED = [n for n in MAP_NAMES if (package_maps() / "svg" / f"{n}.svg").is_file()]


def _inside(point: list[float], ring: list[list[float]]) -> bool:
    x, y = point
    crossed = False
    for (x1, y1), (x2, y2) in zip(ring, ring[-1:] + ring[:-1]):
        if (y1 > y) != (y2 > y) and x < (x2 - x1) * (y - y1) / (y2 - y1) + x1:
            crossed = not crossed
    return crossed


def _distance(point: list[float], ring: list[list[float]]) -> float:
    import math

    best = math.inf
    for (ax, ay), (bx, by) in zip(ring, ring[-1:] + ring[:-1]):
        length = (bx - ax) ** 2 + (by - ay) ** 2
        t = 0.0 if not length else max(0.0, min(1.0, ((point[0] - ax) * (bx - ax) + (point[1] - ay) * (by - ay)) / length))
        best = min(best, math.hypot(point[0] - ax - t * (bx - ax), point[1] - ay - t * (by - ay)))
    return best


@pytest.mark.parametrize("name", OUTLINED)
def test_every_province_of_a_drawn_map_has_its_outline_around_its_point(name: str) -> None:
    """The package draws standard, ancmed, modern and pure: each province of those maps has an outline,
    in the drawing's units, around the point its unit is drawn at (within 2 % of the drawing: some
    drawings place a unit by its symbol's corner), so the outlines were read in the points' frame."""
    assert set(OUTLINED) == {"standard", "ancmed", "modern", "pure"}
    data = yaml.safe_load((DIP / "maps" / f"{name}.yaml").read_text(encoding="utf-8"))
    board = data["board"]
    assert sorted(board["outlines"]) == sorted(data["provinces"])
    slack = 0.02 * max(board["size"])
    for province, texts in board["outlines"].items():
        point = board["places"][province]
        rings = [[[float(v) for v in corner.split(",")] for corner in text.split()] for text in texts]
        assert all(len(ring) >= 3 for ring in rings)
        assert any(_inside(point, r) for r in rings) or min(_distance(point, r) for r in rings) <= slack, province


def test_the_standard_rules_draw_the_imported_standard_board() -> None:
    """standard_map.yaml (the standard rules' own map) carries the board of the package's standard
    drawing as imported into maps/standard.yaml, for each of its provinces."""
    ours = yaml.safe_load((DIP / "standard_map.yaml").read_text(encoding="utf-8"))
    imported = yaml.safe_load((DIP / "maps" / "standard.yaml").read_text(encoding="utf-8"))
    assert ours["board"]["size"] == imported["board"]["size"]
    places = imported["board"]["places"]
    assert ours["board"]["places"] == {k: v for k, v in places.items() if k.split("/")[0] in ours["provinces"]}
    assert ours["board"]["outlines"] == {k: v for k, v in imported["board"]["outlines"].items() if k in ours["provinces"]}


def test_path_rings_reads_the_drawings_commands() -> None:
    """The importer's SVG path reading: absolute and relative moves and lines, H and V, a cubic curve
    (sampled, ending at its end point), each Z closing a ring; another command is refused."""
    from bench.peers.dpjudge.import_map import path_rings, simplified

    rings = path_rings("M 0 0 L 10 0 l 0 10 H 0 z m 20 20 h 5 v 5 h -5 Z")
    assert rings == [[(0, 0), (10, 0), (10, 10), (0, 10)], [(20, 20), (25, 20), (25, 25), (20, 25)]]
    curve = path_rings("M0,0 C 0,10 10,10 10,0 L 5,-5 z")[0]
    assert curve[0] == (0, 0) and curve[4] == (10, 0) and len(curve) == 6 and 0 < curve[2][1] <= 7.5
    assert simplified([(0, 0), (5, 0.5), (10, 0), (10, 10), (0, 10)]) == [(0, 0), (10, 0), (10, 10), (0, 10)]
    with pytest.raises(ValueError, match="`A`"):
        path_rings("M 0 0 A 5 5 0 0 1 10 0 z")

