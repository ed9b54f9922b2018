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
