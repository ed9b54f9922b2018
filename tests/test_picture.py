"""The playground's generic picture drawer (validator/tools/picture.py) on small made-up views: what
it draws follows the view and the result, and nothing a state or result holds can break the SVG."""

from __future__ import annotations

import math
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


# ---------------------------------------------------------------- boards drawn from a ruleset's own data

DIP = Path(__file__).resolve().parent.parent / "rulesets" / "diplomacy"


def _drawn(name: str) -> tuple[ET.Element, Any, dict[str, Any]]:
    from validator import load_ruleset
    from validator.tools.errata import generator_state

    rs = load_ruleset(DIP / f"{name}.rules")
    state = rs.run(generator_state(rs), query="generate", args=[5], seed=5, validate=False)
    result = rs.run(state)
    pic = picture.picture_for(picture.view_of(rs), result)
    assert pic is not None
    return parse(picture.draw(pic, rs, state, result) or ""), rs, state


def _centres(root: ET.Element) -> dict[str, tuple[float, float]]:
    out = {}
    for g in root.findall(f".//{SVG}g[@class='area']"):
        c = g.find(f"{SVG}circle")
        assert c is not None
        out[g.get("data-area") or ""] = (float(c.get("cx") or 0), float(c.get("cy") or 0))
    return out


@pytest.mark.parametrize("name", sorted(p.stem for p in DIP.glob("*.rules")))
def test_each_diplomacy_ruleset_draws_its_own_board(name: str) -> None:
    """Every province of the ruleset's own map is drawn, at the map's own board points where it has
    them, else laid out from its adjacency: no two at one point, and never at another map's points;
    every unit of the state stands on the board."""
    root, rs, state = _drawn(name)
    data = rs.program.entry.data["map"].value
    centres = _centres(root)
    assert sorted(centres) == sorted(data["provinces"])
    if "board" in data:
        for p, (x, y) in centres.items():
            assert (round(x), round(y)) == tuple(data["board"]["places"][p])
    else:
        assert len(set(centres.values())) == len(centres)
        standard = picture.Board({"data": "map", "areas": "/provinces", "places": "/board/places"},
                                 _ruleset("standard_dpjudge")).points
        same = [p for p, xy in centres.items() if p in standard and tuple(standard[p]) == (round(xy[0]), round(xy[1]))]
        assert not same, f"{name} is drawn at the standard board's points: {same[:5]}"
    outlines = {g.get("data-area"): g.get("d") for g in root.findall(f".//{SVG}path[@class='outline']")}
    if "outlines" in data.get("board", {}):  # each province's shape, as the map gives it (issue 44)
        want = data["board"]["outlines"]
        assert sorted(outlines) == sorted(want)
        for p, d in outlines.items():  # `M x y L x y ... Z` a ring, of the map's `x,y x,y ...`
            rings = [ring.strip().removeprefix("M").split(" L ") for ring in (d or "").split("Z") if ring.strip()]
            assert [" ".join(",".join(c.split()) for c in ring) for ring in rings] == want[p], p
        tinted = len(root.findall(f".//{SVG}path[@class='owned']"))
        assert tinted == sum(1 for c in state.get("supply_centers", {}) if c in want)
    else:
        assert outlines == {}
    at = {t.get("data-at") for t in root.findall(f".//{SVG}g[@class='token']")}
    assert at == {u["location"] for u in state["units"]}
    owned = {g.get("data-area"): g.get("data-owner") for g in root.findall(f".//{SVG}g[@class='area']") if g.get("data-owner")}
    assert owned == {c: o for c, o in state.get("supply_centers", {}).items()}


def _ruleset(name: str) -> Any:
    from validator import load_ruleset

    return load_ruleset(DIP / f"{name}.rules")


def test_a_laid_out_board_is_the_same_every_time() -> None:
    from validator.tools import layout

    nodes = ["a", "b", "c", "d", "e", "f"]
    edges = {"a": ["b", "c"], "b": ["c", "d"], "d": ["e"], "e": ["f"], "f": ["d"]}
    first = layout.layout(nodes, edges)
    assert first == layout.layout(list(reversed(nodes)), edges)
    assert len({(round(x), round(y)) for x, y in first.values()}) == len(nodes)
    near = [math.dist(first[a], first[b]) for a in edges for b in edges[a]]
    far = math.dist(first["a"], first["f"])
    assert far > max(near), "the ends of a path are laid out further apart than any neighbours"
    apart = layout.layout(["x", "y", "z"], {})  # nothing linked: side by side, none on another
    assert len({p for p in apart.values()}) == 3


def test_standoffs_and_dislodged_units_are_marked() -> None:
    rs = _ruleset("standard")
    state = {"phase": {"season": "spring", "year": 1901, "type": "movement"},
             "units": [{"power": "france", "type": "army", "location": "par"},
                       {"power": "germany", "type": "army", "location": "mun"},
                       {"power": "germany", "type": "army", "location": "bel"},
                       {"power": "france", "type": "army", "location": "bur"}],
             "orders": [{"power": "france", "order": "A PAR - PIC"}, {"power": "germany", "order": "A BEL - PIC"},
                        {"power": "germany", "order": "A MUN - BUR"}, {"power": "france", "order": "A BUR H"}]}
    result = rs.run(state)
    assert result["standoffs"] == ["pic"]
    root = parse(picture.draw(picture.picture_for(picture.view_of(rs), result) or {}, rs, state, result) or "")
    marks = {(m.get("data-at"), m.get("data-text")) for m in root.findall(f".//{SVG}g[@class='marker']")}
    assert ("pic", "standoff") in marks
    stopped = [a for a in root.findall(f".//{SVG}g[@class='arrow']") if a.get("data-stopped") == "true"]
    assert len(stopped) == 3  # both moves into the standoff, and the unsupported attack on BUR


def test_render_writes_the_same_drawing_as_svg_and_png(tmp_path: Path) -> None:
    """`ruleval render` of a ruleset without a `render` query draws its view's picture: the SVG the
    playground shows, and the same drawing as PNG (CairoSVG)."""
    import io
    import json

    from validator.tools.cli import main

    root, rs, state = _drawn("teaching")
    (tmp_path / "s.json").write_text(json.dumps(state))
    for name in ("board.svg", "board.png"):
        out, err = io.StringIO(), io.StringIO()
        code = main(["render", str(DIP / "teaching.rules"), "--state", str(tmp_path / "s.json"), "-o", str(tmp_path / name)],
                    stdout=out, stderr=err)
        assert code == 0 and err.getvalue() == f"wrote {tmp_path / name}\n", err.getvalue()
    svg = (tmp_path / "board.svg").read_text()
    assert _centres(parse(svg)) == _centres(root)
    png = (tmp_path / "board.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    top = parse(svg)
    assert (width, height) == (round(float(top.get("width") or 0)), round(float(top.get("height") or 0)))
    out, err = io.StringIO(), io.StringIO()
    code = main(["render", str(DIP / "teaching.rules"), "--state", str(tmp_path / "s.json"), "-o", str(tmp_path / "b.gif")],
                stdout=out, stderr=err)
    assert code == 2 and "SVG (.svg) or PNG (.png)" in err.getvalue()


def test_render_without_a_state_draws_the_start_position_as_play_starts_from_it(tmp_path: Path) -> None:
    """A designer's first look at a new map: `render` without `--state` was a usage error; it draws
    the ruleset's `query start_state`, the state `play` starts from without a START file, and a
    ruleset without that query asks for a state."""
    import io
    import json

    from validator import load_ruleset
    from validator.tools.cli import main
    from validator.tools.play import start_state

    rs = load_ruleset(DIP / "teaching.rules")
    start = start_state(rs, str(DIP / "teaching.rules"))
    (tmp_path / "start.json").write_text(json.dumps(start))
    drawn = {}
    for name, extra in (("given.svg", ["--state", str(tmp_path / "start.json")]), ("start.svg", [])):
        out, err = io.StringIO(), io.StringIO()
        code = main(["render", str(DIP / "teaching.rules"), *extra, "-o", str(tmp_path / name)], stdout=out, stderr=err)
        assert code == 0, err.getvalue()
        drawn[name] = (tmp_path / name).read_text()
    assert drawn["start.svg"] == drawn["given.svg"] and start["units"]
    out, err = io.StringIO(), io.StringIO()
    code = main(["render", str(DIP.parent / "jomini" / "re.rules"), "-o", str(tmp_path / "j.svg")],
                stdout=out, stderr=err)
    assert code == 2 and "--state" in err.getvalue() and "start_state" in err.getvalue(), err.getvalue()


def test_render_s_png_fills_a_province_s_outline(tmp_path: Path) -> None:
    """The PNG of a board with outlines fills each province's shape, not only its disc: a spot inside
    the North Atlantic's outline, far from its point, is the sea's colour (without the outline it would
    be the picture's ground) (issue 44)."""
    import io

    import yaml

    from screens import pixels
    from validator.tools.cli import main

    out, err = io.StringIO(), io.StringIO()
    state = DIP / "examples" / "support_and_dislodgement.json"
    code = main(["render", str(DIP / "standard.rules"), "--state", str(state), "-o", str(tmp_path / "b.png")],
                stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    board = yaml.safe_load((DIP / "standard_map.yaml").read_text(encoding="utf-8"))["board"]
    point = board["places"]["nao"]
    corners = [[float(v) for v in c.split(",")] for c in board["outlines"]["nao"][0].split()]
    far = max(corners, key=lambda c: math.dist(c, point))
    spot = (far[0] + 0.15 * (point[0] - far[0]), far[1] + 0.15 * (point[1] - far[1]))
    width, height, rows = pixels((tmp_path / "b.png").read_bytes())
    size = len(rows[0]) // width
    x, y = round(spot[0] * width / board["size"][0]), round(spot[1] * height / board["size"][1])
    colour = tuple(rows[y][x * size:x * size + 3])
    sea = picture.read_view(DIP, DIP)["pictures"][0]["board"]["kinds"]["sea"]  # "#rrggbb"
    assert colour == tuple(int(sea[i:i + 2], 16) for i in (1, 3, 5)), (spot, colour)



def _coast_board(tmp_path: Path) -> Path:
    """A designer's variant whose map's board gives a point for each province and none for a coast:
    the standard map with its coasts' points left out."""
    import yaml

    data = yaml.safe_load((DIP / "standard_map.yaml").read_text(encoding="utf-8"))
    data["board"]["places"] = {k: v for k, v in data["board"]["places"].items() if "/" not in k}
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "my_map.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    path = tmp_path / "my.rules"
    path.write_text('ruleset my.coasts "Coasts without points"\nextends "bundled:diplomacy/standard.rules"\n'
                    'import "my_map.yaml" as map\n', encoding="utf-8")
    return path


@pytest.mark.parametrize("name", ["standard", "teaching", "colonial", "world", "modern", "standard_age_of_empires",
                                  "<a board without coast points>"])
def test_a_unit_on_a_coast_is_drawn_at_its_coast(name: str, tmp_path: Path) -> None:
    """A unit on one coast of a province with several is drawn on that coast: off the province's
    point (a board that gives the coasts no point drew it there, on the province's own disc), on the
    side of the places only that coast reaches, nearer them than a unit on the province's other coast."""
    from validator import load_ruleset

    rs = load_ruleset(_coast_board(tmp_path) if name.startswith("<") else DIP / f"{name}.rules")
    assert rs.ok, rs.diagnostics
    data = rs.program.entry.data["map"].value
    coasts = {p: [f"{p}/{c}" for c in v["coasts"]] for p, v in data["provinces"].items() if len(v.get("coasts", [])) > 1}
    assert coasts
    pic = picture.picture_for(picture.view_of(rs), {"orders": []})
    assert pic is not None
    state = {"units": [{"power": data["powers"][0], "type": "fleet", "location": c} for cs in coasts.values() for c in cs]}
    root = parse(picture.graph_svg(pic, state, {}, rs))
    centres = _centres(root)
    tokens = {}
    for t in root.findall(f".//{SVG}g[@class='token']"):
        c = t.find(f"{SVG}circle")
        assert c is not None
        tokens[t.get("data-at")] = (float(c.get("cx") or 0), float(c.get("cy") or 0), float(c.get("r") or 0))
    assert sorted(tokens) == sorted(c for cs in coasts.values() for c in cs)
    for province, names in coasts.items():
        reached = {c: {b.split("/")[0] for b in data["fleet"][c]} for c in names}
        for c in names:
            x, y, r = tokens[c]
            assert math.dist((x, y), centres[province]) > r, f"{c} is drawn on {province}'s point"
            only = reached[c] - set().union(*(reached[o] for o in names if o != c))
            for other in names:
                if other == c or not only:
                    continue
                mine = sum(math.dist((x, y), centres[b]) for b in only)
                theirs = sum(math.dist(tokens[other][:2], centres[b]) for b in only)
                assert mine < theirs, f"{c} is drawn further from {sorted(only)} than {other}"


def _label_boxes(root: ET.Element) -> dict[str, tuple[float, float, float, float]]:
    """Each area's label as the SVG draws it: centred at `x`, on the baseline `y`, as wide as its
    `textLength` and as tall as any letter of its font size (picture.LABEL_ABOVE and LABEL_BELOW)."""
    out = {}
    labels = [(t.get("data-area"), t) for t in root.findall(f".//{SVG}text[@class='label']")]
    for area, t in labels or [(g.get("data-area"), g.find(f"{SVG}text")) for g in root.findall(f".//{SVG}g[@class='area']")]:
        assert t is not None and t.get("text-anchor") == "middle"
        x, y, size = float(t.get("x") or 0), float(t.get("y") or 0), float(t.get("font-size") or 0)
        width = float(t.get("textLength") or picture.LABEL_WIDTH * size * len(t.text or ""))
        out[area or ""] = (x - width / 2, y - picture.LABEL_ABOVE * size, x + width / 2,
                                         y + picture.LABEL_BELOW * size)
    return out


def _unit_marks(root: ET.Element) -> list[tuple[str, float, float, float]]:
    out = []
    for t in root.findall(f".//{SVG}g[@class='token']"):
        c = t.find(f"{SVG}circle")
        assert c is not None
        reach = float(c.get("r") or 0) + float(c.get("stroke-width") or 0) / 2
        out.append((t.get("data-at") or "", float(c.get("cx") or 0), float(c.get("cy") or 0), reach))
    return out


@pytest.mark.parametrize("name", sorted(p.stem for p in DIP.glob("*.rules")))
def test_no_label_is_drawn_on_a_unit(name: str) -> None:
    """An area's label was drawn above its disc wherever units stood, so on a close board a unit on a
    coast or in the area above covered it. On each bundled map, with the units of a generated state,
    of the start position and with a unit on every place of the board, no label's box meets a unit's
    disc: labels go round the units. The same state is drawn the same every time."""
    from validator.tools.play import start_state

    root, rs, state = _drawn(name)
    pic = picture.picture_for(picture.view_of(rs), {"orders": []})
    assert pic is not None
    board = picture.Board(pic["board"], rs)
    every = {"units": [{"power": "x", "type": "t", "location": p} for p in sorted(board.points)]}
    drawings = [root, parse(picture.graph_svg(pic, start_state(rs, str(DIP / f"{name}.rules")), {}, rs)),
                parse(picture.graph_svg(pic, every, {}, rs))]
    assert len(_unit_marks(drawings[2])) == len(board.points)
    for drawn in drawings:
        boxes, marks = _label_boxes(drawn), _unit_marks(drawn)
        assert sorted(boxes) == sorted(_centres(drawn)) and marks
        hit = [(area, at) for area, (x0, y0, x1, y1) in boxes.items() for at, x, y, r in marks
               if (min(max(x, x0), x1) - x) ** 2 + (min(max(y, y0), y1) - y) ** 2 < r * r]
        assert not hit, f"{len(hit)} labels on units, e.g. {hit[:4]}"
    assert picture.graph_svg(pic, every, {}, rs) == picture.graph_svg(pic, every, {}, rs)


def test_a_label_of_a_view_s_own_places_is_not_drawn_on_a_unit() -> None:
    """A view without a board labels its places too: the label keeps off the pieces drawn there."""
    state = {"pieces": [{"where": p} for p in VIEW["places"]]}
    root = parse(picture.graph_svg(VIEW, state, {}))
    labels = root.findall(f".//{SVG}g[@class='places']/{SVG}text")
    assert len(labels) == len(VIEW["places"])
    marks = _unit_marks(root)
    for t in labels:
        x, y, size = float(t.get("x") or 0), float(t.get("y") or 0), float(t.get("font-size") or 0)
        width = float(t.get("textLength") or picture.LABEL_WIDTH * size * len(t.text or ""))
        anchor = {"middle": width / 2, None: 0.0}[t.get("text-anchor")]
        box = (x - anchor, y - picture.LABEL_ABOVE * size, x - anchor + width, y + picture.LABEL_BELOW * size)
        assert not [m for m in marks if (min(max(m[1], box[0]), box[2]) - m[1]) ** 2
                    + (min(max(m[2], box[1]), box[3]) - m[2]) ** 2 < m[3] ** 2], t.text


def test_render_draws_an_exact_view_s_picture_from_the_exact_run(tmp_path: Path) -> None:
    """`ruleval render rulesets/his/his.rules --state ...` said there was no picture "for this result": the
    family's view.yaml draws the outcomes of an exact run (`mode: exact`), as the playground runs it, and
    `render` ran the move once with random dice. It draws the exact bars, each outcome's odds written."""
    import io

    from validator.tools.cli import main

    his = DIP.parent / "his"
    out, err = io.StringIO(), io.StringIO()
    code = main(["render", str(his / "his.rules"), "--state", str(his / "examples" / "one_interceptor.json"),
                 "-o", str(tmp_path / "h.svg")], stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    svg = (tmp_path / "h.svg").read_text(encoding="utf-8")
    assert "112/729" in svg and "5/12" in svg, svg[:2000]
