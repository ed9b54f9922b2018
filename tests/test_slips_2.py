"""Slips found on 2026-12-06, each with the test that failed before its fix."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from validator.tools.cli import main

ROOT = Path(__file__).resolve().parent.parent
STANDARD = str(ROOT / "rulesets" / "diplomacy" / "standard.rules")


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


# ---------------------------------------------------------------- replay: a list that is no orders entry

@pytest.mark.parametrize("first", ["[1, 2]", "[]", '[{"a": 1}]', '["", " "]'])
def test_replay_calls_a_list_of_no_orders_no_orders_file(tmp_path: Path, first: str) -> None:
    """Any list as the first state of a record was named "an orders file", even `[1, 2]`: only a list
    of order texts is; any other is refused as any value that is no state, at its line and column."""
    folder = tmp_path / "rec"
    folder.mkdir()
    (folder / "000_S1901M.json").write_text(first + "\n", encoding="utf-8")
    (folder / "001_F1901M.json").write_text("{}\n", encoding="utf-8")
    code, out, err = _run("replay", STANDARD, str(folder))
    assert (code, out) == (3, ""), err
    assert f"{folder / '000_S1901M.json'}:1:1: error[S001]: a state must be a JSON object" in err, err
    assert "orders file" not in err, err


def test_replay_of_a_game_file_places_a_list_state_at_its_line(tmp_path: Path) -> None:
    record = tmp_path / "rec.json"
    record.write_text('[\n  [1, 2],\n  {}\n]\n', encoding="utf-8")
    code, _, err = _run("replay", STANDARD, str(record))
    assert code == 3, err
    assert f"{record}:2:3: error[S001]: a state must be a JSON object" in err, err


@pytest.mark.parametrize("first", ['["A PAR - BUR", "F BRE - MAO"]', '[{"power": "france", "order": "A PAR - BUR"}]'])
def test_replay_still_names_a_list_of_orders_an_orders_file(tmp_path: Path, first: str) -> None:
    record = tmp_path / "rec.json"
    record.write_text(f"[\n  {first},\n  []\n]\n", encoding="utf-8")
    code, _, err = _run("replay", STANDARD, str(record))
    assert code == 3, err
    assert "error[S001]: this is an orders file" in err, err
