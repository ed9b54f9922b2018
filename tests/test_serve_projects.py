"""`ruleval serve PATH`: the playground opens a designer's own project folder (issue 44). Three
projects rebuilt as fixtures (tests/projects/): a new game with a combat results table, a new
12-province Diplomacy map with one rule changed, and an errata of Here I Stand. Each is listed,
runs, is drawn and diffed from its folder, over HTTP as the page does; edits of any of its files
(a map, not only a ruleset) are loaded from a private copy, and nothing outside the folder is read."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, Iterator

import pytest

from validator.core.exits import UsageError
from validator.tools import serve
from validator.tools import errata as errata_tool
from validator.tools.errata import SHOWN

from test_serve import call  # (tests/ is on the path, as pytest puts it)

PROJECTS = Path(__file__).resolve().parent / "projects"


def served(name: str) -> Iterator[serve.PlaygroundServer]:
    yield from served_from(PROJECTS / name)


@pytest.fixture(scope="module")
def combat() -> Iterator[serve.PlaygroundServer]:
    yield from served("combat_table")


@pytest.fixture(scope="module")
def threefold() -> Iterator[serve.PlaygroundServer]:
    yield from served("threefold_map")


@pytest.fixture(scope="module")
def errata() -> Iterator[serve.PlaygroundServer]:
    yield from served("his_errata")


def catalogue(srv: serve.PlaygroundServer) -> Any:
    return call(srv, "GET", "/api/bundle").json


def test_a_project_lists_its_own_files_and_nothing_else(combat) -> None:
    got = catalogue(combat)
    assert got["project"] == "combat_table"
    assert got["rulesets"] == ["skirmish.rules", "skirmish_revised.rules"]
    assert got["examples"] == ["states/two_to_one.json"] == got["states"]["skirmish.rules"]
    assert got["files"] == ["clauses.yaml", "skirmish.rules", "skirmish_revised.rules", "states/two_to_one.json",
                            "view.yaml"]
    # the family's main ruleset first, and a ruleset's diff against its base by default
    assert got["default"] == "skirmish.rules" and got["bases"] == {"skirmish_revised.rules": "skirmish.rules"}
    assert got["modes"] == {"skirmish.rules": "exact", "skirmish_revised.rules": "exact"}
    for name in ("../threefold_map/threefold.rules", "/etc/passwd", "diplomacy/standard.rules"):
        assert call(combat, "GET", f"/api/file?name={name}").status == 404


def test_a_new_game_checks_with_its_own_clauses_and_runs_with_its_picture(combat, monkeypatch) -> None:
    checked = call(combat, "POST", "/api/check", {"base": "skirmish.rules"}).json
    assert checked["errors"] == 0 and checked["diagnostics"] == []
    state = call(combat, "GET", "/api/file?name=states/two_to_one.json").json["text"]
    ran = call(combat, "POST", "/api/run", {"base": "skirmish.rules", "state": state, "mode": "exact"}).json
    assert ran["ok"] and ran["picture"].startswith('<svg xmlns="http://www.w3.org/2000/svg" class="picture bars"')
    assert ran["picture"].count('<g class="bar">') == 4  # DE, DR, EX, AR at 2:1
    assert ran["text"].startswith("4 outcomes over 6 dice paths")  # `ruleval run --exact`'s own text
    diffed = call(combat, "POST", "/api/diff", {"base": "skirmish_revised.rules", "other": "skirmish.rules",
                                                "generate": 30}).json
    assert diffed["ok"] and diffed["differ"] > 0 and diffed["summary"].startswith("tried 30 states: ")
    assert '"EX"  "DR"' in diffed["text"]
    # the first differences in full, as `ruleval diff` shows them; the figures count them all
    headers = [line for line in diffed["text"].splitlines() if line.startswith("generate(")]
    assert len(headers) == min(diffed["differ"], SHOWN) and diffed["differ"] >= 2
    assert f"states that differ: {diffed['differ']} of 30" in diffed["text"]
    # the rest in one line: the page reads how many it shows where `ruleval diff --show` takes its default
    monkeypatch.setattr(errata_tool, "SHOWN", 1)
    fewer = call(combat, "POST", "/api/diff", {"base": "skirmish_revised.rules", "other": "skirmish.rules",
                                              "generate": 30}).json
    more = fewer["differ"] - 1
    assert fewer["differ"] == diffed["differ"] and sum(line.startswith("generate(") for line in fewer["text"].splitlines()) == 1
    assert f"... and {more} more difference{'s' if more > 1 else ''} (`ruleval diff --show N`" in fewer["text"]


def test_an_edit_of_the_table_data_in_the_project_is_what_runs(combat) -> None:
    text = call(combat, "GET", "/api/file?name=skirmish.rules").json["text"]
    edited = text.replace("| two_to_one   | DE | DR | DR | EX | AR | AR |", "| two_to_one   | DE | DE | DE | DE | DE | DE |")
    assert edited != text
    state = '{"attack": {"attacker": 6, "defender": 3}}'
    ran = call(combat, "POST", "/api/run", {"base": "skirmish.rules", "text": edited, "state": state, "mode": "exact"}).json
    assert ran["ok"] and ran["picture"].count('<g class="bar">') == 1
    unknown_clause = text.replace('cite "SK-1"', 'cite "SK-9"')
    broken = call(combat, "POST", "/api/check", {"base": "skirmish.rules", "text": unknown_clause}).json
    assert [d["code"] for d in broken["diagnostics"]] == ["C010"] and broken["diagnostics"][0]["file"] == "skirmish.rules"


def test_a_new_map_is_imported_from_the_project_drawn_and_its_yaml_edited(threefold) -> None:
    got = catalogue(threefold)
    assert got["default"] == "threefold.rules"
    assert got["bases"] == {"threefold.rules": "bundled:diplomacy/standard.rules",
                            "threefold_build_anywhere.rules": "threefold.rules"}
    state = call(threefold, "GET", "/api/file?name=states/spring.json").json["text"]
    ran = call(threefold, "POST", "/api/run", {"base": "threefold.rules", "state": state}).json
    assert ran["ok"], ran.get("rendered")
    svg = ran["picture"]
    areas = set(__import__("re").findall(r'<g class="area" data-area="(\w+)"', svg))
    assert areas == {"nor", "nrh", "wes", "wfd", "eas", "ewd", "mid", "cap", "pks", "nsa", "wsa", "esa"}
    assert '<g class="marker" data-at="cap" data-text="standoff">' in svg
    # an edit of the map itself (another file of the folder) is what the ruleset imports
    map_text = call(threefold, "GET", "/api/file?name=threefold_map.yaml").json["text"]
    renamed = map_text.replace("mid: {name: Midlands", "mid: {name: Heartland")
    ran = call(threefold, "POST", "/api/run", {"base": "threefold.rules", "state": state,
                                               "edits": {"threefold_map.yaml": renamed}}).json
    assert "mid: Heartland" in ran["picture"] and "mid: Midlands" not in ran["picture"]
    broken = map_text.replace("  mid: [cap, ewd, nrh, wfd]\n", "  mid: [cap, ewd, nrh]\n")
    checked = call(threefold, "POST", "/api/check", {"base": "threefold.rules", "edits": {"threefold_map.yaml": broken}}).json
    assert checked["errors"] and {d["file"] for d in checked["diagnostics"]} == {"threefold_map.yaml"}
    again = call(threefold, "POST", "/api/check", {"base": "threefold.rules"}).json  # the edit undone
    assert again["errors"] == 0
    diffed = call(threefold, "POST", "/api/diff", {"base": "threefold_build_anywhere.rules", "other": "threefold.rules",
                                                   "generate": 40}).json
    assert diffed["ok"] and diffed["differ"] > 0 and "is not a home centre" in diffed["text"]


def test_an_errata_diffs_against_the_bundled_ruleset_it_extends(errata) -> None:
    got = catalogue(errata)
    assert got["default"] == "errata.rules" and got["bases"] == {"errata.rules": "bundled:his/his.rules"}
    assert got["others"] == ["errata.rules", "bundled:his/his.rules"] and got["modes"] == {"errata.rules": "exact"}
    state = call(errata, "GET", "/api/file?name=states/one_interceptor.json").json["text"]
    ran = call(errata, "POST", "/api/run", {"base": "errata.rules", "state": state, "mode": "exact"}).json
    assert ran["ok"] and '<g class="bar">' in ran["picture"]
    diffed = call(errata, "POST", "/api/diff", {"base": "errata.rules", "other": "bundled:his/his.rules", "state": state,
                                                "mode": "exact", "generate": 0}).json
    assert diffed["ok"] and diffed["differ"] == 1 and diffed["tried"] == 1
    for other in ("bundled:his/nope.rules", "../combat_table/skirmish.rules", "/etc/passwd"):
        assert call(errata, "POST", "/api/diff", {"base": "errata.rules", "other": other}).status == 400


def test_an_edit_reads_nothing_outside_the_project(threefold) -> None:
    text = 'ruleset x.y "x"\nimport "../combat_table/clauses.yaml" as other\n'
    checked = call(threefold, "POST", "/api/check", {"base": "threefold.rules", "text": text}).json
    assert [d["code"] for d in checked["diagnostics"]] == ["C007"]
    assert call(threefold, "POST", "/api/check", {"base": "threefold.rules",
                                                  "edits": {"../combat_table/view.yaml": "x"}}).status == 404


def test_serve_refuses_a_folder_without_rulesets(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="holds no ruleset"):
        serve.make_server("127.0.0.1", 0, project=tmp_path)
    with pytest.raises(UsageError, match="is not a folder"):
        serve.make_server("127.0.0.1", 0, project=tmp_path / "nowhere")


def test_c007_names_the_designer_s_folders_not_the_server_s_paths(tmp_path: Path) -> None:
    # a project whose ruleset imports a file beside it: C007 named the root by the server's own path
    # (the checkout's, relative to where the server was started) when the ruleset was not edited
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    (tmp_path / "outside.json").write_text("{}")
    (project / "ruleval.toml").write_text("")
    (project / "main.rules").write_text('import "../outside.json" as o\nquery main = 1\n')
    (project / "sub" / "deep.rules").write_text('import "../../outside.json" as o\nquery main = 1\n')
    serving = served_from(project)
    srv = next(serving)
    try:
        for base, text in (("main.rules", None), ("main.rules", 'import "../outside.json" as o\nquery main = 2\n'),
                           ("sub/deep.rules", None)):
            got = call(srv, "POST", "/api/check", {"base": base, "text": text}).json
            messages = [d["message"] for d in got["diagnostics"]]
            assert [d["code"] for d in got["diagnostics"]] == ["C007"], got
            assert messages[0].endswith("resolves outside the ruleset root `.`"), messages
            whole = json.dumps(got)  # (the rendered text included)
            assert tmp_path.name not in whole and "ruleval-serve-" not in whole and "<bundle>" not in whole, whole
    finally:
        next(serving, None)


def served_from(folder: Path) -> Iterator[serve.PlaygroundServer]:
    srv = serve.make_server("127.0.0.1", 0, project=folder)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()
