"""What `play` and `replay` take in, placed where it is: an importer's `line` is a line of the record
(from 1: `FILE:0` names none, so it is refused, S001 at the importer), and a game file's item is placed
where it starts, its column too, whether its name says the column (a line shared with another item) or
not (``play.GameItem.start``)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from validator.api import load_ruleset
from validator.core.diagnostics import DiagnosticError
from validator.tools.cli import main
from validator.tools.play import read_game_file, read_imported_record

IMPORTER = '''ruleset t.importer "an importer of lines"
query lines(text: str) = [{state: {n: 1}, line: LINE, notes: []}, {state: {n: 2}, line: 2, notes: NOTES}]
'''


def _importer(tmp_path: Path, line: str, notes: str = "[]") -> Path:
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "record.txt").write_text("one\ntwo\n")
    path = tmp_path / "imp.rules"
    path.write_text(IMPORTER.replace("LINE", line).replace("NOTES", notes))
    return path


@pytest.mark.parametrize("line,notes,said", [("0", "[]", "a state at line 0"), ("-3", "[]", "a state at line -3"),
                                             ('"1"', "[]", 'a state at line "1"'), ("true", "[]", "line true"),
                                             ("1", '[{line: 0, text: "x"}]', "its item 1 a note at line 0")])
def test_an_importer_line_that_is_no_line_of_the_record_is_refused_at_the_importer(tmp_path: Path, line: str,
                                                                                   notes: str, said: str) -> None:
    path = _importer(tmp_path, line, notes)
    rs = load_ruleset(path, use_cache=False)
    assert rs.ok, rs.diagnostics
    with pytest.raises(DiagnosticError) as caught:
        read_imported_record(rs, "lines", str(tmp_path / "record.txt"))
    [d] = caught.value.diagnostics
    assert d.code == "S001" and said in d.message, d.message
    assert d.span.file == str(path) and d.span.line == 2, d.span  # (the importer's query)
    out, err = io.StringIO(), io.StringIO()
    assert main(["replay", str(path), str(tmp_path / "record.txt"), "--import", "lines"], stdout=out, stderr=err) == 3
    assert f"{path}:2:1: error[S001]" in err.getvalue() and "Traceback" not in err.getvalue(), err.getvalue()


def test_an_importer_line_from_1_names_the_state(tmp_path: Path) -> None:
    rs = load_ruleset(_importer(tmp_path, "1"), use_cache=False)
    record = str(tmp_path / "record.txt")
    assert [where for where, _ in read_imported_record(rs, "lines", record)[0]] == [f"{record}:1", f"{record}:2"]
    rs = load_ruleset(_importer(tmp_path, "none"), use_cache=False)  # (no line: not known, named by its place)
    assert [where for where, _ in read_imported_record(rs, "lines", record)[0]] == [f"{record} item 0", f"{record}:2"]


@pytest.mark.parametrize("name,text,starts", [
    ("a.json", '[\n  {"orders": []},\n    ["x"]\n]\n', [(2, 3), (3, 5)]),
    ("a.jsonl", '  {"orders": []}\n["x"]\n', [(1, 3), (2, 1)]),
    ("a.yaml", "- phase: S\n  orders: []\n-   - x\n- {orders: []}\n", [(1, 3), (3, 5), (4, 3)]),
])
def test_an_item_alone_on_its_line_is_placed_where_it_starts(tmp_path: Path, name: str, text: str,
                                                             starts: list[tuple[int, int]]) -> None:
    (tmp_path / name).write_text(text)
    items = read_game_file(str(tmp_path / name))
    assert [(i.start.line, i.start.col) for i in items if i.start is not None] == starts
    assert [i.where for i in items] == [f"{tmp_path / name}:{line}" for line, _ in starts]  # (its name: the line)


def test_a_yaml_entry_keeps_a_key_of_its_own_named_like_a_line_number(tmp_path: Path) -> None:
    """The YAML is read without the loader's line numbers (each item's place is its start, found once for all),
    so nothing of an entry is taken out as one."""
    (tmp_path / "a.yaml").write_text("- orders: []\n  __line__: 7\n")
    assert read_game_file(str(tmp_path / "a.yaml"))[0].value == {"orders": [], "__line__": 7}


def test_a_yaml_document_whose_places_cannot_be_found_is_composed_once(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the places cannot be found (the document composed for them fails), its items are named by their
    place in the list, and the composition is not tried again for each."""
    import yaml

    from validator.core import safeyaml

    tried = []

    def failing(text: str) -> Any:
        tried.append(text)
        raise yaml.YAMLError("no places")

    monkeypatch.setattr(safeyaml, "Positions", failing)
    (tmp_path / "a.yaml").write_text("".join(f"- orders: [{i}]\n" for i in range(5)))
    items = read_game_file(str(tmp_path / "a.yaml"))
    assert [i.where for i in items] == [f"{tmp_path / 'a.yaml'} item {n}" for n in range(5)] and len(tried) == 1
