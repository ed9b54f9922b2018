"""Pictures: a ruleset's ``render`` query describes a hex drawing; this module turns it into SVG.

The interpreter knows no game, so the ruleset decides what to draw. Its ``query render(result,
options)`` (or ``render(result)``, or ``render``) returns a *drawing*::

    {layout: "odd-q",                          # hex layout of the labels (odd-q, even-q, odd-r, even-r)
     title?: text,
     hexes:  [{label, fill?, text?}],          # cells, in any order
     links:  [{a, b, stroke?, width?}],        # lines from centre to centre (e.g. roads)
     edges:  [{a, b, stroke?, width?}],        # the side shared by two adjacent hexes
     paths:  [{labels: [...], stroke?, width?, text?}],   # polylines through centres, arrow at the end
     tokens: [{label, text?, fill?, stroke?}], # counters on hexes
     marks:  [{label, stroke?, text?}],        # rings on hexes (e.g. where something can go)
     exits:  [{label, stroke?, text?}]}        # hexes off which a piece may leave the drawn hexes

``result`` is the result of the query that was run (none for ``ruleval render``) and ``options``
holds what the command line asked for (``{unit: ID}``). Labels are VASSAL-style ``CCRR``; labels
that cannot be read (e.g. a hex beyond the table) are skipped. Flat-top hexes for the ``-q``
layouts, pointy-top for ``-r``. An exit is drawn on the sides of its hex that no other drawn hex
shares (the edge of the drawn hexes there), with an arrow out across them and its text at the
arrow's end; an exit hex with no such side is drawn as a dashed outline inside it.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any, Callable, TextIO

from ..lib.builtins import CallError, hex_parse, offset_to_axial
from ..core.confine import write_atomic
from .report import svg_number, xml_attr, xml_text
from ..core.diagnostics import Diagnostic, DiagnosticError, Span, one_line

SIZE = 30.0  # hex radius in pixels
MARGIN = 20.0
SQRT3 = math.sqrt(3.0)
LAYOUTS = ("odd-q", "even-q", "odd-r", "even-r")


def drawing_of(ruleset: Any, state: Any, result: Any, options: dict[str, Any] | None = None,
               state_name: str = "<state>") -> dict[str, Any]:
    """Run the ruleset's ``render`` query; a diagnostic if it has none or returns something else."""
    unit = ruleset.program.query("render")
    if unit is None:
        raise DiagnosticError([Diagnostic(
            "E008", f"ruleset `{ruleset.path}` has no `render` query, so it cannot be drawn",
            ruleset.program.missing_query("render", ruleset.path)[0],
            help="add `query render(result, options)` returning a drawing, `{layout: ..., hexes: [...], ...}` "
                 "(its fields: validator/tools/render.py; docs/playground.md names the bundled rulesets that draw so)")])
    args = [result, dict(options or {})][: unit.arity or 0]
    drawing = ruleset.run(state, query="render", args=args, state_name=state_name)
    if not isinstance(drawing, dict) or drawing.get("layout", "odd-q") not in LAYOUTS:
        raise DiagnosticError([Diagnostic(
            "E001", "the `render` query must return a drawing: a record with `layout` and `hexes`",
            unit.span, help=f"layout is one of {', '.join(LAYOUTS)}")])
    return drawing


def write_svg(ruleset: Any, state: Any, result: Any, path: str | Path, options: dict[str, Any] | None = None,
              state_name: str = "<state>") -> str:
    """Draw ``result`` on ``state`` with the ruleset's ``render`` query into ``path``; returns the SVG text."""
    svg = to_svg(drawing_of(ruleset, state, result, options, state_name))
    write_atomic(path, svg)  # a picture that cannot be written whole leaves the old one (WriteFailed, U002)
    return svg


# ---------------------------------------------------------------- geometry


class _Geometry:
    def __init__(self, layout: str):
        self.layout = layout
        self.flat = layout.endswith("-q")

    def centre(self, label: Any) -> tuple[float, float] | None:
        try:
            q, r = offset_to_axial(*hex_parse(label), self.layout)
        except CallError:
            return None
        if self.flat:
            return SIZE * 1.5 * q, SIZE * SQRT3 * (r + q / 2)
        return SIZE * SQRT3 * (q + r / 2), SIZE * 1.5 * r

    def corners(self, x: float, y: float, scale: float = 1.0) -> list[tuple[float, float]]:
        start = 0.0 if self.flat else 30.0
        return [(x + SIZE * scale * math.cos(math.radians(start + 60 * i)),
                 y + SIZE * scale * math.sin(math.radians(start + 60 * i))) for i in range(6)]


def _items(drawing: dict[str, Any], key: str) -> list[dict[str, Any]]:
    value = drawing.get(key) or []
    return [x for x in value if isinstance(x, dict)] if isinstance(value, list) else []


def _line(a: tuple[float, float], b: tuple[float, float], stroke: Any, width: float) -> str:
    return (f'<line x1="{a[0]:.1f}" y1="{a[1]:.1f}" x2="{b[0]:.1f}" y2="{b[1]:.1f}" '
            f'stroke={_attr(stroke, "#000")} stroke-width="{width:g}" stroke-linecap="round"/>')


def _attr(value: Any, default: str) -> str:
    return xml_attr(str(value) if value not in (None, "") else default)


_num = svg_number


def _pts(points: list[tuple[float, float]]) -> str:
    return " ".join(f"{x:.1f},{y:.1f}" for x, y in points)


# ---------------------------------------------------------------- SVG


def to_svg(drawing: dict[str, Any]) -> str:
    """The SVG text of a drawing (see the module docstring)."""
    geo = _Geometry(str(drawing.get("layout") or "odd-q"))
    centres: dict[str, tuple[float, float]] = {}

    def at(label: Any) -> tuple[float, float] | None:
        key = str(label)
        if key not in centres:
            c = geo.centre(label)
            if c is None:
                return None
            centres[key] = c
        return centres[key]

    hexes = [(h, at(h.get("label"))) for h in _items(drawing, "hexes")]
    placed: list[tuple[Any, tuple[float, float]]] = [(h, c) for h, c in hexes if c is not None]
    every: list[tuple[float, float]] = [c for _, c in placed] or [(0.0, 0.0)]
    for key in ("tokens", "marks"):
        every += [c for c in (at(x.get("label")) for x in _items(drawing, key)) if c is not None]
    ways_out = [(e, c, _outer_sides(geo, c, [h for _, h in placed])) for e, c in
                ((e, at(e.get("label"))) for e in _items(drawing, "exits")) if c is not None]
    for _, hc, sides in ways_out:  # an arrow's end (and its text) may lie beyond the hexes
        tip = _out_tip(hc, sides)
        every += [hc] if tip is None else [hc, (tip[0] + 12, tip[1] + 12), (tip[0] - 12, tip[1] - 12)]
    title = drawing.get("title")
    top = 28.0 if title else 0.0
    min_x = min(x for x, _ in every) - SIZE - MARGIN
    min_y = min(y for _, y in every) - SIZE - MARGIN - top
    width = max(x for x, _ in every) + SIZE + MARGIN - min_x
    height = max(y for _, y in every) + SIZE + MARGIN - min_y

    out: list[str] = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="{min_x:.1f} {min_y:.1f} {width:.1f} {height:.1f}" font-family="sans-serif">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="8" refY="5" markerWidth="5" markerHeight="5" '
        'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="context-stroke"/></marker></defs>',
        f'<rect x="{min_x:.1f}" y="{min_y:.1f}" width="{width:.1f}" height="{height:.1f}" fill="white"/>',
    ]
    if title:
        out.append(f'<text class="title" x="{min_x + MARGIN:.1f}" y="{min_y + 22:.1f}" font-size="16" '
                   f'font-weight="bold">{xml_text(str(title))}</text>')
    out.append('<g class="hexes">')
    for h, (x, y) in placed:
        out.append(f'<polygon class="hex" data-label={_attr(h.get("label"), "")} points="{_pts(geo.corners(x, y))}" '
                   f'fill={_attr(h.get("fill"), "#ffffff")} stroke="#9a9a9a" stroke-width="1"/>')
        if h.get("text") not in (None, ""):
            out.append(f'<text x="{x:.1f}" y="{y - SIZE * 0.55:.1f}" font-size="8" fill="#555" '
                       f'text-anchor="middle">{xml_text(str(h["text"]))}</text>')
    out.append('</g><g class="links">')
    for ln in _items(drawing, "links"):
        a, b = at(ln.get("a")), at(ln.get("b"))
        if a and b:
            out.append(_line(a, b, ln.get("stroke"), _num(ln.get("width"), 3)))
    out.append('</g><g class="edges">')
    for e in _items(drawing, "edges"):
        side = _shared_side(geo, at(e.get("a")), at(e.get("b")))
        if side:
            out.append(_line(side[0], side[1], e.get("stroke"), _num(e.get("width"), 4)))
    out.append('</g><g class="exits">')
    for e, hc, sides in ways_out:
        stroke = e.get("stroke")
        out.append(f'<g class="exit" data-label={_attr(e.get("label"), "")}>')
        if not sides:
            out.append(f'<polygon points="{_pts(geo.corners(*hc, 0.86))}" fill="none" stroke={_attr(stroke, "#000")} '
                       'stroke-width="2" stroke-dasharray="5 3"/>')
        for a, b in sides:
            out.append(_line(a, b, stroke, 5))
        tip = _out_tip(hc, sides)
        if tip is not None:
            base = (hc[0] + (tip[0] - hc[0]) * 0.45, hc[1] + (tip[1] - hc[1]) * 0.45)
            out.append(f'<line class="way-out" x1="{base[0]:.1f}" y1="{base[1]:.1f}" x2="{tip[0]:.1f}" '
                       f'y2="{tip[1]:.1f}" stroke={_attr(stroke, "#000")} stroke-width="3" marker-end="url(#arrow)"/>')
        if e.get("text") not in (None, ""):
            tx, ty = tip if tip is not None else hc
            out.append(f'<text x="{tx:.1f}" y="{ty + 3:.1f}" font-size="9" font-weight="bold" text-anchor="middle" '
                       f'fill={_attr(stroke, "#000")}>{xml_text(str(e["text"]))}</text>')
        out.append('</g>')
    out.append('</g><g class="marks">')
    for m in _items(drawing, "marks"):
        c = at(m.get("label"))
        if c:
            out.append(f'<circle cx="{c[0]:.1f}" cy="{c[1]:.1f}" r="{SIZE * 0.62:.1f}" fill="none" '
                       f'stroke={_attr(m.get("stroke"), "#000")} stroke-width="3"/>')
            if m.get("text") not in (None, ""):
                out.append(f'<text x="{c[0]:.1f}" y="{c[1] + SIZE * 0.52:.1f}" font-size="9" font-weight="bold" '
                           f'text-anchor="middle" fill={_attr(m.get("stroke"), "#000")}>{xml_text(str(m["text"]))}</text>')
    out.append('</g><g class="tokens">')
    for t in _items(drawing, "tokens"):
        c = at(t.get("label"))
        if c:
            s = SIZE * 0.9
            out.append(f'<rect class="token" x="{c[0] - s / 2:.1f}" y="{c[1] - s / 3:.1f}" width="{s:.1f}" '
                       f'height="{s * 2 / 3:.1f}" rx="3" fill={_attr(t.get("fill"), "#ddd")} '
                       f'stroke={_attr(t.get("stroke"), "#000")} stroke-width="1.2"/>')
            out.append(f'<text x="{c[0]:.1f}" y="{c[1] + 4:.1f}" font-size="10" font-weight="bold" '
                       f'text-anchor="middle">{xml_text(str(t.get("text") or ""))}</text>')
    out.append('</g><g class="paths">')
    for p in _items(drawing, "paths"):
        labels: list[Any] = p["labels"] if isinstance(p.get("labels"), list) else []
        pts = [c for c in (at(label) for label in labels) if c is not None]
        if len(pts) >= 2:
            out.append(f'<polyline points="{_pts(pts)}" fill="none" stroke={_attr(p.get("stroke"), "#000")} '
                       f'stroke-width="{_num(p.get("width"), 3):g}" stroke-dasharray="7 4" '
                       'stroke-linejoin="round" marker-end="url(#arrow)"/>')
        if pts and p.get("text") not in (None, ""):
            out.append(f'<text x="{pts[0][0] + 8:.1f}" y="{pts[0][1] - 10:.1f}" font-size="9" '
                       f'fill={_attr(p.get("stroke"), "#000")}>{xml_text(str(p["text"]))}</text>')
    out.append("</g></svg>")
    return "\n".join(out) + "\n"


def _outer_sides(geo: _Geometry, c: tuple[float, float],
                 drawn: list[tuple[float, float]]) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """The sides of the hex at ``c`` that no other drawn hex shares: across each, the centre of the
    hex beyond (``c`` mirrored in the side's middle) is no drawn hex's."""
    corners = geo.corners(*c)
    out = []
    for i in range(6):
        a, b = corners[i], corners[(i + 1) % 6]
        beyond = (a[0] + b[0] - c[0], a[1] + b[1] - c[1])
        if not any(math.dist(beyond, d) < 1.0 for d in drawn):
            out.append((a, b))
    return out


def _out_tip(c: tuple[float, float],
             sides: list[tuple[tuple[float, float], tuple[float, float]]]) -> tuple[float, float] | None:
    """Where an exit's arrow ends: beyond its hex, out through the middle of its outer sides."""
    if not sides:
        return None
    dx = sum((a[0] + b[0]) / 2 - c[0] for a, b in sides)
    dy = sum((a[1] + b[1]) / 2 - c[1] for a, b in sides)
    size = math.hypot(dx, dy)
    if size < 1e-6:  # sides all round (a lone hex): straight up
        dx, dy, size = 0.0, -1.0, 1.0
    return c[0] + dx / size * SIZE * 1.45, c[1] + dy / size * SIZE * 1.45


def _shared_side(geo: _Geometry, a: tuple[float, float] | None,
                 b: tuple[float, float] | None) -> tuple[tuple[float, float], tuple[float, float]] | None:
    if not a or not b:
        return None
    near = [p for p in geo.corners(*a) if any(math.dist(p, q) < 1.0 for q in geo.corners(*b))]
    return (near[0], near[1]) if len(near) == 2 else None


# ---------------------------------------------------------------- `ruleval render`


def picture_of(rs: Any, state: Any, options: dict[str, Any], state_name: str) -> str:
    """The SVG of a state: the ruleset's own ``render`` query where it has one, else the picture its
    family's ``view.yaml`` gives the result of ``main`` on the state (what the playground draws)."""
    from . import picture

    if rs.program.query("render") is not None:
        return to_svg(drawing_of(rs, state, None, options, state_name))
    view = picture.view_of(rs)
    # (a view whose mode is `exact` draws the distribution of outcomes, as the playground runs it first)
    exact = isinstance(view, dict) and view.get("mode") == "exact"
    result = rs.run(state, state_name=state_name, exact=exact)
    pic = picture.picture_for(view, result)
    if pic is None:
        raise DiagnosticError([Diagnostic(
            "E008", f"ruleset `{rs.path}` has no `render` query and no picture in a `view.yaml` beside it"
            + (" for this result" if view is not None else ""), rs.program.missing_query("render", rs.path)[0],
            help="add `query render(result, options)` (see validator/tools/render.py) or a view.yaml (docs/playground.md)")])
    svg = picture.draw(pic, rs, state, result, options.get("unit"))
    if svg is None:
        raise DiagnosticError([Diagnostic("E008", f"the view's picture kind `{pic.get('kind')}` is not one ruleval draws",
                                          Span(rs.path), help="kinds: graph, drawing, bars (docs/playground.md)")])
    return svg if svg.startswith("<?xml") else '<?xml version="1.0" encoding="UTF-8"?>\n' + svg


def png_of(svg: str) -> bytes:
    """The PNG of an SVG text, by CairoSVG (the `png` extra): a usage error where it is not installed."""
    from ..core.exits import UsageError

    try:
        import cairosvg  # type: ignore[import-untyped]
    except (ImportError, OSError) as exc:  # OSError: the package is there, the cairo library is not
        raise UsageError(f"drawing a PNG needs CairoSVG and the cairo library (pip install 'ruleval[png]'): {exc}") from None
    return bytes(cairosvg.svg2png(bytestring=svg.encode("utf-8"), unsafe=False))


def cmd_render(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..core.exits import EXIT_FINDINGS, EXIT_OK, UsageError, exit_code
    from .common import load_for_run, not_overwriting, print_state_diags, require_files
    from ..api import RunError
    from ..engine.state import read_state_text, state_file_text

    require_files(args.ruleset, args.state)
    not_overwriting(args.output, "-o", [("ruleset", args.ruleset), ("state", args.state)])
    kind = Path(args.output).suffix.lower()
    if kind not in (".svg", ".png"):
        raise UsageError(f"`{args.output}`: the picture is written as SVG (.svg) or PNG (.png), by the file's name")
    rs = load_for_run(args.ruleset, err)
    if rs is None:
        return EXIT_FINDINGS
    shown, text = args.state or f"`{args.ruleset}`'s start_state", None  # (the state's text, for its lines)
    try:
        if args.state is None:
            from .play import start_state

            state = start_state(rs, args.ruleset, "a state file with --state")
        else:
            text = state_file_text(Path(args.state))
            state = read_state_text(text, shown)
        svg = picture_of(rs, state, {"unit": args.unit} if args.unit else {}, shown)
        write_atomic(args.output, png_of(svg) if kind == ".png" else svg)
    except (RunError, DiagnosticError) as exc:
        print_state_diags(exc.diagnostics, "text", out, err, rs.sources, shown, text)
        return exit_code(exc.diagnostics)
    err.write(f"wrote {one_line(args.output)}\n")
    return EXIT_OK


def register(sub: Any, commands: dict[str, Callable[[argparse.Namespace, TextIO, TextIO], int]]) -> None:
    p = sub.add_parser("render", help="draw a state (and its moves) as SVG or PNG: the ruleset's `render` query, "
                       "else the picture of its family's view.yaml (what the playground draws)")
    p.add_argument("ruleset")
    p.add_argument("--state", help="state JSON file (default: the ruleset's `query start_state`, as `play` starts from)")
    p.add_argument("--unit", help="also show where this unit can go")
    p.add_argument("-o", "--output", required=True, help="file to write: NAME.svg or NAME.png")
    commands["render"] = cmd_render
