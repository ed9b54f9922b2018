"""A record of fewer than two states, said at a place in it (it was the file's name alone, no line): at
its one state where it has one, else at its start."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DIP = str(ROOT / "rulesets" / "diplomacy" / "standard.rules")


@pytest.mark.parametrize("name, text, line, col", [
    ("r.json", "[]\n", 1, 1),
    ("r.json", '[\n  {"phase": "S1901M", "units": [], "orders": []}\n]\n', 2, 3),
    ("r.yaml", "\n- null\n", 2, 3),
    ("r.jsonl", '\n\n  {"phase": "S1901M"}\n', 3, 3),
])
def test_a_record_of_one_state_is_said_at_it(cli, tmp_path: Path, name: str, text: str, line: int, col: int) -> None:
    path = tmp_path / name
    path.write_text(text)
    r = cli("replay", DIP, str(path))
    assert r.code == 3, r
    assert r.err.startswith(f"{path}:{line}:{col}: error[S006]: a record needs at least two states"), r.err


def test_a_record_folder_holding_a_folder_named_as_a_state_is_not_told_of_links(cli, tmp_path: Path) -> None:
    """The help for a state file that is no regular file spoke of links to files elsewhere, whatever it was."""
    (tmp_path / "rec" / "001_x.json").mkdir(parents=True)
    r = cli("replay", DIP, str(tmp_path / "rec"))
    assert r.code == 3 and "is a folder, not a regular file" in r.err and "links" not in r.err, r.err
