"""Pictures of a run's result for the playground (``ruleval serve``), drawn from a *view* that a
ruleset family ships as data (``view.yaml`` beside its rulesets). The drawer knows no game: a view
says where each location is drawn and which fields of the state and result become what.

A view is ``{mode?: plain|exact, pictures: [PICTURE, ...]}``; the first picture whose ``when`` field
is in the result is drawn. Three kinds:

``graph``: locations at fixed points (``places: {NAME: [x, y]}``, ``size: [w, h]``, ``scale``,
``fallback``: a pattern whose group ``place`` names the place of a location not listed), with

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
        return graph_svg(pic, state, result)
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
    def __init__(self, pic: dict[str, Any]):
        places = pic.get("places") if isinstance(pic.get("places"), dict) else {}
        self.scale = _num(pic.get("scale"), 1.0)
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


def _colour(pic: dict[str, Any], group: Any) -> str:
    groups = pic.get("groups") if isinstance(pic.get("groups"), dict) else {}
    value = (groups or {}).get(_text(group))
    return str(value) if isinstance(value, str) else "#666"


def graph_svg(pic: dict[str, Any], state: Any, result: Any) -> str:
    places = _Places(pic)
    size = pic.get("size") if isinstance(pic.get("size"), list) and len(pic["size"]) == 2 else None
    if size and all(isinstance(v, (int, float)) for v in size):
        width, height = _num(size[0], 0.0) * places.scale, _num(size[1], 0.0) * places.scale
    else:
        xs = [x for x, _ in places.points.values()] or [0.0]
        ys = [y for _, y in places.points.values()] or [0.0]
        width, height = max(xs) + 40, max(ys) + 40
    styles: dict[str, Any] = pic["styles"] if isinstance(pic.get("styles"), dict) else {}
    used: list[tuple[float, float]] = []  # the points drawn on: the picture is cut to them
    out: list[str] = []
    out.append('<g class="places">')
    for name, (x, y) in sorted(places.points.items()):
        out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2" fill="#bbb"/>'
                   f'<text x="{x + 4:.1f}" y="{y - 4:.1f}" font-size="8" fill="#999">{xml_text(name)}</text>')
    out.append('</g><g class="tokens">')
    for spec in _specs(pic, "tokens"):
        source = state if spec.get("source") == "state" else result
        for item in _items(source, spec):
            p = places.at(item.get(_text(spec.get("at"))))
            if p is None:
                continue
            used.append(p)
            text = _text(item.get(_text(spec.get("text")))) if spec.get("text") else ""
            letters = int(_num(spec.get("letters"), 0))
            if letters > 0:
                text = text[:letters].upper()
            fill = _colour(pic, item.get(_text(spec.get("group"))))
            out.append(f'<g class="token" data-at={xml_attr(_text(item.get(_text(spec.get("at")))))}>'
                       f'<circle cx="{p[0]:.1f}" cy="{p[1]:.1f}" r="9" fill={xml_attr(fill)} '
                       f'stroke="#fff" stroke-width="1.5"/><text x="{p[0]:.1f}" y="{p[1] + 3.5:.1f}" font-size="10" '
                       f'font-weight="bold" text-anchor="middle" fill="#fff">{xml_text(text)}</text></g>')
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
                              _text(item.get(_text(spec.get("read")))), note))
    out.append('</g><g class="markers">')
    for spec in _specs(pic, "markers"):
        pattern = _pattern(spec) if spec.get("pattern") else None
        for item in _items(result, spec):
            if pattern is not None:
                groups = _search(pattern, item.get(_text(spec.get("read"))))
                where = groups.get("at") if groups else None
            else:
                where = item.get(_text(spec.get("at")))
            p = places.at(where)
            if p is None:
                continue
            used.append(p)
            stroke = _text(spec.get("stroke")) or "#000"
            out.append(f'<g class="marker" data-at={xml_attr(_text(where))}><circle cx="{p[0]:.1f}" cy="{p[1]:.1f}" r="14" '
                       f'fill="none" stroke={xml_attr(stroke)} stroke-width="3"/>'
                       f'<text x="{p[0]:.1f}" y="{p[1] + 24:.1f}" font-size="9" font-weight="bold" text-anchor="middle" '
                       f'fill={xml_attr(stroke)}>{xml_text(_text(spec.get("text")))}</text></g>')
    out.append("</g></svg>")
    x0, y0, w, h = 0.0, 0.0, width, height
    if used:
        margin = CUT_MARGIN * places.scale
        x0 = max(0.0, min(x for x, _ in used) - margin)
        y0 = max(0.0, min(y for _, y in used) - margin)
        w = min(width, max(x for x, _ in used) + margin) - x0
        h = min(height, max(y for _, y in used) + margin) - y0
    zoom = max(1.0, min(900.0 / max(w, 1.0), 600.0 / max(h, 1.0)))
    head = [f'<svg xmlns="http://www.w3.org/2000/svg" class="picture graph" width="{w * zoom:.0f}" '
            f'height="{h * zoom:.0f}" viewBox="{x0:.1f} {y0:.1f} {w:.1f} {h:.1f}" font-family="sans-serif">',
            '<defs><marker id="head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" '
            'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="context-stroke"/></marker></defs>',
            f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{w:.1f}" height="{h:.1f}" fill="#f7f5ee"/>']
    if pic.get("title"):
        head.append(f'<text class="title" x="{x0 + 6:.1f}" y="{y0 + 14:.1f}" font-size="{11 / zoom * 1.2:.1f}" '
                    f'font-weight="bold">{xml_text(_text(pic["title"]))}</text>')
    return "\n".join(head + out) + "\n"


def _specs(pic: dict[str, Any], key: str) -> list[dict[str, Any]]:
    value = pic.get(key)
    return [x for x in value if isinstance(x, dict)] if isinstance(value, list) else []


def _arrow(a: tuple[float, float], b: tuple[float, float], style: dict[str, Any], status: str, dotted: bool,
           what: str, note: str) -> str:
    stroke = _text(style.get("stroke")) or "#444"
    stop = min(max(_num(style.get("stop"), 1.0), 0.1), 1.0)
    length = math.dist(a, b) or 1.0
    ux, uy = (b[0] - a[0]) / length, (b[1] - a[1]) / length
    start = (a[0] + ux * 10, a[1] + uy * 10)  # from the edge of the token, not its centre
    full = max(length - 20, 1.0)
    end = (start[0] + ux * full * stop, start[1] + uy * full * stop)
    dash = ' stroke-dasharray="3 4"' if dotted else ""
    parts = [f'<g class="arrow" data-status={xml_attr(status)} data-stopped="{"true" if stop < 1 else "false"}">',
             f'<title>{xml_text(what + (": " + note if note else ""))}</title>',
             f'<line x1="{start[0]:.1f}" y1="{start[1]:.1f}" x2="{end[0]:.1f}" y2="{end[1]:.1f}" stroke={xml_attr(stroke)} '
             f'stroke-width="{2 if dotted else 3}"{dash}' + (' marker-end="url(#head)"/>' if stop >= 1 else "/>")]
    if stop < 1:  # stopped short: a bar across its end
        px, py = -uy * 7, ux * 7
        parts.append(f'<line class="stop" x1="{end[0] + px:.1f}" y1="{end[1] + py:.1f}" x2="{end[0] - px:.1f}" '
                     f'y2="{end[1] - py:.1f}" stroke={xml_attr(stroke)} stroke-width="3"/>')
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
