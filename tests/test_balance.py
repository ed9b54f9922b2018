"""`ruleval balance` and players written as rulesets (validator/tools/balance.py,
rulesets/diplomacy/players/), and the figures of many runs (validator/tools/impact.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from validator.api import game_seed, load_ruleset
from validator.tools.balance import load_player, player_path, run_balance
from validator.tools.impact import Share

ROOT = Path(__file__).resolve().parent.parent
DIP = ROOT / "rulesets" / "diplomacy"
SWEEP = ROOT / "tests" / "fixtures" / "sweep"


def test_wilson_interval_is_the_textbook_one() -> None:
    # Wilson (1927); e.g. 0 of 10 gives [0, 0.2775], 5 of 10 gives [0.2366, 0.7634]
    assert Share(0, 10).interval == (0.0, pytest.approx(0.27753, abs=1e-5))
    low, high = Share(5, 10).interval
    assert low == pytest.approx(0.23659, abs=1e-5) and high == pytest.approx(0.76341, abs=1e-5)
    assert Share(10, 10).interval[1] == pytest.approx(1.0) and Share(10, 10).interval[0] == pytest.approx(0.72247, abs=1e-5)
    assert Share(0, 0).interval == (0.0, 1.0)


@pytest.mark.parametrize("variant", ["standard.rules", "ancmed.rules", "build_anywhere.rules", "standard_fleet_rome.rules"])
@pytest.mark.parametrize("player", ["heuristic", "random"])
def test_players_give_only_orders_the_variant_accepts(variant: str, player: str) -> None:
    """A player is applied over the variant without a copy, and every order it gives, for every power
    in every phase type, is one the variant's rules accept (none `invalid`)."""
    rules = load_ruleset(DIP / variant)
    path = player_path(rules, player)
    assert path == DIP / "players" / f"{player}.rules"
    rs = load_player(rules, path)
    assert rs.ok, [str(d) for d in rs.diagnostics if d.is_error]
    state = rules.run({}, query="start_state", validate=False)
    sides = rules.run(state, query="sides")
    kinds = set()
    for i in range(12):
        s = game_seed(3, 0, i)
        orders = [o for side in sides for o in rs.run(state, query="player_orders", args=[side, s], seed=s)]
        assert all(o["power"] in sides for o in orders)
        out = rules.run({**state, "orders": orders}, query="advance", seed=s)
        kinds.add(state["phase"]["type"])
        bad = [r for r in out["result"].get("orders", []) if r.get("status") == "invalid"]
        assert not bad, (variant, player, out["phase"], bad)
        if out["end"] is not None:
            break
        state = out["next"]
    assert kinds >= {"movement", "adjustment"}


def test_the_heuristic_player_takes_centres_and_supports_its_own_attacks() -> None:
    rules = load_ruleset(DIP / "standard.rules")
    rs = load_player(rules, DIP / "players" / "heuristic.rules")
    state = rules.run({}, query="start_state", validate=False)
    france = rs.run(state, query="player_orders", args=["france", 1], seed=1)
    assert {"power": "france", "order": "A MAR - SPA"} in france  # a neutral centre next door
    # two French armies next to Belgium, one of them already there in spirit: one moves, the other supports it
    state = {"phase": {"season": "fall", "year": 1901, "type": "movement"},
             "units": [{"power": "france", "type": "army", "location": "bur"},
                       {"power": "france", "type": "army", "location": "pic"},
                       {"power": "germany", "type": "army", "location": "ruh"}],
             "supply_centers": {"par": "france", "bre": "france"}, "orders": []}
    orders = [o["order"] for o in rs.run(state, query="player_orders", args=["france", 2], seed=2)]
    assert any(" - BEL" in o for o in orders) and any(" S " in o and o.endswith("- BEL") for o in orders), orders


def test_the_heuristic_player_concentrates_its_units_on_a_held_centre() -> None:
    """Three French armies about Munich, which a German army holds, every other centre in reach French:
    one attacks, the two others support it (alone, the attack would bounce), and Munich falls."""
    rules = load_ruleset(DIP / "standard.rules")
    rs = load_player(rules, DIP / "players" / "heuristic.rules")
    state = {"phase": {"season": "fall", "year": 1902, "type": "movement"},
             "units": [{"power": "france", "type": "army", "location": loc} for loc in ("bur", "ruh", "tyr")]
             + [{"power": "germany", "type": "army", "location": "mun"}],
             "supply_centers": {"mun": "germany", **{c: "france" for c in ("par", "mar", "bel", "hol", "kie", "ven", "vie",
                                                                           "tri")}}, "orders": []}
    orders = [o["order"] for o in rs.run(state, query="player_orders", args=["france", 5], seed=5)]
    attack = [o for o in orders if o.endswith(" - MUN") and " S " not in o]
    supports = [o for o in orders if " S " in o and o.endswith(" - MUN")]
    assert len(attack) == 1 and len(supports) == 2, orders
    out = rules.run({**state, "orders": [{"power": "france", "order": o} for o in orders]}, query="advance", seed=5)
    assert any(u["location"] == "mun" and u["power"] == "france" for u in out["next"]["units"]), out["result"]


def test_in_a_seeded_sweep_the_heuristic_player_ends_with_more_centres_than_the_random_one() -> None:
    """The standard game, three years, four powers played by the heuristic player and three by the random
    one, then the other way round (so that no power's position favours either player): the heuristic
    player's powers end with clearly more supply centres."""
    a, b = ["austria", "germany", "italy", "turkey"], ["england", "france", "russia"]
    held: dict[str, list[float]] = {"heuristic": [], "random": []}
    for clever in (a, b):
        f = run_balance(str(DIP / "standard.rules"), ["random"] + [f"{side}=heuristic" for side in clever],
                        games=3, rounds=3, seed=7, jobs=1)
        assert f["games"] == 3 and not f["errors"]
        last = f["by_round"][max(f["by_round"], key=int)]
        for side in a + b:
            assert f["sides"][side]["player"] == ("heuristic" if side in clever else "random")
            held[f["sides"][side]["player"]].append(last[side]["mean"])
    heuristic, random = (sum(held[p]) / len(held[p]) for p in ("heuristic", "random"))
    assert heuristic > 1.5 * random, held


def test_balance_reports_shares_by_side_and_holdings_by_round(cli: Any, tmp_path: Path) -> None:
    svg, png = tmp_path / "b.svg", tmp_path / "b.png"
    r = cli("balance", str(SWEEP / "race.rules"), "--games", "10", "--player", "random", "--player", "red=steady",
            "--format", "json", "--plot", str(svg), "--plot", str(png), "--jobs", "1")
    assert r.code == 0, r.err
    f = json.loads(r.out)
    assert f["games"] == 10 and f["by_victory"] + f["at_limit"] == 10
    assert f["sides"]["red"]["player"] == "steady" and f["sides"]["blue"]["player"] == "random"
    for side in f["sides"].values():
        for key in ("wins", "draws", "survivals", "eliminations"):
            low, high = side[key]["ci95"]
            assert 0 <= low <= side[key]["share"] <= high <= 1
    assert f["sides"]["red"]["survivals"]["count"] == 10
    assert f["by_round"]["1"]["red"] == {"mean": 0.0, "sd": 0.0} and f["by_round"]["2"]["red"]["mean"] == 2.0
    assert svg.read_text().lstrip().startswith("<?xml") and "<svg" in svg.read_text()
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = cli("balance", str(SWEEP / "race.rules"), "--games", "10", "--player", "random", "--player", "red=steady",
               "--jobs", "1")
    assert text.code == 0 and "red    steady" in text.out and max(len(x) for x in text.out.splitlines()) <= 100


def test_balance_ends_at_the_round_limit_without_a_winner(cli: Any) -> None:
    r = cli("balance", str(SWEEP / "race.rules"), "--games", "3", "--rounds", "4", "--player", "still", "--format",
            "json", "--jobs", "1")
    f = json.loads(r.out)
    assert r.code == 0 and f["at_limit"] == 3 and f["length"]["rounds_max"] == 4
    assert all(s["draws"]["count"] == 3 for s in f["sides"].values())


@pytest.mark.parametrize("argv, said", [
    (["--player", "nobody"], "no player `nobody`"),
    (["--player", "purple=random"], "`purple` is not a side"),
    (["--plot", "x.pdf"], "writes an .svg or .png file"),
    (["--games", "0"], "--games takes a number from 1, not 0"),
    (["--max-phases", "-3"], "--max-phases takes a number from 1, not -3"),  # (100 games of no phase, exit 0)
    (["--max-phases", "0"], "--max-phases takes a number from 1, not 0"),
    (["--show", "-1"], "--show takes a number from 0, not -1"),
    (["--records", "r.jsonl"], "--records goes with --format json"),  # (ignored without a word)
    (["--games", str(10 ** 11)], "--games takes at most 1,000,000 games"),  # (listed first: a MemoryError, I001)
])
def test_balance_usage_errors(cli: Any, argv: list[str], said: str) -> None:
    games = [] if "--games" in argv else ["--games", "1"]  # (an option is given once: U001 if twice)
    r = cli("balance", str(SWEEP / "race.rules"), *games, "--jobs", "1", *argv)
    assert r.code == 2 and said in r.err, (r.code, r.err)


@pytest.mark.parametrize("option", [["--plot"], ["--format", "json", "--records"]], ids=["plot", "records"])
@pytest.mark.parametrize("where, said", [("missing/out", "the folder `{tmp}/missing` does not exist"),
                                         ("a_file/out", "`{tmp}/a_file` is a file, not a folder")],
                         ids=["missing-folder", "through-a-file"])
def test_balance_output_that_cannot_be_written_is_said_before_the_games(cli: Any, tmp_path: Path, monkeypatch: Any,
                                                                         option: list[str], where: str, said: str) -> None:
    from validator.tools import balance

    (tmp_path / "a_file").write_text("")
    monkeypatch.setattr(balance, "play_one", lambda *a: pytest.fail("a game was played"))
    target = f"{tmp_path}/{where}" + (".svg" if option == ["--plot"] else ".jsonl")
    r = cli("balance", str(SWEEP / "race.rules"), "--games", "2", "--jobs", "1", *option, target)
    assert r.code == 2 and "U002" in r.err and said.format(tmp=tmp_path) in r.err, (r.code, r.err)


def test_a_variant_without_standing_is_refused(cli: Any) -> None:
    r = cli("balance", str(ROOT / "tests" / "fixtures" / "errata" / "old.rules"), "--games", "1")
    assert r.code == 2 and "has no `query advance`" in r.err


@pytest.mark.parametrize("standing", ["{round: round, holdings: none, alive: {s => true for s in runners}}",
                                      "{round: round, holdings: [1], alive: {s => true for s in runners}}",
                                      "{round: round, holdings: {s => [] for s in runners}, alive: none}"],
                         ids=["holdings-none", "holdings-a-list", "alive-none"])
def test_a_standing_of_another_shape_is_said_for_its_game_not_a_traceback(cli: Any, tmp_path: Path,
                                                                         standing: str) -> None:
    """`standing` may give `none` where it cannot know (standard.rules: holdings of a state without owners);
    `balance` reads a map there, and says which game could not be read, as for any other shape."""
    import shutil

    shutil.copytree(SWEEP, tmp_path / "sweep")
    path = tmp_path / "sweep" / "vague.rules"
    path.write_text('ruleset sweep.vague "A race whose standing is vague"\nextends "race.rules"\n\n'
                    f"override query standing = {standing}\n", encoding="utf-8")
    r = cli("balance", str(path), "--games", "1", "--jobs", "1")
    said = "game 0: the variant's `standing` or `advance` is not as `balance` reads it"
    assert "Traceback" not in r.err and "I001" not in r.err and said in r.out + r.err, (r.code, r.out, r.err)


def test_a_player_whose_rules_err_is_reported_with_its_line(cli: Any, tmp_path: Path) -> None:
    bad = tmp_path / "bad.rules"
    bad.write_text('ruleset x.bad "bad"\nextends "race.rules"\n\nquery player_orders(side, seed) = nope\n')
    r = cli("balance", str(SWEEP / "race.rules"), "--games", "1", "--player", str(bad), "--jobs", "1")
    assert r.code == 1 and f"{bad}:4:35:" in r.err and "`nope`" in r.err  # (the player's own file: no `race+bad`)


def test_run_balance_gives_the_figures_to_a_program() -> None:
    """The API the playground calls: the figures of `balance --format json`, and their drawing."""
    from validator.tools.balance import figure_bytes, run_balance

    f = run_balance(str(SWEEP / "race.rules"), ["random", "red=steady"], games=4, jobs=1)
    assert f["games"] == 4 and f["sides"]["red"]["player"] == "steady" and f["variant"].endswith("race.rules")
    assert b"<svg" in figure_bytes(f, "race", "svg")


@pytest.fixture
def race_with_a_side_no_one_plays(tmp_path: Path) -> Path:
    """The race of the sweep's tests where no one plays green (its `query unplayed`)."""
    import shutil

    shutil.copytree(SWEEP, tmp_path / "sweep")
    path = tmp_path / "sweep" / "unplayed.rules"
    path.write_text('ruleset sweep.unplayed "A race green sits out"\nextends "race.rules"\n\n'
                    'query unplayed = ["green"]\n', encoding="utf-8")
    return path


def test_a_side_no_one_plays_gets_no_player_and_is_reported_apart(cli: Any, race_with_a_side_no_one_plays: Path) -> None:
    """No player gives orders to a side the variant's `query unplayed` names (here green never moves,
    where any player of the race would move it), and every output says it is not played: its row in
    JSON (`played: false`, no player, and `unplayed`), a line of its own in the text, apart from the
    table of the sides whose outcomes compare; `--player` (every side) seats the others only."""
    argv = ("balance", str(race_with_a_side_no_one_plays), "--games", "6", "--player", "steady", "--jobs", "1")
    r = cli(*argv, "--format", "json")
    assert r.code == 0, r.err
    f = json.loads(r.out)
    assert f["unplayed"] == ["green"]
    assert f["sides"]["green"]["played"] is False and f["sides"]["green"]["player"] is None
    assert all(f["sides"][s]["played"] and f["sides"][s]["player"] == "steady" for s in ("red", "blue"))
    assert all(row["green"]["mean"] == 0 for row in f["by_round"].values())  # never moved
    assert f["by_round"]["2"]["red"]["mean"] == 2.0 and f["sides"]["green"]["wins"]["count"] == 0
    text = cli(*argv).out.splitlines()
    head = next(i for i, line in enumerate(text) if line.startswith("side "))
    assert [line.split()[:2] for line in text[head + 1:head + 3]] == [["red", "steady"], ["blue", "steady"]]
    assert text[head + 3].startswith("not played: green (the variant's `unplayed`: no player gives its orders")
    assert " ".join(" ".join(text[head + 3:head + 5]).split()).endswith("won 0 of 6 games")
    svg = race_with_a_side_no_one_plays.parent / "b.svg"
    r = cli(*argv, "--format", "json", "--group-by", "player", "--plot", str(svg))
    by_player = json.loads(r.out)
    assert list(by_player["sides"]) == ["steady", "green"] and by_player["sides"]["steady"]["sides"] == ["red", "blue"]
    assert by_player["sides"]["green"]["played"] is False and "<svg" in svg.read_text()


def test_a_side_no_one_plays_has_no_draws_or_survivals_counted(cli: Any, race_with_a_side_no_one_plays: Path) -> None:
    """A side no one plays has no chances to weigh: its draws, survivals and eliminations were counted
    as for a played side (green, never moving, survived every game and drew each one without a winner),
    and the text said it was in the game at the end of them. They are not counted for it (null in the
    JSON), by side and by player; its wins stay, and the played sides' figures are unchanged."""
    argv = ("balance", str(race_with_a_side_no_one_plays), "--games", "6", "--player", "steady", "--jobs", "1")
    for group_by in ("side", "player"):
        r = cli(*argv, "--format", "json", "--group-by", group_by)
        assert r.code == 0, r.err
        f = json.loads(r.out)
        green = f["sides"]["green"]
        assert green["played"] is False and green["wins"] == {**green["wins"], "count": 0, "of": 6}
        assert green["draws"] is None and green["survivals"] is None and green["eliminations"] is None
        played = [row for row in f["sides"].values() if row["played"]]
        assert played and all(row[k]["of"] == 6 * len(row["sides"]) for row in played
                              for k in ("wins", "draws", "survivals", "eliminations"))
    text = " ".join(cli(*argv).out.split())
    assert "not played: green (" in text and "won 0 of 6 games" in text and "at the end" not in text


def test_a_player_named_like_a_side_no_one_plays_keeps_a_row_of_its_own(cli: Any,
                                                                        race_with_a_side_no_one_plays: Path) -> None:
    """`--group-by player` names a played group by its player and a side no one plays by the side: a
    player named `green` (players/green.rules) merged with the unplayed green into one row, counted as
    played. Each keeps a row of its own: the unplayed side's is named apart, and says which side it is."""
    import shutil

    folder = race_with_a_side_no_one_plays.parent / "players"
    shutil.copy(folder / "steady.rules", folder / "green.rules")
    argv = ("balance", str(race_with_a_side_no_one_plays), "--games", "4", "--player", "green", "--jobs", "1",
            "--group-by", "player")
    r = cli(*argv, "--format", "json")
    assert r.code == 0, r.err
    f = json.loads(r.out)
    rows = {name: (row["player"], row["played"], row["sides"]) for name, row in f["sides"].items()}
    assert rows["green"] == ("green", True, ["red", "blue"])
    apart = [name for name, (_, played, sides) in rows.items() if not played]
    assert len(rows) == 2 and len(apart) == 1 and rows[apart[0]] == (None, False, ["green"]), rows
    assert all(set(row) == set(rows) for row in f["by_round"].values())
    assert f["sides"]["green"]["wins"]["of"] == 8
    text = cli(*argv).out.splitlines()
    assert [line.split()[:2] for line in text if line.startswith("green ")][0] == ["green", "2"]
    assert any(line.startswith("not played: green (") for line in text)


def test_a_player_for_a_side_no_one_plays_is_refused(cli: Any, race_with_a_side_no_one_plays: Path) -> None:
    r = cli("balance", str(race_with_a_side_no_one_plays), "--games", "1", "--player", "green=steady", "--jobs", "1")
    assert r.code == 2 and "no one plays `green`" in r.err, r.err
    race_with_a_side_no_one_plays.write_text(race_with_a_side_no_one_plays.read_text().replace('["green"]', '["pink"]'))
    r = cli("balance", str(race_with_a_side_no_one_plays), "--games", "1", "--jobs", "1")
    assert r.code == 2 and "its `query unplayed` names `pink`, which is not one of its sides" in r.err, r.err
    race_with_a_side_no_one_plays.write_text(race_with_a_side_no_one_plays.read_text().replace('["pink"]', '"green"'))
    r = cli("balance", str(race_with_a_side_no_one_plays), "--games", "1", "--jobs", "1")
    assert r.code == 2 and 'its `query unplayed` gives "green", not a list of side names' in r.err, r.err
    race_with_a_side_no_one_plays.write_text(race_with_a_side_no_one_plays.read_text().replace(
        '"green"', '["red", "blue", "green"]'))
    r = cli("balance", str(race_with_a_side_no_one_plays), "--games", "1", "--jobs", "1")
    assert r.code == 2 and "no one plays any of its sides" in r.err, r.err


class _Spy:
    """A ruleset whose `advance` runs are kept: the state played (with its orders) and the result."""

    def __init__(self, rs: Any, log: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
        self.rs, self.log = rs, log

    def run(self, state: dict[str, Any], query: str, **kw: Any) -> Any:
        out = self.rs.run(state, query=query, **kw)
        if query == "advance":
            self.log.append((state, out))
        return out


def test_in_a_balance_sweep_on_known_world_901_the_neutral_state_is_played_by_no_one() -> None:
    """known_world_901's map marks `neutral_state` as played by no one (the package's DUMMY). In the
    games of a seeded balance sweep (`play_one`, a sweep's piece, with the random and heuristic
    players) no player gives it an order: its units only hold, none moves and none is built, its
    dislodged units are disbanded (it orders no retreat); and the report marks it not played. Before
    the mark was carried, it was ordered like any power and won most games of random players."""
    from validator.tools.balance import balance_text, play_one, prepare

    variant = load_ruleset(DIP / "known_world_901.rules")
    sides, choice, rulesets, by_side, start = prepare(variant, ["random", "france=heuristic"])
    assert choice["neutral_state"] is None and "neutral_state" not in by_side and choice["france"] == "heuristic"
    neutral = {(u["type"], u["location"]) for u in start["units"] if u["power"] == "neutral_state"}
    assert len(neutral) == 49
    disbanded = 0
    for game in range(2):
        log: list[tuple[dict[str, Any], dict[str, Any]]] = []
        rec = play_one([_Spy(rs, log) for rs in rulesets], (game, 7, 2, 1000, by_side, start))
        assert rec.error is None and rec.phases == len(log) > 5
        for state, out in log:
            assert not [o for o in state["orders"] if o["power"] == "neutral_state"], state["phase"]
            now = {(u["type"], u["location"]) for u in out["next"]["units"] if u["power"] == "neutral_state"}
            assert now <= neutral, (state["phase"], now - neutral)  # held where it stood, nothing built
            disbanded += sum(d["power"] == "neutral_state" for d in out["result"].get("destroyed", []))
    assert disbanded > 0  # its retreat phases were reached, and it ordered none
    f = run_balance(str(DIP / "known_world_901.rules"), ["random", "france=heuristic"], games=2, rounds=2, seed=7, jobs=1)
    assert f["unplayed"] == ["neutral_state"] and f["sides"]["neutral_state"]["played"] is False
    assert f["sides"]["neutral_state"]["wins"]["count"] == 0 and f["sides"]["france"]["player"] == "heuristic"
    text = balance_text("known_world_901", f, 8)
    assert not [line for line in text if line.startswith("neutral_state  ")][:-1]  # its holdings row only
    assert any(line.startswith("not played: neutral_state (") for line in text)


def test_diff_exact_tables_are_capped_and_grouped_by_a_field(cli: Any) -> None:
    errata = ROOT / "tests" / "fixtures" / "errata"
    base = ("diff", str(errata / "old.rules"), str(errata / "new.rules"), "--generate", "1", "--exact", "--shrink", "0")
    odds = re.compile(r"^  \d+/\d+\s+\d+/\d+\s")
    full = cli(*base, "--rows", "-1")
    rows = [x for x in full.out.splitlines() if odds.match(x)]
    assert full.code == 1 and len(rows) > 2
    capped = cli(*base, "--rows", "2")
    assert len([x for x in capped.out.splitlines() if odds.match(x)]) == 2
    assert f"... {len(rows) - 2} more outcomes differ" in capped.out
    grouped = cli(*base, "--group-by", "results.0.hit", "--rows", "-1")
    labels = [x.split()[-1] for x in grouped.out.splitlines() if odds.match(x)]
    assert sorted(labels) == ["results.0.hit=false", "results.0.hit=true"]


def test_diff_group_by_applies_to_every_output_the_same(cli: Any) -> None:
    """`--group-by FIELD` sums each exact distribution by the field before anything else sees it: what
    is compared (a difference in other fields only is none), counted in the figures, printed and
    written as JSON are the sums."""
    from fractions import Fraction

    errata = ROOT / "tests" / "fixtures" / "errata"
    base = ("diff", str(errata / "old.rules"), str(errata / "new.rules"), "--generate", "4", "--exact", "--shrink", "0",
            "--jobs", "1")
    raw = json.loads(cli(*base, "--format", "json").out)
    grouped = cli(*base, "--group-by", "results.0.hit", "--format", "json", "--show", "-1")
    g = json.loads(grouped.out)
    assert grouped.code == 1 and g["group_by"] == "results.0.hit" and len(g["differences"]) == 4
    for d, r in zip(g["differences"], raw["differences"]):
        for side in ("old", "new"):
            keys = [json.loads(k) for k in d[side]["distribution"]]
            assert keys and all(list(k) == ["results.0.hit"] for k in keys)
            hit = sum(Fraction(p) for k, p in r[side]["distribution"].items() if json.loads(k)["results"][0]["hit"])
            assert Fraction(d[side]["distribution"].get('{"results.0.hit": "true"}', "0")) == hit
        assert d["changed"] and all(c["pointer"].startswith('/distribution/{"results.0.hit"') for c in d["changed"])
    assert g["summary"]["states"]["share"]["count"] == 4
    text = cli(*base, "--group-by", "results.0.hit", "--show", "-1")
    assert text.out.count("results.0.hit=true") == 4 and "states that differ: 4 of 4" in text.out
    # the first hit is the same in both for every state: summed by it, nothing differs, anywhere
    same = cli(*base, "--group-by", "results.0.id", "--format", "json")
    s = json.loads(same.out)
    assert same.code == 0 and s["differences"] == [] and s["summary"]["states"]["share"]["count"] == 0
    assert raw["summary"]["states"]["share"]["count"] == 4
    assert cli(*base, "--group-by", "results.0.id").out.splitlines()[-1] == "tried 4 states: equivalent on all of them"


@pytest.mark.parametrize("field", ["results.0.hitt", "nope"])
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_diff_group_by_a_field_no_outcome_has_is_no_all_clear(cli: Any, field: str, fmt: str) -> None:
    """Summed by a field no outcome holds, every distribution is one `(absent)` outcome of probability 1,
    and two rulesets that differ were 'equivalent on all of them', exit 0: a typo passed the gate."""
    errata = ROOT / "tests" / "fixtures" / "errata"
    r = cli("diff", str(errata / "old.rules"), str(errata / "new.rules"), "--generate", "2", "--exact", "--jobs", "1",
            "--group-by", field, "--format", fmt)
    assert r.code == 2 and f"--group-by `{field}`: no outcome of the 2 exact runs has this field" in r.err, (r.code, r.err)
    assert "equivalent" not in r.out


@pytest.mark.parametrize("argv, said", [
    (["--generate", "2", "--group-by", "results.0.hit"], "--group-by sums the outcomes of exact runs"),  # (ignored)
    (["--generate", "3", "--summary", "--show-groups", "0"], "--show-groups takes a number from 1, not 0"),  # (I001)
    (["--generate", "3", "--summary", "--show-groups", "-1"], "--show-groups takes a number from 1, not -1"),
    (["--generate", "2", "--show", "-2"], "--show takes a number from 0, or -1 for all, not -2"),
    (["--generate", "2", "--exact", "--rows", "-5"], "--rows takes a number from 0, or -1 for all, not -5"),
    (["--generate", str(10 ** 11)], "--generate takes at most 1,000,000"),  # (listed first: memory)
    (["--games", "1", "--exact"], "--exact goes with --generate N"),  # (ignored without a word)
    (["--cases", str(ROOT / "tests" / "fixtures" / "errata" / "cases.yaml"), "--exact"], "--exact goes with --generate N"),
    (["--games", str(10 ** 11)], "--games takes at most 1,000,000"),
])
def test_diff_usage_errors(cli: Any, argv: list[str], said: str) -> None:
    errata = ROOT / "tests" / "fixtures" / "errata"
    r = cli("diff", str(errata / "old.rules"), str(errata / "new.rules"), "--jobs", "1", *argv)
    assert r.code == 2 and said in r.err, (r.code, r.err)


def test_balance_group_by_player_gives_every_output_by_player(cli: Any, tmp_path: Path) -> None:
    """`--group-by player`: the text table, the JSON figures and the plot have one row, entry or line
    per player, made of its sides' figures in the same games (outcomes counted per game and side,
    holdings the mean of a side)."""
    argv = ("balance", str(SWEEP / "race.rules"), "--games", "12", "--player", "random", "--player", "red=steady",
            "--jobs", "1")
    by_side = json.loads(cli(*argv, "--format", "json").out)
    svg = tmp_path / "players.svg"
    r = cli(*argv, "--format", "json", "--group-by", "player", "--plot", str(svg))
    f = json.loads(r.out)
    assert r.code == 0 and by_side["group_by"] == "side" and f["group_by"] == "player"
    assert list(f["sides"]) == list(dict.fromkeys(row["player"] for row in by_side["sides"].values()))
    assert set(f["sides"]) == {"random", "steady"}
    assert sorted(s for g in f["sides"].values() for s in g["sides"]) == sorted(by_side["sides"])
    for name, group in f["sides"].items():
        members = group["sides"]
        assert group["player"] == name and all(by_side["sides"][s]["player"] == name for s in members)
        for key in ("wins", "draws", "survivals", "eliminations"):
            assert group[key]["of"] == 12 * len(members)
            assert group[key]["count"] == sum(by_side["sides"][s][key]["count"] for s in members)
        for rnd, row in f["by_round"].items():
            mean = sum(by_side["by_round"][rnd][s]["mean"] for s in members) / len(members)
            assert row[name]["mean"] == pytest.approx(mean, abs=2e-3)
    text = cli(*argv, "--group-by", "player").out.splitlines()
    assert text[2].split()[:2] == ["player", "sides"]
    assert [line.split()[0] for line in text[3:3 + len(f["sides"])]] == list(f["sides"])
    labels = set(re.findall(r"<!-- (\w+) -->", svg.read_text()))
    assert set(f["sides"]) <= labels and not labels & (set(by_side["sides"]) - set(f["sides"]))


def test_one_game_is_said_as_one(cli: Any) -> None:
    """The text report counts its games in words that agree with the count ("1 game of", "3 games of")."""
    one = cli("balance", str(SWEEP / "race.rules"), "--games", "1", "--rounds", "4", "--player", "still", "--jobs", "1")
    three = cli("balance", str(SWEEP / "race.rules"), "--games", "3", "--rounds", "4", "--player", "still", "--jobs", "1")
    assert one.code == 0 and "1 game of " in one.out and "1 games" not in one.out, one.out
    assert three.code == 0 and "3 games of " in three.out, three.out


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_players_errors_name_its_own_file_at_its_line(cli: Any, tmp_path: Path, monkeypatch: Any, jobs: str) -> None:
    """A player is loaded as a made-up `VARIANT+PLAYER.rules` beside the variant: its errors named that
    file, which does not exist. Now they name the player's file, as written on the command line (or found
    under `players/`), at its line: those of its load, and those of its runs in a sweep's workers."""
    monkeypatch.chdir(tmp_path)
    for name in ("race.rules", "clauses.yaml", "ruleval.toml"):
        (tmp_path / name).write_bytes((SWEEP / name).read_bytes())
    (tmp_path / "players").mkdir()
    head = '# a player\nruleset p.bad "Bad"\nextends "../race.rules"\n\n'
    (tmp_path / "players" / "unknown.rules").write_text(head + "query player_orders(side, seed) = nobody\n")
    (tmp_path / "players" / "zero.rules").write_text(head + "query player_orders(side, seed) = [1 / (seed - seed)]\n")
    for given, shown in (("players/unknown.rules", "players/unknown.rules"), ("unknown", "players/unknown.rules"),
                         (str(tmp_path / "players" / "unknown.rules"), str(tmp_path / "players" / "unknown.rules"))):
        r = cli("balance", "race.rules", "--games", "2", "--jobs", jobs, "--player", given)
        assert r.code == 1 and f"{shown}:5:35: error[C001]: unknown name `nobody`" in r.err, (given, r.err)
    r = cli("balance", "race.rules", "--games", "2", "--jobs", jobs, "--player", "zero")
    assert r.err.count("E003 division by zero (at players/zero.rules:5)") == 2, r.err
    assert "+" not in r.err, r.err
