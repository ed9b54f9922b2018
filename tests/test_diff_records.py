"""`ruleval diff OLD NEW --records FILE...`: two rulesets on the states of real game records
(docs/errata.md's closing section, docs/tools.md's diff section).

The figures are checked against what tests/test_cicero_games.py pins by replaying each record
under the standard rules (DEPARTS: the games whose record departs, the phase where, and the clause
that decides it): dipcc's reading (bench/peers/readings/dipcc.rules) replays all 40 games, so the
two readings part exactly where the standard rules' replay departs, and nowhere else."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from bench.peers.dpjudge import saved_game
from test_cicero_games import DEPARTS, GAMES, name
from validator.tools.cli import main

ROOT = Path(__file__).resolve().parent.parent
STANDARD = "rulesets/diplomacy/standard.rules"
DIPCC = "bench/peers/readings/dipcc.rules"
EXAMPLES = ROOT / "docs" / "examples" / "cicero"


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def _write(stem: str, folder: Path) -> Path:
    """The Cicero game ``stem`` as a ruleval record (one state a line), as saved_game.py writes it."""
    path = folder / f"{stem}.jsonl"
    states = saved_game.records(json.loads((ROOT / "tests" / "records" / "cicero" / f"{stem}.json")
                                           .read_text(encoding="utf-8")), stem)
    path.write_text("".join(json.dumps(s) + "\n" for s in states), encoding="utf-8")
    return path


def test_the_examples_are_what_the_importer_makes(tmp_path: Path) -> None:
    for path in sorted(EXAMPLES.glob("*.jsonl")):
        assert path.read_text(encoding="utf-8") == _write(path.stem, tmp_path).read_text(encoding="utf-8"), path


def test_the_forty_games_part_where_the_standard_rules_replay_departs(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """21 games' unplayed last winter (DATC 4.D.8) and one movement phase (DATC 4.A.3): 22 of the 40
    records, one phase each, each named at its line of the record; the phases both readings refuse
    are the retreat phases with nothing left to retreat, which replay passes over."""
    monkeypatch.chdir(ROOT)
    paths = [_write(p.stem, tmp_path) for p in GAMES]
    code, out, err = _run("diff", STANDARD, DIPCC, "--records", *map(str, paths), "--format", "json", "--show", "0")
    assert code == 1, err
    report = json.loads(out)
    assert (report["records"], report["records_that_differ"]) == (40, 22), report["records_that_differ"]
    # where each record departs under the standard rules: the line of that phase's state in the record
    expected = {}
    for path in paths:
        if path.stem in DEPARTS:
            states = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
            expected[f"{path}:{[name(s) for s in states].index(DEPARTS[path.stem][0]) + 1}"] = str(path)
    assert {d["state"]: d["record"] for d in report["differences"]} == expected
    by_phase = report["summary"]["recorded_phases"]["by"]["phase"]
    assert by_phase == {"WA": 21, "FM": 1}, by_phase
    # every state played in a game (each but the last of its record) is tried or skipped
    played = sum(len(path.read_text(encoding="utf-8").splitlines()) - 1 for path in paths)
    assert report["recorded_phases"] + report["skipped"] == played
    assert set(report["skip_reasons"]) == {
        "OLD refuses it: S002 a retreat phase has dislodged units to retreat: with none, the rules go on to "
        "the next phase"}, report["skip_reasons"]


def test_the_text_names_the_place_and_counts_phases_and_records(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    paths = [str(p.relative_to(ROOT)) for p in sorted(EXAMPLES.glob("*.jsonl"))]
    code, out, err = _run("diff", STANDARD, DIPCC, "--records", *paths, "--show", "1")
    assert code == 1 and err == "", err
    lines = out.splitlines()
    assert lines[0] == "docs/examples/cicero/game_433761_ENGLAND_AG.jsonl:35: results differ (query `advance`)"
    assert "records that differ: 2 of 3 (66.7%)" in lines
    assert out.replace("\n  ", " ").rstrip().endswith(": 2 differ")
    assert " phases of 3 records (" in out
    # the same rulesets agree on every record
    code, out, err = _run("diff", STANDARD, STANDARD, "--records", paths[1])
    assert code == 0 and out.replace("\n  ", " ").rstrip().endswith("equivalent on all of them"), out + err


def test_a_record_that_cannot_be_read_is_said_at_its_place_and_the_others_are_compared(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    good = str(EXAMPLES / "game_433762_ITALY_AEFT.jsonl")
    broken = tmp_path / "broken.jsonl"
    lines = (EXAMPLES / "game_433762_ITALY_AEFT.jsonl").read_text(encoding="utf-8").splitlines()
    broken.write_text("\n".join([lines[0], lines[1][:-1], *lines[2:]]) + "\n", encoding="utf-8")  # line 2 cut short
    code, out, err = _run("diff", STANDARD, DIPCC, "--records", str(broken), good)
    assert code == 3, out + err
    assert f"{broken}:2:" in err and "S001" in err, err
    assert " phases of 1 record (" in out and "equivalent on all of them" in out.replace("\n  ", " "), out
    one = tmp_path / "one.jsonl"
    one.write_text(lines[0] + "\n", encoding="utf-8")
    code, out, err = _run("diff", STANDARD, DIPCC, "--records", str(one))
    assert code == 3 and "S006" in err and f"{one}:1:1" in err, err
    assert "nothing was compared" in out, out
    not_states = tmp_path / "not_states.jsonl"
    not_states.write_text("[1]\n[2]\n", encoding="utf-8")
    code, out, err = _run("diff", STANDARD, DIPCC, "--records", str(not_states))
    assert code == 3 and "S001" in err and "a state must be a JSON object" in err and f"{not_states}:1:1" in err, err


def test_a_state_one_side_refuses_is_a_difference(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A recorded state was played in a real game: a ruleset that refuses it differs from one that
    plays it (a made state one side refuses is skipped instead). The all-hold ruleset and the standard
    rules read the same states; a record whose state the standard schema refuses (a unit of no type)
    is refused by both, so the difference is made by a ruleset of another schema: one of this
    file's own, with the record's fields and a `query advance` of its own."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "open.rules").write_text(
        'ruleset t.open "plays any state"\ninput n: int at "/n" default 0\n'
        'query advance = {next: {n: n + 1}}\n', encoding="utf-8")
    (tmp_path / "strict.rules").write_text(
        'ruleset t.strict "refuses a negative n"\ninput n: int at "/n" default 0\n'
        'query validate_state = if n < 0 then [{code: "S002", message: "n is negative", pointer: "/n"}] else []\n'
        'query advance = {next: {n: n + 1}}\n', encoding="utf-8")
    record = tmp_path / "r.jsonl"
    record.write_text('{"n": 1}\n{"n": -1}\n{"n": 0}\n', encoding="utf-8")
    code, out, err = _run("diff", "open.rules", "strict.rules", "--records", "r.jsonl")
    assert code == 1, out + err
    assert out.startswith("r.jsonl:2: NEW (S002) refused the state"), out
    assert "tried 0 states and 2 phases of 1 record: 1 differ" in out, out


def test_import_goes_with_records(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    code, out, err = _run("diff", STANDARD, DIPCC, "--generate", "1", "--import", "godip_game")
    assert code == 2 and "--import QUERY reads the records of --records" in err, err


def test_a_record_of_another_format_is_read_by_its_importer_and_what_it_leaves_out_is_said(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/examples/godip/game.txt read by `query godip_game` (as `replay --import` reads it): its
    8 played phases are tried or skipped, none left out without a word. A state that leaves out what
    the rules need (a dislodged unit without `attacker_from`, which replay takes from the state
    computed before it) is refused by both and skipped, by reason (docs/tools.md)."""
    monkeypatch.chdir(ROOT)
    code, out, err = _run("diff", "rulesets/diplomacy/godip_game.rules", STANDARD, "--records",
                          "docs/examples/godip/game.txt", "--import", "godip_game", "--format", "json")
    report = json.loads(out)
    assert code == 0 and err == "", err
    # every phase of the file played (each but the last, the position the game came to)
    phases = (ROOT / "docs" / "examples" / "godip" / "game.txt").read_text(encoding="utf-8").count("PHASE ")
    assert (report["records"], report["recorded_phases"] + report["skipped"]) == (1, phases - 1), report
    assert any("a dislodged unit needs `attacker_from`" in reason for reason in report["skip_reasons"]), report
