"""Each state of a record `replay` reads has a name of its own, so that its report (where a phase
differs, which state was refused, what was derived) points at one state: an importer that gives one
line to two states has them named `FILE:LINE item N`; a folder holding two states of one number (which
`play --out` never writes: their order is not known) is refused, at the second file."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from validator.api import check_text
from validator.tools.cli import main
from validator.tools.play import read_imported_record

ROOT = Path(__file__).resolve().parent.parent
DIP = ROOT / "rulesets" / "diplomacy"
GODIP_GAME = ROOT / "docs" / "examples" / "godip" / "game.txt"
# the godip importer, with every state said to begin at the record's first line
SAME_LINE = 'extends "godip_game.rules"\n\nquery same_line(text: str) = [p with {line: 1} for p in godip_game(text)]\n'


def _run(*argv: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], stdout=out, stderr=err)
    assert "Traceback" not in out.getvalue() + err.getvalue()
    return code, out.getvalue(), err.getvalue()


def test_states_an_importer_gives_one_line_have_names_of_their_own() -> None:
    rs = check_text(DIP / "zz_c5_same_line.rules", SAME_LINE)  # (never written: beside the ruleset it extends)
    assert rs.ok, rs.diagnostics
    records, _, _ = read_imported_record(rs, "same_line", str(GODIP_GAME))
    names = [where for where, _ in records]
    assert len(records) > 2 and len(set(names)) == len(names), names
    assert all(n.startswith(f"{GODIP_GAME}:1 ") for n in names), names  # (the line the importer gave, kept)
    # states the importer gives lines of their own keep the names of their lines alone
    alone, _, _ = read_imported_record(rs, "godip_game", str(GODIP_GAME))
    assert all(where.rsplit(":", 1)[1].isdigit() for where, _ in alone), alone


def test_replay_of_states_given_one_line_names_the_state_that_differs(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "ruleval.toml").write_text("")
    shutil.copytree(DIP, tmp_path / "rulesets" / "diplomacy")
    shutil.copytree(ROOT / "schemas" / "diplomacy", tmp_path / "schemas" / "diplomacy")
    (tmp_path / "rulesets" / "diplomacy" / "same.rules").write_text(SAME_LINE)
    monkeypatch.chdir(tmp_path)
    game = GODIP_GAME.read_text().splitlines(keepends=True)
    # a unit moved by hand in the record's second phase: its first phase then differs from it
    second = [n for n, line in enumerate(game) if line.startswith("PHASE")][1]
    at = next(n for n in range(second, len(game)) if ": army " in game[n] or ": fleet " in game[n])
    head, unit = game[at].rsplit(" ", 1)
    game[at] = f"{head} {'lon' if unit.strip() != 'lon' else 'edi'}\n"
    record = tmp_path / "game.txt"
    record.write_text("".join(game))
    code, out, _ = _run("replay", "rulesets/diplomacy/same.rules", record, "--import", "same_line", "--format", "json")
    report = json.loads(out)
    diff = report["first_difference"]
    assert code == 1 and diff is not None, out
    assert diff["where"] != diff["next_state"] and diff["where"].endswith(" item 0") and diff["next_state"].endswith(" item 1")


def test_a_folder_with_two_states_of_one_number_is_refused_at_the_second(tmp_path: Path) -> None:
    start = DIP / "examples" / "movement_1901.json"
    out = tmp_path / "out"
    code, _, err = _run("play", DIP / "standard.rules", start, "--until", "F1901M", "--out", out)
    assert code == 0, err
    [first] = [p for p in out.glob("001_*.json") if not p.name.endswith(".result.json")]
    again = out / "001_zz.json"
    shutil.copy(first, again)
    code, text, err = _run("replay", DIP / "standard.rules", out)
    said = [line for line in (text + err).splitlines() if "error[" in line]
    assert code == 3 and said and said[0].startswith(f"{again}: error[S001]:") and first.name in said[0], text + err


def test_the_api_refuses_two_states_of_one_name() -> None:
    from validator import load_ruleset
    from validator.api import replay

    rs = load_ruleset(DIP / "standard.rules")
    start = json.loads((DIP / "examples" / "movement_1901.json").read_text())
    with pytest.raises(ValueError, match=r"records 0 and 2 are both named `a`"):
        replay(rs, [("a", start), ("b", start), ("a", start)])
    # a state given alone is named by its place (`<record 1>`), and a pair may take another name
    assert replay(rs, [("a", start), start])[0] == 0
