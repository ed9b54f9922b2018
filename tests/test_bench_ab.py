"""bench/ab_turns.py, the A/B tool for speed changes: it times both trees in fresh processes and
prints a ratio (the figures themselves are not tested: tests never assert times)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `bench` is a top-level package of the checkout, not installed
    sys.path.insert(0, str(ROOT))

from bench import ab_turns  # noqa: E402


def test_ab_turns_times_both_trees_and_prints_the_ratio(capsys: pytest.CaptureFixture[str]) -> None:
    assert ab_turns.main([str(ROOT), "--runs", "1", "--turns", "5"]) == 0
    out = capsys.readouterr().out
    assert out.count("ms/turn") == 2 and "x the speed of the other" in out


def test_ab_turns_refuses_what_is_no_checkout(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="not a checkout of ruleval"):
        ab_turns.main([str(tmp_path), "--runs", "1"])


# bench/ab_instructions.py counts instructions under valgrind; a real count takes a minute or more,
# so the tests check what it refuses and how it reads callgrind's output.

def test_ab_instructions_refuses_what_is_no_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bench import ab_instructions

    monkeypatch.setattr(ab_instructions.shutil, "which", lambda name: "/usr/bin/" + name)
    with pytest.raises(SystemExit, match="not a checkout of ruleval"):
        ab_instructions.main([str(tmp_path)])


def test_ab_instructions_says_it_needs_valgrind(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    from bench import ab_instructions

    monkeypatch.setattr(ab_instructions.shutil, "which", lambda name: None)
    assert ab_instructions.main([str(ROOT)]) == 2
    assert "needs valgrind" in capsys.readouterr().err


def test_ab_instructions_reads_the_total_of_a_callgrind_file(tmp_path: Path) -> None:
    from bench import ab_instructions

    out = tmp_path / "cg.out"
    out.write_text("# callgrind format\nversion: 1\nevents: Ir\nfl=(1) x.c\nfn=(1) f\n3 120\nsummary: 5287242\n")
    assert ab_instructions._count(out) == 5287242
    (tmp_path / "empty.out").write_text("events: Ir\n")
    with pytest.raises(SystemExit, match="no total"):
        ab_instructions._count(tmp_path / "empty.out")


def test_ab_instructions_adds_the_parts_callgrind_dumped_and_reads_the_first(tmp_path: Path) -> None:
    """`--fresh` has callgrind dump its count after the first turn (``cg.out.1``, then ``.2``...): the whole
    count is every part's, the first turn's figure the first part's."""
    from bench import ab_instructions

    for name, total in (("cg.out", 7), ("cg.out.1", 1000), ("cg.out.2", 20), ("other.out.1", 5)):
        (tmp_path / name).write_text(f"events: Ir\nsummary: {total}\n")
    assert ab_instructions._count(tmp_path / "cg.out") == 1027
    assert ab_instructions._dumped(tmp_path / "cg.out.1") == 1000


def test_ab_instructions_fresh_child_runs_the_turns_it_counts() -> None:
    """The work `--fresh` counts, run here without valgrind: the load and first turn, then the others."""
    import subprocess

    from bench import ab_instructions

    done = subprocess.run([sys.executable, "-c", ab_instructions._FRESH_CHILD, str(ROOT), "2"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


def test_ab_instructions_games_child_plays_the_phases_it_counts() -> None:
    """The work `--games` counts, run here without valgrind: it plays the games and says how many
    phases the counted replay has (the figure the instructions are divided by)."""
    import subprocess

    from bench import ab_instructions

    done = subprocess.run([sys.executable, "-c", ab_instructions._GAMES_CHILD, str(ROOT), "1", "standard"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    phases = int(done.stdout.split()[-1])
    assert 6 <= phases <= 15  # one three-year game: at least two movement phases a year, at most 15 phases


def test_full_games_writes_all_code_before_it_measures(capsys: pytest.CaptureFixture[str]) -> None:
    """bench/full_games.py times steady play: before the measured games it writes the code of every
    definition and plays warm-up games, so a measured game writes no rule's code; it prints each map's
    phases per second of both engines, their ratio and the time the writing took."""
    from bench import full_games
    from bench.peers.dpjudge.full_games import MapFigures, play_game, ruleset_path
    from validator import load_ruleset

    rs = load_ruleset(ruleset_path("standard_germany_italy"), use_cache=False)
    before = full_games.written(rs)
    writing = full_games.warm_up(rs, "standard_germany_italy", 1, games=1)
    after = full_games.written(rs)
    assert writing > 0 and after > before
    play_game(rs, "standard_germany_italy", 0, 1, MapFigures("standard_germany_italy"))
    assert full_games.written(rs) == after  # a measured game writes nothing
    full_games.main(["--games", "1", "--years", "1", "--maps", "standard_germany_italy", "--capped-paths"])
    out = capsys.readouterr().out
    assert "write ms" in out and "standard_germany_italy" in out and "goal >= 3x" in out


# bench/jomini_reach.py --instructions counts both sides under valgrind (minutes); the tests run the
# counted work of each side without valgrind, on a small board, and check what it says without valgrind.

def test_jomini_reach_timed_run_agrees_with_its_networkx_model(capsys: pytest.CaptureFixture[str]) -> None:
    """The timed bench's board (officers among the units: JOM-O1's joining and passing a lone officer of
    one's side) gives ruleval and networkx the same hexes and costs for every unit: a figure compared
    with a peer that computes something else would be no figure."""
    from bench import jomini_reach

    assert jomini_reach.main(["--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "same reachable hexes and costs: 200/200 units" in out and "mismatch" not in out


@pytest.mark.parametrize("side", ["ruleval", "networkx"])
def test_jomini_reach_counted_child_runs_the_work_it_counts(side: str) -> None:
    import subprocess

    done = subprocess.run([sys.executable, str(ROOT / "bench" / "jomini_reach.py"), "--count", side, "--size", "12",
                           "--units", "6"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"{side}: 6 units searched"


def test_jomini_reach_instructions_says_it_needs_valgrind(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from bench import jomini_reach

    monkeypatch.setattr(jomini_reach.shutil, "which", lambda name: None)
    assert jomini_reach.main(["--instructions"]) == 2
    assert "needs valgrind" in capsys.readouterr().err


def test_jomini_reach_refuses_a_board_its_ruleset_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bench checked its generated board with the schema only: a board the ruleset's own
    `validate_state` refuses (here two units of one id, which the schema cannot see) was measured."""
    import argparse

    from bench import jomini_reach

    made = jomini_reach.make_state

    def twice_one_id(seed: int, size: int, units: int) -> Any:
        state = made(seed, size, units)
        state["units"][1]["id"] = state["units"][0]["id"]
        return state

    monkeypatch.setattr(jomini_reach, "make_state", twice_one_id)
    with pytest.raises(SystemExit, match=r"refused by the ruleset .*/units/1/id: a second unit `U000`"):
        jomini_reach.setup(argparse.Namespace(seed=7, size=12, units=6))
