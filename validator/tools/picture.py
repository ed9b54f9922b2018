"""Pictures of a run's result for the playground (``ruleval serve``), drawn from a *view* that a
ruleset family ships as data (``view.yaml`` beside its rulesets). The drawer knows no game: a view
says where each location is drawn and which fields of the state and result become what.

A view is ``{mode?: plain|exact, pictures: [PICTURE, ...]}``; the first picture whose ``when`` field
is in the result is drawn. Three kinds:

``graph``: locations at points, with

- ``board``: where the points come from, the ruleset's own data (``data``: the name it is bound to
  by ``import ... as NAME``): ``areas`` (a pointer to a map of area id to its fields; each area is
  drawn as a disc filled by the colour ``kinds[its kind field]``, labelled by its id (beside the
  disc, on the first side round it where no token covers the label: ``place_label``), with a dot
  where its ``flag`` field is true and a ring in its owner's colour, the owner read from the state's
  ``owners`` map of area to group), ``parts`` (a field listing an area's sub-places, ``AREA/PART``; one without a point is set off
  its area's point toward the places its own links reach),
  ``links`` (pointers to maps of place to the places next to it: drawn as thin lines), ``places``
  and ``size`` (pointers to ``{place: [x, y]}`` and ``[w, h]``), ``outlines`` (a pointer to
  ``{area: [ring, ...]}``, each ring its corners as an SVG polygon writes them, ``x,y x,y ...``:
  the area's shape, filled by its kind's colour and tinted by its owner's, under its disc; links
  between two outlined areas are left to their borders). Where the data gives no points, the areas are laid out from their links
  (``layout``): never another board's points, nor their outlines;
- or ``places: {NAME: [x, y]}`` and ``size: [w, h]`` in the view itself; ``scale``; ``fallback``: a
  pattern whose group ``place`` names the place of a location not listed;

- ``tokens``: ``{source: state|result, list: POINTER, at: FIELD, group?: FIELD, text?: FIELD, letters?: N}``,
  a disc per item at its location, coloured by ``groups: {VALUE: colour}``;
- ``arrows``: ``{list, read: FIELD, pattern: RE2 with groups from and to, status?: FIELD, note?: FIELD,
  line?: solid|dotted}``, an arrow per item whose field the pattern reads, styled by
  ``styles: {STATUS: {stroke?, stop?}}`` (``stop``: the arrow ends at that fraction, with a bar);
- ``markers``: ``{list, at: FIELD | read: FIELD + pattern with group at, text?, stroke?}``, a ring.

``drawing``: the ruleset's own ``render`` query (``validator.tools.render``), with the page's focus
as ``options[focus]`` (else the state's value at ``focus_default``).

``bars``: a horizontal bar per item of ``list`` (in the result), as long as its ``value``, labelled
with ``text`` and the values at the ``label`` pointers (or ``{at: POINTER, name: TEXT}``).

Every string from a view, a state or a result is escaped on its way into the SVG; patterns run on
RE2 (linear time), and the work is bounded by the sizes below.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ..core.confine import Refused, read_bytes
from .report import svg_number, xml_attr, xml_text

PALETTE = ("#c0392b", "#2c3e91", "#1e8449", "#b7950b", "#7d3c98", "#d35400", "#17808a", "#5d6d7e",
           "#a04000", "#1f618d", "#6c3483", "#196f3d")  # groups the view gives no colour

VIEW_FILE = "view.yaml"
MAX_VIEW_BYTES = 1_000_000
MAX_ITEMS = 2_000  # items of one list drawn; the rest are left out
MAX_BARS = 60
CUT_MARGIN = 240.0  # around what a graph picture draws, in the view's own units (before its scale)
DEFAULT_STYLE = {"stroke": "#444"}


def read_view(folder: Path, root: Path | None) -> dict[str, Any] | None:
    """The view of the rulesets in ``folder`` (its ``view.yaml``, read confined to ``root``), or None."""
    import yaml

    from ..core import safeyaml

    path = folder / VIEW_FILE
    if not path.is_file():
        return None
    try:
        value = safeyaml.load(read_bytes(path, MAX_VIEW_BYTES, root).decode("utf-8"))
    except (Refused, UnicodeDecodeError, yaml.YAMLError, ValueError, RecursionError):  # a bad view: no picture
        return None
    return value if isinstance(value, dict) else None


def view_of(ruleset: Any) -> dict[str, Any] | None:
    """The view beside the ruleset, or beside the first ruleset it extends that has one."""
    try:
        chain = list(ruleset.program.entry.chain) or [ruleset.path]
    except AttributeError:
        return None
    for file in chain:
        folder = Path(file).parent
        if (folder / VIEW_FILE).is_file():
            return read_view(folder, folder)
    return None


def picture_for(view: dict[str, Any] | None, result: Any) -> dict[str, Any] | None:
    """The first picture of the view whose ``when`` field is in the result (or that has no ``when``)."""
    if not view or not isinstance(view.get("pictures"), list):
        return None
    for pic in view["pictures"]:
        if not isinstance(pic, dict):
            continue
        when = pic.get("when")
        if when is None or (isinstance(result, dict) and when in result):
            return pic
    return None


def draw(pic: dict[str, Any], ruleset: Any, state: Any, result: Any, focus: str | None = None) -> str | None:
    """The SVG text of one picture, or None when the picture's kind is unknown."""
    kind = pic.get("kind")
    if kind == "graph":
        return graph_svg(pic, state, result, ruleset)
    if kind == "bars":
        return bars_svg(pic, result)
    if kind == "drawing":
        from .render import drawing_of, to_svg

        key = str(pic.get("focus") or "focus")
        chosen = focus or _at(state, pic.get("focus_default"))
        options = {key: chosen} if isinstance(chosen, (str, int)) and not isinstance(chosen, bool) else {}
        svg = to_svg(drawing_of(ruleset, state, result, options))
        return svg[svg.index("?>") + 2:].lstrip() if svg.startswith("<?xml") else svg  # for a page, not a file
    return None


# ---------------------------------------------------------------- reading values


def _at(value: Any, pointer: Any) -> Any:
    """The value at a JSON pointer, or None."""
    if not isinstance(pointer, str):
        return None
    if pointer in ("", "/"):
        return value
    for part in pointer.lstrip("/").split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict):
            value = value.get(part)
        elif isinstance(value, list) and part.isdigit() and len(part) < 12 and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


def _items(source: Any, spec: dict[str, Any]) -> list[dict[str, Any]]:
    found = _at(source, spec.get("list"))
    return [x for x in found[:MAX_ITEMS] if isinstance(x, dict)] if isinstance(found, list) else []


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _search(pattern: Any, value: Any) -> dict[str, str | None] | None:
    """The pattern's groups in a value's text (a lone surrogate, which no encoding writes, as U+FFFD)."""
    return pattern.search(_text(value).encode("utf-8", "replace").decode("utf-8"))


def _pattern(spec: dict[str, Any]) -> Any:
    from ..lib.patterns import compiled

    raw = spec.get("pattern")
    if not isinstance(raw, str):
        return None
    try:
        return compiled(raw, ignore_case=True)
    except Exception:  # a pattern RE2 refuses: that rule draws nothing
        return None


_num = svg_number


# ---------------------------------------------------------------- graph


class _Places:
    def __init__(self, pic: dict[str, Any], points: dict[str, Any] | None = None):
        places = points if points is not None else pic.get("places") if isinstance(pic.get("places"), dict) else {}
        self.scale = _num(pic.get("scale"), 1.0) if points is None else 1.0
        self.points: dict[str, tuple[float, float]] = {}
        for name, xy in (places or {}).items():
            if isinstance(xy, list) and len(xy) == 2 and all(isinstance(v, (int, float)) for v in xy):
                self.points[str(name).lower()] = (_num(xy[0], 0.0) * self.scale, _num(xy[1], 0.0) * self.scale)
        self.fallback = _pattern({"pattern": pic.get("fallback")}) if pic.get("fallback") else None

    def at(self, name: Any) -> tuple[float, float] | None:
        key = _text(name).lower()
        if key in self.points:
            return self.points[key]
        if self.fallback is not None:
            groups = _search(self.fallback, key)
            if groups and groups.get("place"):
                return self.points.get(str(groups["place"]).lower())
        return None


def _colour(pic: dict[str, Any], group: Any, order: list[Any] | None = None) -> str:
    """The view's colour of a group; else one of PALETTE, by the group's place in ``order`` (the
    board's list of groups), else by its name."""
    groups = pic.get("groups") if isinstance(pic.get("groups"), dict) else {}
    value = (groups or {}).get(_text(group))
    if isinstance(value, str):
        return value
    if group is None or group == "":
        return "#666"
    names = [_text(g) for g in order or []]
    index = names.index(_text(group)) if _text(group) in names else sum(map(ord, _text(group)))
    return PALETTE[index % len(PALETTE)]


class Board:
    """What a view's ``board`` reads from the ruleset's data: the areas, their links and points."""

    def __init__(self, spec: dict[str, Any], ruleset: Any):
        data = _data_of(ruleset, spec.get("data"))
        areas = _at(data, spec.get("areas"))
        self.areas: dict[str, dict[str, Any]] = {str(k).lower(): (v if isinstance(v, dict) else {})
                                                 for k, v in list(areas.items())[:MAX_ITEMS]} if isinstance(areas, dict) else {}
        self.links: list[tuple[str, str]] = []
        links = spec.get("links")
        for ptr in links if isinstance(links, list) else []:
            found = _at(data, ptr)
            if not isinstance(found, dict):
                continue
            for a, bs in found.items():
                for b in bs if isinstance(bs, list) else []:
                    self.links.append((_text(a).lower(), _text(b).lower()))
        self.links = self.links[:MAX_ITEMS * 8]
        order = _at(data, spec.get("groups"))
        self.groups = order if isinstance(order, list) else []
        given = _at(data, spec.get("places"))
        size = _at(data, spec.get("size"))
        self.size = size if isinstance(size, list) and len(size) == 2 and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in size) else None
        self.laid_out = not (isinstance(given, dict) and given)
        self.points: dict[str, Any] = dict(given) if isinstance(given, dict) and given else self._laid_out()
        self._place_parts(_text(spec.get("parts")))
        shapes = _at(data, spec.get("outlines")) if not self.laid_out else None
        self.outlines: dict[str, list[list[tuple[float, float]]]] = {}
        for area, rings in list(shapes.items())[:MAX_ITEMS] if isinstance(shapes, dict) else []:
            drawn = [_corners(ring) for ring in (rings if isinstance(rings, list) else [])[:64]]
            if any(len(r) >= 3 for r in drawn):
                self.outlines[_text(area).lower()] = [r for r in drawn if len(r) >= 3]

    def area_of(self, place: str) -> str:
        return place if place in self.areas else place.split("/")[0]

    def _laid_out(self) -> dict[str, Any]:
        from .layout import layout

        key = (tuple(sorted(self.areas)), tuple(sorted(set(self.links))))
        points = _LAID_OUT.get(key)
        if points is None:
            edges: dict[str, list[str]] = {}
            for a, b in self.links:
                edges.setdefault(self.area_of(a), []).append(self.area_of(b))
            points = {k: [x, y] for k, (x, y) in layout(list(self.areas), edges).items()}
            if len(_LAID_OUT) > 32:
                _LAID_OUT.clear()
            _LAID_OUT[key] = points
        return dict(points)

    def _place_parts(self, field: str) -> None:
        """A point for each sub-place (``AREA/PART``) the data gives none: off its area's point toward
        the places its own links reach (those no other part of the area reaches, where it has such),
        so that a piece there is drawn on that side of its area, not on the area's own point; a part
        that links nowhere is set round its area with the others."""
        if not field:
            return
        near: dict[str, list[str]] = {}
        for a, b in self.links:
            if "/" in a:
                near.setdefault(a, []).append(self.area_of(b))
        areas = [p for a, p in self.points.items() if a in self.areas and _is_point(p)]
        reach = 0.45 * _spacing([(float(p[0]), float(p[1])) for p in areas])
        for area, fields in sorted(self.areas.items()):
            parts = fields.get(field)
            centre: Any = self.points.get(area)
            if not isinstance(parts, list) or not _is_point(centre):
                continue
            names = [f"{area}/{_text(part).lower()}" for part in parts[:16]]
            for i, name in enumerate(names):
                if name in self.points:
                    continue
                own = sorted(set(near.get(name, [])))
                others = {b for other in names if other != name for b in near.get(other, [])}
                toward = [b for b in own if b not in others] or own
                dx = dy = 0.0
                for b in toward:
                    q: Any = self.points.get(b)
                    if _is_point(q) and b != area:
                        d = math.dist(q, centre) or 1.0
                        dx, dy = dx + (q[0] - centre[0]) / d, dy + (q[1] - centre[1]) / d
                size = math.hypot(dx, dy)
                if size < 1e-6:  # nowhere to lean: round the area, in the parts' order
                    angle = 2 * math.pi * i / len(names) - math.pi / 2
                    dx, dy, size = math.cos(angle), math.sin(angle), 1.0
                self.points[name] = [centre[0] + reach * dx / size, centre[1] + reach * dy / size]


def _is_point(value: Any) -> bool:
    return (isinstance(value, (list, tuple)) and len(value) == 2
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value))


_LAID_OUT: dict[Any, dict[str, list[float]]] = {}  # per process, by the areas and links laid out


def _corners(ring: Any) -> list[tuple[float, float]]:
    """A ring's corners from its text as an SVG polygon writes them (`x,y x,y ...`); a corner that is
    not two numbers ends the ring there (the map's schema refuses such a text first)."""
    out: list[tuple[float, float]] = []
    for corner in ring.split()[:MAX_ITEMS] if isinstance(ring, str) else []:
        try:
            x, y = (float(v) for v in corner.split(","))
        except ValueError:
            break
        if not (math.isfinite(x) and math.isfinite(y)):
            break
        out.append((x, y))
    return out


def _outline_path(rings: list[list[tuple[float, float]]]) -> str:
    def shown(v: float) -> str:  # whole units as the map writes them; a fraction to 0.01
        return str(int(v)) if v.is_integer() else f"{v:.2f}".rstrip("0")

    return " ".join("M " + " L ".join(f"{shown(x)} {shown(y)}" for x, y in ring) + " Z" for ring in rings)


def _data_of(ruleset: Any, name: Any) -> Any:
    """The value of the ruleset's data bound to ``name`` (``import ... as NAME``), or None."""
    try:
        binding = ruleset.program.entry.data.get(_text(name))
    except AttributeError:
        return None
    return getattr(binding, "value", None)


def _spacing(points: list[tuple[float, float]]) -> float:
    """A typical distance between a point and its nearest neighbour: what sizes the drawing's marks."""
    if len(points) < 2:
        return 60.0
    sample = points[:400]
    nearest = sorted(min(math.dist(p, q) for q in sample if q is not p) for p in sample)
    return max(nearest[len(nearest) // 2], 1.0)


Box = tuple[float, float, float, float]  # left, top, right, bottom
Mark = tuple[float, float, float]  # a disc: x, y, radius

LABEL_WIDTH = 0.72  # a label's width per letter, in its font size: the SVG stretches it to this (textLength)
LABEL_ABOVE, LABEL_BELOW = 0.78, 0.22  # of the font size, above and below the baseline: a box round any letter


def label_width(size: float, text: str) -> float:
    """A label's width: ``LABEL_WIDTH`` per letter of the font size (the SVG stretches it so: ``textLength``)."""
    return LABEL_WIDTH * size * max(len(text), 1)


def label_box(x: float, baseline: float, size: float, text: str) -> Box:
    """The box a label drawn centred at ``x`` on ``baseline`` fills: as wide as ``LABEL_WIDTH`` per
    letter (its ``textLength``), as tall as any letter of the font size."""
    half = label_width(size, text) / 2
    return x - half, baseline - LABEL_ABOVE * size, x + half, baseline + LABEL_BELOW * size


def _hits(box: Box, mark: Mark) -> bool:
    """Whether a box and a disc overlap (the box's nearest point to the disc's centre lies inside it)."""
    x, y, r = mark
    nx, ny = min(max(x, box[0]), box[2]), min(max(y, box[1]), box[3])
    return (nx - x) ** 2 + (ny - y) ** 2 < r * r


def _overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def place_label(x: float, y: float, clear: float, size: float, text: str, marks: list[Mark],
                taken: list[Box]) -> tuple[float, float]:
    """Where a label of the point ``(x, y)`` goes (its centre and baseline): the first spot, going
    round the point (above, below, right, left, then the corners) and then further out, whose box
    meets no mark, and where one is free, none of the boxes ``taken`` (labels placed before, discs);
    ``clear``: the distance from the point that the label keeps at least (its disc's radius and a gap)."""
    w, h = label_width(size, text), (LABEL_ABOVE + LABEL_BELOW) * size
    near = [m for m in marks if abs(m[0] - x) < w + h + 8 * (clear + size) + m[2]
            and abs(m[1] - y) < w + h + 8 * (clear + size) + m[2]]

    def spot(dx: int, dy: int, far: float) -> tuple[float, float]:
        cx = x + dx * (far + w / 2)  # the box's centre, ``far`` off the point on each side it leans to
        cy = y + dy * (far + h / 2)
        return cx, cy + h / 2 - LABEL_BELOW * size

    steps = [(0, -1), (0, 1), (1, 0), (-1, 0), (1, -1), (-1, -1), (1, 1), (-1, 1)]
    first: tuple[float, float] | None = None
    for ring in range(12):
        far = clear + ring * 0.5 * (size + clear)
        for dx, dy in steps:
            cx, base = spot(dx, dy, far)
            box = label_box(cx, base, size, text)
            if any(_hits(box, m) for m in near):
                continue
            if not any(_overlap(box, t) for t in taken):
                return cx, base
            if first is None:
                first = (cx, base)
        if first is not None:
            return first
    return spot(0, -1, clear)  # (marks all round, far out: above, as before)


def _label_svg(x: float, base: float, size: float, text: str, extra: str) -> str:
    width = label_width(size, text)
    return (f'<text class="label" x="{x:.1f}" y="{base:.1f}" font-size="{size:.1f}" textLength="{width:.1f}" '
            f'lengthAdjust="spacingAndGlyphs" text-anchor="middle"{extra}>{xml_text(text)}</text>')


def _board_svg(pic: dict[str, Any], board: Board, places: _Places, state: Any, unit: float,
               marks: list[Mark]) -> list[str]:
    kinds = pic["board"].get("kinds") if isinstance(pic["board"].get("kinds"), dict) else {}
    owners = _at(state, pic["board"].get("owners"))
    owners = owners if isinstance(owners, dict) else {}
    flag = _text(pic["board"].get("flag"))
    kind_field = _text(pic["board"].get("kind")) or "kind"
    name_field = _text(pic["board"].get("name"))
    r = unit * 0.3
    out = ['<g class="outlines">']
    for area, rings in sorted(board.outlines.items()):
        fields = board.areas.get(area, {})
        kind = _text(fields.get(kind_field))
        fill = kinds.get(kind) if isinstance(kinds.get(kind), str) else "#e8e2d0"
        owner = owners.get(area)
        d = _outline_path(rings)
        out.append(f'<path class="outline" data-area={xml_attr(area)} d="{d}" fill={xml_attr(_text(fill))} '
                   f'fill-rule="evenodd" stroke="#6f6859" stroke-width="{unit * 0.025:.2f}" stroke-linejoin="round"/>')
        if owner is not None:
            out.append(f'<path class="owned" d="{d}" fill={xml_attr(_colour(pic, owner, board.groups))} '
                       f'fill-opacity="0.3" fill-rule="evenodd" stroke="none"/>')
    out.append('</g><g class="links">')
    drawn: set[tuple[str, str]] = set()
    for a, b in board.links:
        pa, pb = board.area_of(a), board.area_of(b)
        key = (min(pa, pb), max(pa, pb))
        if pa == pb or key in drawn or (pa in board.outlines and pb in board.outlines):
            continue
        drawn.add(key)
        p, q = places.at(pa), places.at(pb)
        if p is not None and q is not None:
            out.append(f'<line x1="{p[0]:.1f}" y1="{p[1]:.1f}" x2="{q[0]:.1f}" y2="{q[1]:.1f}" stroke="#b9b1a0" '
                       f'stroke-width="{unit * 0.03:.2f}"/>')
    out.append('</g><g class="areas">')
    discs = [(area, places.at(area)) for area in sorted(board.areas)]
    taken: list[Box] = [(p[0] - r, p[1] - r, p[0] + r, p[1] + r) for _, p in discs if p is not None]
    labels: list[str] = []  # drawn over every disc, under the tokens
    for area, fields in sorted(board.areas.items()):
        p = places.at(area)
        if p is None:
            continue
        kind = _text(fields.get(kind_field))
        fill = kinds.get(kind) if isinstance(kinds.get(kind), str) else "#e8e2d0"
        owner = owners.get(area)
        ring = _colour(pic, owner, board.groups) if owner is not None else "#8d8574"
        title = f"{area}: {_text(fields.get(name_field))}" if name_field and fields.get(name_field) else area
        size = unit * 0.24
        lx, base = place_label(p[0], p[1], r + unit * 0.06, size, area.upper(), marks, taken)
        taken.append(label_box(lx, base, size, area.upper()))
        out.append(f'<g class="area" data-area={xml_attr(area)} data-kind={xml_attr(kind)}'
                   + (f' data-owner={xml_attr(_text(owner))}' if owner is not None else "") + '>'
                   f'<title>{xml_text(title)}</title>'
                   f'<circle cx="{p[0]:.1f}" cy="{p[1]:.1f}" r="{r:.1f}" fill={xml_attr(_text(fill))} '
                   f'stroke={xml_attr(ring)} stroke-width="{unit * (0.09 if owner is not None else 0.03):.2f}"/>')
        labels.append(_label_svg(lx, base, size, area.upper(), f' data-area={xml_attr(area)} font-weight="bold" '
                                 'fill="#3d3a33"'))
        if flag and fields.get(flag) is True:
            out.append(f'<circle class="flag" cx="{p[0] + r * 0.7:.1f}" cy="{p[1] + r * 0.7:.1f}" r="{unit * 0.08:.1f}" '
                       f'fill={xml_attr(ring if owner is not None else "#fff")} stroke="#222" '
                       f'stroke-width="{unit * 0.025:.2f}"/>')
        out.append("</g>")
    out.append('</g><g class="labels">')
    out += labels
    out.append("</g>")
    return out


def graph_svg(pic: dict[str, Any], state: Any, result: Any, ruleset: Any = None) -> str:
    board = Board(pic["board"], ruleset) if isinstance(pic.get("board"), dict) else None
    places = _Places(pic, board.points if board is not None else None)
    size = pic.get("size") if isinstance(pic.get("size"), list) and len(pic["size"]) == 2 else None
    if board is not None:
        size = board.size
    if size and all(isinstance(v, (int, float)) for v in size):
        width, height = _num(size[0], 0.0) * places.scale, _num(size[1], 0.0) * places.scale
    else:
        xs = [x for x, _ in places.points.values()] or [0.0]
        ys = [y for _, y in places.points.values()] or [0.0]
        width, height = max(xs) + 40, max(ys) + 40
    styles: dict[str, Any] = pic["styles"] if isinstance(pic.get("styles"), dict) else {}
    used: list[tuple[float, float]] = []  # the points drawn on: the picture is cut to them
    out: list[str] = []
    unit = 30.0
    if board is not None:
        unit = _spacing([p for a, p in places.points.items() if a in board.areas] or list(places.points.values()))
        if board.laid_out or size is None:
            xs = [x for x, _ in places.points.values()] or [0.0]
            ys = [y for _, y in places.points.values()] or [0.0]
            width, height = max(xs) + unit, max(ys) + unit
    k = unit / 36.0  # marks grow with the board's spacing, so that they read at any size
    tokens: list[str] = []
    marks: list[Mark] = []  # the tokens' discs (their stroke included): no label is put on one
    for spec in _specs(pic, "tokens"):
        source = state if spec.get("source") == "state" else result
        for item in _items(source, spec):
            p = places.at(item.get(_text(spec.get("at"))))
            if p is None:
                continue
            used.append(p)
            marks.append((p[0], p[1], 9.75 * k))
            text = _text(item.get(_text(spec.get("text")))) if spec.get("text") else ""
            letters = int(_num(spec.get("letters"), 0))
            if letters > 0:
                text = text[:letters].upper()
            fill = _colour(pic, item.get(_text(spec.get("group"))), board.groups if board is not None else None)
            tokens.append(f'<g class="token" data-at={xml_attr(_text(item.get(_text(spec.get("at")))))}>'
                          f'<circle cx="{p[0]:.1f}" cy="{p[1]:.1f}" r="{9 * k:.1f}" fill={xml_attr(fill)} '
                          f'stroke="#fff" stroke-width="{1.5 * k:.2f}"/><text x="{p[0]:.1f}" y="{p[1] + 3.5 * k:.1f}" '
                          f'font-size="{10 * k:.1f}" font-weight="bold" text-anchor="middle" fill="#fff">'
                          f'{xml_text(text)}</text></g>')
    if board is not None:
        out += _board_svg(pic, board, places, state, unit, marks)
    else:
        out.append('<g class="places">')
        taken: list[Box] = []
        for name, (x, y) in sorted(places.points.items()):
            lx, base = place_label(x, y, 4.0, 8.0, name, marks, taken)
            taken.append(label_box(lx, base, 8.0, name))
            out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2" fill="#bbb"/>'
                       + _label_svg(lx, base, 8.0, name, ' fill="#999"'))
        out.append('</g>')
    out.append('<g class="tokens">')
    out += tokens
    out.append('</g><g class="arrows">')
    for spec in _specs(pic, "arrows"):
        pattern = _pattern(spec)
        if pattern is None:
            continue
        for item in _items(result, spec):
            groups = _search(pattern, item.get(_text(spec.get("read"))))
            if not groups:
                continue
            a, b = places.at(groups.get("from")), places.at(groups.get("to"))
            if a is None or b is None:
                continue
            used += [a, b]
            status = _text(item.get(_text(spec.get("status")))) if spec.get("status") else ""
            style: dict[str, Any] = styles[status] if isinstance(styles.get(status), dict) else DEFAULT_STYLE
            note = _text(item.get(_text(spec.get("note")))) if spec.get("note") else ""
            out.append(_arrow(a, b, style, status, spec.get("line") == "dotted",
                              _text(item.get(_text(spec.get("read")))), note, k))
    out.append('</g><g class="markers">')
    for spec in _specs(pic, "markers"):
        pattern = _pattern(spec) if spec.get("pattern") else None
        listed = _at(result, spec.get("list"))
        for item in listed[:MAX_ITEMS] if isinstance(listed, list) else []:
            if pattern is not None and isinstance(item, dict):
                groups = _search(pattern, item.get(_text(spec.get("read"))))
                where = groups.get("at") if groups else None
            elif isinstance(item, dict):
                where = item.get(_text(spec.get("at")))
            elif spec.get("at") is None and isinstance(item, str):  # a list of places
                where = item
            else:
                continue
            p = places.at(where)
            if p is None:
                continue
            used.append(p)
            stroke = _text(spec.get("stroke")) or "#000"
            out.append(f'<g class="marker" data-at={xml_attr(_text(where))} data-text={xml_attr(_text(spec.get("text")))}>'
                       f'<circle cx="{p[0]:.1f}" cy="{p[1]:.1f}" r="{14 * k:.1f}" '
                       f'fill="none" stroke={xml_attr(stroke)} stroke-width="{3 * k:.2f}"/>'
                       f'<text x="{p[0]:.1f}" y="{p[1] + 24 * k:.1f}" font-size="{10 * k:.1f}" font-weight="bold" '
                       f'text-anchor="middle" fill={xml_attr(stroke)}>{xml_text(_text(spec.get("text")))}</text></g>')
    out.append("</g></svg>")
    x0, y0, w, h = 0.0, 0.0, width, height
    if used and board is None:  # a board is drawn whole
        margin = CUT_MARGIN * places.scale
        x0 = max(0.0, min(x for x, _ in used) - margin)
        y0 = max(0.0, min(y for _, y in used) - margin)
        w = min(width, max(x for x, _ in used) + margin) - x0
        h = min(height, max(y for _, y in used) + margin) - y0
    zoom = max(1.0, min(900.0 / max(w, 1.0), 600.0 / max(h, 1.0)))
    if board is not None:  # the whole board, at the size the page shows
        zoom = min(1100.0 / max(w, 1.0), 820.0 / max(h, 1.0))
    head = [f'<svg xmlns="http://www.w3.org/2000/svg" class="picture graph" width="{w * zoom:.0f}" '
            f'height="{h * zoom:.0f}" viewBox="{x0:.1f} {y0:.1f} {w:.1f} {h:.1f}" font-family="sans-serif">',
            '<defs><marker id="head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" '
            'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="context-stroke"/></marker></defs>',
            f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{w:.1f}" height="{h:.1f}" fill="#f7f5ee"/>']
    if pic.get("title"):
        size_px = 14.0 / zoom  # 14 px on the page, whatever the board's units
        head.append(f'<text class="title" x="{x0 + size_px * 0.5:.1f}" y="{y0 + size_px * 1.2:.1f}" font-size="{size_px:.1f}" '
                    f'font-weight="bold">{xml_text(_text(pic["title"]))}</text>')
    return "\n".join(head + out) + "\n"


def _specs(pic: dict[str, Any], key: str) -> list[dict[str, Any]]:
    value = pic.get(key)
    return [x for x in value if isinstance(x, dict)] if isinstance(value, list) else []


def _arrow(a: tuple[float, float], b: tuple[float, float], style: dict[str, Any], status: str, dotted: bool,
           what: str, note: str, k: float = 1.0) -> str:
    stroke = _text(style.get("stroke")) or "#444"
    stop = min(max(_num(style.get("stop"), 1.0), 0.1), 1.0)
    length = math.dist(a, b) or 1.0
    ux, uy = (b[0] - a[0]) / length, (b[1] - a[1]) / length
    start = (a[0] + ux * 10 * k, a[1] + uy * 10 * k)  # from the edge of the token, not its centre
    full = max(length - 20 * k, 1.0)
    end = (start[0] + ux * full * stop, start[1] + uy * full * stop)
    dash = f' stroke-dasharray="{3 * k:.1f} {4 * k:.1f}"' if dotted else ""
    parts = [f'<g class="arrow" data-status={xml_attr(status)} data-stopped="{"true" if stop < 1 else "false"}">',
             f'<title>{xml_text(what + (": " + note if note else ""))}</title>',
             f'<line x1="{start[0]:.1f}" y1="{start[1]:.1f}" x2="{end[0]:.1f}" y2="{end[1]:.1f}" stroke={xml_attr(stroke)} '
             f'stroke-width="{(2 if dotted else 3) * k:.2f}"{dash}' + (' marker-end="url(#head)"/>' if stop >= 1 else "/>")]
    if stop < 1:  # stopped short: a bar across its end
        px, py = -uy * 7 * k, ux * 7 * k
        parts.append(f'<line class="stop" x1="{end[0] + px:.1f}" y1="{end[1] + py:.1f}" x2="{end[0] - px:.1f}" '
                     f'y2="{end[1] - py:.1f}" stroke={xml_attr(stroke)} stroke-width="{3 * k:.2f}"/>')
    parts.append("</g>")
    return "".join(parts)


# ---------------------------------------------------------------- bars


def bars_svg(pic: dict[str, Any], result: Any) -> str:
    items = _items(result, pic)
    total = len(items)
    items = items[:MAX_BARS]
    labels: list[Any] = pic["label"] if isinstance(pic.get("label"), list) else []
    rows = []
    for item in items:
        parts = []
        for entry in labels:  # a pointer (its value is shown), or {at: pointer, name: text} ("name value")
            ptr, name = (entry.get("at"), entry.get("name")) if isinstance(entry, dict) else (entry, None)
            value = _at(item, ptr)
            if value is not None:
                parts.append(f"{_text(name)} {_text(value)}" if name else _text(value))
        rows.append((_num(_at(item, "/" + _text(pic.get("value"))), 0.0), _text(_at(item, "/" + _text(pic.get("text")))),
                     ", ".join(parts)))
    top = max([v for v, _, _ in rows] + [1e-9])
    label_w, bar_w, row_h = 430.0, 300.0, 22.0
    width = label_w + bar_w + 110
    height = 36 + row_h * len(rows) + (20 if total > len(items) else 0) + 10
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="picture bars" width="{width:.0f}" height="{height:.0f}" '
           f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="sans-serif">',
           f'<rect width="{width:.0f}" height="{height:.0f}" fill="white"/>']
    if pic.get("title"):
        out.append(f'<text class="title" x="10" y="20" font-size="13" font-weight="bold">{xml_text(_text(pic["title"]))}</text>')
    for i, (value, text, label) in enumerate(rows):
        y = 32 + i * row_h
        w = max(bar_w * value / top, 1.0)
        shown = label if len(label) <= 75 else label[:72] + "..."
        out.append(f'<g class="bar"><title>{xml_text(label)}</title>'
                   f'<text x="{label_w - 6:.0f}" y="{y + 14:.0f}" font-size="10" text-anchor="end">{xml_text(shown)}</text>'
                   f'<rect x="{label_w:.0f}" y="{y + 3:.0f}" width="{w:.1f}" height="{row_h - 6:.0f}" fill="#4878a8"/>'
                   f'<text x="{label_w + w + 6:.1f}" y="{y + 14:.0f}" font-size="10">{xml_text(text)} ({value:.1%})</text></g>')
    if total > len(items):
        out.append(f'<text x="10" y="{height - 12:.0f}" font-size="10">... and {total - len(items)} more outcomes</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
