"""Games saved by the `diplomacy` package (its `to_saved_game_format`, the format of the public game
datasets) imported as ruleval game records (bench/peers/dpjudge/saved_game.py) and replayed: games
the package plays with random orders from its own lists of possible orders replay phase by phase
under ruleval's reading of the package (bench/peers/readings/maps/), while the standard rules find
the first phase where the package departs from them."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from diplomacy import Game
from diplomacy.utils.export import to_saved_game_format

from bench.peers.dpjudge import saved_game
from bench.peers.dpjudge.full_games import ruleset_path

# (map, seed): standard 6 and ancmed 4 have a retreat phase
GAMES = [("standard", 0), ("standard", 6), ("ancmed", 4), ("ancmed", 5)]


def package_game(name: str, seed: int, phases: int = 14) -> dict:
    game = Game(map_name=name)
    rng = random.Random(seed)
    for _ in range(phases):
        possible = game.get_all_possible_orders()
        for power in sorted(game.powers):  # (sorted: the package's lists follow the hash seed)
            game.set_orders(power, [rng.choice(sorted(possible[loc])) for loc in sorted(game.get_orderable_locations(power))
                                    if possible[loc]])
        game.process()
    return to_saved_game_format(game)


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


def test_orders_and_bad_input(tmp_path: Path) -> None:
    assert saved_game.ruleval_order("F STP/NC B") == "BUILD F STP/NC"
    assert saved_game.ruleval_order("A PAR - BUR VIA") == "A PAR - BUR VIA"
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"map": "standard", "phases": []}\n{oops\n', encoding="utf-8")
    with pytest.raises(saved_game.SavedGameError, match=r"bad\.jsonl:1: not JSON"):
        saved_game.read_saved_games(bad)
    with pytest.raises(saved_game.SavedGameError, match="`PRUSSIA` is not a power of the `standard` map"):
        saved_game.records({"map": "standard", "phases": [{"name": "S1901M", "state": {"units": {"PRUSSIA": ["A BER"]}}}]})
    with pytest.raises(saved_game.SavedGameError, match="`X1901Q` is not a phase name"):
        saved_game.records({"map": "standard", "phases": [{"name": "X1901Q", "state": {}}]})
    assert saved_game.main([str(bad), "-o", str(tmp_path / "r.jsonl")]) == 3
