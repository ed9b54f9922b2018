"""Two states (or orders entries) of a game file written on one line, a JSON list or a YAML flow list
on a single line: each is named by its own line and column (``FILE:LINE:COL``), so what `replay` or
`play` says of one is placed at that one. Both were named ``FILE:LINE`` and looked up by that name, so
a fault of the first was placed in the last."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path

import pytest
import yaml

from validator.tools.cli import main
from validator.tools.play import read_game_file

ROOT = Path(__file__).resolve().parent.parent
DIP = ROOT / "rulesets" / "diplomacy" / "standard.rules"
START = json.loads((ROOT / "rulesets" / "diplomacy" / "examples" / "movement_1901.json").read_text())


def one_line(path: Path, items: list[object]) -> None:
    if path.suffix == ".json":
        path.write_text(json.dumps(items) + "\n")
    else:
        path.write_text(yaml.safe_dump(items, default_flow_style=True, width=1 << 30))
    assert len(path.read_text().splitlines()) == 1


def run(argv: list[object]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], stdout=out, stderr=err)
    assert "Traceback" not in out.getvalue() + err.getvalue()
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("suffix", ["json", "yaml"])
@pytest.mark.parametrize("bad_at", [0, 1])
def test_replay_places_a_refused_state_of_a_one_line_record_in_that_state(tmp_path: Path, suffix: str,
                                                                          bad_at: int) -> None:
    bad = copy.deepcopy(START)
    bad["units"][2]["type"] = "submarine"
    record = [START, START]
    record[bad_at] = bad
    path = tmp_path / f"rec.{suffix}"
    one_line(path, record)
    code, out, err = run(["replay", DIP, path, "--format", "json"])
    refusal = json.loads(out)["refusal"]
    assert code == 3 and len(refusal) == 1, (code, out, err)
    d = refusal[0]
    assert (d["file"], d["line"], d["pointer"]) == (str(path), 1, "/units/2/type"), d
    text = path.read_text()
    assert text[d["col"] - 1:].startswith(("submarine", '"submarine"')), text[d["col"] - 1:][:40]


@pytest.mark.parametrize("suffix", ["json", "yaml"])
def test_items_of_a_game_file_on_one_line_have_names_of_their_own(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"g.{suffix}"
    one_line(path, [{"a": 1}, {"b": 2}, [3]])
    names = [item.where for item in read_game_file(str(path))]
    assert len(set(names)) == 3 and all(n.startswith(f"{path}:1:") for n in names), names
    cols = [int(n.rsplit(":", 1)[1]) for n in names]
    assert cols == sorted(cols) and cols[0] == 2, names  # (each where its item starts, after the `[`)
    # an item alone on its line keeps the name of its line alone
    path.write_text(json.dumps([{"a": 1}, {"b": 2}], indent=1) if suffix == "json" else yaml.safe_dump([{"a": 1}, {"b": 2}]))
    lines = (2, 5) if suffix == "json" else (1, 2)  # (`[`, `{`, `"a": 1`, `},`, `{`; `- a: 1`, `- b: 2`)
    assert [item.where for item in read_game_file(str(path))] == [f"{path}:{n}" for n in lines]


@pytest.mark.parametrize("suffix", ["json", "yaml"])
def test_play_places_a_bad_order_of_a_one_line_orders_file_in_its_entry(tmp_path: Path, suffix: str) -> None:
    start = tmp_path / "start.json"
    start.write_text(json.dumps({**START, "orders": []}))
    path = tmp_path / f"orders.{suffix}"
    one_line(path, [{"phase": "S1901M", "orders": ["A VIE - ZZZ"]}, {"phase": "F1901M", "orders": ["A BUD - SER"]}])
    code, out, err = run(["play", DIP, start, "--orders", path])
    head = err.splitlines()[0]
    assert code == 3 and head.startswith(f"{path}:1:") and "error[S002]" in head, err
    col = int(head[len(f"{path}:1:"):].split(":")[0])
    second = path.read_text().index("A BUD")  # (the second entry's order)
    assert col - 1 < second, (col, err)  # in the first entry, not the second
    if suffix == "yaml":  # (YAML's own positions: at the order itself)
        assert path.read_text()[col - 1:].startswith("A VIE - ZZZ"), err
