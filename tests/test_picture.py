"""The playground's generic picture drawer (validator/tools/picture.py) on small made-up views: what
it draws follows the view and the result, and nothing a state or result holds can break the SVG."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from validator.tools import picture

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = '<script>alert(1)</script>&"\'\x1b]0;x\x07\ud800'

VIEW: dict[str, Any] = {
    "kind": "graph", "when": "steps", "places": {"p": [10, 10], "q": [100, 10], "r": [50, 80]},
    "fallback": "^(?P<place>[a-z]+)",
    "groups": {"blue": "#00f"},
    "tokens": [{"source": "state", "list": "/pieces", "at": "where", "group": "side", "text": "name", "letters": 1}],
    "arrows": [{"list": "/steps", "read": "said", "pattern": r"^(?P<from>\S+) to (?P<to>\S+)", "status": "status",
                "note": "why"}],
    "markers": [{"list": "/taken", "at": "where", "text": "taken"}],
    "styles": {"ok": {"stroke": "#0a0"}, "no": {"stroke": "#a00", "stop": 0.5}},
}


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)  # well-formed, or this raises


def test_a_graph_draws_what_the_view_names() -> None:
    state = {"pieces": [{"where": "p", "side": "blue", "name": "walker"}, {"where": "nowhere", "name": "lost"}]}
    result = {"steps": [{"said": "p to q", "status": "ok"}, {"said": "q to r/north", "status": "no", "why": "blocked"},
                        {"said": "p to unknown", "status": "ok"}, {"said": "not a step"}],
              "taken": [{"where": "r"}]}
    root = parse(picture.graph_svg(VIEW, state, result))
    arrows = root.findall(f".//{SVG}g[@class='arrow']")
    assert [(a.get("data-status"), a.get("data-stopped")) for a in arrows] == [("ok", "false"), ("no", "true")]
    assert arrows[1].find(f"{SVG}title").text == "q to r/north: blocked"  # type: ignore[union-attr]
    tokens = root.findall(f".//{SVG}g[@class='token']")
    assert [t.get("data-at") for t in tokens] == ["p"]  # a piece at no known place is left out
    assert tokens[0].find(f"{SVG}text").text == "W"  # type: ignore[union-attr]
    assert tokens[0].find(f"{SVG}circle").get("fill") == "#00f"  # type: ignore[union-attr]
    assert [m.get("data-at") for m in root.findall(f".//{SVG}g[@class='marker']")] == ["r"]


@pytest.mark.parametrize("result", [
    {"steps": [{"said": f"p to q {HOSTILE}", "status": HOSTILE, "why": HOSTILE}], "taken": [{"where": HOSTILE}]},
    {"steps": "not a list", "taken": [1, None, [], {"where": None}]},
    {"steps": [{"said": None}, {"said": 5}, {"said": ["p to q"]}]},
    None, [], "text", 3,
])
def test_a_graph_of_anything_is_well_formed(result: Any) -> None:
    state = {"pieces": [{"where": "p", "name": HOSTILE, "side": HOSTILE}]}
    svg = picture.graph_svg(VIEW, state, result)
    parse(svg)
    assert "<script" not in svg and "\x1b" not in svg


@pytest.mark.parametrize("view", [
    {**VIEW, "places": "nowhere"}, {**VIEW, "places": {"p": [1]}, "size": "big"},
    {**VIEW, "arrows": [{"list": "/steps", "read": "said", "pattern": "(unclosed"}]},
    {**VIEW, "arrows": "none", "tokens": [5], "styles": [1]},
])
def test_a_bad_view_draws_less_never_fails(view: dict[str, Any]) -> None:
    parse(picture.graph_svg(view, {}, {"steps": [{"said": "p to q", "status": "ok"}]}))


def test_bars_follow_the_values_and_name_their_fields() -> None:
    view = {"kind": "bars", "list": "/outcomes", "value": "p", "text": "probability",
            "label": ["/result/how", {"at": "/result/by", "name": "by"}]}
    result = {"outcomes": [{"p": 0.75, "probability": "3/4", "result": {"how": "won", "by": HOSTILE}},
                           {"p": 0.25, "probability": "1/4", "result": {"how": "lost", "by": None}}]}
    svg = picture.bars_svg(view, result)
    root = parse(svg)
    rects = root.findall(f".//{SVG}g[@class='bar']/{SVG}rect")
    assert float(rects[0].get("width", 0)) == pytest.approx(3 * float(rects[1].get("width", 0)))
    labels = [t.text for t in root.findall(f".//{SVG}g[@class='bar']/{SVG}text")]
    assert labels[2:] == ["lost", "1/4 (25.0%)"] and labels[0].startswith("won, by ")  # type: ignore[union-attr]
    assert "<script" not in svg


def test_many_outcomes_are_cut_and_said_so() -> None:
    view = {"kind": "bars", "list": "/outcomes", "value": "p", "text": "probability"}
    result = {"outcomes": [{"p": 1 / 100, "probability": "1/100"}] * 100}
    root = parse(picture.bars_svg(view, result))
    assert len(root.findall(f".//{SVG}g[@class='bar']")) == picture.MAX_BARS
    assert any("40 more" in (t.text or "") for t in root.iter(f"{SVG}text"))


def test_the_first_matching_picture_is_chosen(tmp_path: Path) -> None:
    (tmp_path / "view.yaml").write_text("pictures:\n  - {kind: bars, when: outcomes}\n  - {kind: graph, when: steps}\n")
    view = picture.read_view(tmp_path, tmp_path)
    assert picture.picture_for(view, {"steps": []})["kind"] == "graph"  # type: ignore[index]
    assert picture.picture_for(view, {"outcomes": [], "steps": []})["kind"] == "bars"  # type: ignore[index]
    assert picture.picture_for(view, {"other": 1}) is None
    (tmp_path / "view.yaml").write_text("a: &a [*a]\n")  # a bad view file: no picture, no error
    assert picture.read_view(tmp_path, tmp_path) is None
