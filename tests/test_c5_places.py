"""Where `play` places a fault of an order in an orders entry: at that order in the file, its line and
column, found from the entry's start whether the entry's name says the column (``FILE:LINE:COL`` on a
line shared with another entry) or not (``FILE:LINE``). The entry's start is carried beside its name
from where the file is read (``GameItem.start``), not parsed back from the name. (It was said at the
entry's start in JSON, a finer place found only in YAML: now in every format.)"""

from __future__ import annotations

import io
import json
from pathlib import Path

from validator.tools.cli import main
from validator.tools.play import read_game_file

ROOT = Path(__file__).resolve().parent.parent
DIP = ROOT / "rulesets" / "diplomacy" / "standard.rules"
START = json.loads((ROOT / "rulesets" / "diplomacy" / "examples" / "movement_1901.json").read_text())
ENTRIES = [{"phase": "S1901M", "orders": ["A VIE - ZZZ"]}, {"phase": "F1901M", "orders": ["A BUD - SER"]}]


def run(argv: list[object]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], stdout=out, stderr=err)
    assert "Traceback" not in out.getvalue() + err.getvalue()
    return code, out.getvalue(), err.getvalue()


def first_error_place(err: str, path: Path) -> tuple[int, int]:
    head = err.splitlines()[0]
    assert head.startswith(f"{path}:") and "error[" in head, err
    line, col = head[len(f"{path}:"):].split(":")[:2]
    return int(line), int(col)


def test_a_bad_order_of_a_one_line_json_orders_file_is_placed_at_its_entry(tmp_path: Path) -> None:
    start = tmp_path / "start.json"
    start.write_text(json.dumps({**START, "orders": []}))
    path = tmp_path / "orders.json"
    path.write_text(json.dumps(ENTRIES) + "\n")
    code, _, err = run(["play", DIP, start, "--orders", path])
    first = read_game_file(str(path))[0]
    assert code == 3 and first.start is not None, err
    assert (first.start.line, first.start.col) == (1, path.read_text().index("{") + 1)
    assert first_error_place(err, path) == (1, path.read_text().index('"A VIE - ZZZ"') + 1)  # (the order itself)
    assert first.where == f"{path}:1:{first.start.col}"


def test_a_bad_order_of_a_json_entry_alone_on_its_line_is_placed_at_its_start(tmp_path: Path) -> None:
    start = tmp_path / "start.json"
    start.write_text(json.dumps({**START, "orders": []}))
    path = tmp_path / "orders.json"
    path.write_text("[\n" + ",\n".join("  " + json.dumps(e) for e in ENTRIES) + "\n]\n")
    code, _, err = run(["play", DIP, start, "--orders", path])
    first = read_game_file(str(path))[0]
    assert code == 3 and first.where == f"{path}:2", err
    assert (first.start.line, first.start.col) == (2, 3)  # (the name gives the line alone; the start, its column)
    assert first_error_place(err, path) == (2, path.read_text().splitlines()[1].index('"A VIE - ZZZ"') + 1)


def test_the_api_places_an_entry_where_it_is_written_as_the_command_line_does(tmp_path: Path) -> None:
    """`api.play` said what it found in an entry at `Span(entry.where)`: a file named "orders.json:2",
    no line. An `Entry` that says where it is written (`at`, as `entries_of` gives it) has what is said
    of it placed there: a bad order at the entry's line and column with the order's pointer, an entry
    out of step at its start; the command line then finds the order itself within it. An entry that
    says only its name is still placed at that name."""
    import pytest

    from validator import load_ruleset
    from validator.api import Entry, PlayError, play
    from validator.tools.play import entries_of

    rs = load_ruleset(str(DIP))
    path = tmp_path / "orders.json"
    path.write_text("[\n" + ",\n".join("  " + json.dumps(e) for e in ENTRIES) + "\n]\n")
    entries = entries_of(read_game_file(str(path)), str(path))
    assert entries[0].at is not None and (entries[0].at.line, entries[0].at.col) == (2, 3)
    with pytest.raises(PlayError) as bad:
        list(play(rs, {**START, "orders": []}, entries))
    said = bad.value.diagnostics[0]
    assert (said.span.file, said.span.line, said.span.col) == (str(path), 2, 3), said
    assert (said.pointer or "").startswith("/orders/0"), said
    with pytest.raises(PlayError) as late:
        list(play(rs, {**START, "orders": []}, entries[1:]))  # (F1901M's orders, the game at S1901M)
    said = late.value.diagnostics[0]
    assert (said.code, said.span.file, said.span.line, said.span.col) == ("S006", str(path), 3, 3), said
    with pytest.raises(PlayError) as named:
        list(play(rs, {**START, "orders": []}, [Entry(["A VIE - ZZZ"], "S1901M", "game.jsonl:7")]))
    said = named.value.diagnostics[0]
    assert (said.span.file, said.span.line) == ("game.jsonl:7", 0), said
