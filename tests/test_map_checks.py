"""Maps as checked data (issue 22, item 3): a Diplomacy map breaking its schema (C026) or the map
checks of standard.rules (`validate_data`, C027) is reported by `ruleval check` at the line and
column of the offending value in the map file; variants keep the checks; the findings are cached.

Each broken map of tests/maps/ is the teaching map with one mistake; the expected position is found
in the fixture's own text (the line holding the mistake, the column of the offending token), so the
test says where the mistake is, not what some run printed."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from validator import api
from validator.core import checkcache, jsontext, safeyaml
from validator.engine import data

ROOT = Path(__file__).resolve().parent.parent
MAPS = ROOT / "tests" / "maps"
CHECK_FORMAT = re.compile(r"^(\S+):(\d+):(\d+): error\[([A-Z]\d{3})\]: (.*)$", re.M)

# the kinds of province the map schema lists, as a C026 names them when a kind is none of them
_KINDS = [json.dumps(k) for k in json.loads((ROOT / "schemas/diplomacy/map.schema.json").read_text(encoding="utf-8"))
          ["$defs"]["province"]["properties"]["kind"]["enum"]]

# fixture -> (code, message, a text of the line holding the mistake, the token the column points at)
BROKEN = {
    "kind_misspelt": ("C026", f"expected {', '.join(_KINDS[:-1])} or {_KINDS[-1]}, got \"lnd\"",
                      "fen: {name: Fens, kind: lnd}", "lnd"),
    "unknown_adjacency": ("C027", "`fen` lists `swp` as an army neighbour, but the map has no province `swp`",
                          "fen: [hil, nor, sou, swp]", "swp"),
    "one_way": ("C027", "`for` lists `hil` as an army neighbour, but `hil` does not list `for`: add it, or mark the "
                "passage in `one_way`", "for: [hil]", "hil"),
    "coast_unknown": ("C027", "`bay` lists `cap/nc` as a fleet neighbour, but `cap` has no coast `nc` (its coasts: "
                      "ec, wc)", "bay: [cap/nc", "cap/nc"),
    "fleet_key_coast": ("C027", "fleet adjacency given for `cap/sc`, but `cap` has no coast `sc` (its coasts: ec, wc)",
                        '"cap/sc": [sou]', '"cap/sc"'),
    "home_not_centre": ("C027", "`fen` is a home centre of `blue` but not a supply centre: add `center: true`",
                        "fen: {name: Fens, kind: land, home: blue}", "blue"),
    "home_power_unknown": ("C027", "`sou` is a home centre of `green`, which is not one of the map's powers (red, blue)",
                           "home: green", "green"),
    "start_unit": ("C027", "the start unit fleet `for` cannot stand there: a fleet cannot stand in the inland province "
                   "`FOR`", "{power: red, type: fleet, location: for}", "for}"),
    "victory_not_int": ("C026", 'expected an integer, got "three"', "victory: three", "three"),
}


def where(path: Path, line_text: str, token: str) -> tuple[int, int]:
    """Line and column (1-based) of ``token`` on the only line of ``path`` that holds ``line_text``."""
    lines = [i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if line_text in line]
    assert len(lines) == 1, (path, line_text, lines)
    line = path.read_text(encoding="utf-8").splitlines()[lines[0] - 1]
    return lines[0], line.index(token, line.index(line_text)) + 1


def errors_of(err: str) -> list[tuple[str, int, int, str, str]]:
    return [(f, int(ln), int(col), code, msg) for f, ln, col, code, msg in CHECK_FORMAT.findall(err)]


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_broken_map_is_one_located_error(cli, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    code, message, line_text, token = BROKEN[name]
    monkeypatch.chdir(ROOT)
    result = cli("check", "--no-cache", f"tests/maps/{name}.rules")
    assert result.code == 1, result.err
    line, col = where(MAPS / f"{name}.yaml", line_text, token)
    assert errors_of(result.err) == [(f"tests/maps/{name}.yaml", line, col, code, message)], result.err
    assert "checked 1 ruleset: 1 error, 0 warnings" in result.err


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_broken_map_in_json_output_has_its_pointer(cli, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    result = cli("check", "--format", "json", f"tests/maps/{name}.rules")  # (and from the cache, the second time)
    found = [d for d in json.loads(result.out) if d["severity"] == "error"]
    assert result.code == 1 and len(found) == 1
    d = found[0]
    assert d["code"] == BROKEN[name][0] and d["file"] == f"tests/maps/{name}.yaml"
    doc = yaml.safe_load((MAPS / f"{name}.yaml").read_text(encoding="utf-8"))
    ok, value = jsontext_resolve(doc, d["pointer"])
    assert ok, d  # the pointer names a value of the map file itself
    if d["code"] == "C026":
        assert "schema_rule" in d and d["schema_rule"].startswith("/")
    else:
        assert d["schema_rule"].startswith("ruleset query `validate_data` (DIP-")


def jsontext_resolve(doc: object, pointer: str) -> tuple[bool, object]:
    from validator.engine.state import resolve_pointer

    return resolve_pointer(doc, pointer)


def test_the_bundled_maps_pass_their_checks(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    result = cli("check", "--no-cache", "--deny-warnings", "rulesets/diplomacy", "tests/maps/archipelago.rules",
                 "tests/maps/odd_places.rules")
    assert result.code == 0, result.err


def test_a_run_on_a_broken_map_is_refused_with_the_map_error(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    state = ROOT / "rulesets" / "diplomacy" / "examples" / "movement_1901.json"
    result = cli("run", "tests/maps/unknown_adjacency.rules", "--state", str(state))
    assert result.code == 1
    assert [e[3] for e in errors_of(result.err)] == ["C027"]
    assert "fen: [hil, nor, sou, swp]" in result.err  # the map's own line is shown under it


# ---------------------------------------------------------------- on a copy of the rulesets


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The Diplomacy rulesets, schemas and test maps copied under a ruleset root of their own."""
    (tmp_path / "ruleval.toml").write_text("")
    shutil.copytree(ROOT / "rulesets" / "diplomacy", tmp_path / "rulesets" / "diplomacy")
    shutil.copytree(ROOT / "schemas" / "diplomacy", tmp_path / "schemas" / "diplomacy")
    shutil.copytree(MAPS, tmp_path / "tests" / "maps")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_a_passage_marked_one_way_is_accepted(cli, tree: Path) -> None:
    assert cli("check", "--no-cache", "tests/maps/one_way.rules").code == 1
    edit(tree / "tests/maps/one_way.yaml", "fleet:\n", "one_way:\n  army: {for: [hil]}\nfleet:\n")
    assert cli("check", "--no-cache", "tests/maps/one_way.rules").code == 0
    # a one-way mark for an edge the adjacency does not list is itself a mistake
    edit(tree / "tests/maps/one_way.yaml", "army: {for: [hil]}", "army: {for: [hil, nor]}")
    result = cli("check", "--no-cache", "tests/maps/one_way.rules")
    line, col = where(tree / "tests/maps/one_way.yaml", "army: {for: [hil, nor]}", "nor")
    assert errors_of(result.err) == [("tests/maps/one_way.yaml", line, col, "C027",
                                      "`for` → `nor` is marked one-way, but `army` does not list it")]


@pytest.mark.parametrize("old, new, line_text, token, message", [
    ("fen: {name: Fens, kind: land}", "fen: {name: Fens, kind: land, coasts: [nc, sc]}", "fen: {name: Fens", "coasts",
     "`fen` is inland: only a coastal province has coasts"),
    ("bay: {name: The Bay, kind: sea}", "bay: {name: The Bay, kind: sea, convoyable: true}", "bay: {name:", "true",
     "`bay` is a sea: only a coastal province is marked convoyable (a sea always is)"),
    ("  for: [hil]\n", "  for: [hil]\n  bay: [gul]\n", "  bay: [gul]", "bay",
     "army adjacency given for `bay`, but `bay` is a sea, where armies never go"),
    ("  sou: [cap/ec, gul]\n", "  sou: [cap/ec, gul]\n  hil: [nor]\n", "  hil: [nor]", "hil",
     "fleet adjacency given for `hil`, but `hil` is inland, where fleets never go"),
    ("  fen: {name: Fens, kind: land}\n", "  fen: {name: Fens, kind: land}\n  pks: {name: Peaks, kind: impassable}\n",
     None, None, None),
    ('  "cap/ec": [gul, sou]\n', '  "cap/ec": [gul, sou]\n  cap: [bay]\n', "  cap: [bay]", "cap",
     "fleet adjacency given for `cap`, but `cap` has several coasts, and a fleet stands on one of them (cap/ec, cap/wc)"),
    ("victory: 3", "victory: 5", "victory: 5", "5", "a solo victory needs 5 supply centres, but the map has only 4"),
    ("supply_centers: {nor: red,", "supply_centers: {fen: red, nor: red,", "supply_centers", "red",
     "`fen` is not a supply centre of this map"),
    ("    - {power: blue, type: army, location: sou}", "    - {power: blue, type: army, location: sou}\n"
     "    - {power: blue, type: army, location: hil}\n    - {power: red, type: army, location: hil}",
     "{power: red, type: army, location: hil}", "hil", "two start units in `hil`: units can never share a province"),
    ("victory: 3", "victory: 2", "victory: 2", "2", "a solo victory needs more than half of the 4 supply centres "
     "(at least 3), not 2: two powers could reach it at once"),
    ("fen: {name: Fens, kind: land}", "fen: {name: Hills, kind: land}", "hil: {name: Hills", "Hills",
     "`hil` and `fen` are both named `Hills`: an order that names it could mean either"),
    ("fen: {name: Fens, kind: land}", "fen: {name: Fens (Wet), kind: land}", "fen: {name: Fens", "Fens",
     "the name `Fens (Wet)` of `fen` cannot be read back in an order: `(` names a coast in an order (brackets and "
     "slashes name coasts): rename it"),
    # names in any script read back (case-folded, composed): no mistake
    ("fen: {name: Fens, kind: land}", "fen: {name: Nördland, other_names: [Québec, Sinaï], kind: land}", None, None, None),
    ("fen: {name: Fens, kind: land}", "fen: {name: Фены, kind: land}", None, None, None),
    ("fen: {name: Fens, kind: land}", "fen: {name: Fens & Marsh, kind: land}", "fen: {name: Fens", "Fens",
     "the name `Fens & Marsh` of `fen` cannot be read back in an order: `&` is reserved by the order syntax (a name is "
     "letters of any script, digits, spaces and `_ ' + - .`): rename it"),
    ("victory: 3", "victory: 3\naliases: {Fénix: fen}", None, None, None),
    ("victory: 3", "victory: 3\naliases: {fen&: fen}", "aliases: {fen&: fen}", "fen}",
     "the alias `fen&` of `fen` cannot be read back in an order: `&` is reserved by the order syntax (a name is "
     "letters of any script, digits, spaces and `_ ' + - .`): rename it"),
    ("fen: {name: Fens, kind: land}", "fen: {name: Mt. Fens, kind: land}", None, None, None),  # orders write `mt fens`
    ("victory: 3", "victory: 3\naliases: {hil: fen}", "aliases: {hil: fen}", "fen",
     "the alias `hil` is the id of a province, which orders read first: it would never name `fen`"),
    ("  fen: [hil, nor, sou]", "  fen: [fen, hil, nor, sou]", "  fen: [fen, hil", "fen, hil",
     "`fen` lists itself as an army neighbour: a move stays in its province, so there is none"),
    ('  "cap/wc": [bay, nor]', '  "cap/wc": [bay, cap/ec, nor]', '  "cap/wc": [bay, cap/ec', "cap/ec",
     "`cap/wc` lists `cap/ec`, in its own province, as a fleet neighbour: a move stays in its province, so there is none"),
    ("fen: {name: Fens, kind: land}", "fen: {name: Fens, other_names: [Hills], kind: land}", "fen: {name: Fens", "Hills",
     "`Hills`, another name of `fen`, names `hil` (or an alias or id does): an order that writes it could mean either"),
    ("victory: 3", "victory: 3\naliases: {hills: fen}", "aliases: {hills: fen}", "fen",
     "the alias `hills` is also the name of `hil`, which orders would then never name: rename one of them"),
    ("supply_centers: {nor: red,", "supply_centers: {hil: red, nor: red,", "  supply_centers: {hil", "supply_centers",
     "red owns 3 supply centres at the start, the victory count: the game would end at once"),
    ("victory: 3", "victory: 3\ndummies: [blue, green]", "dummies: [blue, green]", "green",
     "the power no one plays is `green`, which is not one of the map's powers (red, blue)"),
    ("victory: 3", "victory: 3\ndaide: {powers: {RED: red, BLU: blue}, provinces: {FNS: fen}}", None, None, None),
    ("victory: 3", "victory: 3\ndaide: {powers: {RED: red, GRN: green}}", "daide: {powers:", "green",
     "the DAIDE token `GRN` names `green`, which is not one of the map's powers (red, blue)"),
    ("victory: 3", "victory: 3\ndaide: {provinces: {SWP: swp}}", "daide: {provinces:", "swp",
     "the DAIDE token `SWP` names `swp`, which is no province of the map"),
    ("fleet:\n", "one_way:\n  army: {for: [hil]}\nfleet:\n", "army: {for: [hil]}", "hil",
     "`for` → `hil` is marked one-way, but `army` lists `hil` → `for` too, so the passage goes both ways: drop that "
     "entry, or the mark"),
])
def test_more_map_mistakes(cli, tree: Path, old: str, new: str, line_text: str | None, token: str | None,
                           message: str | None) -> None:
    path = tree / "tests/maps/one_way.yaml"
    edit(path, "  hil: [fen, nor, sou]", "  hil: [fen, for, nor, sou]")  # the one-way mistake fixed first
    assert cli("check", "--no-cache", "tests/maps/one_way.rules").code == 0
    edit(path, old, new)
    result = cli("check", "--no-cache", "tests/maps/one_way.rules")
    if message is None:  # no mistake: an impassable place no adjacency names, a name with a full stop, in any script
        assert result.code == 0, result.err
        return
    assert line_text is not None and token is not None
    line, col = where(path, line_text, token)
    assert result.code == 1
    assert errors_of(result.err) == [("tests/maps/one_way.yaml", line, col, "C027", message)], result.err


def test_an_impassable_place_in_an_adjacency_is_refused(cli, tree: Path) -> None:
    path = tree / "tests/maps/odd_places.yaml"
    edit(path, "  for: [hil]\n", "  for: [hil, pks]\n")
    result = cli("check", "--no-cache", "tests/maps/odd_places.rules")
    line, col = where(path, "  for: [hil, pks]", "pks")
    assert errors_of(result.err) == [("tests/maps/odd_places.yaml", line, col, "C027",
                                      "`for` lists `pks` as an army neighbour, but `pks` is impassable: no unit may "
                                      "enter it")]


ARCHIPELAGO_STATE = {
    "phase": {"season": "spring", "year": 1901, "type": "movement"},
    "units": [{"power": "red", "type": "army", "location": "wes"}, {"power": "red", "type": "fleet", "location": "isl"},
              {"power": "red", "type": "fleet", "location": "sea"}],
    "orders": [{"power": "red", "order": "A WES - EAS"}, {"power": "red", "order": "F SEA C A WES - EAS"},
               {"power": "red", "order": "F ISL C A WES - EAS"}],
}


def test_the_convoyable_flag_is_what_lets_the_isles_convoy(cli, tree: Path) -> None:
    (tree / "state.json").write_text(json.dumps(ARCHIPELAGO_STATE))
    flagged = cli("run", "--format", "json", "tests/maps/archipelago.rules", "--state", "state.json")
    assert flagged.code == 0, flagged.err
    assert [o["status"] for o in json.loads(flagged.out)["orders"]] == ["succeeds"] * 3
    edit(tree / "tests/maps/archipelago.yaml", "kind: coast, convoyable: true}", "kind: coast}")
    unflagged = cli("run", "--format", "json", "tests/maps/archipelago.rules", "--state", "state.json")
    assert unflagged.code == 0, unflagged.err
    orders = json.loads(unflagged.out)["orders"]
    assert [(o["status"], o["reason"]) for o in orders] == [
        ("invalid", "army cannot reach EAS over land or by any convoy"),
        ("invalid", "F SEA is on no convoy route from WES to EAS"),
        ("invalid", "only a fleet at sea can convoy")]


def test_a_variant_keeps_the_base_schema_unless_it_names_its_own(cli, tree: Path) -> None:
    maps = tree / "tests/maps"
    result = cli("check", "--no-cache", "tests/maps/victory_not_int.rules")  # no `with schema`: the base's
    assert [e[3] for e in errors_of(result.err)] == ["C026"]
    assert cli("check", "--no-cache", "tests/maps/archipelago.rules").code == 0
    # a variant's own schema, stricter than the base's: a victory needs at least 10 centres
    strict = json.loads((tree / "schemas/diplomacy/map.schema.json").read_text(encoding="utf-8"))
    strict["properties"]["victory"]["minimum"] = 10
    (maps / "strict.schema.json").write_text(json.dumps(strict), encoding="utf-8")
    edit(maps / "archipelago.rules", 'as map\n', 'as map with schema "strict.schema.json"\n')
    result = cli("check", "--no-cache", "tests/maps/archipelago.rules")
    line, col = where(maps / "archipelago.yaml", "victory: 2", "2")
    assert errors_of(result.err) == [("tests/maps/archipelago.yaml", line, col, "C026", "expected at least 10, got 2")]


def test_a_json_map_is_located_by_its_json_text(cli, tree: Path) -> None:
    maps = tree / "tests/maps"
    doc = yaml.safe_load((maps / "unknown_adjacency.yaml").read_text(encoding="utf-8"))
    (maps / "unknown_adjacency.json").write_text(json.dumps(doc, indent=1), encoding="utf-8")
    edit(maps / "unknown_adjacency.rules", '"unknown_adjacency.yaml"', '"unknown_adjacency.json"')
    result = cli("check", "--no-cache", "tests/maps/unknown_adjacency.rules")
    text = (maps / "unknown_adjacency.json").read_text(encoding="utf-8").splitlines()
    line = next(i for i, ln in enumerate(text, 1) if '"swp"' in ln)
    col = text[line - 1].index('"swp"') + 1
    assert errors_of(result.err) == [("tests/maps/unknown_adjacency.json", line, col, "C027",
                                      BROKEN["unknown_adjacency"][1])]


def test_the_data_check_is_cached_with_the_ruleset(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rules = Path("tests/maps/unknown_adjacency.rules")
    first = api.load_ruleset(rules, use_cache=False)
    assert [d.code for d in first.diagnostics if d.is_error] == ["C027"]
    assert checkcache.lookup(rules, kind=api._CHECKS) is not None

    def not_again(*args: object, **kwargs: object) -> list[object]:
        raise AssertionError("the data check ran again on unchanged files")

    with monkeypatch.context() as m:
        m.setattr(data, "data_findings", not_again)
        again = api.load_ruleset(rules, use_cache=False)  # a new load, as a new process makes it
    assert again.diagnostics == first.diagnostics
    assert "fen: [hil, nor, sou, swp]" in again.sources["tests/maps/unknown_adjacency.yaml"]
    edit(tree / "tests/maps/unknown_adjacency.yaml", "sou, swp]", "sou]")  # a changed file: checked afresh
    assert not [d for d in api.load_ruleset(rules, use_cache=False).diagnostics if d.is_error]


def test_positions_of_pointers_in_yaml_and_json() -> None:
    lines = ["a:", "  b: [1, {c: xy}]", "  d:", "    - e"]
    pos = safeyaml.Positions("\n".join(lines) + "\n")
    col = lines[1].index("xy") + 1
    assert pos.of(("a", "b", "1", "c")) == (2, col, 2, col + 2)  # a scalar: its value
    assert pos.of(("a", "d")) == (3, 3, 3, 4)  # a collection: its key
    assert pos.of(("a", "d", "0")) == (4, 7, 4, 8)
    assert pos.of(("a", "z")) is None and pos.of(("a", "b", "9")) is None
    jtext = '{"a": {"b": [1, {"c": "xy"}], "d": ["e"]}}'
    jpos = jsontext.Positions(jtext)
    at = jtext.index('"xy"') + 1
    assert jpos.of(("a", "b", "1", "c")) == (1, at, 1, at + 4)
    at = jtext.index('"d"') + 1
    assert jpos.of(("a", "d")) == (1, at, 1, at + 3)
    assert jpos.of(("a", "z")) is None and jpos.of(("a", "b", "2")) is None


def test_the_map_schema_describes_every_property() -> None:
    schema = json.loads((ROOT / "schemas" / "diplomacy" / "map.schema.json").read_text(encoding="utf-8"))
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"

    def walk(node: object, where: str) -> list[str]:
        missing = []
        if isinstance(node, dict):
            if node.get("type") == "object" and "properties" in node:
                assert node.get("additionalProperties") is False, where
            for name, sub in (node.get("properties") or {}).items():
                if "description" not in sub:
                    missing.append(f"{where}/properties/{name}")
            for key, sub in node.items():
                missing += walk(sub, f"{where}/{key}")
        elif isinstance(node, list):
            for i, sub in enumerate(node):
                missing += walk(sub, f"{where}/{i}")
        return missing

    assert walk(schema, "") == []


# ---------------------------------------------------------------- docs/maps.md


MAPS_DOC = (ROOT / "docs" / "maps.md").read_text(encoding="utf-8")


def plain_blocks(text: str) -> list[str]:
    """The bodies of the fenced blocks with no info string (ruleset excerpts); console blocks, whose
    commands tests/test_readme.py runs, and others are left out."""
    out: list[str] = []
    body: list[str] | None = None
    info = ""
    for line in text.splitlines():
        if line.startswith("```"):
            if body is None:
                body, info = [], line[3:].strip()
            else:
                if not info:
                    out.append("\n".join(body))
                body = None
        elif body is not None:
            body.append(line)
    return out


def test_maps_doc_excerpts_are_the_bundled_rulesets() -> None:
    corpus = {" ".join(line.split()) for p in (ROOT / "rulesets").rglob("*.rules")
              for line in p.read_text(encoding="utf-8").splitlines()}
    shown = [line for block in plain_blocks(MAPS_DOC) for line in block.splitlines() if line.strip()]
    assert shown and all(" ".join(line.split()) in corpus for line in shown), shown


def test_maps_doc_lists_every_field_of_the_schema() -> None:
    schema = json.loads((ROOT / "schemas" / "diplomacy" / "map.schema.json").read_text(encoding="utf-8"))
    listed = set(re.findall(r"^\| `([a-z_.X]+)` \|", MAPS_DOC, flags=re.M))
    fields = set(schema["properties"]) | {f"provinces.X.{k}" for k in schema["$defs"]["province"]["properties"]}
    assert listed == fields


def test_a_map_of_a_variant_in_its_own_folder_is_checked_in_that_folder(cli, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A designer's variant outside the checkout, extending the bundled rules by name, with its own
    map: the bundled rules' schema and map checks apply, and the mistake is shown in the designer's file."""
    (tmp_path / "ruleval.toml").write_text("")
    shutil.copy(MAPS / "unknown_adjacency.yaml", tmp_path / "my_map.yaml")
    (tmp_path / "mine.rules").write_text('ruleset my.map "my map"\nextends "bundled:diplomacy/standard.rules"\n'
                                         'import "my_map.yaml" as map\n')
    monkeypatch.chdir(tmp_path)
    result = cli("check", "--no-cache", "mine.rules")
    line, col = where(tmp_path / "my_map.yaml", "fen: [hil, nor, sou, swp]", "swp")
    assert errors_of(result.err) == [("my_map.yaml", line, col, "C027", BROKEN["unknown_adjacency"][1])]
    assert "fen: [hil, nor, sou, swp]" in result.err
    edit(tmp_path / "my_map.yaml", "kind: land}", "kind: lnd}")  # (the first of them: `for`)
    result = cli("check", "--no-cache", "mine.rules")
    assert [e[3] for e in errors_of(result.err)] == ["C026"]


def test_a_map_key_yaml_reads_as_no_text_is_located_at_the_key(tmp_path: Path) -> None:
    """`no:` is the truth value false to YAML: the fault is shown where the key is written, with its
    mapping's pointer."""
    import io

    from validator.tools.cli import main

    data = yaml.safe_load((ROOT / "rulesets" / "diplomacy" / "teaching_map.yaml").read_text(encoding="utf-8"))
    text = yaml.safe_dump(data, sort_keys=False)
    text = text.replace("\narmy:\n", "\narmy:\n  no: []\n", 1)
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "m.yaml").write_text(text)
    (tmp_path / "m.rules").write_text('ruleset m "m"\nextends "bundled:diplomacy/teaching.rules"\nimport "m.yaml" as map\n')
    out = io.StringIO()
    code = main(["check", str(tmp_path / "m.rules"), "--format", "json"], stdout=out, stderr=io.StringIO())
    [d] = json.loads(out.getvalue())
    line = text.splitlines().index("  no: []") + 1
    assert code == 1 and d["code"] == "C008" and d["pointer"] == "/army" and (d["line"], d["col"]) == (line, 3), d
    assert "quote a key meant as text" in d["help"]


@pytest.mark.parametrize("fault,message", [(b"\xff", "is not UTF-8: byte 0xff is not valid UTF-8"),
                                           (b"\x07", "invalid YAML: the character U+0007 is not allowed in YAML")])
def test_a_map_that_cannot_be_read_as_yaml_text_is_located_at_the_fault(tmp_path: Path, fault: bytes, message: str) -> None:
    import io

    from validator.tools.cli import main

    lines = (ROOT / "rulesets" / "diplomacy" / "teaching_map.yaml").read_bytes().split(b"\n")
    at = next(i for i, t in enumerate(lines) if t.startswith(b"army:")) + 2  # the first adjacency line, from 1
    lines[at - 1] = lines[at - 1].replace(b": [", b": [" + fault, 1)
    col = lines[at - 1].index(fault) + 1
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "m.yaml").write_bytes(b"\n".join(lines))
    (tmp_path / "m.rules").write_text('ruleset m "m"\nextends "bundled:diplomacy/teaching.rules"\nimport "m.yaml" as map\n')
    out = io.StringIO()
    code = main(["check", "--no-cache", str(tmp_path / "m.rules"), "--format", "json"], stdout=out, stderr=io.StringIO())
    [d] = json.loads(out.getvalue())
    assert code == 1 and d["code"] == "C008" and message in d["message"] and (d["line"], d["col"]) == (at, col), d


def test_a_sea_supply_centre_takes_a_fleet_and_never_an_army(tmp_path: Path) -> None:
    """A map may put a supply centre at sea (DIP-MAP2 does not forbid it); an army is never built there
    (DIP-M2), as a fleet is never built inland (DATC 4.C.4)."""
    from validator import load_ruleset

    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "m.yaml").write_text(
        "name: sea centre\npowers: [red, blue]\nvictory: 2\nprovinces:\n"
        "  rca: {name: Redcastle, kind: coast, center: true, home: red}\n"
        "  bca: {name: Bluecastle, kind: coast, center: true, home: blue}\n"
        "  bay: {name: The Bay, kind: sea, center: true, home: red}\n"
        "army: {rca: [bca], bca: [rca]}\nfleet: {rca: [bay, bca], bca: [bay, rca], bay: [bca, rca]}\n")
    (tmp_path / "m.rules").write_text('ruleset m "m"\nextends "bundled:diplomacy/standard.rules"\nimport "m.yaml" as map\n')
    rs = load_ruleset(str(tmp_path / "m.rules"))
    assert rs.ok, rs.diagnostics
    state = {"phase": {"season": "winter", "year": 1901, "type": "adjustment"}, "units": [],
             "supply_centers": {"rca": "red", "bay": "red", "bca": "blue"}, "orders": [{"power": "red", "order": "BUILD A BAY"}]}
    [order] = rs.run(state)["orders"]
    assert (order["status"], order["reason"]) == ("invalid", "an army cannot be built at sea")
    state["orders"] = [{"power": "red", "order": "BUILD F BAY"}]
    assert rs.run(state)["units"] == [{"power": "red", "type": "fleet", "location": "bay"}]


def test_a_map_without_its_optional_fields_checks_and_diff_asks_for_a_start(tmp_path: Path) -> None:
    """`victory`, `aliases`, `one_way` and `start` are optional in the map schema: leaving them out is
    no error (an unguarded `map.victory` read was C012 in the bundled rules), and `diff --games` on a
    map with no start position asks for --start rather than comparing games on an empty board."""
    import io

    from validator.tools.cli import main

    data = yaml.safe_load((ROOT / "rulesets" / "diplomacy" / "teaching_map.yaml").read_text(encoding="utf-8"))
    for key in ("victory", "aliases", "one_way", "start"):
        data.pop(key, None)
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "m.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    (tmp_path / "m.rules").write_text('ruleset m "m"\nextends "bundled:diplomacy/teaching.rules"\nimport "m.yaml" as map\n')
    out, err = io.StringIO(), io.StringIO()
    assert main(["check", str(tmp_path / "m.rules")], stdout=out, stderr=err) == 0, out.getvalue() + err.getvalue()
    out, err = io.StringIO(), io.StringIO()
    code = main(["diff", str(tmp_path / "m.rules"), str(tmp_path / "m.rules"), "--games", "2"], stdout=out, stderr=err)
    assert code == 2 and "give --start STATE" in err.getvalue() and "no start position" in err.getvalue(), err.getvalue()


def test_a_map_whose_yaml_does_not_parse_quotes_its_line_and_where_the_unclosed_part_began(cli, tree: Path) -> None:
    """PyYAML notices a `{` left open on the next line: the error quotes that line, and a note points
    at the `{` (the check cache off and on: the lines are quoted either way)."""
    edit(tree / "tests/maps/kind_misspelt.yaml", "fen: {name: Fens, kind: lnd}", "fen: {name: Fens, kind: land")
    for extra in (["--no-cache"], [], []):
        result = cli("check", *extra, "tests/maps/kind_misspelt.rules")
        assert result.code == 1, result.err
        [(path, line, col, code, message)] = errors_of(result.err)
        assert (path, code, message) == ("tests/maps/kind_misspelt.yaml", "C008",
                                         "invalid YAML: did not find expected ',' or '}'")
        lines = (tree / path).read_text(encoding="utf-8").splitlines()
        assert f"{line:>4} | {lines[line - 1]}" in result.err, result.err
        opened = next(i for i, text in enumerate(lines, 1) if "fen: {name: Fens" in text)
        col_of_brace = lines[opened - 1].index("{") + 1
        assert f"  = note: {path}:{opened}:{col_of_brace}: while parsing a flow mapping" in result.err, result.err


def test_orders_read_names_in_any_script_as_the_map_writes_them(tree: Path) -> None:
    """Issue 40: `Nördland`, `Québec`, `Sinaï` are names like any other; an order may write them in any
    case, with the accent composed or as a combining mark (NFC), and an alias in any script too."""
    path = tree / "tests/maps/one_way.yaml"
    edit(path, "  hil: [fen, nor, sou]", "  hil: [fen, for, nor, sou]")
    edit(path, "fen: {name: Fens, kind: land}", "fen: {name: Québec, other_names: [Sinaï], kind: land}")
    edit(path, "hil: {name: Hills, kind: land, center: true}", "hil: {name: Nördland, kind: land, center: true}")
    edit(path, "victory: 3", "victory: 3\naliases: {Ñor: nor}")
    rs = api.load_ruleset(str(tree / "tests/maps/one_way.rules"))
    assert rs.ok, [d.message for d in rs.diagnostics]
    for order, to in (("A NÖRDLAND - QUÉBEC", "fen"), ("A nördland - que\u0301bec", "fen"), ("A Nördland - SINAÏ", "fen"),
                      ("A Nordland - fen", "hil"), ("A hil - ÑOR", "nor")):
        state = {"phase": {"season": "spring", "year": 1901, "type": "movement"},
                 "units": [{"power": "red", "type": "army", "location": "hil"}],
                 "orders": [{"power": "red", "order": order}]}
        assert rs.state_errors(state) == [], order
        result = rs.run(state)
        assert [u["location"] for u in result["units"]] == [to], order
        # another spelling (`Nordland`) is no name of the map: the order is invalid, the army holds
        assert result["orders"][0]["status"] == ("invalid" if to == "hil" else "succeeds"), order


def test_a_misspelt_top_level_key_is_the_map_s_error_not_the_rules(cli, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A designer's map with `provinecs:` for `provinces:` broke the schema (C026: the key missing, the
    other one unexpected) and also gave one C012 for each read of `map.provinces` in the bundled
    standard.rules, a file the designer cannot change: only the map's own errors are shown."""
    text = (ROOT / "rulesets" / "diplomacy" / "teaching_map.yaml").read_text(encoding="utf-8")
    (tmp_path / "ruleval.toml").write_text("", encoding="utf-8")
    (tmp_path / "my_map.yaml").write_text(text.replace("\nprovinces:", "\nprovinecs:"), encoding="utf-8")
    (tmp_path / "my.rules").write_text('ruleset my.map "mine"\nextends "bundled:diplomacy/standard.rules"\n'
                                       'import "my_map.yaml" as map\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = cli("check", "--no-cache", "my.rules")
    assert result.code == 1, result.err
    found = errors_of(result.err)
    assert found and {(f, code) for f, _, _, code, _ in found} == {("my_map.yaml", "C026")}, result.err
    assert any('"provinces"' in msg for *_, msg in found) and any('"provinecs"' in msg for *_, msg in found)
