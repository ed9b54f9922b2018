"""Full games on every map of the `diplomacy` package against its own engine (issue 22, item 4):
seeded random games, every unit ordered in every phase by ruleval's `random_orders` (but those of a
power no one plays: known_world_901's neutral state), the same orders
played by `diplomacy.Game(map_name=...)`, and each phase's next phase, units, dislodged units and
supply-centre owners compared (bench/peers/dpjudge/full_games.py). A game that ends differently must
end as the package ends it once ruleval plays under the package's readings of the rules
(bench/peers/readings/maps/<map>.rules: diplomacy_pkg.rules, each override citing the DATC case it
departs from, on that map): no difference is left unexplained.

RULEVAL_GAMES=N plays N games a map (default 2, of 3 game-years). On a machine where the package
has never loaded the `world` and `known_world_901` maps, its first `Game` on each computes their
convoy paths (minutes for `world`), then keeps them in ~/.cache/diplomacy."""

from __future__ import annotations

import os

import pytest

from bench.peers.dpjudge import full_games
from bench.peers.dpjudge.import_map import MAP_NAMES
from validator import load_ruleset

GAMES = int(os.environ.get("RULEVAL_GAMES", "2"))
YEARS = 3


def test_the_reading_rulesets_are_current_and_check(cli) -> None:
    assert full_games.write_readings(check=True) == [], "re-run bench.peers.dpjudge.full_games.write_readings()"
    r = cli("check", "--deny-warnings", *(str(full_games.ruleset_path(n, reading=True)) for n in MAP_NAMES))
    assert r.code == 0, r.out + r.err


@pytest.mark.parametrize("name", MAP_NAMES)
def test_full_games_agree_or_follow_the_packages_readings(name: str) -> None:
    figures = full_games.run_map(name, GAMES, YEARS)
    assert figures.phases >= GAMES * 2 * YEARS, figures  # every game played its years (or ended in a win)
    assert figures.agreed == figures.phases - len(figures.differences)
    reading = load_ruleset(full_games.ruleset_path(name, reading=True))
    again = full_games.MapFigures(name)
    for d in figures.differences:
        left = full_games.play_game(reading, name, d.game, YEARS, again)
        assert left is None, f"game {d.game}, {left.phase}: {left.fields} (standard rules: {d.phase}: {d.fields})"


def test_every_phase_type_is_compared() -> None:
    """The comparison reaches retreats and adjustments, not movement alone."""
    seen = set()
    rs = load_ruleset(full_games.ruleset_path("standard"))
    figures = full_games.MapFigures("standard")
    original = full_games._ruleval_view

    def spy(out, year_width=4):
        seen.add(out["phase"][-1])
        return original(out, year_width)

    full_games._ruleval_view = spy
    try:
        for seed in range(3):
            full_games.play_game(rs, "standard", seed, 3, figures)
    finally:
        full_games._ruleval_view = original
    assert seen == {"M", "R", "A"}, seen


def test_a_power_no_one_plays_is_given_no_orders_on_either_side(monkeypatch: pytest.MonkeyPatch) -> None:
    """known_world_901's neutral state (the package's DUMMY) gets no orders from ruleval's
    `random_orders`, so the package, given the same orders, is set none for it either: both play it as a
    power without orders, and the games still agree (or differ as the package's readings say)."""
    from diplomacy import Game

    set_for: set[str] = set()
    original = Game.set_orders

    def spy(self, power_name, orders, *args, **kwargs):
        set_for.add(power_name)
        return original(self, power_name, orders, *args, **kwargs)

    monkeypatch.setattr(Game, "set_orders", spy)
    figures = full_games.run_map("known_world_901", 1, 2, explain=True)
    assert figures.phases >= 4 and not figures.unexplained, figures
    assert "NEUTRALSTATE" not in set_for and len(set_for) == 15, set_for


def test_orders_in_the_packages_words() -> None:
    assert full_games.peer_order("BUILD F STP/NC") == "F STP/NC B"
    assert full_games.peer_order("A PAR R BUR") == "A PAR R BUR"
    assert full_games.peer_order("waive") == "WAIVE"
    assert full_games.peer_power("near_east") == "NEAREAST"


def test_the_readme_table_is_the_commands_and_explains_every_difference() -> None:
    """The README's table is `full_games`'s output (same columns, every map once), and it says what the
    command checks: phases agreed and games differing add up, every differing game explained."""
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    header = full_games.table([]).splitlines()
    assert "\n".join(header) in readme
    rows = readme.split("\n".join(header) + "\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert [r.split("|")[1].strip() for r in rows] == list(MAP_NAMES)
    for row in rows:
        cells = [c.strip() for c in row.split("|")[1:-1]]
        phases, agreed, differ, explained = int(cells[2]), int(cells[3].split()[0]), int(cells[4]), int(cells[5])
        assert agreed + differ == phases and explained == differ, row


@pytest.mark.parametrize("with_port", [True, False])
def test_a_convoy_through_a_port_as_the_package_does(with_port: bool) -> None:
    """ancmed's Baleares is a PORT (a coast a fleet convoys through, `convoyable`): random games only
    convoy through seas, so a convoy through it is played here on both sides, with and without it."""
    from diplomacy import Game

    units = [("rome", "army", "sag"), ("rome", "fleet", "lig")] + ([("rome", "fleet", "bal")] if with_port else [])
    orders = ["A SAG - MAS VIA", "F LIG C A SAG - MAS"] + (["F BAL C A SAG - MAS"] if with_port else [])
    state = {"phase": {"season": "spring", "year": 1, "type": "movement"},
             "units": [{"power": p, "type": t, "location": loc} for p, t, loc in units],
             "orders": [{"power": "rome", "order": o} for o in orders]}
    result = load_ruleset(full_games.ruleset_path("ancmed")).run(state)
    game = Game(map_name="ancmed")
    game.clear_units()
    game.set_units("ROME", [("A " if t == "army" else "F ") + loc.upper() for _, t, loc in units], reset=True)
    game.set_orders("ROME", orders)
    game.process()
    army = next(u for u in game.get_units("ROME") if u.startswith("A "))
    ours = next(u["location"] for u in result["units"] if u["type"] == "army")
    assert ours == army[2:].lower() == ("mas" if with_port else "sag")
