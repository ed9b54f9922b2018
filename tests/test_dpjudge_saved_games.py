"""Games saved by the `diplomacy` package (its `to_saved_game_format`, the format of the public game
datasets) imported as ruleval game records (bench/peers/dpjudge/saved_game.py) and replayed: games
the package plays with random orders from its own lists of possible orders replay phase by phase
under ruleval's reading of the package (bench/peers/readings/maps/), while the standard rules find
the first phase where the package departs from them."""

from __future__ import annotations

import json
from pathlib import Path

import diplomacy
import pytest
from diplomacy import Game
from diplomacy.utils.export import to_saved_game_format

from bench.peers.dpjudge import saved_game
from bench.peers.dpjudge.saved_games_scan import main as scan, package_game
from bench.peers.dpjudge.full_games import ruleset_path
from validator import load_ruleset
from validator.api import replay

# (map, seed): standard 6 and ancmed 4 have a retreat phase
GAMES = [("standard", 0), ("standard", 6), ("ancmed", 4), ("ancmed", 5)]


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("saved") / "games.jsonl"
    path.write_text("".join(json.dumps(package_game(n, s)) + "\n" for n, s in GAMES), encoding="utf-8")
    return path


@pytest.mark.parametrize("index", range(len(GAMES)))
def test_a_saved_game_replays_under_the_packages_reading(cli, saved: Path, tmp_path: Path, index: int) -> None:
    record = tmp_path / "record.jsonl"
    assert saved_game.main([str(saved), "--game", str(index), "-o", str(record)]) == 0
    states = [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]
    assert len(states) == 15 and sum(len(s["orders"]) for s in states) > 15
    r = cli("replay", str(ruleset_path(GAMES[index][0], reading=True)), str(record))
    assert r.code == 0, r.out + r.err


def test_retreats_are_imported_with_their_attacker(saved: Path) -> None:
    games = saved_game.read_saved_games(saved)
    retreats = [d for g in games for s in saved_game.records(g) if s["phase"]["type"] == "retreat" for d in s["dislodged"]]
    assert retreats and all(d["attacker_from"] for d in retreats)


def test_the_standard_rules_find_where_the_package_departs(cli, saved: Path, tmp_path: Path) -> None:
    """The package's random orders use `VIA` freely; its moves over land then depart from DATC 6.G.8."""
    record = tmp_path / "record.jsonl"
    game = package_game("standard", 0)
    record.write_text("".join(json.dumps(s) + "\n" for s in saved_game.records(game)), encoding="utf-8")
    r = cli("replay", str(ruleset_path("standard")), str(record))
    assert r.code == 1 and "3 phases agree; F1902M" in r.out, r.out + r.err


def test_orders_are_kept_as_the_package_writes_them() -> None:
    """Builds stay `F STP/NC B`: the Diplomacy rulesets read the package's notation (no rewriting)."""
    game = package_game("standard", 0)
    orders = [o["order"] for s in saved_game.records(game) if s["phase"]["type"] == "adjustment" for o in s["orders"]]
    builds = [o for o in orders if o.endswith(" B")]
    assert builds and not any(o.startswith("BUILD") for o in orders), orders


def test_bad_input(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"map": "standard", "phases": []}\n{oops\n', encoding="utf-8")
    with pytest.raises(saved_game.SavedGameError, match=r"bad\.jsonl:1: not JSON"):
        saved_game.read_saved_games(bad)
    with pytest.raises(saved_game.SavedGameError, match="`PRUSSIA` is not a power of the `standard` map"):
        saved_game.records({"map": "standard", "phases": [{"name": "S1901M", "state": {"units": {"PRUSSIA": ["A BER"]}}}]})
    with pytest.raises(saved_game.SavedGameError, match="`X1901Q` is not a phase name"):
        saved_game.records({"map": "standard", "phases": [{"name": "X1901Q", "state": {}}]})
    assert saved_game.main([str(bad), "-o", str(tmp_path / "r.jsonl")]) == 3


# The saved games the package ships with its network tests: long games (51 to 56 phases, 1901 to 1913)
NETWORK_GAMES = sorted((Path(diplomacy.__file__).parent / "tests" / "network").glob("*.json"))


@pytest.mark.parametrize("path", NETWORK_GAMES, ids=[p.stem for p in NETWORK_GAMES])
def test_the_packages_own_saved_games_replay_under_its_reading(cli, path: Path, tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    assert saved_game.main([str(path), "-o", str(record)]) == 0
    r = cli("replay", str(ruleset_path("standard", reading=True)), str(record), "--format", "json")
    report = json.loads(r.out)
    assert r.code == 0 and report["first_difference"] is None and report["phases_agreeing"] >= 50, r.out + r.err


def test_under_the_standard_rules_one_of_them_departs_where_the_package_moves_a_via_army_over_land(
        cli, tmp_path: Path) -> None:
    """DATC 6.G.8 (4.A.3): `A CON - BUL VIA` with no fleet convoying it fails; the package moves it by land."""
    found = {}
    for path in NETWORK_GAMES:
        record = tmp_path / f"{path.stem}.jsonl"
        saved_game.main([str(path), "-o", str(record)])
        r = cli("replay", str(ruleset_path("standard")), str(record), "--format", "json")
        found[path.stem] = json.loads(r.out)["first_difference"]
    departs = {k: v for k, v in found.items() if v is not None}
    assert list(departs) == ["3"] and departs["3"]["phase"] == "S1902M", found
    [where] = [d for d in departs["3"]["differences"] if d["recorded"] == "bul"]  # the army stayed in CON
    assert where["computed"] == "con" and where["pointer"].startswith("/units/") and where["pointer"].endswith("/location")


def test_the_packages_saved_retreats_are_not_copied_and_standoffs_are_found() -> None:
    """In F1902R of network game 1 the package saves `F NWY` with retreats to NTH, NWG, SKA, STP/NC (all
    occupied) and SWE (left empty by the bounce of A DEN and A FIN): ruleval is given the standoff and
    works out the retreats itself (only BAR)."""
    game = json.loads(NETWORK_GAMES[0].read_text(encoding="utf-8"))
    states = {p["name"]: s for p, s in zip(game["phases"], saved_game.records(game))}
    retreat = states["F1902R"]
    nwy = [d for d in retreat["dislodged"] if d["location"] == "nwy"]
    assert nwy == [{"power": "russia", "type": "fleet", "location": "nwy", "attacker_from": "yor", "attacker_via_convoy": True}]
    assert retreat["standoffs"] == ["swe"]
    out = load_ruleset(ruleset_path("standard")).run({**states["F1902M"]}, "advance")
    assert [d["retreats"] for d in out["next"]["dislodged"] if d["location"] == "nwy"] == [["bar"]]
    assert out["next"]["standoffs"] == ["swe"]


def test_a_finished_game_is_imported_up_to_its_completed_mark(cli, tmp_path: Path) -> None:
    """The package ends a finished game's phases with `COMPLETED`, which names no phase: the record
    stops before it, and replays."""
    game = Game(map_name="standard")
    game.process()
    game.draw()
    data = to_saved_game_format(game)
    assert data["phases"][-1]["name"] == "COMPLETED"
    path = tmp_path / "drawn.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    record = tmp_path / "record.jsonl"
    assert saved_game.main([str(path), "-o", str(record)]) == 0
    names = [json.loads(line)["phase"] for line in record.read_text(encoding="utf-8").splitlines()]
    assert len(names) == len(data["phases"]) - 1
    assert cli("replay", str(ruleset_path("standard")), str(record)).code == 0


@pytest.mark.parametrize("data", [
    [], {"phases": 3}, {"phases": [None]}, {"phases": [{"name": "S1901M", "state": None}]},
    {"phases": [{"name": "S1901M", "state": {"units": {"FRANCE": ["X PAR"]}}}]},
    {"phases": [{"name": "S1901M", "state": {"units": {"FRANCE": ["A"]}}}]},
    {"phases": [{"name": "S1901M", "state": {"units": {"FRANCE": "A PAR"}}}]},
    {"phases": [{"name": "S1901M", "state": {"centers": ["PAR"]}}]},
    {"phases": [{"name": "S1901M", "state": {}, "orders": {"FRANCE": "A PAR H"}}]},
    {"map": "../standard_map", "phases": []},
])
def test_a_saved_game_of_another_shape_is_an_error_line_not_a_traceback(tmp_path: Path, capsys, data) -> None:
    path = tmp_path / "game.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert saved_game.main([str(path), "-o", str(tmp_path / "r.jsonl")]) == 3
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err and not (tmp_path / "r.jsonl").exists()
    if "units" in json.dumps(data):
        assert "is not a unit like `A PAR`" in err or "gives each power a list of units" in err, err


def crafted_game(units: dict[str, list[str]], orders: dict[str, list[str]]) -> dict:
    """A standard game from the given position, its first phase played with the given orders, the phase
    after it left unplayed (a saved game ends with the phase to play)."""
    game = Game(map_name="standard")
    game.clear_units()
    for power, us in units.items():
        game.set_units(power, us)
    for power, texts in orders.items():
        game.set_orders(power, texts)
    game.process()
    return to_saved_game_format(game)


def test_an_adjacent_army_goes_over_land_when_the_fleets_convoying_it_make_no_route() -> None:
    """DATC 4.A.3 and 6.G.20: Italy's own F ION convoys A ROM - APU, but the route (ROM, TYS, ION, APU)
    needs F TYS, which holds. The standard rules take the convoy as the army's intent and the move fails
    with its convoy; the package moves the army over land (and, with support, dislodges A APU). The
    importer says it came over land, as the reading then computes."""
    game = crafted_game({"ITALY": ["A ROM", "F ION", "F TYS", "A NAP"], "AUSTRIA": ["A APU"]},
                        {"ITALY": ["A ROM - APU VIA", "F ION C A ROM - APU", "F TYS H", "A NAP S A ROM - APU"],
                         "AUSTRIA": ["A APU H"]})
    states = saved_game.records(game)
    assert [s["phase"]["type"] for s in states] == ["movement", "retreat"]
    assert states[1]["dislodged"] == [{"power": "austria", "type": "army", "location": "apu",
                                      "attacker_from": "rom", "attacker_via_convoy": False}]
    count, mismatch = replay(load_ruleset(ruleset_path("standard", reading=True)), states)
    assert (count, mismatch) == (1, None)
    out = load_ruleset(ruleset_path("standard")).run(states[0], "advance")
    rom = [r for r in out["result"]["orders"] if r["unit"] == "rom"][0]
    assert rom["status"] == "fails" and "DATC-4.A.3" in rom["cites"], rom


def test_a_support_naming_the_other_coast_counts_from_a_fleet_and_is_void_from_an_army() -> None:
    """DATC 4.B.4: F MAO - SPA/NC is supported by F POR and by A GAS, both naming SPA/SC. The package
    rewrites the fleet's support to the province (it counts: A SPA is dislodged by 2 to 1) and voids the
    army's, as the rules void both; the reading computes the same, and the standard rules say why the
    army's support fails."""
    for supporter, dislodged in (("F POR", True), ("A GAS", False)):
        game = crafted_game({"FRANCE": ["F MAO", supporter], "ITALY": ["A SPA"]},
                            {"FRANCE": ["F MAO - SPA/NC", f"{supporter} S F MAO - SPA/SC"], "ITALY": ["A SPA H"]})
        states = saved_game.records(game)
        assert (states[1]["phase"]["type"] == "retreat") is dislodged
        count, mismatch = replay(load_ruleset(ruleset_path("standard", reading=True)), states)
        assert (count, mismatch) == (1, None), (supporter, mismatch)
    out = load_ruleset(ruleset_path("standard")).run(states[0], "advance")
    gas = [r for r in out["result"]["orders"] if r["unit"] == "gas"][0]
    assert gas == {"power": "france", "order": "A GAS S F MAO - SPA/SC", "unit": "gas", "status": "fails",
                   "reason": "F MAO moves to SPA/NC, not SPA/SC", "cites": ["DATC-4.B.4"]}


@pytest.mark.parametrize("via", ["", " VIA"])
def test_own_power_support_for_a_convoyed_attack_counts_in_the_package_only_when_the_order_says_via(via: str) -> None:
    """DATC 6.D.12: Austria's A BUD supports Italy's A VEN - TRI (convoyed by Italy's F ADR) against
    Austria's own F TRI. The package leaves that support out (A VEN bounces) unless the order ends in
    `VIA`, when it counts it and F TRI is dislodged; the reading computes both."""
    game = crafted_game({"ITALY": ["A VEN", "F ADR"], "AUSTRIA": ["F TRI", "A BUD"]},
                        {"ITALY": [f"A VEN - TRI{via}", "F ADR C A VEN - TRI"], "AUSTRIA": ["F TRI H", "A BUD S A VEN - TRI"]})
    states = saved_game.records(game)
    assert (states[1]["phase"]["type"] == "retreat") is bool(via)
    assert replay(load_ruleset(ruleset_path("standard", reading=True)), states) == (1, None)


@pytest.mark.parametrize("via", ["", " VIA"])
def test_a_disrupted_convoy_to_an_adjacent_province_falls_back_on_land_in_the_package_unless_via(via: str) -> None:
    """DATC 6.G.20 (4.A.3): England's F NTH convoys A LON - YOR and is dislodged. The rules fail the move;
    the package moves the army over land unless its order says `VIA`; the reading computes both."""
    game = crafted_game({"ENGLAND": ["A LON", "F NTH"], "GERMANY": ["F HOL", "F BEL"]},
                        {"ENGLAND": [f"A LON - YOR{via}", "F NTH C A LON - YOR"],
                         "GERMANY": ["F HOL - NTH", "F BEL S F HOL - NTH"]})
    states = saved_game.records(game)
    english = sorted(u["location"] for u in states[-1]["units"] if u["power"] == "england")
    assert english == (["lon"] if via else ["yor"])
    assert replay(load_ruleset(ruleset_path("standard", reading=True)), states) == (len(states) - 1, None)
    out = load_ruleset(ruleset_path("standard")).run(states[0], "advance")
    assert [r["status"] for r in out["result"]["orders"] if r["unit"] == "lon"] == ["fails"]


def test_the_scan_replays_the_packages_own_games_with_illegal_orders_under_its_readings(capsys) -> None:
    """bench/peers/dpjudge/saved_games_scan.py: games the package plays alone (here under NO_CHECK, with
    moves to any place) replay to their end under its readings."""
    assert scan(["--games", "2", "--phases", "10", "--maps", "standard", "--no-check"]) == 0
    out = capsys.readouterr().out
    assert "standard: 2 games, 2 replay to their end" in out and "games that do not replay: 0" in out
    # a game that cannot be replayed (no phase played: one state) is named, not a traceback
    assert scan(["--games", "1", "--phases", "0", "--maps", "pure"]) == 1
    assert "pure game 0: not replayed: a record needs at least two states" in capsys.readouterr().out


@pytest.mark.parametrize("via", ["", " VIA"])
def test_the_via_word_decides_6_d_12_for_a_convoy_over_open_sea_too(via: str) -> None:
    """DATC 6.D.12 with a convoy no land route could replace: England's A LON - BEL (F NTH convoying),
    France's A BUR supporting it against France's own A BEL. The package dislodges A BEL only when the
    order ends in `VIA`; the reading computes both."""
    game = crafted_game({"ENGLAND": ["A LON", "F NTH"], "FRANCE": ["A BEL", "A BUR"]},
                        {"ENGLAND": [f"A LON - BEL{via}", "F NTH C A LON - BEL"], "FRANCE": ["A BEL H", "A BUR S A LON - BEL"]})
    states = saved_game.records(game)
    assert (states[1]["phase"]["type"] == "retreat") is bool(via)
    assert replay(load_ruleset(ruleset_path("standard", reading=True)), states) == (1, None)


def test_the_packages_draw_after_its_hundredth_year_ends_the_game_under_its_reading() -> None:
    """The package's own test game (tests/test_game.py test_automatic_draw): the start position played
    with no orders for a hundred years ends drawn among the seven powers, its outcome naming W2000A.
    The rules of the game set no last year (DIP-G3: a solo win ends it), so the standard rules go on;
    the package's reading (`game_end` in bench/peers/readings/diplomacy_pkg.rules) ends it there, drawn
    among the same powers. The record's last state, W2000A, is the position at the draw: no adjustment
    is owed, so the rules pass that winter over (the state they compute is S2001M's), and the record is
    replayed up to the fall of 2000, whose end is compared, and W2000A's units and owners with it."""
    game = Game(map_name="standard")
    for _ in range(200):
        game.process()
    assert game.is_game_done and game.outcome[0] == "W2000A"
    states = saved_game.records(to_saved_game_format(game))
    assert states[-2]["phase"] == {"season": "fall", "year": 2000, "type": "movement"}
    assert states[-1]["phase"] == {"season": "winter", "year": 2000, "type": "adjustment"}
    standard = load_ruleset(ruleset_path("standard"))
    reading = load_ruleset(ruleset_path("standard", reading=True))
    for rs in (standard, reading):
        assert replay(rs, states[:-1]) == (len(states) - 2, None)
    assert standard.run(states[-2], "advance")["end"] is None
    out = reading.run(states[-2], "advance")
    assert out["end"]["draw"] == sorted(p.lower() for p in game.outcome[1:])
    assert out["next_phase"] == "S2001M"

    def key(u: dict) -> tuple:
        return (u["power"], u["type"], u["location"])

    assert sorted(out["next"]["units"], key=key) == sorted(states[-1]["units"], key=key)
    assert out["next"]["supply_centers"] == states[-1]["supply_centers"]
